"""The NumPy reference: ``softmax(q kᵀ · scale + mask) · v``.

Every other part of the project (the exact SymPy derivation, the worked examples, the
exercises, the site) is checked against the functions in this module, so they validate
their input strictly and never return a silent NaN.

Shapes follow the paper: ``q`` is ``(..., L_q, d_k)``, ``k`` is ``(..., L_k, d_k)``,
``v`` is ``(..., L_k, d_v)`` and the output is ``(..., L_q, d_v)``; leading ``...``
dimensions broadcast like NumPy's ``matmul``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math import tiled
from attention_math._checks import as_float, check_mask, check_qkv, check_scale, check_weight

# attention_backward and multi_head_attention are reachable here too (see __getattr__ at
# the end); their home modules, backward and multihead, document them.
__all__ = ["attention", "causal_mask", "compute_qkv", "softmax"]


def softmax(x: ArrayLike, axis: int = -1) -> NDArray[np.floating]:
    """Softmax along ``axis``, shifted by the maximum so that ``exp`` never overflows.

    ``-inf`` entries (masked positions) get weight exactly 0; a slice that is all
    ``-inf`` becomes all zeros (the project's convention for a fully masked row).

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import softmax
        >>> softmax([0.0, 0.0])
        array([0.5, 0.5])
        >>> softmax([1000.0, 0.0])          # the naive exp(1000) would overflow
        array([1., 0.])
        >>> softmax([[0.0, -np.inf], [-np.inf, -np.inf]])
        array([[1., 0.],
               [0., 0.]])
    """
    a = np.asarray(x)
    if a.dtype == np.bool_ or not (
        np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)
    ):
        raise TypeError(f"softmax input must hold real numbers, got dtype {a.dtype}")
    if a.ndim == 0:
        raise ValueError("softmax input must have at least one dimension, got a scalar")
    if np.isnan(a).any() or np.isposinf(a).any():
        raise ValueError("softmax input contains NaN or +inf; only finite values and -inf allowed")
    out = np.array(a, dtype=np.float64 if np.issubdtype(a.dtype, np.integer) else a.dtype)
    return _softmax_inplace(out, axis)


def _softmax_inplace(s: NDArray[np.floating], axis: int = -1) -> NDArray[np.floating]:
    """Row softmax of ``s`` written into ``s`` itself (no L×L temporaries)."""
    m = np.max(s, axis=axis, keepdims=True)
    if np.isnan(m).any() or np.isposinf(m).any():  # max propagates NaN: one cheap check per row
        raise ValueError(
            "the scores overflow the floating-point range (NaN or +inf after q kᵀ · scale); "
            f"rescale q and k (dtype {s.dtype.name})"
        )
    # A row that is all -inf has max -inf; shifting by 0 keeps exp(-inf) = 0 instead of NaN.
    m[np.isneginf(m)] = 0
    s -= m
    np.exp(s, out=s)
    total = np.sum(s, axis=axis, keepdims=True)
    total[total == 0] = 1  # only fully masked rows sum to 0 (the max term is exp(0) = 1)
    s /= total
    return s


def causal_mask(n_q: int, n_k: int | None = None) -> NDArray[np.bool_]:
    """Boolean causal mask of shape ``(n_q, n_k)``: True where query ``i`` may see key ``j``.

    Query ``i`` sees keys ``0..i`` (top-left aligned, as PyTorch's ``is_causal=True``).

    Examples:
        >>> from attention_math.numeric import causal_mask
        >>> causal_mask(3).astype(int)
        array([[1, 0, 0],
               [1, 1, 0],
               [1, 1, 1]])
        >>> causal_mask(2, 3).astype(int)
        array([[1, 0, 0],
               [1, 1, 0]])
    """
    n_k = n_q if n_k is None else n_k
    for name, n in (("n_q", n_q), ("n_k", n_k)):
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return np.tri(n_q, n_k, dtype=bool)


def compute_qkv(
    x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike
) -> tuple[NDArray[np.floating], NDArray[np.floating], NDArray[np.floating]]:
    """Project the inputs: ``q = x w_q``, ``k = x w_k``, ``v = x w_v``.

    ``x`` is ``(..., L, d_model)``; ``w_q`` and ``w_k`` are ``(d_model, d_k)``;
    ``w_v`` is ``(d_model, d_v)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import compute_qkv
        >>> x = np.eye(2)
        >>> q, k, v = compute_qkv(x, np.eye(2), np.eye(2), [[1, 2], [3, 4]])
        >>> v
        array([[1., 2.],
               [3., 4.]])
    """
    x = as_float("x", x, min_ndim=2)
    d_model = x.shape[-1]
    out = []
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        w = check_weight(name, w, d_model, "d")
        out.append(x @ w.astype(np.result_type(x, w), copy=False))  # (..., L, d)
    q, k, v = out
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"w_q and w_k must give the same d_k, got {q.shape[-1]} and {k.shape[-1]}")
    return q, k, v


def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    return_weights: bool = False,
    block_size: int | tuple[int, int] | None = None,
    is_causal: bool = False,
) -> NDArray[np.floating] | tuple[NDArray[np.floating], NDArray[np.floating]]:
    """Scaled dot-product attention ``softmax(q kᵀ · scale + mask) v``.

    Args:
        q: queries, ``(..., L_q, d_k)``.
        k: keys, ``(..., L_k, d_k)``.
        v: values, ``(..., L_k, d_v)``.
        mask: boolean (True = may attend) or additive float (added to the scores, ``-inf``
            blocks), broadcastable to ``(..., L_q, L_k)``: the semantics of PyTorch's
            ``scaled_dot_product_attention``. A fully masked row gives zero weights and a
            zero output row.
        scale: factor on the scores; default ``1/√d_k``.
        return_weights: also return the attention weights ``(..., L_q, L_k)``.
        block_size: compute tile by tile with the online softmax
            (:mod:`attention_math.tiled`): an int, or ``(block_q, block_k)`` query rows ×
            key columns per tile. Extra memory is O(L·d) plus one tile instead of the
            L_q × L_k scores. ``None`` (default): the faster path for this size on this
            machine (:func:`attention_math.tiled.tiles_pay`: untiled below 1024² scores
            per head, tiled above ``tiled.SCORES_BUDGET_BYTES`` or where a one-off timing
            found tiles faster), tiles sized by ``tiled.default_block`` (the L2 cache).
            Cannot be combined with ``return_weights`` (the weights *are* L_q × L_k).
        is_causal: query ``i`` sees keys ``0..i`` only, as ``mask=causal_mask(L_q, L_k)``
            (and combined with ``mask`` if both are given) but without building the
            L_q × L_k mask; the tiled path skips the tiles above the diagonal instead of
            computing and masking them. (The tiled path also skips any tile in which a
            boolean ``mask`` is all False, so ``mask=causal_mask(L)`` skips them too.)

    Returns:
        The output ``(..., L_q, d_v)`` (and the weights). float32 stays float32,
        float64 stays float64, integers are promoted to float64. Tiled and untiled
        results agree to rounding: a few ε normwise per row for scores of order one,
        growing in proportion to the size of the scores (rounding a score s moves its
        weight by about ε·|s|, in either path).

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> q = k = np.eye(2)
        >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> out, w = attention(q, k, v, return_weights=True)
        >>> w.round(4)
        array([[0.6698, 0.3302],
               [0.3302, 0.6698]])
        >>> w.sum(axis=-1)
        array([1., 1.])
        >>> attention(q, k, v, mask=np.array([[True, False], [True, True]]))[0]
        array([1., 2.])
        >>> attention(q, k, v, is_causal=True, block_size=1)[0]  # tile by tile
        array([1., 2.])
    """
    q, k, v, batch = check_qkv(q, k, v)
    dtype = np.result_type(q, k, v)
    work = np.dtype(np.float32) if dtype == np.float16 else dtype  # float16 sums lose too much
    q, k, v = (a.astype(work, copy=False) for a in (q, k, v))
    s = work.type(check_scale(scale, q.shape[-1]))  # a NumPy scalar: float32 stays float32

    if not isinstance(is_causal, bool | np.bool_):
        raise TypeError(f"is_causal must be True or False, got {is_causal!r}")
    scores_shape = (*batch, q.shape[-2], k.shape[-2])
    m, full = (None, scores_shape) if mask is None else check_mask(mask, scores_shape)
    if block_size is not None:
        block = tiled.block_sizes(block_size)
        if return_weights:
            raise ValueError(
                "return_weights=True needs the L_q × L_k weights, which the tiled path "
                f"never forms: use block_size=None (got block_size={block_size!r})"
            )
    elif not return_weights and tiled.tiles_pay(full, work, _untiled_reference):
        block = tiled.default_block(work)  # faster here, or the scores would not fit
    else:
        block = None
    if block is not None:  # an additive mask is cast tile by tile, never as a whole
        out = tiled.tiled_attention(q, k, v, s, m, is_causal=bool(is_causal), block=block)
        return out.astype(dtype, copy=False)

    with np.errstate(over="ignore", invalid="ignore"):  # overflow is caught below, with a reason
        att = q @ np.swapaxes(k, -1, -2)  # (..., L_q, L_k): the one L×L buffer
        att *= s
    if m is not None:
        if full != att.shape:  # the mask adds batch dimensions: grow the buffer once
            att = np.broadcast_to(att, full).copy()
        if m.dtype == np.bool_:
            np.copyto(att, -np.inf, where=~m)
        else:
            with np.errstate(invalid="ignore"):  # +inf + -inf is NaN: caught below
                np.add(att, m, out=att, casting="same_kind")  # cast in chunks, no L×L copy
    if is_causal:  # one L×L bool (a quarter of a float32 buffer), not a 2nd float one
        above = np.tri(*att.shape[-2:], dtype=bool)
        np.logical_not(above, out=above)
        np.copyto(att, -np.inf, where=above)
    _softmax_inplace(att, axis=-1)
    out = att @ v  # (..., L_q, d_v)
    out = out.astype(dtype, copy=False)
    if return_weights:
        return out, att.astype(dtype, copy=False)
    return out


def _untiled_reference(q: NDArray[Any], k: NDArray[Any], v: NDArray[Any]) -> object:
    """The untiled path, for :func:`attention_math.tiled.tiles_pay` to time against tiles."""
    return attention(q, k, v, return_weights=True)  # the weights need the untiled path


def __getattr__(name: str) -> Any:
    """``numeric.attention_backward`` and ``numeric.multi_head_attention``, where users look
    for them, imported on first use: both modules import this one, so an import at the top
    would make a cycle (PEP 562 module ``__getattr__``)."""
    if name == "attention_backward":
        from attention_math.backward import attention_backward

        return attention_backward
    if name == "multi_head_attention":
        from attention_math.multihead import multi_head_attention

        return multi_head_attention
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
