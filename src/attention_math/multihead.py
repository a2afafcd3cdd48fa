"""Multi-head attention: ``h`` scaled dot-product attentions side by side, then ``W_O``.

``x_q`` gives the queries and ``x_kv`` the keys and values; with ``x_q is x_kv`` this is
self-attention, with different sequences (``L_q ≠ L_k``) it is cross-attention. Each head is
``attention_math.numeric.attention`` on its own ``d_k``-wide slice of the projections;
the reshape and transpose that split the heads are written out step by step.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_weight
from attention_math.numeric import attention

__all__ = ["grouped_query_attention", "multi_head_attention"]


def _split_heads(t: NDArray[np.floating], n_heads: int) -> NDArray[np.floating]:
    """``(..., L, h·d) → (..., h, L, d)``: head ``i`` owns columns ``i·d … (i+1)·d − 1``."""
    *lead, length, width = t.shape
    t = t.reshape(*lead, length, n_heads, width // n_heads)  # (..., L, h, d)
    return np.swapaxes(t, -3, -2)  # (..., h, L, d)


def _merge_heads(t: NDArray[np.floating]) -> NDArray[np.floating]:
    """``(..., h, L, d) → (..., L, h·d)``: the concatenation Concat(head_1, …, head_h)."""
    t = np.swapaxes(t, -3, -2)  # (..., L, h, d)
    *lead, length, n_heads, width = t.shape
    return t.reshape(*lead, length, n_heads * width)  # (..., L, h·d)


def _check_inputs(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: object,
) -> tuple[NDArray[np.floating], ...]:
    if isinstance(n_heads, bool) or not isinstance(n_heads, int | np.integer) or n_heads < 1:
        raise ValueError(f"n_heads must be a positive integer, got {n_heads!r}")
    x_q = as_float("x_q", x_q, min_ndim=2)
    x_kv = as_float("x_kv", x_kv, min_ndim=2)
    if x_q.shape[-1] != x_kv.shape[-1]:
        raise ValueError(
            f"x_q and x_kv must share d_model (last axis): x_q has shape {x_q.shape}, "
            f"x_kv has shape {x_kv.shape}"
        )
    d_model = x_q.shape[-1]
    ws = {}
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        w = check_weight(name, w, d_model, "n_heads·d")
        if w.shape[1] % n_heads:
            raise ValueError(
                f"{name} has {w.shape[1]} columns, not divisible by n_heads = {n_heads}"
            )
        ws[name] = w
    if ws["w_q"].shape != ws["w_k"].shape:
        raise ValueError(
            f"w_q and w_k must have the same shape (d_model, n_heads·d_k), "
            f"got {ws['w_q'].shape} and {ws['w_k'].shape}"
        )
    w_o = as_float("w_o", w_o, min_ndim=2)
    hd_v = ws["w_v"].shape[1]
    if w_o.ndim != 2 or w_o.shape[0] != hd_v:
        raise ValueError(
            f"w_o must have shape (n_heads·d_v, d_out) with n_heads·d_v = {hd_v} "
            f"(from w_v of shape {ws['w_v'].shape}), got {w_o.shape}"
        )
    return x_q, x_kv, ws["w_q"], ws["w_k"], ws["w_v"], w_o


def _multi_head(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    mask: ArrayLike | None = None,
    trace: list[tuple[str, tuple[int, ...]]] | None = None,
) -> NDArray[np.floating]:
    """``multi_head_attention``, optionally recording ``(step, shape)`` of every product."""
    x_q, x_kv, w_q, w_k, w_v, w_o = _check_inputs(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads)
    if mask is not None and np.ndim(mask) >= 3:
        # A mask with batch axes (..., L_q, L_k) gets a head axis: (..., 1, L_q, L_k).
        mask = np.expand_dims(np.asarray(mask), -3)
    note = trace.append if trace is not None else (lambda _: None)

    q = x_q @ w_q  # (..., L_q, h·d_k)
    note(("Q = X_q W_Q", q.shape))
    k = x_kv @ w_k  # (..., L_k, h·d_k)
    note(("K = X_kv W_K", k.shape))
    v = x_kv @ w_v  # (..., L_k, h·d_v)
    note(("V = X_kv W_V", v.shape))
    q, k, v = (_split_heads(t, n_heads) for t in (q, k, v))  # (..., h, L, d)
    note(("Q split into heads", q.shape))
    note(("K split into heads", k.shape))
    note(("V split into heads", v.shape))
    if trace is not None:
        note(("scores Q_h K_hᵀ", (*q.shape[:-1], k.shape[-2])))
    heads = attention(q, k, v, mask=mask)  # (..., h, L_q, d_v)
    note(("heads softmax(·) V_h", heads.shape))
    concat = _merge_heads(heads)  # (..., L_q, h·d_v)
    note(("Concat(head_1, …, head_h)", concat.shape))
    out: NDArray[np.floating] = concat @ w_o.astype(concat.dtype, copy=False)  # (..., L_q, d_out)
    note(("output Concat · W_O", out.shape))
    return out


def multi_head_attention(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    mask: ArrayLike | None = None,
) -> NDArray[np.floating]:
    """Multi-head attention: ``Concat(head_1, …, head_h) W_O``, each head one attention.

    Head ``i`` is ``attention(x_q W_Q^(i), x_kv W_K^(i), x_kv W_V^(i), mask)`` where
    ``W^(i)`` are the ``i``-th blocks of columns.

    Args:
        x_q: the sequence that asks, ``(..., L_q, d_model)``.
        x_kv: the sequence that is looked at, ``(..., L_k, d_model)`` (``x_q`` again for
            self-attention).
        w_q: ``(d_model, h·d_k)``; columns ``i·d_k … (i+1)·d_k − 1`` belong to head ``i``.
        w_k: ``(d_model, h·d_k)``, split the same way.
        w_v: ``(d_model, h·d_v)``.
        w_o: ``(h·d_v, d_out)``; rows ``i·d_v … (i+1)·d_v − 1`` multiply head ``i``.
        n_heads: ``h``, a positive integer dividing the widths of ``w_q``, ``w_k``, ``w_v``.
        mask: as in ``attention_math.numeric.attention``, broadcastable to
            ``(..., L_q, L_k)``; every head gets the same mask.

    Returns:
        ``(..., L_q, d_out)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import multi_head_attention
        >>> rng = np.random.default_rng(0)
        >>> x_q, x_kv = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
        >>> w_q, w_k, w_v, w_o = (rng.standard_normal((4, 4)) for _ in range(4))
        >>> multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads=2).shape
        (3, 4)
        >>> multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads=3)
        Traceback (most recent call last):
        ...
        ValueError: w_q has 4 columns, not divisible by n_heads = 3
    """
    return _multi_head(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads, mask)


def _check_heads(n_heads: object, n_kv_heads: object) -> tuple[int, int]:
    for name, n in (("n_heads", n_heads), ("n_kv_heads", n_kv_heads)):
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    assert isinstance(n_heads, int | np.integer) and isinstance(n_kv_heads, int | np.integer)
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_kv_heads = {n_kv_heads} must divide n_heads = {n_heads}: each key/value head "
            f"serves a whole group of query heads"
        )
    return int(n_heads), int(n_kv_heads)


def grouped_query_attention(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    n_kv_heads: int,
    mask: ArrayLike | None = None,
) -> NDArray[np.floating]:
    """Grouped-query attention: ``n_heads`` query heads share ``n_kv_heads`` key/value heads.

    Query head ``h`` reads key/value head ``h // (n_heads // n_kv_heads)`` (consecutive query
    heads form a group), the convention of PyTorch's
    ``scaled_dot_product_attention(..., enable_gqa=True)``. ``n_kv_heads == 1`` is multi-query
    attention; ``n_kv_heads == n_heads`` is `multi_head_attention`. The key/value cache of a
    decoder shrinks by the factor ``n_heads / n_kv_heads``.

    Args:
        x_q: ``(..., L_q, d_model)``.
        x_kv: ``(..., L_k, d_model)``.
        w_q: ``(d_model, n_heads·d_head)``.
        w_k: ``(d_model, n_kv_heads·d_head)``.
        w_v: ``(d_model, n_kv_heads·d_v)``.
        w_o: ``(n_heads·d_v, d_out)``.
        n_heads: query heads.
        n_kv_heads: key/value heads, a positive divisor of ``n_heads``.
        mask: as in `multi_head_attention`: every head gets the same mask.

    Returns:
        ``(..., L_q, d_out)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import grouped_query_attention
        >>> rng = np.random.default_rng(0)
        >>> x = rng.standard_normal((3, 8))
        >>> w_q, w_o = rng.standard_normal((8, 8)), rng.standard_normal((8, 8))
        >>> w_k, w_v = rng.standard_normal((8, 2)), rng.standard_normal((8, 2))  # 1 kv head
        >>> grouped_query_attention(x, x, w_q, w_k, w_v, w_o, n_heads=4, n_kv_heads=1).shape
        (3, 8)
        >>> grouped_query_attention(x, x, w_q, w_k, w_v, w_o, n_heads=4, n_kv_heads=3)
        Traceback (most recent call last):
        ...
        ValueError: n_kv_heads = 3 must divide n_heads = 4: each key/value head serves ...
    """
    h, g = _check_heads(n_heads, n_kv_heads)
    xq = as_float("x_q", x_q, min_ndim=2)
    xkv = as_float("x_kv", x_kv, min_ndim=2)
    if xq.shape[-1] != xkv.shape[-1]:
        raise ValueError(
            f"x_q and x_kv must share d_model (last axis): x_q has shape {xq.shape}, "
            f"x_kv has shape {xkv.shape}"
        )
    d_model = xq.shape[-1]
    wq = check_weight("w_q", w_q, d_model, "n_heads·d_head")
    wk = check_weight("w_k", w_k, d_model, "n_kv_heads·d_head")
    wv = check_weight("w_v", w_v, d_model, "n_kv_heads·d_v")
    if wq.shape[1] % h:
        raise ValueError(f"w_q has {wq.shape[1]} columns, not divisible by n_heads = {h}")
    d_head = wq.shape[1] // h
    if wk.shape[1] != g * d_head:
        raise ValueError(
            f"w_k must have n_kv_heads·d_head = {g}·{d_head} = {g * d_head} columns "
            f"(d_head = {d_head} from w_q), got {wk.shape[1]}"
        )
    if wv.shape[1] % g:
        raise ValueError(f"w_v has {wv.shape[1]} columns, not divisible by n_kv_heads = {g}")
    wo = as_float("w_o", w_o, min_ndim=2)
    if wo.ndim != 2 or wo.shape[0] != h * (wv.shape[1] // g):
        raise ValueError(
            f"w_o must have shape (n_heads·d_v, d_out) with n_heads·d_v = "
            f"{h}·{wv.shape[1] // g} = {h * (wv.shape[1] // g)}, got {wo.shape}"
        )
    if mask is not None and np.ndim(mask) >= 3:
        mask = np.expand_dims(np.asarray(mask), -3)  # (..., 1, L_q, L_k): same for every head

    q = _split_heads(xq @ wq, h)  # (..., h, L_q, d_head)
    k = _split_heads(xkv @ wk, g)  # (..., g, L_k, d_head)
    v = _split_heads(xkv @ wv, g)  # (..., g, L_k, d_v)
    k = np.repeat(k, h // g, axis=-3)  # (..., h, L_k, d_head): head i reads kv head i // (h/g)
    v = np.repeat(v, h // g, axis=-3)  # (..., h, L_k, d_v)
    heads = attention(q, k, v, mask=mask)  # (..., h, L_q, d_v)
    assert isinstance(heads, np.ndarray)
    concat = _merge_heads(heads)  # (..., L_q, h·d_v)
    out: NDArray[np.floating] = concat @ wo.astype(concat.dtype, copy=False)  # (..., L_q, d_out)
    return out
