"""Benchmark: attention at long L, NumPy (naive, untiled, tiled) against PyTorch's fused kernel.

Not a test. Run it once, on a machine as quiet as you can get, from the repository root:

    uv run --group test python benchmarks/attention_bench.py          # full run, minutes
    uv run --group test python benchmarks/attention_bench.py --quick  # L = 512 only

(the ``test`` group brings threadpoolctl, which lets the tiled path run its query blocks
on all cores; without it the tiled path is single-threaded apart from BLAS).

Every case runs in a fresh Python process, so its peak memory is its own: the peak
resident size (VmHWM, reset just before) during the first call minus the resident size
just before it. Single head, d = 64. The results go to ``data/attention_bench.json``
(read by the site's Performance page) and a table
is printed. PyTorch is needed here only: ``uv pip install --find-links /opt/wheels torch``.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import result_path, status_kib  # benchmarks/, the script's directory

D = 64
LENGTHS = (512, 2048, 8192)
LONG = 65_536
IMPLS = ("naive", "untiled", "tiled", "torch")
NAIVE_MAX_BYTES = 2 * 2**30  # the naive formula holds ~3 L×L buffers: skip above this
RESULTS = result_path(__file__)


def flops(n: int) -> float:
    """4·L²·d: two GEMMs of 2·L²·d each (the causal half is not discounted)."""
    return 4.0 * n * n * D


def inputs(n: int, dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return tuple(rng.standard_normal((n, D)).astype(dtype) for _ in range(3))


def naive(q, k, v, causal: bool):
    """The seed's formula as written (float32 / np.sqrt(d) promotes to float64 in NumPy 2)."""
    d = q.shape[-1]
    s = q @ k.T / np.sqrt(d)
    if causal:
        s = np.where(np.tri(len(q), len(k), dtype=bool), s, -np.inf)
    w = np.exp(s) / np.sum(np.exp(s), axis=1, keepdims=True)
    return w @ v


def runner(impl: str, causal: bool):
    """A zero-argument-after-inputs callable for one implementation."""
    if impl == "naive":
        return lambda q, k, v: naive(q, k, v, causal)
    if impl == "torch":
        import torch

        sdpa = torch.nn.functional.scaled_dot_product_attention

        def run(q, k, v):
            t = [torch.from_numpy(a)[None, None] for a in (q, k, v)]  # (1, 1, L, d): fused
            with torch.no_grad():
                return sdpa(*t, is_causal=causal)[0, 0].numpy()

        return run
    from attention_math import numeric, tiled

    if impl == "default":  # what a user gets with default arguments
        return lambda q, k, v: numeric.attention(q, k, v, is_causal=causal)
    if impl == "untiled":
        tiled.TILED_FROM_SCORES = tiled.SCORES_BUDGET_BYTES = 2**62  # force one L×L buffer
        return lambda q, k, v: numeric.attention(q, k, v, is_causal=causal)
    return lambda q, k, v: numeric.attention(
        q, k, v, is_causal=causal, block_size=tiled.DEFAULT_BLOCK
    )


def row_error(out: np.ndarray, q, k, v, causal: bool, rows: np.ndarray) -> float:
    """Row-normwise error in ε of ``out`` on sampled rows, against a higher-precision run."""
    ref_dtype = np.float64 if q.dtype == np.float32 else np.longdouble  # 11 more bits at least
    qh, kh, vh = (a.astype(ref_dtype) for a in (q, k, v))
    s = qh[rows] @ kh.T / np.sqrt(ref_dtype(D))
    if causal:
        s = np.where(np.arange(len(k))[None, :] <= rows[:, None], s, -np.inf)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    ref = (w / w.sum(axis=1, keepdims=True)) @ vh
    err = np.abs(out[rows].astype(ref_dtype) - ref).max(axis=1) / np.abs(ref).max(axis=1)
    return float(err.max() / np.finfo(q.dtype).eps)


def reset_peak_rss() -> int:
    """Reset the kernel's peak resident size (VmHWM) to the current one; return it in bytes.

    Writing 5 to ``/proc/self/clear_refs`` does it (Linux ≥ 4.0); the peak reached during
    imports and warm-up is then not counted against the case.
    """
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return status_kib("VmRSS") * 1024


def peak_rss() -> int:
    return status_kib("VmHWM") * 1024


#: Seconds between a case's warm-up and its timed calls (see ``one_case``).
SPIN_PAUSE_S = 0.3


def one_case(case: dict) -> dict:
    """Time one case in this (fresh) process."""
    n, dtype, causal, impl = case["L"], case["dtype"], case["causal"], case["impl"]
    run = runner(impl, causal)
    run(*inputs(256, dtype))  # lazy imports, BLAS buffers, thread pools: not the case's memory
    # OpenBLAS's threads spin for about 0.1 s after a multi-threaded product (the warm-up's,
    # at L = 256 the untiled path's) and take a core from whatever runs next: the first timed
    # calls of the tiled path ran up to twice as slow. Both implementations wait alike.
    time.sleep(SPIN_PAUSE_S)
    q, k, v = inputs(n, dtype)
    before = reset_peak_rss()
    t0 = time.perf_counter()
    out = run(q, k, v)  # first call: its peak memory is measured
    first = time.perf_counter() - t0
    peak = peak_rss() - before
    times = [first]
    budget = case.get("seconds", 4.0)
    while len(times) < case.get("repeats", 7 if n > 2048 else 21) and sum(times) < budget:
        t0 = time.perf_counter()
        run(q, k, v)
        times.append(time.perf_counter() - t0)
    steady = times[1:] or times
    result = dict(case, times=times, median_s=statistics.median(steady), out_dtype=str(out.dtype))
    result["peak_extra_mib"] = max(peak, 0) / 2**20
    result["finite"] = bool(np.isfinite(out).all())
    if n <= 8192:
        rows = np.unique(np.linspace(0, n - 1, 32).astype(int))
        result["error_eps"] = row_error(out, q, k, v, causal, rows)
    return result


def gemm_peak(dtype: str, n: int = 2048, repeats: int = 5) -> float:
    """The best GFLOP/s of an n×n NumPy matmul in this process (BLAS at its default threads)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(repeats))
    return 2.0 * n**3 / best / 1e9


SWEEP_BLOCKS = (
    (128, 512),
    (128, 1024),
    (256, 256),
    (256, 512),
    (256, 1024),
    (256, 2048),
    (512, 512),
    (512, 1024),
)


def block_sweep(n: int = 2048, repeats: int = 5) -> list[dict]:
    """Tile shapes timed on one thread (BLAS held to one thread too): how DEFAULT_BLOCK was chosen.

    One thread, best of ``repeats``: the least disturbed measure on a shared machine.
    """
    from threadpoolctl import threadpool_limits

    from attention_math import tiled

    out = []
    with threadpool_limits(limits=1, user_api="blas"):
        for dtype in ("float32", "float64"):
            q, k, v = inputs(n, dtype)
            s = np.dtype(dtype).type(1 / np.sqrt(D))
            for block in SWEEP_BLOCKS:
                run = functools.partial(
                    tiled.tiled_attention, q, k, v, scale=s, block_size=block, workers=1
                )
                run()
                best = min(_timed(run) for _ in range(repeats))
                out.append(
                    dict(dtype=dtype, L=n, block=list(block), s=best, gflops=flops(n) / best / 1e9)
                )
    return out


def paired(n: int = 8192, rounds: int = 3) -> list[dict]:
    """Tiled and torch at L = n in alternating fresh processes, ``rounds`` times each.

    On a shared machine the main cases run minutes apart under different loads; alternating
    the two, round after round, gives a ratio that the load disturbs less. (Not in one
    process: torch's OpenMP threads keep spinning after a call and slow NumPy's threads.)
    """
    out = []
    for dtype in ("float32", "float64"):
        for causal in (False, True):
            t = {"tiled": [], "torch": []}
            for i in range(rounds):
                print(f"  {dtype} causal={causal} round {i + 1}/{rounds}", file=sys.stderr)
                for impl in t:
                    case = dict(impl=impl, dtype=dtype, L=n, causal=causal, repeats=4, seconds=3)
                    r = in_child(case)
                    if "median_s" in r:
                        t[impl].append(r["median_s"])
            if t["tiled"] and t["torch"]:
                a, b = statistics.median(t["tiled"]), statistics.median(t["torch"])
                out.append(dict(dtype=dtype, L=n, causal=causal, tiled_s=a, torch_s=b, ratio=a / b))
    return out


def _timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def cases(quick: bool) -> list[dict]:
    out = []
    for n in (512,) if quick else LENGTHS:
        for dtype in ("float32", "float64"):
            for causal in (False, True):
                for impl in IMPLS:
                    c = dict(impl=impl, dtype=dtype, L=n, causal=causal)
                    if impl == "naive" and 3 * n * n * 8 > NAIVE_MAX_BYTES:
                        c["skipped"] = "three L×L float64 buffers exceed the 2 GiB limit"
                    out.append(c)
    if not quick:
        for impl in ("tiled", "torch"):
            for causal in (False, True):
                out.append(dict(impl=impl, dtype="float32", L=LONG, causal=causal, repeats=1))
    return out


def in_child(case: dict, script: str = __file__) -> dict:
    """``case`` measured by ``script --case`` in a fresh process (its own peak memory)."""
    proc = subprocess.run(
        [sys.executable, script, "--case", json.dumps(case)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return dict(case, skipped=f"failed: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout)


def _numpy_simd() -> list[str]:
    """The SIMD levels NumPy runs on this CPU: its build's baseline and the higher ones it
    found (``np.show_config``'s public record; "X86_V3" is AVX2 with FMA3)."""
    simd = np.show_config(mode="dicts")["SIMD Extensions"]
    return [*simd["baseline"], *simd["found"]]


def _l2_bytes() -> int | None:
    """The per-core L2 cache in bytes from Linux's sysfs (``None`` where it cannot be read):
    a fact about the machine for the record, which no code path reads."""
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for index in sorted(root.glob("index*")):
            if (index / "level").read_text().strip() == "2":
                text = (index / "size").read_text().strip().upper()
                unit = {"K": 2**10, "M": 2**20}.get(text[-1:], 1)
                return int(text.rstrip("KM")) * unit
    except (OSError, ValueError):
        return None
    return None


def machine() -> dict:
    info = {"python": platform.python_version(), "numpy": np.__version__, "cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(ln.split(":", 1)[1].strip() for ln in f if "model name" in ln)
    except (OSError, StopIteration):
        info["cpu"] = platform.processor() or "unknown"
    from attention_math import tiled

    info["tiled_workers"] = tiled.default_workers()
    info["default_block"] = list(tiled.DEFAULT_BLOCK)
    cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    info["blas"] = f"{cfg.get('name')} {cfg.get('version')}"
    try:  # the kernel the BLAS picked for this CPU (OpenBLAS's "architecture")
        from threadpoolctl import threadpool_info

        blas = [p for p in threadpool_info() if p.get("user_api") == "blas"]
        info["blas_kernel"] = blas[0].get("architecture") if blas else None
        info["blas_threads"] = blas[0].get("num_threads") if blas else None
    except ImportError:
        info["blas_kernel"] = None
    info["l2_cache_bytes"] = _l2_bytes()
    # NumPy's elementwise kernels, and so some results (its power, say), differ with these
    info["numpy_simd"] = _numpy_simd()
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    except ImportError:
        info["torch"] = None
    return info


def summarise(results: list[dict], peaks: dict) -> None:
    """Add GFLOP/s, the ratio to torch (same dtype, L, mask) and the share of GEMM peak."""
    torch_t = {
        (r["dtype"], r["L"], r["causal"]): r["median_s"]
        for r in results
        if r["impl"] == "torch" and "median_s" in r
    }
    for r in results:
        if "median_s" not in r:
            continue
        r["gflops"] = flops(r["L"]) / r["median_s"] / 1e9
        r["gemm_share"] = r["gflops"] / peaks[r["dtype"]]
        t = torch_t.get((r["dtype"], r["L"], r["causal"]))
        r["ratio_torch"] = r["median_s"] / t if t else None


def targets(results: list[dict], pairs: list[dict] = ()) -> list[dict]:
    """The issue's targets, each with the measured value and whether it is met."""

    def get(impl, dtype, n, causal, key="median_s"):
        for r in results:
            if (r["impl"], r["dtype"], r["L"], r["causal"]) == (impl, dtype, n, causal):
                return r.get(key)
        return None

    out = []
    for dtype in ("float32", "float64"):
        x = get("tiled", dtype, 8192, False, "ratio_torch")
        out.append(
            dict(
                target=f"tiled ≤ 1.2 × torch, L = 8192, non-causal, {dtype}", value=x, met=x <= 1.2
            )
            if x is not None
            else dict(target=f"tiled ≤ 1.2 × torch, L = 8192, {dtype}", value=None, met=False)
        )
    for p in pairs:
        if not p["causal"]:
            out.append(
                dict(
                    target=f"the same, {p['dtype']}, alternating fresh processes (median of "
                    "rounds)",
                    value=p["ratio"],
                    met=p["ratio"] <= 1.2,
                )
            )
    for dtype in ("float32", "float64"):
        a, b = get("tiled", dtype, 8192, True), get("tiled", dtype, 8192, False)
        x = a / b if a and b else None
        out.append(
            dict(
                target=f"causal tiled ≤ 0.6 × non-causal tiled, L = 8192, {dtype}",
                value=x,
                met=x is not None and x <= 0.6,
            )
        )
    x = get("tiled", "float32", 8192, False, "gemm_share")
    out.append(
        dict(
            target="≥ 40 % of GEMM peak, L = 8192, float32", value=x, met=x is not None and x >= 0.4
        )
    )
    t, mem = (
        get("tiled", "float32", LONG, False),
        get("tiled", "float32", LONG, False, "peak_extra_mib"),
    )
    out.append(
        dict(
            target="L = 65536 float32: < 30 s and < 64 MiB extra",
            value=[t, mem],
            met=t is not None and t < 30 and mem < 64,
        )
    )
    errs = [
        r["error_eps"]
        for r in results
        if r["impl"] in ("tiled", "untiled") and r.get("error_eps") is not None
    ]
    x = max(errs) if errs else None
    out.append(
        dict(target="row-normwise error ≤ 32 ε, L ≤ 8192", value=x, met=x is not None and x <= 32)
    )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="L = 512 only")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--case", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.case:
        print(json.dumps(one_case(json.loads(args.case))))
        return 0
    todo = cases(args.quick)
    load_before = os.getloadavg()
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    peaks = {dt: gemm_peak(dt) for dt in ("float32", "float64")}
    print(f"GEMM peak (NumPy 2048² matmul): {peaks}", file=sys.stderr)
    sweep = [] if args.quick else block_sweep()
    for r in sweep:
        print(f"tile {r['block']} {r['dtype']}: {r['gflops']:.1f} GFLOP/s", file=sys.stderr)
    results = []
    for i, case in enumerate(todo, 1):
        label = f"{case['impl']:8} {case['dtype']} L={case['L']:<6} causal={case['causal']!s:5}"
        print(f"[{i:2}/{len(todo)}] {label} ...", end=" ", file=sys.stderr, flush=True)
        r = case if "skipped" in case else in_child(case)
        results.append(r)
        print(r.get("skipped") or f"{r['median_s']:.4f} s", file=sys.stderr, flush=True)
    print("tiled and torch alternated, fresh processes, L = 8192 ...", file=sys.stderr)
    pairs = [] if args.quick else paired()
    for r in pairs:
        print(f"  {r['dtype']} causal={r['causal']}: ×torch {r['ratio']:.2f}", file=sys.stderr)
    summarise(results, peaks)
    doc = {
        "started_utc": started,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "machine": machine(),
        "d": D,
        "gemm_peak_gflops": peaks,
        "block_sweep": sweep,
        "paired": pairs,
        "results": results,
        "targets": targets(results, pairs),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"\nload average before {load_before}, after {doc['load_after']}")
    for r in results:
        if "median_s" in r:
            print(
                f"{r['impl']:8} {r['dtype']} L={r['L']:<6} causal={r['causal']!s:5} "
                f"{r['median_s']:9.4f} s {r['gflops']:7.1f} GF/s "
                f"×torch {r['ratio_torch'] or float('nan'):5.2f} "
                f"peak+{r['peak_extra_mib']:8.1f} MiB err {r.get('error_eps', float('nan')):6.2f} ε"
            )
        else:
            print(f"{r['impl']:8} {r['dtype']} L={r['L']:<6} skipped: {r['skipped']}")
    for t in doc["targets"]:
        print(f"{'MET ' if t['met'] else 'MISS'} {t['target']}: {t['value']}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
