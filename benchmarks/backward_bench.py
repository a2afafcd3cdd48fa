"""Benchmark: the tiled (FlashAttention-2) backward against the untiled one.

Not a test. From the repository root:

    uv run --group test python benchmarks/backward_bench.py          # L = 4096 and 16384
    uv run --group test python benchmarks/backward_bench.py --quick  # L = 1024 only

Each case (implementation × length; float32, d = 64, one head, no mask) runs in a fresh
process, so its peak memory is its own: the peak resident size during the first call minus
the resident size just before it (as in ``attention_bench.py``). The tiled and untiled
gradients are compared in the tiled case after its memory was measured. Results go to
``data/backward_bench.json`` (read by the Performance page) with the machine
(CPU model, BLAS) and the load average before and after.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import time

import numpy as np
from _common import result_path  # benchmarks/, the script's directory
from attention_bench import in_child, machine, peak_rss, reset_peak_rss

D = 64
LENGTHS = (4096, 16384)
BLOCK = (256, 512)
RESULTS = result_path(__file__)


def inputs(n: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(n)
    return tuple(rng.standard_normal((n, D)).astype(np.float32) for _ in range(4))


def one_case(case: dict) -> dict:
    """Time one case in this (fresh) process."""
    from threadpoolctl import threadpool_limits

    from attention_math.backward import attention_backward

    if case.get("threads"):  # hold BLAS to this many threads for the whole case
        threadpool_limits(limits=case["threads"], user_api="blas")

    n, impl = case["L"], case["impl"]
    block = tuple(case["block"]) if impl == "tiled" else None

    def run(q, k, v, g):
        return attention_backward(q, k, v, g, block_size=block)

    run(*inputs(256))  # imports and BLAS buffers are not the case's memory
    args = inputs(n)
    before = reset_peak_rss()
    t0 = time.perf_counter()
    grads = run(*args)
    times = [time.perf_counter() - t0]
    peak = peak_rss() - before
    while len(times) < 3 and sum(times) < case.get("seconds", 20.0):
        t0 = time.perf_counter()
        run(*args)
        times.append(time.perf_counter() - t0)
    result = dict(case, times=times, median_s=statistics.median(times))
    result["peak_extra_mib"] = max(peak, 0) / 2**20
    result["input_mib"] = sum(a.nbytes for a in args) / 2**20
    if impl == "tiled" and n <= 4096:  # the untiled reference, after the memory was measured
        ref = attention_backward(*args)
        eps = float(np.finfo(np.float32).eps)
        result["error_eps"] = max(
            float(np.max(np.abs(a - b)) / np.max(np.abs(b)) / eps)
            for a, b in zip(grads, ref, strict=True)
        )
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="L = 1024 only; nothing written")
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="BLAS threads for both implementations (default: BLAS's own choice); on a "
        "machine shared with other jobs, 1 gives steadier ratios",
    )
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.case:
        print(json.dumps(one_case(json.loads(args.case))))
        return 0
    lengths = (1024,) if args.quick else LENGTHS
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    load_before = os.getloadavg()
    results = []
    for n in lengths:
        for impl in ("untiled", "tiled"):  # alternate, so load drifts hit both alike
            r = in_child(
                {"L": n, "impl": impl, "block": list(BLOCK), "threads": args.threads}, __file__
            )
            results.append(r)
            print(
                f"L={n:6d} {impl:8s} median {r.get('median_s', float('nan')):8.3f} s  "
                f"peak extra {r.get('peak_extra_mib', float('nan')):9.1f} MiB  "
                f"{r.get('skipped', '')}",
                flush=True,
            )
    out = {
        "started_utc": started,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "machine": machine(),
        "d": D,
        "dtype": "float32",
        "block": list(BLOCK),
        "blas_threads": args.threads or "default",
        "results": results,
    }
    if not args.quick:
        RESULTS.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
