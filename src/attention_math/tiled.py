"""Tiled attention: the online softmax over key tiles (FlashAttention-2 loop order).

The L_q × L_k score matrix is never formed. Queries are cut into blocks of ``block_q`` rows;
for each query block the keys are visited ``block_k`` at a time, and a running state is kept
per query row (see :mod:`attention_math.derivations.online_softmax` for the exact proof):

* ``m`` — the largest score seen so far (the softmax shift),
* ``ℓ`` — the sum of ``exp(s − m)`` over the keys seen so far,
* ``o`` — the *unnormalised* output ``Σ exp(s − m) v``.

A new tile with scores ``S`` updates them with ``m' = max(m, rowmax S)``,
``ℓ' = e^{m − m'} ℓ + Σ e^{S − m'}``, ``o' = e^{m − m'} o + e^{S − m'} V``; the output is
``o / ℓ``, one division per row at the very end, and ``m + log ℓ`` (the log-sum-exp) is
what a backward pass would keep.

Speed comes from two BLAS GEMMs per tile: ``[q·scale | −b] [K | 1]ᵀ`` and ``P [V | 1]``.
The appended column of ones makes the first GEMM return the scores already shifted by the
row's current base ``b`` and the second return the row sums ``ℓ`` too, so the elementwise
work per score is one max and one ``exp``, in place in one tile buffer. The base is the
running max ``m`` but is only moved (and the state rescaled, one more pass over the tile)
when a tile's row max exceeds it by more than ``_LAZY``: the result does not depend on
the shift, and ``P ≤ e^{_LAZY}`` cannot overflow (the conditional rescaling of
FlashAttention-4). Extra memory: the tile (``block_q × block_k``), the per-block state
(``block_q × (d + 1)``) and ``[K | 1]``, ``[V | 1]`` (``L_k × (d + 1)`` each): O(L·d),
not O(L²).

This module is the engine behind ``attention(..., block_size=...)`` in
:mod:`attention_math.numeric`, which validates the input; call that function, not these.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DEFAULT_BLOCK",
    "SCORES_BUDGET_BYTES",
    "block_sizes",
    "default_workers",
    "tiled_attention",
]

#: When ``attention(block_size=None)`` would allocate more than this many bytes for the
#: L_q × L_k scores (all batch entries together), it switches to the tiled path.
SCORES_BUDGET_BYTES = 256 * 2**20

#: (block_q, block_k) used when tiling is automatic (and by the benchmark): the fastest of
#: the shapes timed by ``benchmarks/attention_bench.py`` (its ``block_sweep`` in the JSON).
DEFAULT_BLOCK = (512, 1024)

#: A row keeps its softmax shift until a tile's max exceeds it by more than this (then the
#: state is rescaled): P ≤ e^8 ≈ 3000 cannot overflow ℓ, and most tiles skip the rescale.
_LAZY = 8.0

_OVERFLOW = (
    "the scores overflow the floating-point range (NaN or +inf after q kᵀ · scale); "
    "rescale q and k (dtype {})"
)


def block_sizes(block_size: object) -> tuple[int, int]:
    """``block_size`` (an int, or a pair ``(block_q, block_k)``) as two positive ints.

    Examples:
        >>> from attention_math.tiled import block_sizes
        >>> block_sizes(128), block_sizes((64, 512))
        ((128, 128), (64, 512))
        >>> block_sizes(0)
        Traceback (most recent call last):
        ...
        ValueError: block_size must be a positive int or a pair of them, got 0
    """
    pair = block_size if isinstance(block_size, tuple | list) else (block_size, block_size)
    ok = len(pair) == 2 and all(
        isinstance(b, int | np.integer) and not isinstance(b, bool) and b >= 1 for b in pair
    )
    if not ok:
        raise ValueError(f"block_size must be a positive int or a pair of them, got {block_size!r}")
    return int(pair[0]), int(pair[1])


def tiled_attention(
    q: NDArray[np.floating],
    k: NDArray[np.floating],
    v: NDArray[np.floating],
    scale: np.floating,
    mask: NDArray | None = None,
    *,
    is_causal: bool = False,
    block: tuple[int, int] = DEFAULT_BLOCK,
    workers: int | None = None,
) -> NDArray[np.floating]:
    """``softmax(q kᵀ · scale + mask) v`` computed tile by tile, for validated input.

    Args:
        q: ``(..., L_q, d_k)``, already of the working dtype (float32 or float64).
        k: ``(..., L_k, d_k)``, same dtype.
        v: ``(..., L_k, d_v)``, same dtype.
        scale: the score factor as a NumPy scalar of the working dtype.
        mask: ``None``, or a validated boolean/additive mask already broadcastable to the
            scores (its batch dimensions included in the output's).
        is_causal: query ``i`` sees keys ``0..i`` only; tiles entirely above the diagonal
            are skipped (never computed).
        block: ``(block_q, block_k)``.
        workers: threads over query blocks; default :func:`default_workers`. The result
            does not depend on it (each query block is computed the same way).

    Returns:
        The output ``(..., L_q, d_v)`` in the working dtype. A fully masked row is zeros.

    Examples:
        >>> import numpy as np
        >>> from attention_math.tiled import tiled_attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.standard_normal((3, 5, 2))
        >>> out = tiled_attention(q, k, v, np.float64(1.0), block=(2, 2))
        >>> s = q @ k.T
        >>> w = np.exp(s - s.max(1, keepdims=True))
        >>> np.allclose(out, (w / w.sum(1, keepdims=True)) @ v)
        True
    """
    workers = default_workers() if workers is None else workers
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if mask is not None:
        batch = np.broadcast_shapes(batch, mask.shape[:-2])
        mask = np.broadcast_to(mask, (*batch, n_q, n_k))  # a view: no L×L copy
    out = np.empty((*batch, n_q, d_v), dtype=q.dtype)
    qb = np.broadcast_to(q, (*batch, *q.shape[-2:]))
    kb = np.broadcast_to(k, (*batch, *k.shape[-2:]))
    vb = np.broadcast_to(v, (*batch, *v.shape[-2:]))
    for idx in np.ndindex(*batch):
        _one_head(
            qb[idx],
            kb[idx],
            vb[idx],
            scale,
            None if mask is None else mask[idx],
            is_causal,
            block,
            out[idx],
            workers,
        )
    return out


def _one_head(q, k, v, scale, mask, is_causal, block, out, workers) -> None:
    """The FlashAttention-2 loop for one 2-D problem, written into ``out`` (L_q × d_v)."""
    n_q, n_k, d_v = q.shape[0], k.shape[0], v.shape[1]
    bq, bk = min(block[0], n_q), min(block[1], n_k)
    v1 = np.empty((n_k, d_v + 1), dtype=q.dtype)  # [V | 1]: the 2nd GEMM also sums the rows
    v1[:, :d_v] = v
    v1[:, d_v] = 1
    k1 = np.empty((n_k, k.shape[1] + 1), dtype=q.dtype)  # [K | 1]: the 1st GEMM subtracts
    k1[:, :-1] = k
    k1[:, -1] = 1
    d_k = k.shape[1]
    starts = range(0, n_q, bq)
    if workers <= 1 or len(starts) == 1:
        bufs = _Buffers(bq, bk, d_k, d_v, q.dtype)
        for i0 in starts:
            _query_block(q, k1, v1, scale, mask, is_causal, i0, min(i0 + bq, n_q), bk, bufs, out)
        return
    local = threading.local()
    limit = _single_threaded_blas()
    errstate = np.geterr()  # the caller's np.errstate does not follow it into the workers

    def run(i0: int) -> None:
        if not hasattr(local, "bufs"):
            local.bufs = _Buffers(bq, bk, d_k, d_v, q.dtype)
        with np.errstate(**errstate):
            _query_block(
                q, k1, v1, scale, mask, is_causal, i0, min(i0 + bq, n_q), bk, local.bufs, out
            )

    # NumPy and BLAS release the GIL, so query blocks run truly in parallel; the costliest
    # blocks (the last ones when causal) go first so that the workers finish together.
    order = reversed(starts) if is_causal else starts
    with limit, ThreadPoolExecutor(max_workers=workers) as pool:
        for f in [pool.submit(run, i0) for i0 in order]:
            f.result()


def default_workers() -> int:
    """Threads for the tiled path: one per core when BLAS can be held to one thread.

    Two Python threads that each call a multi-threaded BLAS oversubscribe the cores (and
    OpenBLAS then serialises them); ``threadpoolctl``, when installed, pins BLAS to one
    thread while the query blocks run in parallel. Without it the tiled path runs its
    query blocks one after the other and lets BLAS use the cores.

    Examples:
        >>> from attention_math.tiled import default_workers
        >>> default_workers() >= 1
        True
    """
    if _controller() is None:
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


@functools.cache
def _controller() -> object | None:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def _single_threaded_blas() -> contextlib.AbstractContextManager:
    c = _controller()
    return contextlib.nullcontext() if c is None else c.limit(limits=1, user_api="blas")


class _Buffers:
    """One worker's scratch space: the score tile and the per-block state, reused."""

    def __init__(self, bq: int, bk: int, d_k: int, d_v: int, dtype: np.dtype) -> None:
        self.qs = np.empty((bq, d_k + 1), dtype=dtype)  # [q · scale | −base]
        self.tile = np.empty((bq, bk), dtype=dtype)  # the one score tile
        self.pv = np.empty((bq, d_v + 1), dtype=dtype)
        self.acc = np.empty((bq, d_v + 1), dtype=dtype)  # [o | ℓ] of the query block
        self.m = np.empty(bq, dtype=dtype)  # running row maxima
        self.m_new = np.empty(bq, dtype=dtype)
        self.alpha = np.empty(bq, dtype=dtype)


def _query_block(q, k1, v1, scale, mask, is_causal, i0, i1, bk, b: _Buffers, out) -> None:
    """Rows i0:i1 of the output: visit the key tiles, keep (m, ℓ, o), divide once."""
    # Overflow in q kᵀ (or +inf + -inf from an additive mask) is not a warning here: it
    # shows as NaN or +inf in the row maxima and raises the untiled path's ValueError.
    with np.errstate(over="ignore", invalid="ignore"):
        _visit_key_tiles(q, k1, v1, scale, mask, is_causal, i0, i1, bk, b, out)


def _visit_key_tiles(q, k1, v1, scale, mask, is_causal, i0, i1, bk, b: _Buffers, out) -> None:
    dtype, n_k, d_k, d_v = q.dtype, k1.shape[0], q.shape[1], v1.shape[1] - 1
    r = i1 - i0
    qs = b.qs[:r]  # [q · scale | −base]: the 1st GEMM returns the shifted scores S − base
    np.multiply(q[i0:i1], scale, out=qs[:, :d_k])  # float32 stays float32
    qs[:, d_k] = 0
    k1t = k1.T  # [K | 1]ᵀ, a transposed view; BLAS reads it as is
    a, mm, mn, al, pv = b.acc[:r], b.m[:r], b.m_new[:r], b.alpha[:r], b.pv[:r]
    a.fill(0)
    mm.fill(-np.inf)
    # causal: row i sees keys 0..i, so no key after i1 - 1 is visible to this block
    j_end = min(n_k, i1) if is_causal else n_k
    for j0 in range(0, j_end, bk):
        j1 = min(j0 + bk, j_end)
        mtile = None if mask is None else mask[i0:i1, j0:j1]
        if mtile is not None and mtile.dtype == np.bool_ and not mtile.any():
            continue  # every score of this tile is masked: skip it, compute nothing
        s = b.tile[:r, : j1 - j0]
        np.matmul(qs, k1t[:, j0:j1], out=s)  # (r, c): scores minus the row's current base
        if mtile is not None:
            if mtile.dtype == np.bool_:
                np.copyto(s, -np.inf, where=~mtile)
            else:
                np.add(s, mtile, out=s, casting="same_kind")
        if is_causal and j1 > i0 + 1:  # the tile crosses the diagonal
            np.copyto(s, -np.inf, where=_above_diagonal(i0, i1, j0, j1))
        np.max(s, axis=1, out=mn)  # δ = rowmax S − base
        if np.isnan(mn).any() or np.isposinf(mn).any():
            raise ValueError(_OVERFLOW.format(dtype.name))
        base = qs[:, d_k]  # −base, a view
        unset = np.isneginf(mm)  # rows that have not seen a visible key yet
        if (mn > _LAZY).any() or (unset & ~np.isneginf(mn)).any():
            # Rescale: the new base is the running max m' = max(m, rowmax S), as in
            # FlashAttention-2. A row with no visible key yet keeps base 0: exp(-inf) = 0.
            mn -= base  # rowmax S (base is −base)
            np.maximum(mn, mm, out=mn)
            shift = np.where(np.isneginf(mn), dtype.type(0), mn)
            np.subtract(mm, shift, out=al)
            np.exp(al, out=al)  # e^{m − m'} rescales the old state (0 on the first tile)
            s -= (shift + base)[:, None]  # S − m' (the GEMM already took the old base off)
            a *= al[:, None]
            mm[...] = mn
            np.negative(shift, out=base)
        # Otherwise no row's max rose by more than _LAZY: keep the old base (the exact
        # result does not depend on the shift), so P ≤ e^{_LAZY} and no rescale pass.
        np.exp(s, out=s)  # P = e^{S − base}, in place
        np.matmul(s, v1[j0:j1], out=pv)  # [P V | P 1]
        a += pv
    ell = a[:, d_v : d_v + 1]
    ell[ell == 0] = 1  # a fully masked row: o = 0 and ℓ = 0, so the output row is 0
    np.divide(a[:, :d_v], ell, out=out[i0:i1])  # the one division, at the end


def _above_diagonal(i0: int, i1: int, j0: int, j1: int) -> NDArray[np.bool_]:
    """True where key ``j`` lies after query ``i`` in the tile rows i0:i1, columns j0:j1."""
    return np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]
