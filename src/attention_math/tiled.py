"""Tiled attention: the online softmax over key tiles (FlashAttention-2 loop order).

The ``L_q × L_k`` score matrix is never formed. Queries are cut into blocks of ``block_q`` rows;
for each query block the keys are visited ``block_k`` at a time, and a running state is kept
per query row (see [`attention_math.derivations.online_softmax`][] for the exact proof):

* ``m`` — the largest score seen so far (the softmax shift),
* ``λ`` — the sum of ``exp(s − m)`` over the keys seen so far,
* ``o`` — the *unnormalised* output ``Σ exp(s − m) v``.

A new tile with scores ``S`` updates them with ``m' = max(m, rowmax S)``,
``λ' = e^{m − m'} λ + Σ e^{S − m'}``, ``o' = e^{m − m'} o + e^{S − m'} V``; the output is
``o / λ``, one division per row at the very end, and ``m + log λ`` (the log-sum-exp) is
what a backward pass would keep.

Speed comes from two matrix products per tile, done by BLAS (GEMM, its general
matrix-matrix product), both computed transposed (keys × queries, the
order OpenBLAS runs fastest for these narrow shapes): ``[K | 1] [q·scale | −b]ᵀ`` and
``[V | 1]ᵀ Pᵀ``. The appended column of ones makes the first product return the scores already
shifted by the row's current base ``b`` and the second return the row sums ``λ`` too, so the
elementwise work per score is one ``exp``, in place in one tile buffer, plus a max pass
only when needed. The base is the running max ``m`` but is only moved (and the state
rescaled) when a tile's row max exceeds it by more than a margin ``c`` (the constant
``RESCALE_MARGIN``): the result does not depend on the shift, and ``P ≤ e^c`` cannot overflow. A
tile is exponentiated without its max pass once every row has a base, and the first tile
with base 0: it is kept if each row sum is ≤ e^c times its number of keys (so ``λ`` stays
below ``L_k · e^c``, as after max passes), and, for the first tile, ≥ ``e^−c``; otherwise it
is recomputed with the max pass (a NaN or ``+inf`` score always takes that path, which
raises). Extra memory: the tile
(``block_q × block_k``), the per-block state (``(d + 1) × block_q``) and ``[K | 1]``,
``[V | 1]ᵀ`` (``L_k × (d + 1)`` each): O(L·d), not O(L²).

This module is the engine behind [`attention`][attention_math.numeric.attention]'s tiled
path, which validates the input; call that function, not these. Which inputs
``attention(block_size=None)`` tiles is the fixed rule
[`takes_tiles`][attention_math.tiled.takes_tiles], and its tile is ``DEFAULT_BLOCK``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from attention_math._checks import (
    OVERFLOW,
    CausalAlignment,
    causal_offset,
    check_count,
    check_flag,
)

_F = NDArray[np.floating]  # a float array (float32 or float64, the working dtype)
_Mask = NDArray[np.bool_] | NDArray[np.floating] | None  # boolean (True = may attend) or additive

# What a user calls: the engine, its thread count and the rule that sends
# ``attention(block_size=None)`` here. Its constants (the tile, the rule's thresholds, the
# rescale margin) are module attributes, documented where they are defined.
__all__ = ["default_workers", "takes_tiles", "tiled_attention", "tiled_attention_with_lse"]

DEFAULT_BLOCK = (256, 1024)
"""The tile, ``(block_q, block_k)`` query rows × keys: of ``tiled_attention``, of the tiled
path ``attention(block_size=None)`` takes, and of ``tiled_backward``. Chosen from the tile sweep
of ``benchmarks/attention_bench.py``: the shapes near it differ by a few per cent."""

TILED_FROM_SCORES = 1024 * 1024
"""``attention(block_size=None)`` tiles a head of at least this many scores ``L_q · L_k``.

On one thread the tiled path takes less CPU time than the one score buffer from L = 512 up,
in float32 and float64 alike; but below this size it runs on one thread while the buffer's
matrix products use every core, so it is here, where its query blocks start running on
several threads (``_THREADS_MIN_SCORES``), that it becomes the faster of the two."""

SCORES_BUDGET_BYTES = 256 * 2**20
"""``attention(block_size=None)`` also tiles when all the scores together (every head of the
batch) would take more than this many bytes: many small heads, as well as one long one."""


def takes_tiles(scores_shape: tuple[int, ...], dtype: np.dtype[Any]) -> bool:
    """Whether [`attention`][attention_math.numeric.attention] with ``block_size=None`` computes
    scores of ``scores_shape`` ``(..., L_q, L_k)`` in ``dtype`` tile by tile.

    A fixed rule on the shape and the dtype, nothing measured: tiled when one head has at
    least ``TILED_FROM_SCORES`` (1024²) scores, or when all of them together would take
    more than ``SCORES_BUDGET_BYTES`` (256 MiB); otherwise one score buffer.

    Examples:
        >>> import numpy as np
        >>> from attention_math.tiled import takes_tiles
        >>> f32 = np.dtype(np.float32)
        >>> takes_tiles((8, 512, 512), f32), takes_tiles((1024, 1024), f32)
        (False, True)
        >>> takes_tiles((512, 512, 512), f32)  # 512 MiB of scores: many small heads
        True
    """
    n_q, n_k = scores_shape[-2], scores_shape[-1]
    n_scores = int(np.prod(scores_shape, dtype=np.int64))
    if n_scores == 0:
        return False  # nothing to tile: the untiled path returns the empty (or zero) output
    return n_q * n_k >= TILED_FROM_SCORES or n_scores * np.dtype(dtype).itemsize > (
        SCORES_BUDGET_BYTES
    )


#: Heads with fewer scores than this run on one thread unless ``workers`` says otherwise.
_THREADS_MIN_SCORES = 2**20

RESCALE_MARGIN = 8.0
"""The margin ``c``: a row keeps its softmax shift until a tile's max exceeds it by more than
this (then the state is rescaled): P ≤ e^c, a few thousand, cannot overflow λ, and most tiles
skip the rescale."""

#: Once every row has a base, a tile skips the max pass when each of its row sums stays
#: below this times its number of keys: then λ ≤ L_k · e^c, the bound that holds
#: after max passes (every P ≤ e^c) and that ``_shrink_large_columns`` relies on;
#: otherwise the tile is redone with the max pass (see ``_visit_key_tiles``).
_FAST_SUM = float(np.exp(RESCALE_MARGIN))

#: The first tile of a query block is tried with base 0 and no max pass too; it is kept if
#: each row sum also stays above this, so that λ ≥ e^{−c} and what underflowed in
#: ``exp`` is negligible beside it, as with a base the row attained (then λ ≥ 1).
_FIRST_MIN_SUM = float(np.exp(-RESCALE_MARGIN))


def block_sizes(block_size: object) -> tuple[int, int]:
    """``block_size`` (a positive int, or a pair ``(block_q, block_k)`` of them) as two ints.

    Raises:
        TypeError: ``block_size`` (or one of the pair) is not an integer (a bool, a float,
            ``None``), or is a sequence other than a pair.
        ValueError: it is zero or negative.

    Examples:
        >>> from attention_math.tiled import block_sizes
        >>> block_sizes(128), block_sizes((64, 512))
        ((128, 128), (64, 512))
        >>> block_sizes(0)
        Traceback (most recent call last):
        ...
        ValueError: block_size must be a positive integer, got 0
        >>> block_sizes((64, 2.5))
        Traceback (most recent call last):
        ...
        TypeError: block_size[1] must be a positive integer, got 2.5
    """
    if isinstance(block_size, tuple | list):
        if len(block_size) != 2:
            raise TypeError(
                "block_size must be a positive integer or a pair (block_q, block_k) of them, "
                f"got {block_size!r}"
            )
        return check_count("block_size[0]", block_size[0]), check_count(
            "block_size[1]", block_size[1]
        )
    b = check_count("block_size", block_size)
    return b, b


def tiled_attention(
    q: NDArray[np.floating],
    k: NDArray[np.floating],
    v: NDArray[np.floating],
    mask: NDArray[np.bool_] | NDArray[np.floating] | None = None,
    *,
    scale: np.floating | float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    block_size: int | tuple[int, int] = DEFAULT_BLOCK,
    workers: int | None = None,
) -> NDArray[np.floating]:
    """``softmax(q kᵀ · scale + mask) v`` computed tile by tile, for validated input.

    Args:
        q: ``(..., L_q, d_k)``, already of the working dtype (float32 or float64).
        k: ``(..., L_k, d_k)``, same dtype.
        v: ``(..., L_k, d_v)``, same dtype.
        mask: ``None``, or a validated boolean/additive mask already broadcastable to the
            scores (its batch dimensions included in the output's).
        scale: the score factor; default ``1/√d_k``. Taken in the working dtype.
        is_causal: query ``i`` sees keys ``0..i`` only (``0..i + L_k − L_q`` with
            ``causal_alignment="bottom-right"``); tiles entirely above the diagonal are
            skipped (never computed).
        causal_alignment: with ``is_causal``, where the diagonal sits when ``L_q ≠ L_k``, as
            in [`causal_mask`][attention_math.numeric.causal_mask].
        block_size: ``(block_q, block_k)``, or one int for both.
        workers: threads over query blocks; default
            [`default_workers`][attention_math.tiled.default_workers], or one thread for heads of
            fewer than ``2**20`` scores. The result does not depend on it (each query block is
            computed the same way).

    Returns:
        The output ``(..., L_q, d_v)`` in the working dtype (a fully masked row is zeros).

    Raises:
        TypeError: ``block_size`` is not a positive int or a pair of them, or ``is_causal``
            is not a bool.
        ValueError: ``block_size`` is zero or negative, or ``causal_alignment`` is unknown.

    Examples:
        >>> import numpy as np
        >>> from attention_math.tiled import tiled_attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.standard_normal((3, 5, 2))
        >>> out = tiled_attention(q, k, v, scale=1.0, block_size=(2, 2))
        >>> s = q @ k.T
        >>> w = np.exp(s - s.max(1, keepdims=True))
        >>> np.allclose(out, (w / w.sum(1, keepdims=True)) @ v)
        True
    """
    out, _ = _tiled(q, k, v, mask, scale, is_causal, causal_alignment, block_size, workers, False)
    return out


def tiled_attention_with_lse(
    q: NDArray[np.floating],
    k: NDArray[np.floating],
    v: NDArray[np.floating],
    mask: NDArray[np.bool_] | NDArray[np.floating] | None = None,
    *,
    scale: np.floating | float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    block_size: int | tuple[int, int] = DEFAULT_BLOCK,
    workers: int | None = None,
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """[`tiled_attention`][attention_math.tiled.tiled_attention] and the log-sum-exp of each row.

    The arguments are those of ``tiled_attention``. The log-sum-exp
    ``lse = log Σ_j exp(q_i·k_j · scale + mask_ij)`` is ``m + log λ`` from the online
    softmax's state, what FlashAttention keeps for its backward pass.

    Returns:
        ``(out, lse)``: the output ``(..., L_q, d_v)`` and ``lse`` ``(..., L_q)``, both in the
            working dtype (``lse = -inf`` for a fully masked row).

    Examples:
        >>> import numpy as np
        >>> from attention_math.tiled import tiled_attention_with_lse
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.standard_normal((3, 5, 2))
        >>> out, lse = tiled_attention_with_lse(q, k, v, scale=1.0, block_size=2)
        >>> np.allclose(lse, np.log(np.exp(q @ k.T).sum(1)))
        True
    """
    out, lse = _tiled(q, k, v, mask, scale, is_causal, causal_alignment, block_size, workers, True)
    assert lse is not None
    return out, lse


def _tiled(
    q: _F,
    k: _F,
    v: _F,
    mask: _Mask,
    scale: np.floating | float | None,
    is_causal: bool,
    causal_alignment: CausalAlignment,
    block_size: int | tuple[int, int],
    workers: int | None,
    want_lse: bool,
) -> tuple[_F, _F | None]:
    """The loop behind both public functions: the output, and ``lse`` if ``want_lse``."""
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    block = block_sizes(block_size)
    offset = causal_offset(n_q, n_k, causal_alignment)
    causal = offset if check_flag("is_causal", is_causal) else None
    s = q.dtype.type(1.0 / np.sqrt(q.shape[-1]) if scale is None else scale)
    if workers is None:
        # below ~1M scores per head, starting threads costs more than they save
        workers = default_workers() if n_q * n_k >= _THREADS_MIN_SCORES else 1
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if mask is not None:
        batch = np.broadcast_shapes(batch, mask.shape[:-2])
        mask = cast(_Mask, np.broadcast_to(mask, (*batch, n_q, n_k)))  # a view: no L×L copy
    out = np.empty((*batch, n_q, d_v), dtype=q.dtype)  # (..., L_q, d_v)
    lse = np.empty((*batch, n_q), dtype=q.dtype) if want_lse else None  # (..., L_q)
    qb = np.broadcast_to(q, (*batch, *q.shape[-2:]))  # (..., L_q, d_k)
    kb = np.broadcast_to(k, (*batch, *k.shape[-2:]))  # (..., L_k, d_k)
    vb = np.broadcast_to(v, (*batch, *v.shape[-2:]))  # (..., L_k, d_v)
    bq, bk = max(1, min(block[0], n_q)), max(1, min(block[1], n_k))  # ≥ 1: empty inputs
    for idx, head in _Head.each(qb, kb, vb, mask, s, causal, bq, bk):
        _one_head(head, out[idx], None if lse is None else lse[idx], workers)
    return out, lse


@dataclass(frozen=True, slots=True)
class _Head:
    """One attention problem as each of its tiles reads it, forward and backward.

    ``tiled_attention`` and [`tiled_backward`][attention_math.tiled_backward.tiled_backward]
    build one per head of the batch (views, no copy) from input they have validated; their
    helpers take it, plus the indices of the tile at hand, in place of a dozen arguments.
    """

    q: _F  # (L_q, d_k)
    k: _F  # (L_k, d_k)
    v: _F  # (L_k, d_v)
    scale: np.floating  # the score factor, in the working dtype
    mask: _Mask  # (L_q, L_k) view (boolean, True = may attend, or additive), or None
    causal: int | None  # the diagonal's offset: row i sees keys 0..i + causal; None: no mask
    bq: int  # query rows per tile
    bk: int  # keys per tile

    @staticmethod
    def each(
        q: _F, k: _F, v: _F, mask: _Mask, scale: np.floating, causal: int | None, bq: int, bk: int
    ) -> Iterator[tuple[tuple[int, ...], _Head]]:
        """Each head of the batch (``q``'s leading dimensions; ``k``, ``v`` and ``mask``
        already broadcast to them) as ``(index, _Head)``, its arrays views, not copies."""
        for idx in np.ndindex(*q.shape[:-2]):
            m = None if mask is None else mask[idx]
            yield idx, _Head(q[idx], k[idx], v[idx], scale, m, causal, bq, bk)


@dataclass(frozen=True, slots=True)
class _Forward:
    """One head's forward loop: the problem, its two GEMM operands and where it writes."""

    head: _Head
    k1: _F  # (L_k, d_k + 1): [K | 1]
    v1t: _F  # (d_v + 1, L_k): [V | 1]ᵀ
    out: _F  # (L_q, d_v): each query block writes its rows
    lse: _F | None  # (L_q,), or None when not asked for


def _one_head(head: _Head, out: _F, lse: _F | None, workers: int) -> None:
    """The FlashAttention-2 loop for one 2-D problem, written into ``out`` (L_q × d_v)."""
    q, k, v = head.q, head.k, head.v
    n_k, d_k, d_v = k.shape[0], k.shape[1], v.shape[1]
    k1 = _scratch("k1", (n_k, d_k + 1), q.dtype)  # [K | 1]: the 1st GEMM subtracts the base
    k1[:, :d_k] = k
    k1[:, d_k] = 1
    v1t = _scratch("v1t", (d_v + 1, n_k), q.dtype)  # [V | 1]ᵀ: the 2nd GEMM also sums rows
    v1t[:d_v] = v.T
    v1t[d_v] = 1
    back = _shrink_large_columns(v1t[:d_v], n_k)
    _query_blocks(_Forward(head=head, k1=k1, v1t=v1t, out=out, lse=lse), workers)
    if back is not None:
        out *= back  # exact: powers of two; |out| ≤ max |v| per column, so no overflow


@dataclass(slots=True)
class _TileState:
    """The online-softmax state of one query block, rows ``i0:i1``, at key tile ``j0:j1``.

    ``m``, ``acc`` and ``qst`` are views into one worker's `_Buffers`; everything is stored
    transposed (features × query rows).
    """

    i0: int  # the query block's rows i0:i1
    i1: int
    qst: _F  # (d_k + 1, r): [q · scale | −base]ᵀ, the 1st GEMM's right operand
    m: _F  # (r,): the running max m, each row's base once it has one (-inf before)
    acc: _F  # (d_v + 1, r): [o | ℓ]ᵀ, the unnormalised output and the row sums λ
    j0: int = 0  # the key tile being visited, keys j0:j1
    j1: int = 0
    ready: bool = False  # every row has a base: a score it attained, or 0 (see below)
    fresh: bool = True  # no tile visited yet: base 0 is tried without a max pass

    @property
    def neg_base(self) -> _F:
        """``−base`` per query row (r,): the last row of ``qst``, which the GEMM subtracts."""
        row: _F = self.qst[-1]
        return row


def _shrink_large_columns(vt: NDArray[np.floating], n_k: int) -> NDArray[np.floating] | None:
    """Scale, in place, each row of ``vt`` (a column of v) too large for the unnormalised sums.

    With ``λ = Σ P ≤ n_k · e^c`` (each tile's row sums ≤ its keys · e^c),
    ``o = Σ P v`` stays below ``n_k · e^c · max |v|``; a
    column whose values would let that overflow is multiplied by a power of two (exact) and
    the factor to undo it is returned (``None`` when no column needs it).
    """
    if vt.size == 0:
        return None
    limit = float(np.finfo(vt.dtype).max) / (4.0 * n_k * np.exp(RESCALE_MARGIN))
    vmax = np.maximum(vt.max(axis=1), -vt.min(axis=1))  # max |v| per column, no copy of v
    if not (vmax > limit).any():
        return None
    exps = np.where(vmax > limit, np.ceil(np.log2(vmax / limit)), 0.0)
    vt *= np.exp2(-exps).astype(vt.dtype)[:, None]
    return np.exp2(exps).astype(vt.dtype)


def _query_blocks(f: _Forward, workers: int) -> None:
    """Every query block of one head, on ``workers`` threads."""
    head = f.head
    n_q, d_k, d_v, bq = head.q.shape[0], head.q.shape[1], head.v.shape[1], head.bq
    starts = range(0, n_q, bq)
    if workers <= 1 or len(starts) == 1:
        bufs = _buffers(bq, head.bk, d_k, d_v, head.q.dtype)
        for i0 in starts:
            _query_block(f, i0, min(i0 + bq, n_q), bufs)
        return
    limit = _single_threaded_blas()
    errstate = np.geterr()  # the caller's np.errstate does not follow it into the workers
    # NumPy and BLAS release the GIL, so query blocks run truly in parallel; the costliest
    # blocks (the last ones when causal) go first so that the workers finish together.
    todo = iter(reversed(starts) if head.causal is not None else starts)
    lock = threading.Lock()
    failed = threading.Event()

    def drain() -> None:
        """Take query blocks until none is left (or a block has raised)."""
        bufs = _buffers(bq, head.bk, d_k, d_v, head.q.dtype)
        with np.errstate(**errstate):
            while not failed.is_set():
                with lock:
                    i0 = next(todo, None)
                if i0 is None:
                    return
                try:
                    _query_block(f, i0, min(i0 + bq, n_q), bufs)
                except BaseException:
                    failed.set()
                    raise

    # The calling thread takes blocks too, rather than sleeping until the others are done:
    # one thread fewer to hand work to and wake (2–7 % faster at L = 2048 and 4096).
    with limit:
        helpers = [_pool(workers - 1).submit(drain) for _ in range(workers - 1)]
        try:
            drain()
        finally:
            for job in helpers:
                job.exception()  # wait for every helper before the buffers go
        for job in helpers:
            job.result()  # a helper's error, if the calling thread had none


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    """The process's pool of ``workers`` helper threads, started once: starting threads on
    every call cost about 1 ms, a tenth of a call at L = 2048. Its tasks never submit to it,
    so callers on several threads may share it without deadlock."""
    with _pools_lock:
        if workers not in _pools:
            _pools[workers] = ThreadPoolExecutor(workers, thread_name_prefix="attention-math")
        return _pools[workers]


def _forget_pools() -> None:
    """In a forked child: none of the parent's threads exist there (and the lock may have
    been held by one of them), so the child starts pools, and a lock, of its own."""
    global _pools_lock
    _pools_lock = threading.Lock()
    _pools.clear()


os.register_at_fork(after_in_child=_forget_pools)


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
def _controller() -> Any:  # a threadpoolctl.ThreadpoolController (untyped), or None
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def _single_threaded_blas() -> contextlib.AbstractContextManager[object]:
    c = _controller()
    return contextlib.nullcontext() if c is None else c.limit(limits=1, user_api="blas")


# Each thread keeps its scratch space from one call to the next: fresh arrays of a few MiB
# per call cost ~500 page faults (about a millisecond in a virtual machine, a tenth of a call
# at L = 2048). Per thread, so that concurrent calls (and the workers of one call) never share.
_local = threading.local()


#: Scratch arrays larger than this are not kept between calls (a long sequence's [K | 1] would
#: stay allocated after the call; its page faults are small beside its O(L²) work).
_SCRATCH_KEEP_BYTES = 4 * 2**20


def _scratch(name: str, shape: tuple[int, ...], dtype: np.dtype) -> _F:
    """This thread's array ``name`` of ``shape`` and ``dtype``, reused while they match. Its
    content is whatever the last call left: every user writes it before reading it."""
    arr: _F | None = getattr(_local, name, None)
    if arr is None or arr.shape != shape or arr.dtype != dtype:
        arr = np.empty(shape, dtype=dtype)
        setattr(_local, name, arr if arr.nbytes <= _SCRATCH_KEEP_BYTES else None)
    return arr


def _buffers(bq: int, bk: int, d_k: int, d_v: int, dtype: np.dtype) -> _Buffers:
    """This thread's `_Buffers` for tiles of ``bq × bk``, reused while the sizes match."""
    key = (bq, bk, d_k, d_v, np.dtype(dtype))
    b: _Buffers | None = getattr(_local, "buffers", None)
    if b is None or b.key != key:
        b = _Buffers(bq, bk, d_k, d_v, dtype)
        _local.buffers = b
    return b


class _Buffers:
    """One worker's scratch space: the score tile and the per-block state, reused.

    Everything is stored transposed (keys or features × query rows), and each buffer is
    flat so that a short last block gets a contiguous view of its own shape.
    """

    def __init__(self, bq: int, bk: int, d_k: int, d_v: int, dtype: np.dtype) -> None:
        self.key = (bq, bk, d_k, d_v, np.dtype(dtype))
        self.qst = np.empty((d_k + 1) * bq, dtype=dtype)  # [q · scale | −base]ᵀ
        self.tile = np.empty(bk * bq, dtype=dtype)  # the one score tile, (S − base)ᵀ
        self.pvt = np.empty((d_v + 1) * bq, dtype=dtype)  # [P V | P 1]ᵀ of one tile
        self.acc = np.empty((d_v + 1) * bq, dtype=dtype)  # [o | ℓ]ᵀ of the query block
        self.m = np.empty(bq, dtype=dtype)  # running row maxima
        self.m_new = np.empty(bq, dtype=dtype)
        self.alpha = np.empty(bq, dtype=dtype)


def _query_block(f: _Forward, i0: int, i1: int, b: _Buffers) -> None:
    """Rows i0:i1 of the output: visit the key tiles, keep (m, ℓ, o), divide once."""
    # Overflow in q kᵀ (or +inf + -inf from an additive mask) is not a warning here: it
    # shows as NaN or +inf in the row maxima and raises the untiled path's ValueError.
    with np.errstate(over="ignore", invalid="ignore"):
        state = _start(f.head, i0, i1, b)
        _visit_key_tiles(f, state, b)
        _finish(f, state)


def _start(head: _Head, i0: int, i1: int, b: _Buffers) -> _TileState:
    """The state before the first key tile: no base yet, ``o = 0``, ``λ = 0``."""
    d_k, d_v, r = head.q.shape[1], head.v.shape[1], i1 - i0
    qst = b.qst[: (d_k + 1) * r].reshape(d_k + 1, r)
    np.multiply(head.q[i0:i1].T, head.scale, out=qst[:d_k])  # float32 stays float32
    qst[d_k] = 0  # −base: 0 until a row has one
    state = _TileState(
        i0=i0, i1=i1, qst=qst, m=b.m[:r], acc=b.acc[: (d_v + 1) * r].reshape(d_v + 1, r)
    )
    state.acc.fill(0)
    state.m.fill(-np.inf)
    return state


def _visit_key_tiles(f: _Forward, t: _TileState, b: _Buffers) -> None:
    # The tile is computed transposed, Sᵀ = [K | 1] [q · scale | −base]ᵀ (keys × queries):
    # with d_k + 1 = 65 inner columns this order runs ~15 % faster in OpenBLAS than S = Q Kᵀ.
    head, v1t = f.head, f.v1t
    dtype, n_k, d_v = head.q.dtype, head.k.shape[0], head.v.shape[1]
    r = t.i1 - t.i0
    pvt = b.pvt[: (d_v + 1) * r].reshape(d_v + 1, r)
    mn, al = b.m_new[:r], b.alpha[:r]
    acc, mm, neg_base = t.acc, t.m, t.neg_base
    # causal: row i sees keys 0..i + causal, so no key after i1 - 1 + causal is visible
    j_end = n_k if head.causal is None else max(0, min(n_k, t.i1 + head.causal))
    for j0 in range(0, j_end, head.bk):
        t.j0, t.j1 = j0, min(j0 + head.bk, j_end)
        mtile = None if head.mask is None else head.mask[t.i0 : t.i1, t.j0 : t.j1].T
        if mtile is not None and mtile.dtype == np.bool_ and not mtile.any():
            continue  # every score of this tile is masked: skip it, compute nothing
        st = b.tile[: (t.j1 - t.j0) * r].reshape(t.j1 - t.j0, r)
        _shifted_scores(f, t, mtile, st)
        if t.ready or t.fresh:
            # Fast path, no max pass: exponentiate against the old base and keep the tile
            # if its row sums stay below (its keys) · e^c, so that ℓ stays below
            # L_k · e^c as after max passes and nothing downstream can overflow. The
            # base is a score the row attained (ℓ ≥ 1) or, from the first tile, 0 with
            # ℓ ≥ e^{−c}: what underflows here is negligible beside ℓ. A NaN or +inf
            # score fails the test too and is reported by the slow path; so does a row
            # with no visible key in the first tile (its sum is 0).
            np.exp(st, out=st)
            np.matmul(v1t[:, t.j0 : t.j1], st, out=pvt)  # [P V | P 1]ᵀ
            sums = pvt[d_v]
            if (sums <= (t.j1 - t.j0) * _FAST_SUM).all() and (
                t.ready or (sums >= _FIRST_MIN_SUM).all()
            ):
                if t.fresh:
                    mm.fill(0)  # every row's base is 0 (neg_base is 0 already)
                    t.ready, t.fresh = True, False
                acc += pvt
                continue
            _shifted_scores(f, t, mtile, st)  # redo
        t.fresh = False
        np.max(st, axis=0, out=mn)  # δ = rowmax S − base
        if np.isnan(mn).any() or np.isposinf(mn).any():
            raise ValueError(OVERFLOW.format(dtype.name))
        unset = np.isneginf(mm)  # rows that have not seen a visible key yet
        if (mn > RESCALE_MARGIN).any() or (unset & ~np.isneginf(mn)).any():
            # Rescale: the new base is the running max m' = max(m, rowmax S), as in
            # FlashAttention-2. A row with no visible key yet keeps base 0: exp(-inf) = 0.
            mn -= neg_base  # rowmax S
            np.maximum(mn, mm, out=mn)
            shift = np.where(np.isneginf(mn), dtype.type(0), mn)
            np.subtract(mm, shift, out=al)
            np.exp(al, out=al)  # e^{m − m'} rescales the old state (0 on the first tile)
            acc *= al
            mm[...] = mn
            # If the GEMM subtracted an old base, S − base was rounded at that base's
            # magnitude (a row whose first keys carry a −1e9 padding mask has a base near
            # −1e9): compute S − m' afresh rather than correct the rounded tile.
            recompute = neg_base.any()
            np.negative(shift, out=neg_base)
            if recompute:
                _shifted_scores(f, t, mtile, st)
            else:
                st -= shift  # no base yet: the tile holds S itself, so this is S − m'
            t.ready = not np.isneginf(mm).any()
        # Otherwise no row's max rose by more than RESCALE_MARGIN: keep the old base (the exact
        # result does not depend on the shift), so P ≤ e^c and no rescale pass.
        np.exp(st, out=st)  # P = e^{S − base}, in place
        np.matmul(v1t[:, t.j0 : t.j1], st, out=pvt)  # [P V | P 1]ᵀ
        acc += pvt


def _finish(f: _Forward, t: _TileState) -> None:
    """``o / ℓ`` into the output rows, and ``base + log ℓ`` into ``lse`` if asked for."""
    d_v = t.acc.shape[0] - 1
    ell = t.acc[d_v]
    if f.lse is not None:  # log Σ e^S = base + log ℓ; a fully masked row has ℓ = 0: -inf
        with np.errstate(divide="ignore"):
            np.log(ell, out=f.lse[t.i0 : t.i1])
        f.lse[t.i0 : t.i1] -= t.neg_base
    ell[ell == 0] = 1  # a fully masked row: o = 0 and ℓ = 0, so the output row is 0
    np.divide(t.acc[:d_v], ell, out=f.out[t.i0 : t.i1].T)  # the one division, at the end


def _shifted_scores(f: _Forward, t: _TileState, mtile: _Mask, st: _F) -> None:
    """(S − base)ᵀ for the keys j0:j1 and queries i0:i1 of ``t``, masked, into ``st``."""
    np.matmul(f.k1[t.j0 : t.j1], t.qst, out=st)
    head = f.head
    if mtile is not None:
        if mtile.dtype == np.bool_:
            np.copyto(st, -np.inf, where=np.logical_not(mtile))
        else:
            np.add(st, mtile, out=st, casting="same_kind")
    if head.causal is None:
        return
    c = head.causal
    lo = max(t.j0, t.i0 + 1 + c)  # keys before i0 + 1 + causal are visible to every row
    if t.j1 > lo:  # the tile crosses the diagonal: mask only the keys past it
        np.copyto(st[lo - t.j0 :], -np.inf, where=_after_query(t.i0 + c, t.i1 + c, lo, t.j1))


def _after_query(i0: int, i1: int, j0: int, j1: int) -> NDArray[np.bool_]:
    """True where key ``j`` comes after query ``i``, keys j0:j1 × queries i0:i1 (the query
    positions shifted by the causal offset)."""
    return np.arange(j0, j1)[:, None] > np.arange(i0, i1)[None, :]
