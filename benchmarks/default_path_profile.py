"""Where the default path's time goes: one head on one thread, CPU time, next to PyTorch's.

Not a test. Run by ``default_path_bench.py`` in a process of its own (or by hand:
``python benchmarks/default_path_profile.py 4096 float32``; prints one JSON line).

Everything here runs on one thread (BLAS, PyTorch and the tiled path's workers held to
one), and is measured in CPU time, best of several runs: a load change on a shared machine
then moves the figures far less than it moves wall-clock ratios. Measured:

* ``default_s``: ``numeric.attention(q, k, v)`` with default arguments (the tiled path);
* ``torch_s``: PyTorch's fused ``scaled_dot_product_attention`` on ``(1, 1, L, d)``;
* the tile loop's steps timed one by one (``gemm_scores_s``, ``exp_s``, ``gemm_values_s``
  and ``rest_s``), on the default tile, as the fast path of ``tiled._visit_key_tiles``
  runs them: ``[K | 1] [q·scale | −b]ᵀ``, ``exp`` in place, ``[V | 1]ᵀ Pᵀ``, sum check
  and accumulation.

The two products' rate is compared with a 1024 × 1024 matrix product's on the same thread.
From these, ``ratio`` is the work ratio default / torch, and ``ratio_without_exp`` what it
would be if the exponential cost nothing: how far NumPy's two GEMMs alone are from the
fused kernel.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable

import numpy as np

D = 64
ROUNDS = 5


def _cpu(f: Callable[[], object]) -> float:
    """The least CPU time (all of this process's threads) of ``ROUNDS`` calls of ``f``."""
    best = float("inf")
    for _ in range(ROUNDS):
        t0 = time.process_time()
        f()
        best = min(best, time.process_time() - t0)
    return best


def _tile_steps(q: np.ndarray, k: np.ndarray, v: np.ndarray, block: tuple[int, int]) -> dict:
    """CPU seconds of each step of the tiled fast path, summed over all tiles of one call."""
    n, dt = len(q), q.dtype
    bq, bk = block
    k1 = np.empty((n, D + 1), dt)  # [K | 1]
    k1[:, :D], k1[:, D] = k, 1
    v1t = np.empty((D + 1, n), dt)  # [V | 1]ᵀ
    v1t[:D], v1t[D] = v.T, 1
    qst = np.empty((D + 1, bq), dt)  # [q · scale | −base]ᵀ
    st = np.empty((bk, bq), dt)  # the score tile, transposed
    pvt = np.empty((D + 1, bq), dt)  # [P V | P 1]ᵀ
    acc = np.zeros((D + 1, bq), dt)
    best: dict[str, float] = {}
    for _ in range(ROUNDS):
        t = dict.fromkeys(("gemm_scores_s", "exp_s", "gemm_values_s", "rest_s"), 0.0)
        for i0 in range(0, n, bq):
            np.multiply(q[i0 : i0 + bq].T, dt.type(1 / np.sqrt(D)), out=qst[:D])
            qst[D] = -3  # a fixed base near the rows' max score (random inputs: |s| ≲ 5)
            acc.fill(0)
            for j0 in range(0, n, bk):
                t0 = time.process_time()
                np.matmul(k1[j0 : j0 + bk], qst, out=st)
                t1 = time.process_time()
                np.exp(st, out=st)
                t2 = time.process_time()
                np.matmul(v1t[:, j0 : j0 + bk], st, out=pvt)
                t3 = time.process_time()
                if (pvt[D] <= 3000.0).all():
                    acc += pvt
                t4 = time.process_time()
                t["gemm_scores_s"] += t1 - t0
                t["exp_s"] += t2 - t1
                t["gemm_values_s"] += t3 - t2
                t["rest_s"] += t4 - t3
        if not best or sum(t.values()) < sum(best.values()):
            best = t
    return best


def profile(n: int, dtype: str) -> dict:
    """One head of length ``n``, d = 64, non-causal, everything on one thread."""
    import torch
    from threadpoolctl import threadpool_limits

    from attention_math import default_path, numeric

    torch.set_num_threads(1)
    rng = np.random.default_rng(n)
    q, k, v = (rng.standard_normal((n, D)).astype(dtype) for _ in range(3))  # (n, d) each
    tq = [torch.from_numpy(a)[None, None] for a in (q, k, v)]  # (1, 1, n, d): fused kernel
    sdpa = torch.nn.functional.scaled_dot_product_attention
    block = default_path.default_block(np.dtype(dtype))
    with threadpool_limits(limits=1, user_api="blas"), torch.no_grad():
        numeric.attention(q, k, v)  # calibration (if any) and warm-up, not timed
        sdpa(*tq)
        default_s = torch_s = float("inf")
        for _ in range(ROUNDS):  # alternated: a load change hits both alike
            default_s = min(default_s, _cpu(lambda: numeric.attention(q, k, v)))
            torch_s = min(torch_s, _cpu(lambda: sdpa(*tq)))
        steps = _tile_steps(q, k, v, block)
        a = rng.standard_normal((1024, 1024)).astype(dtype)  # (1024, 1024)
        square = _cpu(lambda: a @ a)
    loop = sum(steps.values())
    gemm_flop = 2.0 * n * n * (D + 1)  # each product: L² dot products of length d + 1
    return dict(
        L=n,
        dtype=dtype,
        block=list(block),
        default_s=default_s,
        torch_s=torch_s,
        **steps,
        gemm_peak_gflops=2.0 * 1024**3 / square / 1e9,
        gemm_scores_gflops=gemm_flop / steps["gemm_scores_s"] / 1e9,
        gemm_values_gflops=gemm_flop / steps["gemm_values_s"] / 1e9,
        ratio=default_s / torch_s,
        ratio_without_exp=(loop - steps["exp_s"]) / torch_s,
        load=os.getloadavg()[0],
    )


if __name__ == "__main__":
    print(json.dumps(profile(int(sys.argv[1]), sys.argv[2])))
