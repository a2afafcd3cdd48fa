"""Multi-head attention: ``h`` scaled dot-product attentions side by side, then ``W_O``.

``x_q`` gives the queries and ``x_kv`` the keys and values; with ``x_q is x_kv`` this is
self-attention, with different sequences (``L_q ≠ L_k``) it is cross-attention. Each head is
[`attention`][attention_math.numeric.attention] on its own ``d_k``-wide slice of the
projections; the reshape and transpose that split the heads are written out step by step.

One family, one parameter type:

* the weights of a layer are one [`AttentionParams`][attention_math.multihead.AttentionParams]
  (``w_q``, ``w_k``, ``w_v``, ``w_o`` and optional biases), the type the transformer block
  ([`attention_math.block`][]) and the toy model ([`attention_math.toy`][]) use too;
* ``n_kv_heads`` below ``n_heads`` shares each key/value head among a group of query heads
  (grouped-query attention; ``n_kv_heads=1`` is multi-query attention), as PyTorch's
  ``scaled_dot_product_attention(..., enable_gqa=True)``;
* one mask convention, ``attention``'s: boolean **True = may attend**, or additive float.
  PyTorch's ``key_padding_mask`` (True = padding) converts with
  [`from_key_padding_mask`][attention_math.multihead.from_key_padding_mask];
* ``multi_head_attention`` returns the output only; the weights of every head come from
  [`multi_head_weights`][attention_math.multihead.multi_head_weights].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import (
    CausalAlignment,
    as_float,
    causal_offset,
    check_count,
    check_flag,
    check_mask,
    check_scale,
    work_dtype,
)
from attention_math.numeric import attention

__all__ = [
    "AttentionParams",
    "circuits",
    "from_key_padding_mask",
    "merge_heads",
    "multi_head_attention",
    "multi_head_weights",
    "split_heads",
]

Trace = list[tuple[str, tuple[int, ...]]]
Floats = NDArray[np.floating]


@dataclass(frozen=True, eq=False)
class AttentionParams:
    """The weights of one multi-head attention layer, multiplied on the right (``x @ w``).

    Head ``i`` owns columns ``i·d … (i+1)·d − 1`` of ``w_q``, ``w_k``, ``w_v`` and rows
    ``i·d_v … (i+1)·d_v − 1`` of ``w_o``. With ``n_kv_heads`` key/value heads (GQA), ``w_k``
    and ``w_v`` have ``n_kv_heads`` blocks of columns instead of ``n_heads``. Every array is
    checked (real numbers, finite, a matrix or a vector) and stored as a float array; the
    arrays given as float are kept as they are, not copied.

    Attributes:
        w_q: ``(d_model, h·d_k)``.
        w_k: ``(d_kv, h_kv·d_k)``; ``d_kv`` is the width of ``x_kv`` (``d_model`` for
            self-attention), ``h_kv = h`` without GQA.
        w_v: ``(d_kv, h_kv·d_v)``, or ``(d_v_in, h_kv·d_v)`` when ``x_v`` is given.
        w_o: ``(h·d_v, d_out)``.
        b_q: ``(h·d_k,)`` added to the queries, or ``None`` (PyTorch's ``bias=True``).
        b_k: ``(h_kv·d_k,)`` or ``None``.
        b_v: ``(h_kv·d_v,)`` or ``None``.
        b_o: ``(d_out,)`` or ``None``.

    See Also:
        - [`multi_head_attention`][attention_math.multihead.multi_head_attention]: the layer these
          weights make.
        - [`block.BlockParams`][attention_math.block.BlockParams]: the block's weights, which hold
          one.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3.2.2: W^Q, W^K, W^V and W^O.

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import AttentionParams
        >>> p = AttentionParams(*(np.eye(4) for _ in range(4)), b_o=np.zeros(4))
        >>> {name: a.shape for name, a in p.as_dict().items()}
        {'w_q': (4, 4), 'w_k': (4, 4), 'w_v': (4, 4), 'w_o': (4, 4), 'b_o': (4,)}
        >>> AttentionParams(np.eye(4), np.eye(4), np.eye(4), np.ones(4))
        Traceback (most recent call last):
        ...
        ValueError: w_o must be a matrix (2 axes), got shape (4,)
    """

    w_q: Floats
    w_k: Floats
    w_v: Floats
    w_o: Floats
    b_q: Floats | None = None
    b_k: Floats | None = None
    b_v: Floats | None = None
    b_o: Floats | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name.startswith("b_"):
                continue
            a = as_float(f.name, value, min_ndim=0)
            axes = 2 if f.name.startswith("w_") else 1
            if a.ndim != axes:
                kind = "a matrix (2 axes)" if axes == 2 else "a vector (1 axis)"
                raise ValueError(f"{f.name} must be {kind}, got shape {a.shape}")
            object.__setattr__(self, f.name, a)

    def as_dict(self) -> dict[str, Floats]:
        """The arrays by name (``w_q``, ``w_k``, ``w_v``, ``w_o``, then the biases given),
        the stored arrays themselves (an in-place update of one updates the layer)."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }

    @classmethod
    def from_torch(cls, state: Mapping[str, ArrayLike], prefix: str = "") -> AttentionParams:
        """The weights of a ``torch.nn.MultiheadAttention`` from its ``state_dict``, as NumPy
        arrays (``{k: t.detach().numpy() for k, t in mha.state_dict().items()}``).

        PyTorch stores ``(out, in)`` matrices and computes ``x Wᵀ + b``; the query, key and
        value projections are stacked in ``in_proj_weight`` (or are ``q_proj_weight``,
        ``k_proj_weight``, ``v_proj_weight`` when ``kdim`` or ``vdim`` differ from
        ``embed_dim``). ``prefix`` selects a layer inside a bigger model, e.g.
        ``"self_attn."`` for ``torch.nn.TransformerEncoderLayer``.

        Examples:
            >>> import numpy as np
            >>> from attention_math.multihead import AttentionParams
            >>> state = {"in_proj_weight": np.arange(12.0).reshape(6, 2),
            ...          "out_proj.weight": np.eye(2)}
            >>> AttentionParams.from_torch(state).w_k  # rows 2..3 of in_proj_weight, transposed
            array([[4., 6.],
                   [5., 7.]])
        """
        s = {
            name[len(prefix) :]: np.asarray(a)
            for name, a in state.items()
            if name.startswith(prefix)
        }
        if "in_proj_weight" in s:
            w_in = s["in_proj_weight"]  # (3·h·d, d_model): q, k, v stacked
            n = w_in.shape[0] // 3
            w_q, w_k, w_v = w_in[:n].T, w_in[n : 2 * n].T, w_in[2 * n :].T
        else:
            w_q, w_k, w_v = (s[f"{m}_proj_weight"].T for m in ("q", "k", "v"))
        b_q = b_k = b_v = None
        if "in_proj_bias" in s:
            b_in = s["in_proj_bias"]  # (3·h·d,)
            n = b_in.shape[0] // 3
            b_q, b_k, b_v = b_in[:n], b_in[n : 2 * n], b_in[2 * n :]
        return cls(w_q, w_k, w_v, s["out_proj.weight"].T, b_q, b_k, b_v, s.get("out_proj.bias"))


def split_heads(t: NDArray[Any], n_heads: int) -> NDArray[Any]:
    """``(..., L, h·d) → (..., h, L, d)``: head ``i`` owns columns ``i·d … (i+1)·d − 1``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import split_heads
        >>> split_heads(np.arange(8).reshape(2, 4), 2)[1]  # head 1: columns 2, 3
        array([[2, 3],
               [6, 7]])
    """
    *lead, length, width = t.shape
    t = t.reshape(*lead, length, n_heads, width // n_heads)  # (..., L, h, d)
    return np.swapaxes(t, -3, -2)  # (..., h, L, d)


def merge_heads(t: NDArray[Any]) -> NDArray[Any]:
    """``(..., h, L, d) → (..., L, h·d)``: the concatenation Concat(head_1, …, head_h).

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import merge_heads, split_heads
        >>> t = np.arange(8).reshape(2, 4)
        >>> bool((merge_heads(split_heads(t, 2)) == t).all())
        True
    """
    t = np.swapaxes(t, -3, -2)  # (..., L, h, d)
    *lead, length, n_heads, width = t.shape
    return t.reshape(*lead, length, n_heads * width)  # (..., L, h·d)


def _check_heads(n_heads: object, n_kv_heads: object) -> tuple[int, int]:
    """``(h, h_kv)``: positive integers, ``h_kv`` (default ``h``) dividing ``h``."""
    h = check_count("n_heads", n_heads)
    if n_kv_heads is None:
        return h, h
    g = check_count("n_kv_heads", n_kv_heads)
    if h % g:
        raise ValueError(
            f"n_kv_heads = {g} must divide n_heads = {h}: each key/value head "
            f"serves a whole group of query heads"
        )
    return h, g


def _check_params(params: object) -> AttentionParams:
    if not isinstance(params, AttentionParams):
        raise TypeError(
            f"params must be an AttentionParams(w_q, w_k, w_v, w_o, …), got {type(params).__name__}"
        )
    return params


def _rows(name: str, w: Floats, x: Floats, x_name: str) -> None:
    """``w`` reads ``x``: its rows are the width of ``x`` (PyTorch's ``embed_dim``, ``kdim``
    and ``vdim``)."""
    if w.shape[0] != x.shape[-1]:
        raise ValueError(
            f"params.{name} must have {x.shape[-1]} rows, the width of {x_name} {x.shape}; "
            f"got shape {w.shape}"
        )


def _bias(name: str, b: Floats | None, width: int) -> None:
    if b is not None and b.shape != (width,):
        raise ValueError(f"params.{name} must have shape ({width},), got {b.shape}")


def _check_qk(p: AttentionParams, xq: Floats, xk: Floats, h: int, g: int) -> int:
    """Validate the query and key weights against the inputs; return ``d_k``."""
    _rows("w_q", p.w_q, xq, "x_q")
    _rows("w_k", p.w_k, xk, "x_kv")
    if p.w_q.shape[1] % h:
        raise ValueError(f"params.w_q has {p.w_q.shape[1]} columns, not divisible by n_heads = {h}")
    d_k = int(p.w_q.shape[1]) // h
    if p.w_k.shape[1] != g * d_k:
        raise ValueError(
            f"params.w_k must have n_kv_heads·d_k = {g}·{d_k} = {g * d_k} columns "
            f"(d_k = {d_k} from w_q), got shape {p.w_k.shape}"
        )
    _bias("b_q", p.b_q, h * d_k)
    _bias("b_k", p.b_k, g * d_k)
    return d_k


def _check_vo(p: AttentionParams, xv: Floats, x_name: str, h: int, g: int) -> None:
    _rows("w_v", p.w_v, xv, x_name)
    if p.w_v.shape[1] % g:
        raise ValueError(
            f"params.w_v has {p.w_v.shape[1]} columns, not divisible by n_kv_heads = {g}"
        )
    d_v = p.w_v.shape[1] // g
    if p.w_o.shape[0] != h * d_v:
        raise ValueError(
            f"params.w_o must have n_heads·d_v = {h}·{d_v} = {h * d_v} rows (d_v from w_v), "
            f"got shape {p.w_o.shape}"
        )
    _bias("b_v", p.b_v, g * d_v)
    _bias("b_o", p.b_o, p.w_o.shape[1])


def _project(x: Floats, w: Floats, b: Floats | None, n: int) -> Floats:
    """``x W + b`` split into ``n`` heads: ``(..., L, n·d) → (..., n, L, d)``."""
    t = x @ w  # (..., L, n·d)
    if b is not None:
        t = t + b  # (..., L, n·d): the same bias at every position
    return split_heads(t, n)


def _head_mask(mask: ArrayLike | None, batch_ndim: int, n_heads: int) -> NDArray[Any] | None:
    """``mask`` with a head axis, ``(..., h|1, L_q, L_k)``.

    A mask of at most ``batch_ndim + 2`` axes, ``(..., L_q, L_k)``, is the same for every
    head; one of ``batch_ndim + 3`` axes, ``(..., h, L_q, L_k)``, is per head (a head axis
    of 1, as in The Annotated Transformer's ``(B, 1, 1, L)``, broadcasts over the heads).
    More axes would add batch dimensions and are refused.
    """
    if mask is None:
        return None
    m = np.asarray(mask)
    if 2 < m.ndim <= batch_ndim + 2:
        m = np.expand_dims(m, -3)  # (..., 1, L_q, L_k): every head the same
    elif m.ndim > batch_ndim + 3:
        raise ValueError(
            f"mask of shape {m.shape} does not fit inputs with {batch_ndim} batch "
            f"dimension(s): give (L_q, L_k), (..., L_q, L_k) or (..., n_heads, L_q, L_k) "
            "with the batch dimensions of x_q"
        )
    elif m.ndim == batch_ndim + 3 and m.shape[-3] not in (1, n_heads):
        raise ValueError(
            f"mask of shape {m.shape} is a per-head mask (..., n_heads, L_q, L_k) "
            f"with {m.shape[-3]} heads on axis -3; give n_heads = {n_heads} or 1"
        )
    return m


def _inputs(
    x_q: ArrayLike, x_kv: ArrayLike, x_v: ArrayLike | None
) -> tuple[Floats, Floats, Floats, tuple[int, ...]]:
    xq = as_float("x_q", x_q, min_ndim=2)
    xk = as_float("x_kv", x_kv, min_ndim=2)
    xv = xk if x_v is None else as_float("x_v", x_v, min_ndim=2)
    if xv.shape[-2] != xk.shape[-2]:
        raise ValueError(
            f"x_v and x_kv must share L_k (second-to-last axis): x_kv has shape {xk.shape}, "
            f"x_v has shape {xv.shape}"
        )
    try:
        batch = np.broadcast_shapes(xq.shape[:-2], xk.shape[:-2], xv.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch dimensions of x_q {xq.shape}, x_kv {xk.shape} and x_v {xv.shape} "
            "do not broadcast"
        ) from None
    return xq, xk, xv, batch


def _multi_head(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    params: AttentionParams,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    mask: ArrayLike | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    scale: float | None = None,
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
    x_v: ArrayLike | None = None,
    trace: Trace | None = None,
) -> Floats:
    """``multi_head_attention``, optionally recording ``(step, shape)`` of every product."""
    p = _check_params(params)
    h, g = _check_heads(n_heads, n_kv_heads)
    xq, xk, xv, batch = _inputs(x_q, x_kv, x_v)
    _check_qk(p, xq, xk, h, g)
    _check_vo(p, xv, "x_kv" if x_v is None else "x_v", h, g)
    dtype = np.result_type(xq, xk, xv, *p.as_dict().values())  # bfloat16 alone stays bf16
    m = _head_mask(mask, len(batch), h)
    note = trace.append if trace is not None else (lambda _: None)

    q = _project(xq, p.w_q, p.b_q, h)  # (..., h, L_q, d_k)
    k = _project(xk, p.w_k, p.b_k, g)  # (..., h_kv, L_k, d_k)
    v = _project(xv, p.w_v, p.b_v, g)  # (..., h_kv, L_k, d_v)
    note(("Q = X_q W_Q", merge_heads(q).shape))
    note(("K = X_kv W_K", merge_heads(k).shape))
    note(("V = X_kv W_V", merge_heads(v).shape))
    note(("Q split into heads", q.shape))
    note(("K split into heads", k.shape))
    note(("V split into heads", v.shape))
    if g < h:  # query head i reads key/value head i // (h / h_kv), as torch's enable_gqa
        k = np.repeat(k, h // g, axis=-3)  # (..., h, L_k, d_k)
        v = np.repeat(v, h // g, axis=-3)  # (..., h, L_k, d_v)
        note(("K, V repeated for each query head", k.shape))
    note(("scores Q⁽ⁱ⁾K⁽ⁱ⁾ᵀ per head", (*q.shape[:-1], k.shape[-2])))
    heads = attention(
        q,
        k,
        v,
        mask=m,
        scale=scale,
        is_causal=is_causal,
        causal_alignment=causal_alignment,
        dropout_p=dropout_p,
        rng=rng,
    )  # (..., h, L_q, d_v)
    note(("heads softmax(·) V⁽ⁱ⁾", heads.shape))
    concat = merge_heads(heads)  # (..., L_q, h·d_v)
    note(("Concat(head_1, …, head_h)", concat.shape))
    out = concat @ p.w_o.astype(concat.dtype, copy=False)  # (..., L_q, d_out)
    if p.b_o is not None:
        out = out + p.b_o.astype(out.dtype, copy=False)  # (..., L_q, d_out)
    note(("output Concat · W_O", out.shape))
    result: Floats = out.astype(dtype, copy=False)  # bfloat16 products come back float32
    return result


def multi_head_attention(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    params: AttentionParams,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    mask: ArrayLike | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    scale: float | None = None,
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
    x_v: ArrayLike | None = None,
) -> Floats:
    """Multi-head attention: ``Concat(head_1, …, head_h) W_O``, each head one attention.

    Head ``i`` is ``attention(x_q W_Q^(i) + b_Q^(i), x_kv W_K^(j) + b_K^(j),
    x_v W_V^(j) + b_V^(j), mask)`` where ``W^(i)`` and ``b^(i)`` are the ``i``-th blocks of
    columns and ``j = i // (n_heads / n_kv_heads)`` is the key/value head that query head
    ``i`` reads (``j = i`` without GQA); the output is ``Concat(head_1, …, head_h) W_O + b_O``.

    Args:
        x_q: the sequence that asks, ``(..., L_q, d_model)``.
        x_kv: the sequence that is looked at, ``(..., L_k, d_kv)`` (``x_q`` again for
            self-attention). Its width may differ from ``x_q``'s (PyTorch's ``kdim``).
        params: the layer's weights, an
            [`AttentionParams`][attention_math.multihead.AttentionParams].
        n_heads: ``h``, the query heads: a positive integer dividing the columns of
            ``params.w_q``.
        n_kv_heads: ``h_kv``, the key/value heads, a positive divisor of ``n_heads``
            (default ``n_heads``): ``params.w_k`` and ``params.w_v`` then have ``h_kv``
            blocks of columns, and each serves ``h / h_kv`` consecutive query heads
            (grouped-query attention; ``1`` is multi-query attention). PyTorch's
            ``scaled_dot_product_attention(..., enable_gqa=True)``.
        mask: as in [`attention`][attention_math.numeric.attention]: boolean **True = may
            attend**, or additive float. ``(L_q, L_k)`` or ``(..., L_q, L_k)`` with the
            batch dimensions of the inputs: the same for every head;
            ``(..., n_heads, L_q, L_k)``: per query head (a head axis of 1, such as The
            Annotated Transformer's ``(B, 1, 1, L_k)`` padding mask, broadcasts over the
            heads). A mask that would add batch dimensions raises a ``ValueError``.
            PyTorch's ``key_padding_mask`` (True = padding) converts with
            [`from_key_padding_mask`][attention_math.multihead.from_key_padding_mask].
        is_causal: a causal mask, combined with ``mask``, as in
            [`attention`][attention_math.numeric.attention].
        causal_alignment: ``"top-left"`` (default) or ``"bottom-right"``.
        scale: the factor on the scores, default ``1/√d_k``, as in ``attention``.
        dropout_p: dropout on every head's weights, as in ``attention`` (inverted dropout,
            in ``[0, 1)``; 0 is none).
        rng: the dropout's random source, a ``numpy.random.Generator`` or a seed.
        x_v: the values' own sequence, ``(..., L_k, d_v_in)``, when keys and values
            differ (PyTorch's separate ``key`` and ``value`` with ``vdim``); default
            ``x_kv``.

    Returns:
        ``(..., L_q, d_out)``, in the dtype NumPy promotes the inputs to: bfloat16
            (``ml_dtypes``) throughout stays bfloat16, its products computed in float32.
            The weights of each head come from
            [`multi_head_weights`][attention_math.multihead.multi_head_weights].

    Raises:
        TypeError: ``params`` is not an ``AttentionParams``, or an input is not real.
        ValueError: the shapes do not fit (the message names the array and both widths),
            or ``n_kv_heads`` does not divide ``n_heads``.

    See Also:
        [`attention`][attention_math.numeric.attention]: one head, which this calls once
        for all heads. [`reference.attention`][attention_math.reference.attention]: that
        head on one screen. [`multi_head_weights`][attention_math.multihead.multi_head_weights]:
        the weights of every head. [`circuits`][attention_math.multihead.circuits]: the QK
        and OV circuits of every head.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3.2.2: multi-head attention.
        - [Shazeer, 2019](https://arxiv.org/abs/1911.02150): multi-query attention.
        - [Ainslie et al., 2023](https://arxiv.org/abs/2305.13245): grouped-query attention.

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import AttentionParams, multi_head_attention
        >>> rng = np.random.default_rng(0)
        >>> x_q, x_kv = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
        >>> p = AttentionParams(*(rng.standard_normal((4, 4)) for _ in range(4)))
        >>> multi_head_attention(x_q, x_kv, p, n_heads=2).shape
        (3, 4)
        >>> multi_head_attention(x_q, x_kv, p, n_heads=3)
        Traceback (most recent call last):
        ...
        ValueError: params.w_q has 4 columns, not divisible by n_heads = 3

        Grouped-query attention, 4 query heads sharing 2 key/value heads of width 2:

        >>> gqa = AttentionParams(rng.standard_normal((4, 8)), rng.standard_normal((4, 4)),
        ...                       rng.standard_normal((4, 4)), rng.standard_normal((8, 4)))
        >>> multi_head_attention(x_q, x_kv, gqa, n_heads=4, n_kv_heads=2).shape
        (3, 4)

        A padding mask in PyTorch's convention (True = padding), converted:

        >>> from attention_math.multihead import from_key_padding_mask
        >>> pad = np.array([False, False, False, True, True])
        >>> out = multi_head_attention(x_q, x_kv, p, 2, mask=from_key_padding_mask(pad))
        >>> bool(np.allclose(out, multi_head_attention(x_q, x_kv[:3], p, 2)))
        True
    """
    return _multi_head(
        x_q,
        x_kv,
        params,
        n_heads,
        n_kv_heads=n_kv_heads,
        mask=mask,
        is_causal=is_causal,
        causal_alignment=causal_alignment,
        scale=scale,
        dropout_p=dropout_p,
        rng=rng,
        x_v=x_v,
    )


def multi_head_weights(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    params: AttentionParams,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    mask: ArrayLike | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    scale: float | None = None,
) -> Floats:
    """The attention weights of every head, ``softmax(Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ · scale + mask)``.

    The arguments mean what they mean in
    [`multi_head_attention`][attention_math.multihead.multi_head_attention] (only the query
    and key weights are read). Row ``q`` of head ``i`` sums to 1, or is all 0 if the mask
    blocks every key of that query. PyTorch's ``need_weights=True`` returns these averaged
    over the heads by default: ``multi_head_weights(...).mean(axis=-3)``.

    Returns:
        ``(..., n_heads, L_q, L_k)``, in the dtype NumPy promotes the inputs to (float16 and
            bfloat16 are computed in float32).

    See Also:
        [`multi_head_attention`][attention_math.multihead.multi_head_attention]: the output
        these weights make. [`reference.attention`][attention_math.reference.attention]:
        the same softmax, one head, on one screen.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3.2.2: multi-head attention.

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import (AttentionParams, from_key_padding_mask,
        ...                                       multi_head_weights)
        >>> rng = np.random.default_rng(0)
        >>> x_q, x_kv = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
        >>> p = AttentionParams(*(rng.standard_normal((4, 4)) for _ in range(4)))
        >>> pad = np.array([False, False, False, True, True])
        >>> w = multi_head_weights(x_q, x_kv, p, 2, mask=from_key_padding_mask(pad))
        >>> w.shape, bool((w[..., 3:] == 0).all()), bool(np.allclose(w.sum(-1), 1))
        ((2, 3, 5), True, True)
    """
    p = _check_params(params)
    h, g = _check_heads(n_heads, n_kv_heads)
    xq, xk, _, batch = _inputs(x_q, x_kv, None)
    d_k = _check_qk(p, xq, xk, h, g)
    causal = check_flag("is_causal", is_causal)
    dtype, work = work_dtype(xq, xk, p.w_q, p.w_k)
    q = _project(xq, p.w_q, p.b_q, h).astype(work, copy=False)  # (..., h, L_q, d_k)
    k = _project(xk, p.w_k, p.b_k, g).astype(work, copy=False)  # (..., h_kv, L_k, d_k)
    k = np.repeat(k, h // g, axis=-3)  # (..., h, L_k, d_k): query head i reads i // (h/h_kv)
    s = work.type(check_scale(scale, d_k))
    att = q @ np.swapaxes(k, -1, -2) * s  # (..., h, L_q, L_k): scores
    n_q, n_k = att.shape[-2:]
    offset = causal_offset(n_q, n_k, causal_alignment)
    m = _head_mask(mask, len(batch), h)
    if m is not None:
        m, _ = check_mask(m, att.shape)
        if m.dtype == np.bool_:
            att = np.where(m, att, -np.inf)  # (..., h, L_q, L_k)
        else:
            att = att + m.astype(work, copy=False)  # (..., h, L_q, L_k): a bias on the scores
    if causal:
        seen = np.tri(n_q, n_k, k=offset, dtype=bool)  # (L_q, L_k): j ≤ i + offset
        att = np.where(seen, att, -np.inf)  # (..., h, L_q, L_k): no future
    top = att.max(axis=-1, keepdims=True)  # (..., h, L_q, 1): row max
    top = np.where(np.isneginf(top), 0, top)  # 0 if the whole row is masked
    att = np.exp(att - top)  # (..., h, L_q, L_k): ≤ 1, cannot overflow
    total = att.sum(axis=-1, keepdims=True)  # (..., h, L_q, 1): 0 if all masked
    weights: Floats = (att / np.where(total == 0, 1, total)).astype(dtype, copy=False)
    return weights  # (..., h, L_q, L_k)


def from_key_padding_mask(key_padding_mask: ArrayLike) -> NDArray[Any]:
    """PyTorch's ``key_padding_mask`` as a ``mask`` for ``multi_head_attention``.

    PyTorch's ``nn.MultiheadAttention`` takes a ``key_padding_mask`` of shape ``(..., L_k)``
    in which a boolean **True marks padding** (a key no query may see): the opposite of the
    ``mask`` convention of this package (and of ``scaled_dot_product_attention``), where
    True = may attend. This flips a boolean one and adds the query axis, so that it
    broadcasts over the queries (and, in ``multi_head_attention``, over the heads); a float
    one is additive in both conventions and only gains the axis.

    Args:
        key_padding_mask: ``(..., L_k)``: boolean, True = padding; or float, added to the
            scores (``-inf`` blocks).

    Returns:
        ``(..., 1, L_k)``: boolean True = may attend, or the float mask. Combine it with
            another mask by ``&`` (boolean) or ``+`` (float). For
            [`attention`][attention_math.numeric.attention] on inputs that already carry a
            head axis, ``(B, h, L, d)``, add that axis: ``mask[:, None]``.

    See Also:
        - [`numeric.padding_mask`][attention_math.numeric.padding_mask]: the mask from valid
          lengths.
        - [`multi_head_attention`][attention_math.multihead.multi_head_attention]: takes the
          converted mask.

    References:
        - [PyTorch's
          `nn.MultiheadAttention`](https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html):
          ``key_padding_mask``, True where a key is padding.

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import from_key_padding_mask
        >>> pad = np.array([[False, False, True], [False, True, True]])  # (B, L_k)
        >>> from_key_padding_mask(pad)  # (B, 1, L_k): True = may attend
        array([[[ True,  True, False]],
        <BLANKLINE>
               [[ True, False, False]]])
        >>> from_key_padding_mask(pad) & np.tri(3, dtype=bool)  # and causal: (B, L_q, L_k)
        array([[[ True, False, False],
                [ True,  True, False],
                [ True,  True, False]],
        <BLANKLINE>
               [[ True, False, False],
                [ True, False, False],
                [ True, False, False]]])
        >>> from_key_padding_mask(np.array([0, 1]))
        Traceback (most recent call last):
        ...
        TypeError: key_padding_mask must be boolean (True = padding, PyTorch's convention) \
or float (added to the scores), got dtype int64
    """
    kpm = np.asarray(key_padding_mask)
    if kpm.ndim < 1:
        raise ValueError(f"key_padding_mask must have shape (..., L_k), got a scalar {kpm!r}")
    if kpm.dtype == np.bool_:
        return ~kpm[..., None, :]  # (..., 1, L_k): True = may attend
    if np.issubdtype(kpm.dtype, np.floating):
        return kpm[..., None, :]  # (..., 1, L_k): additive either way
    raise TypeError(
        "key_padding_mask must be boolean (True = padding, PyTorch's convention) or float "
        f"(added to the scores), got dtype {kpm.dtype}"
    )


def circuits(
    params: AttentionParams, n_heads: int, *, n_kv_heads: int | None = None
) -> tuple[Floats, Floats]:
    """The QK and OV circuits of each head ``k``: ``W_QK^k = W_Q^k W_K^kᵀ`` and
    ``W_OV^k = W_V^k W_O^k``.

    Head ``k``'s scores are ``X W_QK^k Xᵀ · scale`` (a bilinear form in the inputs; the
    biases, if any, add terms outside the circuit) and its contribution to the output is
    ``P_k X W_OV^k``; multi-head attention is the *sum* of those contributions over the
    heads, the same as ``Concat(head_1, …) W_O``. Each circuit is a product through ``d_k``
    (or ``d_v``) columns, so its rank is at most ``d_k`` (``d_v``), however wide
    ``d_model`` is. With GQA, query head ``k`` pairs with key/value head
    ``k // (n_heads / n_kv_heads)``.

    Args:
        params: the layer's weights; ``w_q``, ``w_k``, ``w_v`` must read the same
            ``d_model`` (self-attention).
        n_heads: ``h``.
        n_kv_heads: the key/value heads (default ``n_heads``).

    Returns:
        ``(qk, ov)``: the QK circuits ``(h, d_model, d_model)`` (where each head looks) and
            the OV circuits ``(h, d_model, d_out)`` (what each head moves).

    References:
        Elhage et al. (2021), "A Mathematical Framework for Transformer Circuits".

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import AttentionParams, circuits
        >>> rng = np.random.default_rng(0)
        >>> p = AttentionParams(*(rng.standard_normal((4, 4)) for _ in range(4)))
        >>> qk, ov = circuits(p, n_heads=2)
        >>> qk.shape, ov.shape
        ((2, 4, 4), (2, 4, 4))
        >>> [int(np.linalg.matrix_rank(m)) for m in qk]  # rank ≤ d_k = 2 out of 4
        [2, 2]
    """
    p = _check_params(params)
    h, g = _check_heads(n_heads, n_kv_heads)
    x = np.zeros((1, p.w_q.shape[0]))  # a stand-in x (one row of width d_model) for the checks
    _check_qk(p, x, x, h, g)
    _check_vo(p, x, "x_kv", h, g)
    dtype = np.result_type(p.w_q, p.w_k, p.w_v, p.w_o)
    qh, kh, vh = (
        split_heads(w.astype(dtype, copy=False), n) for w, n in ((p.w_q, h), (p.w_k, g), (p.w_v, g))
    )  # (heads, d_model, d) each
    kh, vh = np.repeat(kh, h // g, axis=0), np.repeat(vh, h // g, axis=0)  # (h, d_model, d)
    oh = p.w_o.astype(dtype, copy=False).reshape(h, -1, p.w_o.shape[1])  # (h, d_v, d_out)
    qk = qh @ np.swapaxes(kh, -1, -2)  # (h, d_model, d_model)
    ov = vh @ oh  # (h, d_model, d_out)
    return qk, ov
