"""Multi-head attention: ``h`` scaled dot-product attentions side by side, then ``W_O``.

``x_q`` gives the queries and ``x_kv`` the keys and values; with ``x_q is x_kv`` this is
self-attention, with different sequences (``L_q ≠ L_k``) it is cross-attention. Each head is
``attention_math.numeric.attention`` on its own ``d_k``-wide slice of the projections;
the reshape and transpose that split the heads are written out step by step. The keyword
arguments are those a ``torch.nn.MultiheadAttention`` user reaches for: biases,
``key_padding_mask``, ``is_causal``, the weights per head or averaged, and keys and values
of their own widths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import CausalAlignment, as_float, check_count, check_weight
from attention_math.numeric import attention, attention_weights

__all__ = ["circuits", "grouped_query_attention", "multi_head_attention"]

Trace = list[tuple[str, tuple[int, ...]]]
Floats = NDArray[np.floating]


def _split_heads(t: NDArray[Any], n_heads: int) -> NDArray[Any]:
    """``(..., L, h·d) → (..., h, L, d)``: head ``i`` owns columns ``i·d … (i+1)·d − 1``."""
    *lead, length, width = t.shape
    t = t.reshape(*lead, length, n_heads, width // n_heads)  # (..., L, h, d)
    return np.swapaxes(t, -3, -2)  # (..., h, L, d)


def _merge_heads(t: NDArray[Any]) -> NDArray[Any]:
    """``(..., h, L, d) → (..., L, h·d)``: the concatenation Concat(head_1, …, head_h)."""
    t = np.swapaxes(t, -3, -2)  # (..., L, h, d)
    *lead, length, n_heads, width = t.shape
    return t.reshape(*lead, length, n_heads * width)  # (..., L, h·d)


def _projection(name: str, w: ArrayLike, x: Floats, x_name: str, n_heads: int) -> Floats:
    """``w`` as a ``(width of x, n_heads·d)`` matrix: each projection reads its own input
    (PyTorch's ``embed_dim``, ``kdim`` and ``vdim``)."""
    a = as_float(name, w, min_ndim=2)
    d_in = x.shape[-1]
    if a.ndim != 2 or a.shape[0] != d_in:
        raise ValueError(
            f"{name} must have shape (d_model, n_heads·d) with d_model = {d_in}, the width "
            f"of {x_name} {x.shape}; got {a.shape}"
        )
    if a.shape[1] % n_heads:
        raise ValueError(f"{name} has {a.shape[1]} columns, not divisible by n_heads = {n_heads}")
    return a


def _check_inputs(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    x_v: ArrayLike | None,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: object,
) -> tuple[int, Floats, Floats, Floats, Floats, Floats, Floats, Floats]:
    n_heads = check_count("n_heads", n_heads)
    h = int(n_heads)
    xq = as_float("x_q", x_q, min_ndim=2)
    xk = as_float("x_kv", x_kv, min_ndim=2)
    xv = xk if x_v is None else as_float("x_v", x_v, min_ndim=2)
    if xv.shape[-2] != xk.shape[-2]:
        raise ValueError(
            f"x_v and x_kv must share L_k (second-to-last axis): x_kv has shape {xk.shape}, "
            f"x_v has shape {xv.shape}"
        )
    wq = _projection("w_q", w_q, xq, "x_q", h)
    wk = _projection("w_k", w_k, xk, "x_kv", h)
    wv = _projection("w_v", w_v, xv, "x_kv" if x_v is None else "x_v", h)
    if wq.shape[1] != wk.shape[1]:
        raise ValueError(
            "w_q and w_k must have the same number of columns n_heads·d_k, "
            f"got {wq.shape} and {wk.shape}"
        )
    wo = as_float("w_o", w_o, min_ndim=2)
    hd_v = wv.shape[1]
    if wo.ndim != 2 or wo.shape[0] != hd_v:
        raise ValueError(
            f"w_o must have shape (n_heads·d_v, d_out) with n_heads·d_v = {hd_v} "
            f"(from w_v of shape {wv.shape}), got {wo.shape}"
        )
    return h, xq, xk, xv, wq, wk, wv, wo


def _bias(name: str, b: ArrayLike | None, width: int) -> Floats | None:
    """A projection bias, ``(width,)``, added to every row (PyTorch's ``in_proj_bias``)."""
    if b is None:
        return None
    a = as_float(name, b)
    if a.shape != (width,):
        raise ValueError(f"{name} must have shape ({width},), got {a.shape}")
    return a


def _head_mask(
    mask: ArrayLike | None,
    key_padding_mask: ArrayLike | None,
    batch_ndim: int,
    *,
    n_heads: int | None = None,
    batch_shape: tuple[int, ...] | None = None,
    n_k: int | None = None,
) -> NDArray[Any] | None:
    """``mask`` and ``key_padding_mask`` as one mask with a head axis, ``(..., h|1, L_q, L_k)``.

    A mask of at most ``batch_ndim + 2`` axes, ``(..., L_q, L_k)``, is the same for every
    head; one of ``batch_ndim + 3`` axes, ``(..., h, L_q, L_k)``, is per head (a head axis
    of 1, as in The Annotated Transformer's ``(B, 1, 1, L)``, broadcasts over the heads).
    More axes would add batch dimensions and are refused.
    """
    m = None
    if mask is not None:
        m = np.asarray(mask)
        if 2 < m.ndim <= batch_ndim + 2:
            m = np.expand_dims(m, -3)  # (..., 1, L_q, L_k): every head the same
        elif m.ndim > batch_ndim + 3:
            raise ValueError(
                f"mask of shape {m.shape} does not fit inputs with {batch_ndim} batch "
                f"dimension(s): give (L_q, L_k), (..., L_q, L_k) or (..., n_heads, L_q, L_k) "
                "with the batch dimensions of x_q"
            )
        elif m.ndim == batch_ndim + 3 and n_heads is not None and m.shape[-3] not in (1, n_heads):
            raise ValueError(
                f"mask of shape {m.shape} is a per-head mask (..., n_heads, L_q, L_k) "
                f"with {m.shape[-3]} heads on axis -3; give n_heads = {n_heads} or 1"
            )
    if key_padding_mask is None:
        return m
    kpm = np.asarray(key_padding_mask)
    if kpm.ndim != batch_ndim + 1:
        raise ValueError(
            f"key_padding_mask must have shape (..., L_k) with the {batch_ndim} batch "
            f"dimension(s) of x_q, got {kpm.shape}"
        )
    if n_k is not None and kpm.shape[-1] != n_k:
        raise ValueError(
            f"key_padding_mask of shape {kpm.shape} has {kpm.shape[-1]} keys on its last "
            f"axis, but x_kv has L_k = {n_k}"
        )
    if batch_shape is not None and kpm.shape[:-1] != batch_shape:
        if any(a not in (1, b) for a, b in zip(kpm.shape[:-1], batch_shape, strict=True)):
            raise ValueError(
                f"key_padding_mask of shape {kpm.shape} does not fit the inputs' batch "
                f"shape {batch_shape}: give (*batch, L_k), with 1 to share an axis"
            )
    if kpm.dtype == np.bool_:
        allowed = ~kpm[..., None, None, :]  # PyTorch: True = padding; (..., 1, 1, L_k)
        if m is None or m.dtype == np.bool_:
            return allowed if m is None else m & allowed
        return np.where(allowed, m, -np.inf)  # an additive mask, padding blocked
    if not np.issubdtype(kpm.dtype, np.floating):
        raise TypeError(
            "key_padding_mask must be boolean (True = padding, as in PyTorch) or float "
            f"(added to the scores), got dtype {kpm.dtype}"
        )
    add = kpm[..., None, None, :]  # (..., 1, 1, L_k)
    if m is None:
        return add
    if m.dtype == np.bool_:
        return np.where(m, add, -np.inf)
    both: NDArray[Any] = m + add  # (..., h|1, L_q, L_k): two additive masks add
    return both


def _multi_head(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    mask: ArrayLike | None = None,
    trace: Trace | None = None,
    *,
    x_v: ArrayLike | None = None,
    biases: tuple[ArrayLike | None, ...] = (None, None, None, None),
    key_padding_mask: ArrayLike | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    return_weights: bool = False,
    average_attn_weights: bool = True,
) -> Any:
    """``multi_head_attention``, optionally recording ``(step, shape)`` of every product."""
    h, xq, xk, xv, wq, wk, wv, wo = _check_inputs(x_q, x_kv, x_v, w_q, w_k, w_v, w_o, n_heads)
    b_q, b_k, b_v, b_o = (
        _bias(name, b, w.shape[1])
        for name, b, w in zip(("b_q", "b_k", "b_v", "b_o"), biases, (wq, wk, wv, wo), strict=True)
    )
    given = [a for a in (xq, xk, xv, wq, wk, wv, wo, b_q, b_k, b_v, b_o) if a is not None]
    dtype = np.result_type(*given)  # NumPy's promotion; bfloat16 alone stays bfloat16
    batch = np.broadcast_shapes(xq.shape[:-2], xk.shape[:-2], xv.shape[:-2])
    m = _head_mask(
        mask, key_padding_mask, len(batch), n_heads=h, batch_shape=batch, n_k=xk.shape[-2]
    )
    note = trace.append if trace is not None else (lambda _: None)

    q = xq @ wq  # (..., L_q, h·d_k)
    k = xk @ wk  # (..., L_k, h·d_k)
    v = xv @ wv  # (..., L_k, h·d_v)
    for t, b in ((q, b_q), (k, b_k), (v, b_v)):
        if b is not None:
            t += b  # (..., L, h·d): the same bias on every position
    note(("Q = X_q W_Q", q.shape))
    note(("K = X_kv W_K", k.shape))
    note(("V = X_kv W_V", v.shape))
    q, k, v = (_split_heads(t, h) for t in (q, k, v))  # (..., h, L, d)
    note(("Q split into heads", q.shape))
    note(("K split into heads", k.shape))
    note(("V split into heads", v.shape))
    if trace is not None:
        note(("scores Q⁽ⁱ⁾K⁽ⁱ⁾ᵀ per head", (*q.shape[:-1], k.shape[-2])))
    heads = attention(q, k, v, mask=m, is_causal=is_causal, causal_alignment=causal_alignment)
    w: Floats | None = None  # (..., h, L_q, L_k) if asked for
    if return_weights:
        w = attention_weights(
            q, k, v, mask=m, is_causal=is_causal, causal_alignment=causal_alignment
        )
    note(("heads softmax(·) V⁽ⁱ⁾", heads.shape))
    concat = _merge_heads(heads)  # (..., L_q, h·d_v)
    note(("Concat(head_1, …, head_h)", concat.shape))
    out = concat @ wo.astype(concat.dtype, copy=False)  # (..., L_q, d_out)
    if b_o is not None:
        out += b_o.astype(out.dtype, copy=False)
    note(("output Concat · W_O", out.shape))
    out = out.astype(dtype, copy=False)  # bfloat16 products come back float32: return bf16
    if w is None:
        return out
    if average_attn_weights:
        w = w.mean(axis=-3)  # (..., L_q, L_k): the mean over the heads, as PyTorch's default
    return out, w.astype(dtype, copy=False)


def multi_head_attention(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    mask: ArrayLike | None = None,
    *,
    x_v: ArrayLike | None = None,
    b_q: ArrayLike | None = None,
    b_k: ArrayLike | None = None,
    b_v: ArrayLike | None = None,
    b_o: ArrayLike | None = None,
    key_padding_mask: ArrayLike | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    return_weights: bool = False,
    average_attn_weights: bool = True,
) -> Any:
    """Multi-head attention: ``Concat(head_1, …, head_h) W_O``, each head one attention.

    Head ``i`` is ``attention(x_q W_Q^(i) + b_Q^(i), x_kv W_K^(i) + b_K^(i),
    x_v W_V^(i) + b_V^(i), mask)`` where ``W^(i)`` and ``b^(i)`` are the ``i``-th blocks of
    columns; the output is ``Concat(head_1, …, head_h) W_O + b_O``.

    Args:
        x_q: the sequence that asks, ``(..., L_q, d_model)``.
        x_kv: the sequence that is looked at, ``(..., L_k, d_kv)`` (``x_q`` again for
            self-attention). Its width may differ from ``x_q``'s (PyTorch's ``kdim``).
        w_q: ``(d_model, h·d_k)``; columns ``i·d_k … (i+1)·d_k − 1`` belong to head ``i``.
        w_k: ``(d_kv, h·d_k)``, split the same way.
        w_v: ``(d_kv, h·d_v)``, or ``(d_v_in, h·d_v)`` when ``x_v`` is given.
        w_o: ``(h·d_v, d_out)``; rows ``i·d_v … (i+1)·d_v − 1`` multiply head ``i``.
        n_heads: ``h``, a positive integer dividing the widths of ``w_q``, ``w_k``, ``w_v``.
        mask: as in [`attention`][attention_math.numeric.attention] (boolean True = may attend, or
            additive). ``(L_q, L_k)`` or ``(..., L_q, L_k)`` with the batch dimensions of
            the inputs: the same for every head; ``(..., n_heads, L_q, L_k)``: per head (a
            head axis of 1, such as The Annotated Transformer's and Hugging Face's
            ``(B, 1, 1, L_k)`` padding mask, broadcasts over the heads). A mask that would
            add batch dimensions raises a ``ValueError`` naming its shape and the inputs'
            number of batch dimensions.
        x_v: the values' own sequence, ``(..., L_k, d_v_in)``, when keys and values
            differ (PyTorch's separate ``key`` and ``value`` with ``vdim``); default
            ``x_kv``.
        b_q: bias ``(h·d_k,)`` added to the queries (PyTorch's ``bias=True``).
        b_k: bias ``(h·d_k,)`` added to the keys.
        b_v: bias ``(h·d_v,)`` added to the values.
        b_o: bias ``(d_out,)`` added to the output.
        key_padding_mask: ``(..., L_k)`` with the inputs' batch dimensions, PyTorch's
            convention: boolean **True = padding** (the opposite of ``mask``), or float
            added to the scores. Combined with ``mask`` (both must allow a key).
        is_causal: a causal mask, combined with ``mask``, as in
            [`attention`][attention_math.numeric.attention] (PyTorch's ``is_causal`` is only a
            hint that ``mask`` is causal; here it applies the mask itself).
        causal_alignment: ``"top-left"`` (default) or ``"bottom-right"``.
        return_weights: also return the attention weights (PyTorch's ``need_weights``).
        average_attn_weights: with ``return_weights``, the weights averaged over the heads,
            ``(..., L_q, L_k)`` (PyTorch's default), or ``False`` for per-head weights
            ``(..., h, L_q, L_k)``.

    Returns:
        ``(..., L_q, d_out)``, and the weights with ``return_weights``, in the dtype NumPy
            promotes the inputs to: bfloat16 (``ml_dtypes``) throughout stays bfloat16, its
            products computed in float32.

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import multi_head_attention
        >>> rng = np.random.default_rng(0)
        >>> x_q, x_kv = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
        >>> w_q, w_k, w_v, w_o = (rng.standard_normal((4, 4)) for _ in range(4))
        >>> multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads=2).shape
        (3, 4)
        >>> multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads=3)
        Traceback (most recent call last):
        ...
        ValueError: w_q has 4 columns, not divisible by n_heads = 3

        Per-head weights, and a padding mask in PyTorch's convention (True = padding):

        >>> pad = np.array([False, False, False, True, True])
        >>> out, w = multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, 2,
        ...     key_padding_mask=pad, return_weights=True, average_attn_weights=False)
        >>> w.shape, bool((w[..., 3:] == 0).all())
        ((2, 3, 5), True)
    """
    return _multi_head(
        x_q,
        x_kv,
        w_q,
        w_k,
        w_v,
        w_o,
        n_heads,
        mask,
        x_v=x_v,
        biases=(b_q, b_k, b_v, b_o),
        key_padding_mask=key_padding_mask,
        is_causal=is_causal,
        causal_alignment=causal_alignment,
        return_weights=return_weights,
        average_attn_weights=average_attn_weights,
    )


def circuits(
    w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike, w_o: ArrayLike, n_heads: int
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """The QK and OV circuits of each head ``k``: ``W_QK^k = W_Q^k W_K^kᵀ`` and
    ``W_OV^k = W_V^k W_O^k``.

    Head ``k``'s scores are ``X W_QK^k Xᵀ · scale`` (a bilinear form in the inputs) and its
    contribution to the output is ``P_k X W_OV^k``; multi-head attention is the *sum* of
    those contributions over the heads, the same as ``Concat(head_1, …) W_O``. Each circuit
    is a product through ``d_k`` (or ``d_v``) columns, so its rank is at most ``d_k``
    (``d_v``), however wide ``d_model`` is.

    Args:
        w_q: ``(d_model, h·d_k)``, split into heads as in
            ``multi_head_attention``.
        w_k: ``(d_model, h·d_k)``, split the same way.
        w_v: ``(d_model, h·d_v)``.
        w_o: ``(h·d_v, d_out)``; rows ``i·d_v … (i+1)·d_v − 1`` belong to head ``i``.
        n_heads: ``h``.

    Returns:
        ``(qk, ov)``: the QK circuits ``(h, d_model, d_model)`` (where each head looks) and
            the OV circuits ``(h, d_model, d_out)`` (what each head moves).

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import circuits
        >>> rng = np.random.default_rng(0)
        >>> w_q, w_k, w_v, w_o = (rng.standard_normal((4, 4)) for _ in range(4))
        >>> qk, ov = circuits(w_q, w_k, w_v, w_o, n_heads=2)
        >>> qk.shape, ov.shape
        ((2, 4, 4), (2, 4, 4))
        >>> [int(np.linalg.matrix_rank(m)) for m in qk]  # rank ≤ d_k = 2 out of 4
        [2, 2]
    """
    d_model = np.shape(w_q)[0] if np.ndim(w_q) == 2 else 0
    probe = np.zeros((1, max(d_model, 1)))  # a stand-in x to reuse the weight checks
    _, _, _, _, wq, wk, wv, wo = _check_inputs(probe, probe, None, w_q, w_k, w_v, w_o, n_heads)
    dtype = np.result_type(wq, wk, wv, wo)
    qh, kh, vh = (_split_heads(w.astype(dtype, copy=False), n_heads) for w in (wq, wk, wv))
    # (h, d_model, d) each
    oh = wo.astype(dtype, copy=False).reshape(n_heads, -1, wo.shape[1])  # (h, d_v, d_out)
    qk = qh @ np.swapaxes(kh, -1, -2)  # (h, d_model, d_model)
    ov = vh @ oh  # (h, d_model, d_out)
    return qk, ov


def _check_heads(n_heads: object, n_kv_heads: object) -> tuple[int, int]:
    for name, n in (("n_heads", n_heads), ("n_kv_heads", n_kv_heads)):
        check_count(name, n)
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

    Query head ``k`` reads key/value head ``k // (n_heads // n_kv_heads)`` (consecutive query
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
        mask: as in `multi_head_attention`: ``(..., L_q, L_k)`` is the same for every
            head, ``(..., n_heads, L_q, L_k)`` is per query head.

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
    # (..., h|1, L_q, L_k): per-head or shared, as in multi_head_attention
    mask = _head_mask(mask, None, max(xq.ndim, xkv.ndim) - 2, n_heads=h)

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
