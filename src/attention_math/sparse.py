"""Sparse selection: attention over the keys a rule keeps, and what dropping the rest costs.

Top-k attention keeps, for each query, ``k`` keys and renormalises the softmax over them. Which
``k``: the largest scores (`topk_mask` on ``q kᵀ``), or those a cheaper scorer prefers:
DeepSeek Sparse Attention's *lightning indexer* (`indexer_scores`, eq. (1) of the
DeepSeek-V3.2-Exp report), or Native Sparse Attention's blocks (`nsa_attention`: a compressed
branch of pooled blocks, a branch of the blocks its scores select, a sliding window, mixed by
gates; Yuan et al. 2025, §3.3).

The error of keeping a set ``S`` is exact (`topk_error`). With the dense weights ``p``, the
discarded mass ``p_S̄ = Σ_{j∉S} p_j`` and ``o_S = Σ_{j∈S} p_j v_j / (1 − p_S̄)``,
``o − o_S = p_S̄ (o_{S̄} − o_S)``, where ``o_{S̄}`` is attention over the discarded keys alone.
Both are averages of values, so ``‖o − o_S‖ ≤ p_S̄ max_{i∉S, j∈S} ‖v_i − v_j‖ ≤ 2 p_S̄ max_j ‖v_j‖``,
and two keys with opposite values attain the last bound
([`derivations.sparse`][attention_math.derivations.sparse] proves the identity in SymPy).

Counting conventions of the costs (`decode_cost`, `indexer_cost`): a multiply-add is 2 FLOPs;
bytes are those read from memory for one decoded token, the cache of every key scored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import (
    as_float,
    check_count,
    check_flag,
    check_qkv,
    check_scale,
    is_real_dtype,
)
from attention_math.numeric import (
    attention,
    attention_weights,
    causal_mask,
    sliding_window_mask,
)

__all__ = [
    "DEEPSEEK_V32",
    "Cost",
    "NSAOutput",
    "TopkError",
    "causal_pairs",
    "compress_blocks",
    "compressed_block_mask",
    "decode_cost",
    "indexer_cost",
    "indexer_scores",
    "nsa_attention",
    "selected_block_mask",
    "selection_scores",
    "topk_attention",
    "topk_error",
    "topk_mask",
]

_DSA = "https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf"
_NSA = "https://arxiv.org/abs/2502.11089"

DEEPSEEK_V32: dict[str, int] = {
    "num_attention_heads": 128,
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
    "index_n_heads": 64,
    "index_head_dim": 128,
    "index_topk": 2048,
}
"""DeepSeek-V3.2-Exp's attention sizes, from its published ``config.json``
(https://huggingface.co/deepseek-ai/DeepSeek-V3.2-Exp; the defaults of transformers'
``DeepseekV32Config`` are the same): 128 query heads reading one cached latent of
``kv_lora_rank + qk_rope_head_dim = 576`` numbers per token, and an indexer of 64 heads of
width 128 that keeps 2,048 keys."""


def _scores(name: str, x: ArrayLike) -> NDArray[np.floating]:
    """``x`` as float scores, ``-inf`` allowed (a masked key), NaN and ``+inf`` refused."""
    a = np.asarray(x)
    if not is_real_dtype(a.dtype):
        raise TypeError(f"{name} must hold real numbers (int or float), got dtype {a.dtype}")
    a = (
        a.astype(np.float64)
        if np.issubdtype(a.dtype, np.integer)
        else a.astype(np.float32 if a.dtype.name == "bfloat16" else a.dtype)
    )
    if a.ndim < 2:
        raise ValueError(f"{name} must have shape (..., L_q, L_k), got {a.shape}")
    if np.isnan(a).any() or np.isposinf(a).any():
        raise ValueError(f"{name} may hold real numbers and -inf only, not NaN or +inf")
    return a


def _bool_mask(name: str, mask: ArrayLike, shape: tuple[int, ...]) -> NDArray[np.bool_]:
    """``mask`` as a boolean array broadcast to ``shape`` (True = may attend)."""
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"{name} must be boolean (True = may attend), got dtype {m.dtype}")
    try:
        return np.broadcast_to(m, shape)
    except ValueError:
        raise ValueError(
            f"{name} of shape {m.shape} does not broadcast to the scores' shape {shape}"
        ) from None


def topk_mask(scores: ArrayLike, top_k: int, mask: ArrayLike | None = None) -> NDArray[np.bool_]:
    """The ``top_k`` largest scores of each row among the allowed keys: a boolean mask.

    Ties go to the earlier key. A row with fewer than ``top_k`` allowed keys keeps them all,
    so with ``top_k`` at least the number of allowed keys the mask is ``mask`` itself.

    Args:
        scores: ``(..., L_q, L_k)`` real numbers (the attention scores ``q kᵀ``, or an
            indexer's, `indexer_scores`); ``-inf`` counts as not allowed.
        top_k: how many keys each query keeps, a positive integer.
        mask: boolean, broadcastable to ``scores`` (True = may attend); ``None``: all keys.

    Returns:
        ``(..., L_q, L_k)`` boolean: True at the kept keys, at most ``top_k`` per row.

    Raises:
        ValueError: ``top_k < 1``, NaN or ``+inf`` in ``scores``, or a mask that does not
            broadcast.
        TypeError: a non-boolean mask, or a ``top_k`` that is not an integer.

    Examples:
        >>> from attention_math.sparse import topk_mask
        >>> topk_mask([[3.0, 1.0, 2.0, 5.0]], 2).astype(int)
        array([[1, 0, 0, 1]])
        >>> topk_mask([[3.0, 1.0, 2.0, 5.0]], 2, mask=[True, True, True, False]).astype(int)
        array([[1, 0, 1, 0]])

    See Also:
        - [`topk_attention`][attention_math.sparse.topk_attention]: attention over these keys.
        - [`indexer_scores`][attention_math.sparse.indexer_scores]: DeepSeek's scores to rank.

    References:
        - [DeepSeek-AI, 2025](https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf),
          DeepSeek-V3.2-Exp, eq. (2): attention over the keys of the top-k index scores.
    """
    k = check_count("top_k", top_k)
    s = _scores("scores", scores)  # (..., L_q, L_k)
    allowed = ~np.isneginf(s)  # (..., L_q, L_k)
    if mask is not None:
        allowed = allowed & _bool_mask("mask", mask, s.shape)
    ranked = np.where(allowed, s, -np.inf)  # (..., L_q, L_k)
    order = np.argsort(-ranked, axis=-1, kind="stable")  # (..., L_q, L_k): best first
    rank = np.empty_like(order)  # (..., L_q, L_k): each key's place in its row's order
    np.put_along_axis(rank, order, np.arange(s.shape[-1]), axis=-1)
    out: NDArray[np.bool_] = (rank < k) & allowed
    return out


def indexer_scores(
    q_index: ArrayLike, w_index: ArrayLike, k_index: ArrayLike, *, scale: float = 1.0
) -> NDArray[np.floating]:
    """DeepSeek Sparse Attention's lightning indexer: ``I_ts = Σ_j w_tj ReLU(q_tj · k_s)``.

    Eq. (1) of the DeepSeek-V3.2-Exp report: each of ``H_I`` indexer heads scores query ``t``
    against key ``s`` with a dot product, the ReLU drops the negative ones, and a weight
    ``w_tj`` per query and head (derived from the query token) sums them. The keys ``k_s``
    are shared by the heads (one per token). ``scale`` multiplies every dot product before the
    ReLU (Hugging Face's ``DeepseekV32Indexer`` uses ``1/√d_I`` and ``w · H_I^(-1/2)``):
    a positive factor changes no ranking.

    Args:
        q_index: the indexer's queries ``(..., L_q, H_I, d_I)``.
        w_index: the heads' weights ``(..., L_q, H_I)``.
        k_index: the indexer's keys ``(..., L_k, d_I)``.
        scale: a finite factor ``≥ 0`` on the dot products.

    Returns:
        The index scores ``(..., L_q, L_k)``.

    Raises:
        ValueError: shapes that do not fit together (each named), or a bad ``scale``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.sparse import indexer_scores
        >>> q = np.array([[[1.0, 0.0], [0.0, 1.0]]])  # one query, two heads of width 2
        >>> w = np.array([[2.0, -1.0]])  # the heads' weights for that query
        >>> k = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 2.0]])  # three keys
        >>> indexer_scores(q, w, k)  # 2·ReLU(k₀) − 1·ReLU(k₁)
        array([[ 1.,  2., -2.]])

    See Also:
        - [`topk_mask`][attention_math.sparse.topk_mask]: the keys these scores keep.
        - [`topk_attention`][attention_math.sparse.topk_attention] with ``index_scores=``.

    References:
        - [DeepSeek-AI, 2025](https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf),
          DeepSeek-V3.2-Exp, §2.1, eq. (1).
    """
    q = as_float("q_index", q_index, min_ndim=3)
    w = as_float("w_index", w_index, min_ndim=2)
    k = as_float("k_index", k_index, min_ndim=2)
    if w.shape[-2:] != q.shape[-3:-1]:
        raise ValueError(
            f"w_index must have shape (..., L_q, H_I) = (..., {q.shape[-3]}, {q.shape[-2]}) "
            f"to match q_index of shape {q.shape}, got {w.shape}"
        )
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"q_index and k_index must share d_I (last axis): q_index has shape {q.shape}, "
            f"k_index has shape {k.shape}"
        )
    s = check_scale(scale, q.shape[-1])
    dots = np.einsum("...thd,...sd->...ths", q, k) * s  # (..., L_q, H_I, L_k): per-head scores
    relu = np.maximum(dots, 0.0)  # (..., L_q, H_I, L_k)
    out: NDArray[np.floating] = np.einsum("...th,...ths->...ts", w, relu)  # (..., L_q, L_k)
    return out


def topk_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    top_k: int,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    index_scores: ArrayLike | None = None,
) -> NDArray[np.floating]:
    """Attention over ``top_k`` keys per query: ``softmax`` of the kept scores, times their values.

    The keys are those of the ``top_k`` largest scores ``q kᵀ · scale`` (the smallest
    discarded weight mass ``p_S̄`` for ``top_k`` keys, see `topk_error`), or of the largest
    ``index_scores`` when given (DeepSeek Sparse Attention: the indexer chooses, the attention
    scores weigh). Masked keys (``mask`` False, or in the future when ``is_causal``) are never
    kept. With ``top_k`` at least the number of allowed keys this is
    [`attention`][attention_math.numeric.attention] exactly.

    Args:
        q: queries ``(..., L_q, d_k)``.
        k: keys ``(..., L_k, d_k)``.
        v: values ``(..., L_k, d_v)``.
        top_k: keys kept per query, a positive integer.
        mask: boolean, broadcastable to ``(..., L_q, L_k)`` (True = may attend).
        scale: factor on the scores; default ``1/√d_k``.
        is_causal: query ``i`` sees keys ``0..i`` only.
        index_scores: ``(..., L_q, L_k)`` scores that choose the keys instead of ``q kᵀ``.

    Returns:
        The output ``(..., L_q, d_v)``.

    Raises:
        ValueError: shapes that do not fit (named), ``top_k < 1``, NaN in ``index_scores``.
        TypeError: a non-boolean mask.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> from attention_math.sparse import topk_attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.normal(size=(3, 5, 4))
        >>> bool(np.allclose(topk_attention(q, k, v, 5), attention(q, k, v)))
        True
        >>> topk_attention(q[:1], k, v, 1).round(4) == v[np.argmax(q[0] @ k.T)].round(4)
        array([[ True,  True,  True,  True]])

    See Also:
        - [`topk_mask`][attention_math.sparse.topk_mask]: the keys kept.
        - [`topk_error`][attention_math.sparse.topk_error]: its error, exactly, and the bound.
        - [`indexer_scores`][attention_math.sparse.indexer_scores]: DeepSeek's choice of keys.
        - [`nsa_attention`][attention_math.sparse.nsa_attention]: blocks instead of keys.

    References:
        - [DeepSeek-AI, 2025](https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf),
          DeepSeek-V3.2-Exp, eq. (2).
        - [Gupta et al., 2021](https://arxiv.org/abs/2106.06899), "Memory-efficient
          Transformers via Top-k Attention".
    """
    qa, ka, va, batch = check_qkv(q, k, v)
    n_q, n_k = qa.shape[-2], ka.shape[-2]
    shape = (*batch, n_q, n_k)
    allowed = np.ones(shape, dtype=bool)  # (..., L_q, L_k)
    if mask is not None:
        allowed = allowed & _bool_mask("mask", mask, shape)
    if check_flag("is_causal", is_causal):
        allowed = allowed & causal_mask(n_q, n_k)
    s = check_scale(scale, qa.shape[-1])
    if index_scores is None:
        ranking = qa @ np.swapaxes(ka, -1, -2) * s  # (..., L_q, L_k): the scores themselves
    else:
        ranking = _scores("index_scores", index_scores)  # (..., L_q, L_k)
        if ranking.shape[-2:] != shape[-2:] or np.broadcast_shapes(ranking.shape, shape) != shape:
            raise ValueError(
                f"index_scores must have the scores' shape {shape} = (..., L_q, L_k), "
                f"got {ranking.shape}"
            )
    kept = topk_mask(np.broadcast_to(ranking, shape), top_k, allowed)  # (..., L_q, L_k)
    return attention(qa, ka, va, kept, scale=s)


class TopkError(NamedTuple):
    """What keeping only some keys costs, per query row (each ``(...,)``)."""

    error: NDArray[np.floating]
    """``‖o − o_S‖``, the Euclidean norm of the change in the output."""
    discarded: NDArray[np.floating]
    """``p_S̄ = Σ_{j∉S} p_j``, the dense weight of the keys dropped."""
    bound_spread: NDArray[np.floating]
    """``p_S̄ · max_{i∉S, j∈S} ‖v_i − v_j‖`` over keys of positive weight: the tight bound."""
    bound: NDArray[np.floating]
    """``2 p_S̄ · max_j ‖v_j‖`` over keys of positive weight: the bound in the values' size."""


def topk_error(p: ArrayLike, v: ArrayLike, kept: ArrayLike) -> TopkError:
    """The exact error of attending to the kept keys only, and its two bounds.

    With the dense weights ``p`` of a row (summing to 1), ``p_S̄`` the weight of the keys not
    kept, ``o = Σ_j p_j v_j`` and ``o_S = Σ_{j∈S} p_j v_j / (1 − p_S̄)`` (the kept weights
    renormalised: what `topk_attention` computes), ``o − o_S = p_S̄ (o_{S̄} − o_S)`` where
    ``o_{S̄}`` averages the discarded values with their weights. ``o_S`` and ``o_{S̄}`` are
    each in the convex hull of their values, so
    ``‖o − o_S‖ ≤ p_S̄ max_{i∉S, j∈S} ‖v_i − v_j‖ ≤ 2p_S̄ max_j ‖v_j‖``. The error is 0 when
    ``p_S̄ = 0`` (every dropped key has weight 0: masked, or ``top_k`` covers the allowed keys)
    or when ``o_{S̄} = o_S``.

    Args:
        p: dense attention weights ``(..., L_k)``, each row summing to 1.
        v: values ``(L_k, d_v)`` or ``(..., L_k, d_v)``.
        kept: boolean ``(..., L_k)``, True at the keys kept; each row must keep positive weight.

    Returns:
        ``TopkError(error, discarded, bound_spread, bound)``, each ``(...,)``.

    Raises:
        ValueError: shapes that do not fit, weights negative or not summing to 1, or a row
            whose kept keys carry no weight (its ``o_S`` is 0/0).
        TypeError: ``kept`` not boolean.

    Examples:
        >>> import numpy as np
        >>> from attention_math.sparse import topk_error
        >>> p = np.array([0.75, 0.25])  # two keys, the second dropped: p_S̄ = 1/4
        >>> v = np.array([[1.0], [-1.0]])  # opposite values: the bound is attained
        >>> e = topk_error(p, v, np.array([True, False]))
        >>> float(e.error), float(e.discarded), float(e.bound_spread), float(e.bound)
        (0.5, 0.25, 0.5, 0.5)

    See Also:
        - [`topk_attention`][attention_math.sparse.topk_attention]: the ``o_S`` measured here.
        - [`derivations.sparse`][attention_math.derivations.sparse]: the identity in SymPy.

    References:
        - [Gupta et al., 2021](https://arxiv.org/abs/2106.06899): top-k attention.
        - [DeepSeek-AI, 2025](https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf):
          the indexer is trained so that its top-k keys hold the attention's weight.
    """
    pa = as_float("p", p, min_ndim=1)
    va = as_float("v", v, min_ndim=2)
    s = np.asarray(kept)
    if s.dtype != np.bool_:
        raise TypeError(f"kept must be boolean (True = kept), got dtype {s.dtype}")
    if s.shape != pa.shape:
        raise ValueError(f"kept must have p's shape {pa.shape}, got {s.shape}")
    if va.shape[-2] != pa.shape[-1]:
        raise ValueError(
            f"v must have L_k = {pa.shape[-1]} rows (second-to-last axis) like p's last axis: "
            f"p has shape {pa.shape}, v has shape {va.shape}"
        )
    if (pa < 0).any() or not np.allclose(pa.sum(axis=-1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("p must hold attention weights: non-negative, each row summing to 1")
    kept_mass = np.where(s, pa, 0.0).sum(axis=-1)  # (...,): 1 − p_S̄
    if (kept_mass <= 0).any():
        raise ValueError("every row must keep some weight: o_S is 0/0 when the kept keys have none")
    eps = np.where(s, 0.0, pa).sum(axis=-1)  # (...,): the discarded mass
    o = np.einsum("...j,...jd->...d", pa, va)  # (..., d_v): dense output
    o_s = np.einsum("...j,...jd->...d", np.where(s, pa, 0.0), va) / kept_mass[..., None]
    error = np.linalg.norm(o - o_s, axis=-1)  # (...,)
    live = pa > 0  # (..., L_k): keys of weight 0 are neither in o nor in o_S
    norms = np.linalg.norm(va, axis=-1)  # (..., L_k)
    v_max = np.where(live, norms, 0.0).max(axis=-1)  # (...,)
    diff = np.linalg.norm(va[..., :, None, :] - va[..., None, :, :], axis=-1)  # (..., L_k, L_k)
    pair = (live & ~s)[..., :, None] & (live & s)[..., None, :]  # (..., L_k, L_k): i ∉ S, j ∈ S
    spread = np.where(pair, diff, 0.0).max(axis=(-2, -1))  # (...,)
    return TopkError(error, eps, eps * spread, 2 * eps * v_max)


# ---- Native Sparse Attention (Yuan et al., 2025, §3.3) ----


def compress_blocks(
    x: ArrayLike,
    block: int,
    stride: int,
    phi: Callable[[NDArray[np.floating]], NDArray[np.floating]] | None = None,
) -> NDArray[np.floating]:
    """NSA's compressed keys (or values): each block of ``block`` tokens, every ``stride``
    tokens, mapped to one vector by ``phi``.

    Eq. (7) of NSA: ``K̃ᶜᵐᵖ = {φ(k_{id+1 : id+l}) | 0 ≤ i ≤ ⌊(t − l)/d⌋}``, with ``l = block``
    and ``d = stride`` (``d < l`` overlaps the blocks). In the paper ``φ`` is a learned MLP
    with an intra-block position encoding; the default here is the mean of the block, the
    simplest ``φ`` (a learned linear ``φ`` with equal weights).

    Args:
        x: the keys or values ``(..., L, d)``.
        block: ``l``, the tokens per block.
        stride: ``d``, the step between block starts (``1 ≤ d ≤ l``).
        phi: maps the blocks ``(..., n_blocks, l, d)`` to ``(..., n_blocks, d)``; default:
            the mean over each block.

    Returns:
        ``(..., n_blocks, d)`` with ``n_blocks = ⌊(L − l)/d⌋ + 1`` (0 when ``L < l``).

    Raises:
        ValueError: ``block`` or ``stride`` not positive, ``stride > block``, or a ``phi``
            whose result has the wrong shape.

    Examples:
        >>> import numpy as np
        >>> from attention_math.sparse import compress_blocks
        >>> compress_blocks(np.arange(6.0)[:, None], block=4, stride=2)  # blocks 0-3, 2-5
        array([[1.5],
               [3.5]])

    See Also:
        - [`compressed_block_mask`][attention_math.sparse.compressed_block_mask]: which
          blocks a query may read.
        - [`nsa_attention`][attention_math.sparse.nsa_attention]: the three branches.

    References:
        - [Yuan et al., 2025](https://arxiv.org/abs/2502.11089), Native Sparse Attention,
          §3.3.1, eq. (7).
    """
    a = as_float("x", x, min_ndim=2, allow_empty=True)
    ln, st = check_count("block", block), check_count("stride", stride)
    if st > ln:
        raise ValueError(f"stride must be at most block (no token left out), got {st} > {ln}")
    n = a.shape[-2]
    n_blocks = (n - ln) // st + 1 if n >= ln else 0
    starts = np.arange(n_blocks) * st  # (n_blocks,)
    blocks = a[..., starts[:, None] + np.arange(ln), :]  # (..., n_blocks, l, d)
    out = blocks.mean(axis=-2) if phi is None else np.asarray(phi(blocks))  # (..., n_blocks, d)
    want = (*a.shape[:-2], n_blocks, a.shape[-1])
    if out.shape != want:
        raise ValueError(f"phi must map the blocks {blocks.shape} to {want}, got {out.shape}")
    return out


def compressed_block_mask(n_q: int, n_blocks: int, block: int, stride: int) -> NDArray[np.bool_]:
    """Which compressed blocks each query sees: block ``i`` (tokens ``i·d … i·d + l − 1``)
    once all its tokens are at or before the query (positions from 0): ``i·d + l − 1 ≤ t``.

    Examples:
        >>> from attention_math.sparse import compressed_block_mask
        >>> compressed_block_mask(6, 2, block=4, stride=2).astype(int)
        array([[0, 0],
               [0, 0],
               [0, 0],
               [1, 0],
               [1, 0],
               [1, 1]])

    See Also:
        - [`compress_blocks`][attention_math.sparse.compress_blocks]: the blocks.

    References:
        - [Yuan et al., 2025](https://arxiv.org/abs/2502.11089), eq. (7): ``i ≤ ⌊(t − l)/d⌋``.
    """
    n_q = check_count("n_q", n_q, minimum=0)
    n_blocks = check_count("n_blocks", n_blocks, minimum=0)
    ln, st = check_count("block", block), check_count("stride", stride)
    last = np.arange(n_blocks) * st + ln - 1  # (n_blocks,): each block's last token
    out: NDArray[np.bool_] = last[None, :] <= np.arange(n_q)[:, None]  # (n_q, n_blocks)
    return out


def selection_scores(
    p_cmp: ArrayLike, block: int, stride: int, select_block: int, n_select: int
) -> NDArray[np.floating]:
    """NSA's importance of each selection block, from the compressed branch's weights.

    Eq. (9): ``p_slc[j] = Σ_{m<l'/d} Σ_{n<l/d} p_cmp[(l'/d) j − m − n]`` in the paper's
    indices from 1 (``l'`` = ``select_block``); from 0, as here, compression block
    ``(l'/d)(j + 1) − 1 − m − n``. Each compression block counts as many times as it has
    strides ``d`` inside selection block ``j``: the overlap, in units of ``d``. With
    ``l' = l = d`` this is ``p_cmp`` itself. (For grouped heads, eq. (10) sums this over the
    heads of the group.)

    Args:
        p_cmp: the compressed branch's weights ``(..., L_q, n_blocks)``.
        block: ``l``, the tokens of a compression block.
        stride: ``d``, the step between compression blocks (it divides ``l`` and ``l'``).
        select_block: ``l'``, the tokens of a selection block.
        n_select: the number of selection blocks, ``⌈L_k / l'⌉``.

    Returns:
        ``(..., L_q, n_select)``.

    Raises:
        ValueError: ``d`` not dividing ``l`` or ``l'``, or ``l' < l``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.sparse import selection_scores
        >>> p = np.array([[0.1, 0.2, 0.3, 0.4]])  # blocks of 4 every 2 tokens
        >>> selection_scores(p, block=4, stride=2, select_block=4, n_select=3)
        array([[0.4, 1.2, 0.4]])

    See Also:
        - [`selected_block_mask`][attention_math.sparse.selected_block_mask]: the top blocks.

    References:
        - [Yuan et al., 2025](https://arxiv.org/abs/2502.11089), §3.3.2, eqs. (8)-(10).
    """
    p = as_float("p_cmp", p_cmp, min_ndim=2, allow_empty=True)
    ln, st = check_count("block", block), check_count("stride", stride)
    lp, n_sel = check_count("select_block", select_block), check_count("n_select", n_select)
    if ln % st or lp % st or lp < ln:
        raise ValueError(
            f"eq. (9) needs stride d dividing block l and select_block l', and l ≤ l': "
            f"got l = {ln}, d = {st}, l' = {lp}"
        )
    n_blocks = p.shape[-1]
    out = np.zeros((*p.shape[:-1], n_sel))  # (..., L_q, n_select)
    for j in range(n_sel):
        for m in range(lp // st):
            for n in range(ln // st):
                i = (lp // st) * (j + 1) - 1 - m - n  # eq. (9), counted from 0
                if 0 <= i < n_blocks:
                    out[..., j] += p[..., i]
    return out


def selected_block_mask(
    p_slc: ArrayLike,
    top_n: int,
    select_block: int,
    n_k: int,
    *,
    n_initial: int = 0,
    n_local: int = 0,
) -> NDArray[np.bool_]:
    """The tokens of each query's ``top_n`` selection blocks, causal: NSA's eqs. (11)-(12).

    A query at position ``t`` may choose the blocks that start at or before ``t``, ranked by
    ``p_slc`` (ties to the earlier block); the first ``n_initial`` blocks and the ``n_local``
    blocks ending with ``t``'s own are always chosen and count among the ``top_n`` (the
    paper's 1 initial and 2 local of 16). Keys after ``t`` are never attended to.

    Args:
        p_slc: block scores ``(L_q, n_select)`` (`selection_scores`; query ``t`` at position
            ``t``).
        top_n: blocks kept per query.
        select_block: ``l'``, tokens per selection block.
        n_k: the number of keys ``L_k``.
        n_initial: blocks from the start always kept.
        n_local: blocks ending with the query's own block always kept.

    Returns:
        ``(L_q, L_k)`` boolean.

    Examples:
        >>> import numpy as np
        >>> from attention_math.sparse import selected_block_mask
        >>> p = np.array([[0.0, 0.0], [0.0, 0.0], [0.7, 0.3], [0.1, 0.9]])
        >>> selected_block_mask(p, 1, 2, 4).astype(int)  # blocks of 2 tokens
        array([[1, 0, 0, 0],
               [1, 1, 0, 0],
               [1, 1, 0, 0],
               [0, 0, 1, 1]])

    See Also:
        - [`selection_scores`][attention_math.sparse.selection_scores]: the scores ranked.
        - [`topk_mask`][attention_math.sparse.topk_mask]: the same ranking, key by key.

    References:
        - [Yuan et al., 2025](https://arxiv.org/abs/2502.11089), §3.3.2, eqs. (11)-(12), and
          §4.1 (16 blocks of 64, 1 initial and 2 local).
    """
    p = as_float("p_slc", p_slc, min_ndim=2, allow_empty=True)
    if p.ndim != 2:
        raise ValueError(f"p_slc must have shape (L_q, n_select), got {p.shape}")
    n = check_count("top_n", top_n)
    lp, n_k = check_count("select_block", select_block), check_count("n_k", n_k)
    n_init = check_count("n_initial", n_initial, minimum=0)
    n_loc = check_count("n_local", n_local, minimum=0)
    if n_init + n_loc > n:
        raise ValueError(
            f"top_n = {n} cannot hold n_initial = {n_init} and n_local = {n_loc} blocks: "
            "the blocks always kept count among the top_n"
        )
    n_q, n_sel = p.shape
    if n_sel != -(-n_k // lp):
        raise ValueError(f"p_slc has {n_sel} blocks; ⌈n_k / select_block⌉ = {-(-n_k // lp)}")
    t = np.arange(n_q)[:, None]  # (L_q, 1): the query's position
    j = np.arange(n_sel)[None, :]  # (1, n_select)
    own = t // lp  # (L_q, 1): the block holding the query
    eligible = j * lp <= t  # (L_q, n_select): starts at or before t
    forced = eligible & ((j < n_init) | (j > own - n_loc))  # (L_q, n_select)
    ranked = np.where(forced, np.inf, p)  # (L_q, n_select): forced blocks rank first
    order = np.argsort(-np.where(eligible, ranked, -np.inf), axis=-1, kind="stable")
    rank = np.empty_like(order)  # (L_q, n_select)
    np.put_along_axis(rank, order, np.arange(n_sel), axis=-1)
    blocks = (rank < n) & eligible  # (L_q, n_select)
    tokens = np.repeat(blocks, lp, axis=-1)[:, :n_k]  # (L_q, L_k)
    out: NDArray[np.bool_] = tokens & causal_mask(n_q, n_k)
    return out


class NSAOutput(NamedTuple):
    """What `nsa_attention` returns: the gated sum and what made it."""

    out: NDArray[np.floating]
    """``Σ_c g_c · o_c``, ``(..., L, d_v)``."""
    branches: NDArray[np.floating]
    """The three branches' outputs ``(3, ..., L, d_v)``: compressed, selected, sliding."""
    p_cmp: NDArray[np.floating]
    """The compressed branch's weights ``(..., L, n_blocks)``."""
    selected: NDArray[np.bool_]
    """The selected branch's keys ``(L, L)``, shared by the heads."""


def nsa_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    gates: ArrayLike,
    *,
    block: int,
    stride: int,
    select_block: int,
    top_n: int,
    window: int,
    n_initial: int = 1,
    n_local: int = 2,
    scale: float | None = None,
) -> NSAOutput:
    """Native Sparse Attention of one KV group: three branches mixed by gates, causal.

    ``o_t = g_cmp · Attn(q_t, K̃ᶜᵐᵖ, Ṽᶜᵐᵖ) + g_slc · Attn(q_t, K̃ˢˡᶜ, Ṽˢˡᶜ) + g_win ·
    Attn(q_t, K̃ʷⁱⁿ, Ṽʷⁱⁿ)`` (NSA's eq. (5)): the *compressed* branch attends to the block means
    of `compress_blocks` that the query has seen whole; the *selected* branch to the tokens of
    the ``top_n`` blocks of ``select_block`` tokens that the compressed weights rank highest
    (`selection_scores`, summed over the group's heads as eq. (10) asks, then
    `selected_block_mask`); the *sliding* branch to the last ``window`` tokens. The gates are
    given (in the paper an MLP with a sigmoid computes them from the input).

    Args:
        q: the group's queries ``(..., L, d_k)`` (leading axes: the heads sharing ``k``, ``v``).
        k: keys ``(L, d_k)``.
        v: values ``(L, d_v)``.
        gates: ``(..., L, 3)`` in ``[0, 1]``: compressed, selected, sliding.
        block: ``l``, the tokens of a compression block.
        stride: ``d``, the step between compression blocks.
        select_block: ``l'``, the tokens of a selection block.
        top_n: the selection blocks each query keeps.
        window: the sliding window ``w``.
        n_initial: selection blocks from the start always kept (the paper: 1).
        n_local: selection blocks ending with the query's own always kept (the paper: 2).
        scale: factor on the scores; default ``1/√d_k``.

    Returns:
        `NSAOutput` ``(out, branches, p_cmp, selected)``.

    Raises:
        ValueError: shapes that do not fit, gates outside ``[0, 1]``, bad block sizes.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> from attention_math.sparse import nsa_attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.normal(size=(3, 8, 4))
        >>> g = np.tile([0.0, 0.0, 1.0], (8, 1))  # the sliding branch only, window ≥ L
        >>> r = nsa_attention(q, k, v, g, block=4, stride=2, select_block=4, top_n=3, window=8)
        >>> bool(np.allclose(r.out, attention(q, k, v, is_causal=True)))
        True

    See Also:
        - [`compress_blocks`][attention_math.sparse.compress_blocks],
          [`selection_scores`][attention_math.sparse.selection_scores],
          [`selected_block_mask`][attention_math.sparse.selected_block_mask]: the steps.
        - [`topk_attention`][attention_math.sparse.topk_attention]: selection key by key.

    References:
        - [Yuan et al., 2025](https://arxiv.org/abs/2502.11089), Native Sparse Attention,
          §3.2-§3.3, eqs. (5)-(12).
    """
    qa, ka, va, _ = check_qkv(q, k, v)
    if ka.ndim != 2 or va.ndim != 2:
        raise ValueError(
            f"k and v are one KV group's: shapes (L, d_k) and (L, d_v), got {ka.shape}, {va.shape}"
        )
    n = ka.shape[0]
    if qa.shape[-2] != n:
        raise ValueError(f"q must have L = {n} rows like k (self-attention), got shape {qa.shape}")
    g = as_float("gates", gates, min_ndim=2)
    if g.shape[-2:] != (n, 3):
        raise ValueError(f"gates must have shape (..., L, 3) = (..., {n}, 3), got {g.shape}")
    if (g < 0).any() or (g > 1).any():
        raise ValueError("gates must lie in [0, 1] (a sigmoid's output)")
    s = check_scale(scale, qa.shape[-1])
    k_cmp = compress_blocks(ka, block, stride)  # (n_blocks, d_k)
    v_cmp = compress_blocks(va, block, stride)  # (n_blocks, d_v)
    seen = compressed_block_mask(n, k_cmp.shape[0], block, stride)  # (L, n_blocks)
    if k_cmp.shape[0]:
        o_cmp = attention(qa, k_cmp, v_cmp, seen, scale=s)  # (..., L, d_v)
        p_cmp = attention_weights(qa, k_cmp, v_cmp, seen, scale=s)  # (..., L, n_blocks)
    else:  # no block yet: the branch reads nothing
        o_cmp = np.zeros((*qa.shape[:-1], va.shape[-1]))
        p_cmp = np.zeros((*qa.shape[:-1], 0))
    n_sel = -(-n // check_count("select_block", select_block))
    p_slc = selection_scores(p_cmp, block, stride, select_block, n_sel)  # (..., L, n_select)
    p_group = p_slc.reshape(-1, n, n_sel).sum(axis=0)  # (L, n_select): eq. (10)
    kept = selected_block_mask(
        p_group, top_n, select_block, n, n_initial=n_initial, n_local=n_local
    )  # (L, L)
    o_slc = attention(qa, ka, va, kept, scale=s)  # (..., L, d_v)
    o_win = attention(qa, ka, va, sliding_window_mask(n, window=window), scale=s)  # (..., L, d_v)
    branches = np.stack(np.broadcast_arrays(o_cmp, o_slc, o_win))  # (3, ..., L, d_v)
    out = g[..., 0:1] * o_cmp + g[..., 1:2] * o_slc + g[..., 2:3] * o_win  # (..., L, d_v)
    return NSAOutput(out, branches, p_cmp, kept)


# ---- cost ----


class Cost(NamedTuple):
    """FLOPs and bytes read of one piece of work."""

    flops: int
    n_bytes: int


def decode_cost(
    n_k: int, *, n_heads: int, d_k: int, d_v: int, cache_dim: int, n_bytes: int = 2
) -> Cost:
    """Attention of one decoded token over ``n_k`` cached keys: ``2 · n_heads · n_k · (d_k +
    d_v)`` FLOPs (a score and a weighted value per head and key) and ``n_bytes · n_k ·
    cache_dim`` bytes (the cache of every key read once, ``cache_dim`` numbers per token).

    Examples:
        >>> from attention_math.sparse import DEEPSEEK_V32 as c, decode_cost
        >>> latent = c["kv_lora_rank"] + c["qk_rope_head_dim"]  # 576 numbers per token, MLA
        >>> decode_cost(2048, n_heads=128, d_k=latent, d_v=512, cache_dim=latent)
        Cost(flops=570425344, n_bytes=2359296)

    See Also:
        - [`indexer_cost`][attention_math.sparse.indexer_cost]: what choosing the keys costs.
        - [`hardware.roofline_time`][attention_math.hardware.roofline_time]: the time.

    References:
        - [DeepSeek-AI, 2025](https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf),
          §2.2: the core attention goes from O(L²) to O(Lk).
    """
    n_k = check_count("n_k", n_k, minimum=0)
    h, dk, dv = check_count("n_heads", n_heads), check_count("d_k", d_k), check_count("d_v", d_v)
    c, b = check_count("cache_dim", cache_dim), check_count("n_bytes", n_bytes)
    return Cost(2 * h * n_k * (dk + dv), b * n_k * c)


def indexer_cost(n_k: int, *, index_heads: int, index_dim: int, index_bytes: int = 1) -> Cost:
    """The lightning indexer for one decoded token over ``n_k`` keys: per key and head a dot
    product of ``index_dim`` (``2 d_I`` FLOPs) and a weighted ReLU added (2 FLOPs); the
    indexer's key cache read once (``index_bytes`` per number: FP8 in DeepSeek-V3.2).

    Examples:
        >>> from attention_math.sparse import indexer_cost
        >>> indexer_cost(1024, index_heads=64, index_dim=128)
        Cost(flops=16908288, n_bytes=131072)

    See Also:
        - [`decode_cost`][attention_math.sparse.decode_cost]: the attention it shortens.

    References:
        - [DeepSeek-AI, 2025](https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf),
          §2.1: few heads, FP8.
    """
    n_k = check_count("n_k", n_k, minimum=0)
    h, d = check_count("index_heads", index_heads), check_count("index_dim", index_dim)
    b = check_count("index_bytes", index_bytes)
    return Cost(n_k * h * (2 * d + 2), b * n_k * d)


def causal_pairs(n: int, top_k: int | None = None) -> int:
    """The (query, key) pairs attention scores over a causal sequence of ``n`` tokens:
    ``Σ_{t=1}^{n} min(t, k)``, ``n(n + 1)/2`` when dense (``top_k=None``).

    Examples:
        >>> from attention_math.sparse import causal_pairs
        >>> causal_pairs(4), causal_pairs(4, 2)  # 1+2+3+4, 1+2+2+2
        (10, 7)

    See Also:
        - [`decode_cost`][attention_math.sparse.decode_cost]: one row of these pairs.

    References:
        - [DeepSeek-AI, 2025](https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/DeepSeek_V3_2.pdf),
          §2.2: O(Lk) instead of O(L²).
    """
    n = check_count("n", n, minimum=0)
    if top_k is None:
        return n * (n + 1) // 2
    k = min(check_count("top_k", top_k), n)
    return k * (k + 1) // 2 + (n - k) * k
