"""The tiled backward pass of FlashAttention-2, in NumPy.

The untiled backward ([`attention_math.backward`][]) keeps the ``L_q × L_k`` weights ``P`` and
their gradient. Here neither is ever whole: the forward keeps, per query row, only the
output ``O`` and the log-sum-exp ``lse = m + log λ`` of its scores (the online-softmax
state of [`attention_math.tiled`][]); the backward then visits the tiles again and

* recomputes each tile's weights from the saved ``lse``, ``P = exp(S − lse·1ᵀ)`` (exact:
  ``e^{s − lse} = e^s / Σ e^{s'}``, no new max or sum needed),
* uses ``D = rowsum(dO ∘ O)``, computed once per row, in place of ``rowsum(P ∘ dP)``
  (equal, since ``O = P V`` and ``dP = dO Vᵀ``),
* forms ``dP = dO Vᵀ`` and ``dS = P ∘ (dP − D·1ᵀ)`` for the tile only, and adds the tile's
  share to ``dV += Pᵀ dO``, ``dK += scale · dSᵀ Q`` (kept for the current key block) and
  ``dQ += scale · dS K`` (kept for all rows).

The loop runs over key blocks outside and query blocks inside, as FlashAttention-2 does, so
``dK`` and ``dV`` of a key block are finished before the next starts. Extra memory is
``O``, ``dQ`` (``L_q × d``), ``lse``, ``D`` (``L_q``) and a few tiles: O(L·d), not O(L²).
[`attention_math.derivations.flash_backward`][] proves the identities exactly.

[`attention_backward`][attention_math.backward.attention_backward] validates the input and calls
[`tiled_backward`][attention_math.tiled_backward.tiled_backward] when given ``block_size``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_math._checks import OVERFLOW, CausalAlignment, causal_offset, check_flag
from attention_math.tiled import DEFAULT_BLOCK, _Head, block_sizes

__all__ = ["tiled_backward"]


Array = NDArray[np.floating]


def _scores(head: _Head, rows: slice, cols: slice) -> Array | None:
    """``S = q kᵀ · scale + mask`` for one tile (``rows`` × ``cols``); ``None`` if all masked.

    ``head.causal`` is the diagonal's offset (query ``i`` sees keys ``0..i + causal``) or
    ``None``.
    """
    i0, i1, j0, j1 = rows.start, rows.stop, cols.start, cols.stop
    causal, mask = head.causal, head.mask
    if causal is not None and j0 > i1 - 1 + causal:
        return None  # every key of the tile comes after every query's diagonal: all masked
    mt = None if mask is None else mask[rows, cols]
    if mt is not None and mt.dtype == np.bool_ and not mt.any():
        return None
    s = head.q[rows] @ head.k[cols].T  # (r, c)
    s *= head.scale
    if mt is not None:
        if mt.dtype == np.bool_:
            np.copyto(s, -np.inf, where=np.logical_not(mt))
        else:
            s += mt.astype(s.dtype, copy=False)
    if causal is not None and j1 - 1 > i0 + causal:  # the tile crosses the diagonal
        after = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None] + causal
        np.copyto(s, -np.inf, where=after)
    return s


def _forward(head: _Head) -> tuple[Array, Array]:
    """The output ``O`` ``(L_q, d_v)`` and the row log-sum-exp ``(L_q,)`` of one head.

    A row with no visible key gets ``O = 0`` and ``lse = +∞`` (not the ``−∞`` of
    ``attention_with_lse``), so that the backward's ``exp(S − lse)`` gives it
    weights 0, as the untiled softmax does.
    """
    q, v = head.q, head.v
    n_q, n_k, bq, bk = q.shape[0], head.k.shape[0], head.bq, head.bk
    out = np.zeros((n_q, v.shape[1]), dtype=q.dtype)
    lse = np.empty(n_q, dtype=q.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for i0 in range(0, n_q, bq):
            rows = slice(i0, min(i0 + bq, n_q))
            r = rows.stop - i0
            m = np.full(r, -np.inf, dtype=q.dtype)  # running row max
            ell = np.zeros(r, dtype=q.dtype)  # running Σ e^{s − m}
            o = out[rows]  # running Σ e^{s − m} v, a view
            for j0 in range(0, n_k, bk):
                cols = slice(j0, min(j0 + bk, n_k))
                s = _scores(head, rows, cols)
                if s is None:
                    continue
                m_new = np.maximum(m, s.max(axis=1))
                if np.isnan(m_new).any() or np.isposinf(m_new).any():
                    raise ValueError(OVERFLOW.format(q.dtype.name))
                shift = np.where(np.isneginf(m_new), 0, m_new).astype(q.dtype)
                alpha = np.exp(m - shift)  # rescales the old state (0 while m = −∞)
                s -= shift[:, None]
                np.exp(s, out=s)  # P̃ = e^{S − m'}
                ell *= alpha
                ell += s.sum(axis=1)
                o *= alpha[:, None]
                o += s @ v[cols]
                m = m_new
            empty = ell == 0  # no visible key: O = 0, and lse = +∞ gives P = 0 later
            o /= np.where(empty, 1, ell)[:, None]
            lse[rows] = np.where(empty, np.inf, m + np.log(np.where(empty, 1, ell)))
    return out, lse


def tiled_backward(
    q: Array,
    k: Array,
    v: Array,
    d_out: Array,
    mask: NDArray[np.bool_] | Array | None = None,
    *,
    scale: np.floating | float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    block_size: int | tuple[int, int] = DEFAULT_BLOCK,
) -> tuple[Array, Array, Array]:
    """``(dq, dk, dv)`` tile by tile, for validated input of one working dtype.

    Args:
        q: ``(..., L_q, d_k)``.
        k: ``(..., L_k, d_k)``.
        v: ``(..., L_k, d_v)``.
        d_out: ``(..., L_q, d_v)``, the batch shape of the output.
        mask: ``None`` or a validated boolean/additive mask broadcastable to the scores.
        scale: the score factor; default ``1/√d_k``. Taken in the working dtype.
        is_causal: query ``i`` sees keys ``0..i`` only (see ``causal_alignment``); tiles
            entirely above the diagonal are skipped.
        causal_alignment: with ``is_causal``, where the diagonal sits when ``L_q ≠ L_k``, as
            in [`causal_mask`][attention_math.numeric.causal_mask].
        block_size: ``(block_q, block_k)``, or one int for both; default the forward's
            tile, ``tiled.DEFAULT_BLOCK``.

    Returns:
        Gradients with the broadcast batch shape of the output (the caller sums them back
            to the inputs' shapes).

    Examples:
        >>> import numpy as np
        >>> from attention_math.backward import attention_backward
        >>> from attention_math.tiled_backward import tiled_backward
        >>> rng = np.random.default_rng(0)
        >>> q, k, v, d_out = rng.standard_normal((4, 5, 3))
        >>> tiled = tiled_backward(q, k, v, d_out, scale=0.5, block_size=(2, 3))
        >>> full = attention_backward(q, k, v, d_out, scale=0.5)
        >>> all(np.allclose(a, b) for a, b in zip(tiled, full))
        True
    """
    n_q, n_k = q.shape[-2], k.shape[-2]
    offset = causal_offset(n_q, n_k, causal_alignment)  # checks the name even if not causal
    causal = offset if check_flag("is_causal", is_causal) else None
    factor = q.dtype.type(1.0 / np.sqrt(q.shape[-1]) if scale is None else scale)
    block = block_sizes(block_size)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2], d_out.shape[:-2])
    mb: NDArray[Any] | None = None
    if mask is not None:
        batch = np.broadcast_shapes(batch, mask.shape[:-2])
        mb = np.broadcast_to(mask, (*batch, n_q, n_k))  # a view, no L×L copy
    dq = np.empty((*batch, *q.shape[-2:]), dtype=q.dtype)
    dk = np.empty((*batch, *k.shape[-2:]), dtype=q.dtype)
    dv = np.empty((*batch, *v.shape[-2:]), dtype=q.dtype)
    qb, kb, vb, gb = (np.broadcast_to(a, (*batch, *a.shape[-2:])) for a in (q, k, v, d_out))
    bq, bk = max(1, min(block[0], n_q)), max(1, min(block[1], n_k))  # ≥ 1: empty inputs
    for idx, head in _Head.each(qb, kb, vb, mb, factor, causal, bq, bk):
        _one_head(head, gb[idx], dq[idx], dk[idx], dv[idx])
    return dq, dk, dv


def _one_head(head: _Head, d_out: Array, dq: Array, dk: Array, dv: Array) -> None:
    """FlashAttention-2's backward for one head, written into ``dq``, ``dk``, ``dv``."""
    q, k, v, scale = head.q, head.k, head.v, head.scale
    n_q, n_k, bq, bk = q.shape[0], k.shape[0], head.bq, head.bk
    out, lse = _forward(head)
    d_row = np.sum(d_out * out, axis=1)  # D = rowsum(dO ∘ O), (L_q,)
    del out  # only D is needed from O
    dq.fill(0)
    with np.errstate(over="ignore", invalid="ignore"):
        for j0 in range(0, n_k, bk):
            cols = slice(j0, min(j0 + bk, n_k))
            dk_j, dv_j = dk[cols], dv[cols]  # views: finished before the next key block
            dk_j.fill(0)
            dv_j.fill(0)
            for i0 in range(0, n_q, bq):
                rows = slice(i0, min(i0 + bq, n_q))
                p = _scores(head, rows, cols)  # S, (r, c)
                if p is None:
                    continue
                p -= lse[rows, None]
                np.exp(p, out=p)  # P = exp(S − lse): the forward's weights, recomputed
                dv_j += p.T @ d_out[rows]  # dV += Pᵀ dO
                ds = d_out[rows] @ v[cols].T  # dP = dO Vᵀ, (r, c)
                ds -= d_row[rows, None]
                ds *= p  # dS = P ∘ (dP − D)
                dq[rows] += (ds @ k[cols]) * scale  # dQ += scale · dS K
                dk_j += (ds.T @ q[rows]) * scale  # dK += scale · dSᵀ Q
