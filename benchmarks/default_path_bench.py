"""Benchmark: ``attention`` with default arguments beside PyTorch's fused kernel, in one run.

Not a test. From the repository root, on a machine as quiet as you can get:

    uv run --group test python benchmarks/default_path_bench.py              # 5 rounds
    uv run --group test python benchmarks/default_path_bench.py --rounds 3 --lengths 2048

What a user gets without choosing anything: ``attention(q, k, v, is_causal=...)`` on float32
``(L, 64)`` inputs, whose path (tiled or one score buffer) is the fixed rule
``tiled.takes_tiles``, against ``scaled_dot_product_attention`` on ``(1, 1, L, 64)`` float32
tensors (4-D, so that PyTorch runs its fused kernel). The two alternate in fresh processes,
round after round, so that a change in the machine's load hits both alike; each process
times a call several times after a first one and keeps the median (``attention_bench``'s
``one_case``), and each ratio is that of the two medians over the rounds. Issue 52's bar:
at most 2.0 × PyTorch's time at L = 2048 and 1.5 × at L = 8192, causal and not.

The ratios are printed, and written with the machine, ``uptime`` and the load average
before, during and after to ``data/default_path_bench.json`` (the Performance
page shows them). No test reads that file: a measurement is not a unit test.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
from _common import result_path  # benchmarks/, the script's directory
from attention_bench import in_child, machine

from attention_math import tiled

RESULTS = result_path(__file__)
D = 64
DTYPE = "float32"
#: Timed calls per process after the first, at L ≤ 2048 and above (within ``SECONDS``).
REPEATS = {2048: 20, None: 6}
SECONDS = 4.0


def target(n: int) -> float:
    """Issue 52's bound on the time ratio default / PyTorch at length ``n``."""
    return 2.0 if n <= 2048 else 1.5


def uptime() -> str:
    """``uptime``'s line (the load averages of the shared machine), or the load alone."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def one_row(n: int, causal: bool, rounds: int) -> dict:
    """Default and PyTorch at length ``n``, alternating in fresh processes ``rounds`` times."""
    times: dict[str, list[float]] = {"default": [], "torch": []}
    repeats = REPEATS[2048] if n <= 2048 else REPEATS[None]
    loads = []
    for _ in range(rounds):
        for impl in times:  # alternated, round after round
            case = dict(impl=impl, dtype=DTYPE, L=n, causal=causal)
            case.update(repeats=repeats + 1, seconds=SECONDS)  # + the first call, not counted
            r = in_child(case)
            if "median_s" in r:
                times[impl].append(r["median_s"])
        loads.append(os.getloadavg()[0])
    row: dict = dict(L=n, dtype=DTYPE, d=D, causal=causal, target=target(n))
    row["tiled"] = tiled.takes_tiles((n, n), np.dtype(DTYPE))
    row["block"] = list(tiled.DEFAULT_BLOCK) if row["tiled"] else None
    if not (times["default"] and times["torch"]):
        return row | {"skipped": "a case failed"}
    a, b = statistics.median(times["default"]), statistics.median(times["torch"])
    return row | dict(
        default_s=a,
        torch_s=b,
        ratio=a / b,
        met=a / b <= target(n),
        rounds_default_s=times["default"],
        rounds_torch_s=times["torch"],
        load=statistics.median(loads),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[2048, 8192])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    before, load_before = uptime(), os.getloadavg()
    print(f"before: {before}", flush=True)
    rows = []
    for n in args.lengths:
        for causal in (False, True):
            row = one_row(n, causal, args.rounds)
            rows.append(row)
            if "skipped" in row:
                print(f"L={n:5d} causal={causal!s:5} skipped: {row['skipped']}", flush=True)
                continue
            print(
                f"L={n:5d} causal={causal!s:5} {'tiled' if row['tiled'] else 'untiled':7} "
                f"default {row['default_s'] * 1e3:7.1f} ms  torch {row['torch_s'] * 1e3:7.1f} ms  "
                f"ratio {row['ratio']:.2f} (≤ {row['target']}: "
                f"{'met' if row['met'] else 'MISSED'})  load {row['load']:.2f}",
                flush=True,
            )
    after = uptime()
    print(f"after: {after}", flush=True)
    doc = {
        "started_utc": started,
        "uptime_before": before,
        "uptime_after": after,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "machine": machine(),
        "rounds": args.rounds,
        "repeats": {"L <= 2048": REPEATS[2048], "L > 2048": REPEATS[None]},
        "rule": {
            "tiled_from_scores": tiled.TILED_FROM_SCORES,
            "scores_budget_bytes": tiled.SCORES_BUDGET_BYTES,
            "default_block": list(tiled.DEFAULT_BLOCK),
        },
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
