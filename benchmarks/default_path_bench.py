"""Benchmark: ``numeric.attention`` with default arguments against PyTorch's fused kernel.

Not a test. From the repository root, on any machine:

    uv run --group test python benchmarks/default_path_bench.py            # L = 2048 … 8192
    uv run --group test python benchmarks/default_path_bench.py --rounds 1 --lengths 2048

What a user gets without choosing anything: ``attention(q, k, v, is_causal=...)``, whose
path (untiled or tiled) and tile come from this machine (``default_path.tiles_pay`` and
``default_path.default_block``), against ``scaled_dot_product_attention`` on ``(1, 1, L, 64)``
tensors. The two alternate in fresh processes, round after round (the machine may be shared:
a load change then hits both alike), and each ratio is that of the two medians over the
rounds. In each
process a call is timed ``REPEATS`` times after a first call (whose peak memory is measured),
and the median is kept; the median of the first ``EARLY`` of those is kept too. Before the
timed calls each process waits ``attention_bench.SPIN_PAUSE_S``: OpenBLAS's threads spin for
about 0.1 s after a multi-threaded product (the warm-up's) and slow whatever runs next.

The one-off calibration of ``tiles_pay`` runs first, in a process of its own, into a
temporary calibration directory (``ATTENTION_MATH_CACHE_DIR``) that every timed process then
reads, as a user's later processes read theirs; its duration and the thresholds it chose are
recorded. Results and the machine (CPU model, BLAS and its kernel, L2 size, load average) go
to ``data/default_path_bench.json``, read by the Performance page.

Last, ``default_path_profile.py`` runs in a process of its own for each dtype: one head on
one thread, in CPU time, the default path and PyTorch side by side and the tile loop's steps
(two GEMMs, the exponential) timed one by one: where the time goes, measured in a way a
busy machine disturbs less than the wall-clock ratios.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _common import result_path  # benchmarks/, the script's directory
from attention_bench import in_child, machine

from attention_math import default_path

RESULTS = result_path(__file__)
DTYPES = ("float32", "float64")


#: Timed calls per process after the first, at L ≤ 2048 and above (within ``SECONDS``).
REPEATS = {2048: 20, None: 6}
SECONDS = 4.0
#: The first calls after the first, reported on their own.
EARLY = 4


def target(n: int) -> float:
    """The issue's bound on the time ratio default / torch."""
    return 1.25 if n >= 4096 else 1.5


CALIBRATE = """
import json, time
import numpy as np
from attention_math import default_path, numeric
t0 = time.perf_counter()
run = numeric._untiled_reference
found = {d: default_path.crossover(np.dtype(d), run) for d in ("float32", "float64")}
print(json.dumps(dict(seconds=time.perf_counter() - t0, crossover=found)))
"""


def calibrate() -> dict:
    """Run the default path's calibration once, in its own process, into the directory that
    ``ATTENTION_MATH_CACHE_DIR`` names; its time and the per-head score counts it chose."""
    out = subprocess.run([sys.executable, "-c", CALIBRATE], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"calibration failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def profile(n: int, dtype: str) -> dict:
    """``default_path_profile.py`` for one dtype, in a fresh process reading the calibration."""
    script = Path(__file__).with_name("default_path_profile.py")
    out = subprocess.run(
        [sys.executable, str(script), str(n), dtype], capture_output=True, text=True
    )
    if out.returncode != 0:
        return dict(L=n, dtype=dtype, skipped=f"failed: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[2048, 4096, 8192])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile-length", type=int, default=4096)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    load_before = os.getloadavg()
    cache = tempfile.TemporaryDirectory(prefix="attention-math-bench-")
    os.environ["ATTENTION_MATH_CACHE_DIR"] = cache.name  # inherited by every child
    os.environ.pop("ATTENTION_MATH_CALIBRATE", None)
    calibration = calibrate()
    print(f"calibration: {calibration}", flush=True)
    rows = []
    for n in args.lengths:
        for dtype in DTYPES:
            for causal in (False, True):
                t: dict[str, list[float]] = {"default": [], "torch": []}
                early: dict[str, list[float]] = {"default": [], "torch": []}
                mem = []
                repeats = REPEATS[2048] if n <= 2048 else REPEATS[None]
                for _ in range(args.rounds):
                    for impl in t:  # alternated
                        case = dict(impl=impl, dtype=dtype, L=n, causal=causal)
                        case.update(repeats=repeats + 1, seconds=SECONDS)  # + the first call
                        r = in_child(case)
                        if "median_s" in r:
                            t[impl].append(r["median_s"])
                            # at the longest lengths the time budget may leave no call
                            # after the first: then there is no early median to keep
                            if r["times"][1 : 1 + EARLY]:
                                early[impl].append(statistics.median(r["times"][1 : 1 + EARLY]))
                            if impl == "default":
                                mem.append(r["peak_extra_mib"])
                if not (t["default"] and t["torch"]):
                    rows.append(dict(L=n, dtype=dtype, causal=causal, skipped="a case failed"))
                    continue
                a, b = statistics.median(t["default"]), statistics.median(t["torch"])
                row = dict(
                    L=n,
                    dtype=dtype,
                    causal=causal,
                    default_s=a,
                    torch_s=b,
                    ratio=a / b,
                    target=target(n),
                    met=a / b <= target(n),
                    peak_extra_mib=max(mem),
                    load=os.getloadavg()[0],
                    early_ratio=statistics.median(early["default"])
                    / statistics.median(early["torch"])
                    if early["default"] and early["torch"]
                    else None,
                )
                rows.append(row)
                print(
                    f"L={n:5d} {dtype} causal={causal!s:5} default {a:.4f} s torch {b:.4f} s "
                    f"ratio {a / b:.2f} (target ≤ {target(n)}; first calls "
                    f"{row['early_ratio'] or float('nan'):.2f}) peak+{max(mem):.1f} MiB "
                    f"load {row['load']:.1f}",
                    flush=True,
                )
    profiles = []
    for dtype in DTYPES:
        p = profile(args.profile_length, dtype)
        profiles.append(p)
        print(f"profile: {p}", flush=True)
    info = machine()
    info["default_block"] = {d: list(default_path.default_block(np.dtype(d))) for d in DTYPES}
    doc = {
        "started_utc": started,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "machine": info,
        "rounds": args.rounds,
        "repeats": {"L <= 2048": REPEATS[2048], "L > 2048": REPEATS[None], "early": EARLY},
        "calibration": calibration,
        "results": rows,
        "profile": profiles,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    cache.cleanup()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
