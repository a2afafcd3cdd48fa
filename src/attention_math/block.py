"""One transformer block around attention: a norm, multi-head attention, a feed-forward network.

The block keeps a *residual stream* ``x`` of shape ``(..., L, d_model)``; each sub-layer
adds its output to it. Two placements of the LayerNorm are in use:

* ``norm_first=True`` (pre-LN, GPT-2 and most models since):
  ``x ← x + MHA(LN₁(x))``, then ``x ← x + FFN(LN₂(x))``;
* ``norm_first=False`` (post-LN, the original Transformer):
  ``x ← LN₁(x + MHA(x))``, then ``x ← LN₂(x + FFN(x))``.

``FFN(x) = act(x W₁ + b₁) W₂ + b₂`` with ``act`` ReLU or GELU. With the same weights, the
same ``norm_first`` and the same ``activation`` this equals
``torch.nn.TransformerEncoderLayer(batch_first=True, dropout=0.0)``; mind the defaults, which
differ: PyTorch's ``norm_first=False`` (post-LN), `transformer_block`'s ``norm_first=True``
(pre-LN); both default to ReLU. `params_from_torch` converts that layer's ``state_dict``
(as NumPy arrays).

The parameters are a plain mapping (`PARAM_SHAPES` lists the names), multiplied on the
right as everywhere in this package (``x @ w``):

| name | shape | role |
|---|---|---|
| `w_q`, `w_k`, `w_v` | `(d_model, d_model)` | projections; head ``i`` owns ``d_model/h`` columns |
| `b_q`, `b_k`, `b_v` | `(d_model,)` | their biases |
| `w_o`, `b_o` | `(d_model, d_model)`, `(d_model,)` | output projection |
| `w_1`, `b_1` | `(d_model, d_ff)`, `(d_ff,)` | first feed-forward layer |
| `w_2`, `b_2` | `(d_ff, d_model)`, `(d_model,)` | second feed-forward layer |
| `gamma_1`, `beta_1` | `(d_model,)` | LayerNorm 1 (before or after attention) |
| `gamma_2`, `beta_2` | `(d_model,)` | LayerNorm 2 (before or after the FFN) |

**The modern (Llama-style) block** is the same pre-norm skeleton with four changes, each an
option of `transformer_block`, and its parameter names from `param_shapes`:

* ``norm="rms"``: RMSNorm (`rms_norm`, Zhang & Sennrich 2019) instead of LayerNorm: no mean
  is subtracted and there is no ``beta``;
* ``ffn="swiglu"``: the gated feed-forward `swiglu` (Shazeer 2020), weights `w_gate`,
  `w_up` ``(d_model, d_ff)`` and `w_down` ``(d_ff, d_model)``;
* ``qk_norm=True``: RMSNorm on each head's queries and keys before the scores (gains
  `gamma_q`, `gamma_k` of shape ``(d_head,)``), which bounds every score;
* ``rope_base=…`` rotary positions on the queries and keys, and ``n_kv_heads`` key/value
  heads shared by groups of query heads (GQA): `w_k`, `w_v` are ``(d_model, n_kv_heads·d_head)``.

``bias=False`` (the default with ``norm="rms"``) drops every projection and feed-forward bias,
as Llama does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_count, check_flag
from attention_math.multihead import merge_heads as _merge_heads
from attention_math.multihead import split_heads as _split_heads
from attention_math.numeric import attention
from attention_math.positional import rope

__all__ = [
    "PARAM_SHAPES",
    "feed_forward",
    "layer_norm",
    "param_shapes",
    "params_from_torch",
    "random_params",
    "rms_norm",
    "swiglu",
    "transformer_block",
]

PARAM_SHAPES: dict[str, tuple[str, ...]] = {
    "w_q": ("d_model", "d_model"),
    "b_q": ("d_model",),
    "w_k": ("d_model", "d_model"),
    "b_k": ("d_model",),
    "w_v": ("d_model", "d_model"),
    "b_v": ("d_model",),
    "w_o": ("d_model", "d_model"),
    "b_o": ("d_model",),
    "w_1": ("d_model", "d_ff"),
    "b_1": ("d_ff",),
    "w_2": ("d_ff", "d_model"),
    "b_2": ("d_model",),
    "gamma_1": ("d_model",),
    "beta_1": ("d_model",),
    "gamma_2": ("d_model",),
    "beta_2": ("d_model",),
}
"""name → shape, in terms of ``d_model`` and ``d_ff``"""

Trace = list[tuple[str, tuple[int, ...]]]

_NORMS = ("layer", "rms")
_FFNS = ("mlp", "swiglu")


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)


def param_shapes(
    *,
    norm: str = "layer",
    ffn: str = "mlp",
    qk_norm: bool = False,
    bias: bool | None = None,
) -> dict[str, tuple[str, ...]]:
    """The parameter names of a block with these options → their shapes, in terms of
    ``d_model``, ``d_ff``, ``d_kv`` (``n_kv_heads · d_head``, which is ``d_model`` without
    GQA) and ``d_head``.

    ``bias=None`` means the convention of the norm: biases with LayerNorm (BERT, GPT-2),
    none with RMSNorm (Llama).

    Examples:
        >>> from attention_math.block import param_shapes
        >>> list(param_shapes(norm="rms", ffn="swiglu", qk_norm=True))
        ['w_q', 'w_k', 'w_v', 'w_o', 'w_gate', 'w_up', 'w_down', 'gamma_1', 'gamma_2', \
'gamma_q', 'gamma_k']
        >>> param_shapes()["w_k"]
        ('d_model', 'd_kv')
    """
    norm = _choice("norm", norm, _NORMS)
    ffn = _choice("ffn", ffn, _FFNS)
    qk = check_flag("qk_norm", qk_norm)
    with_bias = norm == "layer" if bias is None else check_flag("bias", bias)
    out: dict[str, tuple[str, ...]] = {}
    for name, cols in (("q", "d_model"), ("k", "d_kv"), ("v", "d_kv")):
        out[f"w_{name}"] = ("d_model", cols)
        if with_bias:
            out[f"b_{name}"] = (cols,)
    out["w_o"] = ("d_model", "d_model")
    if with_bias:
        out["b_o"] = ("d_model",)
    if ffn == "mlp":
        out["w_1"] = ("d_model", "d_ff")
        if with_bias:
            out["b_1"] = ("d_ff",)
        out["w_2"] = ("d_ff", "d_model")
        if with_bias:
            out["b_2"] = ("d_model",)
    else:  # the gated unit of Shazeer (2020): no biases in any model that uses it
        out.update(w_gate=("d_model", "d_ff"), w_up=("d_model", "d_ff"), w_down=("d_ff", "d_model"))
    for i in (1, 2):
        out[f"gamma_{i}"] = ("d_model",)
        if norm == "layer":
            out[f"beta_{i}"] = ("d_model",)
    if qk:
        out.update(gamma_q=("d_head",), gamma_k=("d_head",))
    return out


def layer_norm(
    x: ArrayLike, gamma: ArrayLike, beta: ArrayLike, *, eps: float = 1e-5
) -> NDArray[np.floating]:
    """``(x − mean) / √(var + eps) · gamma + beta`` over the last axis (biased variance).

    Examples:
        >>> import numpy as np
        >>> from attention_math.block import layer_norm
        >>> layer_norm(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2), eps=0.0)
        array([[-1.,  1.]])
    """
    a = as_float("x", x)
    mean = a.mean(axis=-1, keepdims=True)  # (..., L, 1)
    var = ((a - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., L, 1)
    g = np.asarray(gamma, dtype=a.dtype)
    b = np.asarray(beta, dtype=a.dtype)
    out: NDArray[np.floating] = (a - mean) / np.sqrt(var + a.dtype.type(eps)) * g + b
    return out  # (..., L, d_model)


def rms_norm(
    x: ArrayLike, weight: ArrayLike | None = None, *, eps: float | None = None
) -> NDArray[np.floating]:
    """``x / √(mean(x²) + eps) · weight`` over the last axis: LayerNorm without the mean.

    The semantics of ``torch.nn.RMSNorm``: ``eps=None`` is the machine epsilon of ``x``'s
    dtype, ``weight=None`` a gain of one. Unlike `layer_norm`, nothing is subtracted, so a
    constant added to every coordinate is *not* removed (Zhang & Sennrich 2019 found the
    re-centring unnecessary and saved its cost).

    Examples:
        >>> import numpy as np
        >>> from attention_math.block import rms_norm
        >>> rms_norm(np.array([[3.0, 4.0]]), eps=0.0)   # rms = √((9 + 16)/2) = 5/√2
        array([[0.84852814, 1.13137085]])
        >>> rms_norm(np.ones((1, 2)), np.ones(3))
        Traceback (most recent call last):
        ...
        ValueError: weight must have shape (d,) = (2,) to match the last axis of x, got (3,)
    """
    a = as_float("x", x)
    if a.ndim == 0:
        raise ValueError("x must have at least one axis (the features), got a scalar")
    e = float(np.finfo(a.dtype).eps) if eps is None else float(eps)
    if not (math.isfinite(e) and e >= 0):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    ms = np.mean(a * a, axis=-1, keepdims=True)  # (..., 1): the mean square
    out: NDArray[np.floating] = a / np.sqrt(ms + a.dtype.type(e))  # (..., d)
    if weight is not None:
        g = as_float("weight", weight)
        if g.shape != (a.shape[-1],):
            raise ValueError(
                f"weight must have shape (d,) = ({a.shape[-1]},) to match the last axis of x, "
                f"got {g.shape}"
            )
        out = out * g.astype(a.dtype, copy=False)
    return out


def swiglu(
    x: ArrayLike, w_gate: ArrayLike, w_up: ArrayLike, w_down: ArrayLike
) -> NDArray[np.floating]:
    """The gated feed-forward network ``(SiLU(x W_gate) ⊙ x W_up) W_down`` (Shazeer 2020).

    ``SiLU(z) = z · σ(z)``. The gate multiplies each hidden unit by a second linear map of
    the same token, instead of passing one linear map through a fixed nonlinearity.

    Examples:
        >>> import numpy as np
        >>> from attention_math.block import swiglu
        >>> swiglu(np.array([[0.0, 2.0]]), np.eye(2), np.eye(2), np.eye(2)).round(4)
        array([[0.    , 3.5232]])
    """
    a = as_float("x", x, min_ndim=1)
    w_g, w_u, w_d = (
        as_float(n, w, min_ndim=2).astype(a.dtype, copy=False)
        for n, w in (("w_gate", w_gate), ("w_up", w_up), ("w_down", w_down))
    )
    if w_g.shape != w_u.shape or w_g.shape[0] != a.shape[-1] or w_d.shape[0] != w_g.shape[1]:
        raise ValueError(
            "w_gate and w_up must be (d_model, d_ff) and w_down (d_ff, d_out) with d_model "
            f"= {a.shape[-1]} from x; got {w_g.shape}, {w_u.shape}, {w_d.shape}"
        )
    gate = a @ w_g  # (..., L, d_ff)
    with np.errstate(over="ignore"):  # exp(−z) = inf for z ≪ 0: the gate is then −0, right
        silu = gate / (1 + np.exp(-gate))  # (..., L, d_ff): z·σ(z)
    out: NDArray[np.floating] = (silu * (a @ w_u)) @ w_d  # (..., L, d_model)
    return out


def _gelu(x: NDArray[np.floating]) -> NDArray[np.floating]:
    """The exact GELU ``x · Φ(x) = x/2 · (1 + erf(x/√2))`` (PyTorch's default, not tanh)."""
    erf = np.vectorize(math.erf, otypes=[np.float64])  # NumPy has no erf; math's is exact
    out: NDArray[np.floating] = (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(x.dtype)
    return out


def feed_forward(
    x: ArrayLike,
    w_1: ArrayLike,
    b_1: ArrayLike,
    w_2: ArrayLike,
    b_2: ArrayLike,
    *,
    activation: str = "relu",
) -> NDArray[np.floating]:
    """The position-wise feed-forward network ``act(x W₁ + b₁) W₂ + b₂``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.block import feed_forward
        >>> feed_forward(np.array([[1.0, -2.0]]), np.eye(2), np.zeros(2), np.eye(2), np.zeros(2))
        array([[1., 0.]])
    """
    a = as_float("x", x)
    if activation not in ("relu", "gelu"):
        raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
    hidden = a @ np.asarray(w_1, a.dtype) + np.asarray(b_1, a.dtype)  # (..., L, d_ff)
    hidden = np.maximum(hidden, 0) if activation == "relu" else _gelu(hidden)
    return hidden @ np.asarray(w_2, a.dtype) + np.asarray(b_2, a.dtype)  # (..., L, d_model)


def _check_params(
    params: Mapping[str, ArrayLike],
    shapes: Mapping[str, tuple[str, ...]],
    sizes: dict[str, int],
    dtype: np.dtype[np.floating],
) -> dict[str, NDArray[np.floating]]:
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping name → array, got {type(params).__name__}")
    missing = sorted(set(shapes) - set(params))
    extra = sorted(set(params) - set(shapes))
    if missing or extra:
        raise ValueError(
            f"params: missing {missing}, unknown {extra}; expected the names {list(shapes)}"
        )
    first = "w_1" if "w_1" in shapes else "w_up"
    sizes = {**sizes, "d_ff": as_float(f"params[{first!r}]", params[first], min_ndim=2).shape[-1]}
    out = {}
    for name, dims in shapes.items():
        a = as_float(f"params[{name!r}]", params[name])
        want = tuple(sizes[d] for d in dims)
        if a.shape != want:
            got = ", ".join(f"{k} = {v}" for k, v in sizes.items())
            raise ValueError(
                f"params[{name!r}] must have shape {dims} = {want} ({got}; d_model from x, d_ff "
                f"from {first}), got {a.shape}"
            )
        out[name] = a.astype(dtype, copy=False)
    return out


def _self_attention(
    x: NDArray[np.floating],
    p: Mapping[str, NDArray[np.floating]],
    heads: tuple[int, int],
    mask: ArrayLike | None,
    rope_base: float | None,
    eps: float,
    note: Trace | None,
) -> NDArray[np.floating]:
    """Multi-head self-attention: GQA when ``n_kv_heads < n_heads``, optional QK-norm and
    rotary positions; a missing bias is zero."""
    n_heads, n_kv = heads
    zero = x.dtype.type(0)
    q = x @ p["w_q"] + p.get("b_q", zero)  # (..., L, h·d_head)
    k = x @ p["w_k"] + p.get("b_k", zero)  # (..., L, h_kv·d_head)
    v = x @ p["w_v"] + p.get("b_v", zero)  # (..., L, h_kv·d_head)
    q = _split_heads(q, n_heads)  # (..., h, L, d_head)
    k, v = _split_heads(k, n_kv), _split_heads(v, n_kv)  # (..., h_kv, L, d_head)
    if "gamma_q" in p:  # QK-norm: every query and key of a head gets rms 1 before the scores
        q = rms_norm(q, p["gamma_q"], eps=eps)  # (..., h, L, d_head)
        k = rms_norm(k, p["gamma_k"], eps=eps)  # (..., h_kv, L, d_head)
    if rope_base is not None:  # rotated after the norm: a rotation keeps the rms
        q, k = rope(q, base=rope_base), rope(k, base=rope_base)
    group = n_heads // n_kv  # query head i reads key/value head i // group
    k, v = np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3)  # (..., h, L, d_head)
    if mask is not None and np.ndim(mask) >= 3:
        mask = np.expand_dims(np.asarray(mask), -3)  # (..., 1, L, L): the same for every head
    att = attention(q, k, v, mask=mask)  # (..., h, L, d_head)
    assert isinstance(att, np.ndarray)
    out: NDArray[np.floating] = _merge_heads(att) @ p["w_o"] + p.get("b_o", zero)
    if note is not None:
        note.extend(
            [
                ("Q split into heads", q.shape),
                (f"K, V: {n_kv} head(s), each repeated for {group} query head(s)", k.shape),
                ("scores per head", (*q.shape[:-1], k.shape[-2])),
                ("heads", att.shape),
                ("attention output (Concat · W_O)", out.shape),
            ]
        )
    return out  # (..., L, d_model)


def transformer_block(
    x: ArrayLike,
    params: Mapping[str, ArrayLike],
    *,
    n_heads: int,
    mask: ArrayLike | None = None,
    norm_first: bool = True,
    activation: str = "relu",
    eps: float = 1e-5,
    trace: Trace | None = None,
    norm: str = "layer",
    ffn: str = "mlp",
    qk_norm: bool = False,
    n_kv_heads: int | None = None,
    rope_base: float | None = None,
    bias: bool | None = None,
) -> NDArray[np.floating]:
    """One transformer block (self-attention + feed-forward, each with a residual).

    Args:
        x: the residual stream ``(..., L, d_model)``.
        params: the weights by name (see `param_shapes` and the module docstring).
        n_heads: ``h``, dividing ``d_model``; each head has ``d_head = d_model / h`` columns.
        mask: as in ``numeric.attention``: boolean with **True = may attend** (the opposite
            of the boolean ``src_mask`` of ``torch.nn.TransformerEncoderLayer``, where True
            blocks) or additive float; ``(L, L)`` or with batch axes ``(..., L, L)``.
        norm_first: pre-norm (True) or post-norm (False), see the module docstring.
        activation: ``"relu"`` or ``"gelu"`` (exact, erf-based), for ``ffn="mlp"``.
        eps: the epsilon of every norm (LayerNorm, RMSNorm, QK-norm).
        trace: if a list, receives ``(step, shape)`` of every intermediate.
        norm: ``"layer"`` (LayerNorm) or ``"rms"`` (RMSNorm, gains only).
        ffn: ``"mlp"`` (``act(x W₁ + b₁) W₂ + b₂``) or ``"swiglu"`` (`swiglu`).
        qk_norm: RMSNorm (gains `gamma_q`, `gamma_k`) on each head's queries and keys
            before the scores.
        n_kv_heads: key/value heads (GQA), dividing ``n_heads``; default ``n_heads``.
        rope_base: rotary positions of this base on queries and keys (positions
            ``0 … L − 1``, the ``rotate_half`` layout); ``None``: no rotary positions.
        bias: projection and feed-forward biases; ``None``: with LayerNorm, not with RMSNorm.

    Returns:
        The new residual stream, ``(..., L, d_model)``, in the floating dtype of ``x``
            (float64 for integer ``x``).

    Examples:
        >>> import numpy as np
        >>> from attention_math.block import random_params, transformer_block
        >>> x = np.random.default_rng(0).standard_normal((2, 5, 8))   # (B, L, d_model)
        >>> y = transformer_block(x, random_params(8, 16), n_heads=2)
        >>> y.shape
        (2, 5, 8)
        >>> llama = dict(norm="rms", ffn="swiglu", qk_norm=True)
        >>> p = random_params(8, 16, n_heads=4, n_kv_heads=2, **llama)
        >>> transformer_block(x, p, n_heads=4, n_kv_heads=2, rope_base=1e4, **llama).shape
        (2, 5, 8)
        >>> transformer_block(x, random_params(8, 16), n_heads=3)
        Traceback (most recent call last):
        ...
        ValueError: n_heads = 3 must divide d_model = 8
    """
    a = as_float("x", x, min_ndim=2)
    dtype = a.dtype
    d_model = a.shape[-1]
    h, g = _heads(n_heads, n_kv_heads, d_model)
    norm_first = check_flag("norm_first", norm_first)
    shapes = param_shapes(norm=norm, ffn=ffn, qk_norm=qk_norm, bias=bias)
    sizes = {"d_model": d_model, "d_kv": g * (d_model // h), "d_head": d_model // h}
    p = _check_params(params, shapes, sizes, a.dtype)
    note = trace

    def sa(t: NDArray[np.floating]) -> NDArray[np.floating]:
        return _self_attention(t, p, (h, g), mask, rope_base, eps, note)

    def ff(t: NDArray[np.floating]) -> NDArray[np.floating]:
        if ffn == "swiglu":
            out = swiglu(t, p["w_gate"], p["w_up"], p["w_down"])
            width = p["w_up"].shape[1]
        else:
            zero = t.dtype.type(0)
            b_1, b_2 = p.get("b_1", zero), p.get("b_2", zero)
            out = feed_forward(t, p["w_1"], b_1, p["w_2"], b_2, activation=activation)
            width = p["w_1"].shape[1]
        if note is not None:
            note.append(("feed-forward hidden", (*t.shape[:-1], width)))
            note.append(("feed-forward output", out.shape))
        return out

    def ln(t: NDArray[np.floating], i: int) -> NDArray[np.floating]:
        if norm == "rms":
            return rms_norm(t, p[f"gamma_{i}"], eps=eps)
        return layer_norm(t, p[f"gamma_{i}"], p[f"beta_{i}"], eps=eps)

    if note is not None:
        note.append(("input x (residual stream)", a.shape))
    if norm_first:
        a = a + sa(ln(a, 1))  # (..., L, d_model)
        a = a + ff(ln(a, 2))  # (..., L, d_model)
    else:
        a = ln(a + sa(a), 1)  # (..., L, d_model)
        a = ln(a + ff(a), 2)  # (..., L, d_model)
    if note is not None:
        note.append(("block output (residual stream)", a.shape))
    return a.astype(dtype, copy=False)  # bfloat16 products come back float32: return bf16


def _heads(n_heads: object, n_kv_heads: object, d_model: int) -> tuple[int, int]:
    """``(h, h_kv)``: positive integers, ``h`` divides ``d_model``, ``h_kv`` divides ``h``."""
    h = check_count("n_heads", n_heads)
    if d_model % h:
        raise ValueError(f"n_heads = {h} must divide d_model = {d_model}")
    if n_kv_heads is None:
        return h, h
    h_kv = check_count("n_kv_heads", n_kv_heads)
    if h % h_kv:
        raise ValueError(f"n_kv_heads = {h_kv} must divide n_heads = {h}")
    return h, h_kv


def random_params(
    d_model: int,
    d_ff: int,
    *,
    seed: int = 0,
    n_heads: int = 1,
    n_kv_heads: int | None = None,
    norm: str = "layer",
    ffn: str = "mlp",
    qk_norm: bool = False,
    bias: bool | None = None,
) -> dict[str, NDArray[np.float64]]:
    """Random weights for `transformer_block` (Glorot-scaled matrices, small biases, norm
    gains near one), for examples and tests. ``n_heads`` and ``n_kv_heads`` matter only for
    GQA (the widths of `w_k`, `w_v`) and QK-norm (the width of its gains).

    Examples:
        >>> from attention_math.block import random_params
        >>> {k: v.shape for k, v in random_params(4, 6).items()}["w_1"]
        (4, 6)
        >>> random_params(8, 6, n_heads=4, n_kv_heads=1, norm="rms")["w_k"].shape
        (8, 2)
    """
    h, g = _heads(n_heads, n_kv_heads, d_model)
    rng = np.random.default_rng(seed)
    sizes = {"d_model": d_model, "d_ff": d_ff, "d_kv": g * (d_model // h), "d_head": d_model // h}
    out = {}
    for name, dims in param_shapes(norm=norm, ffn=ffn, qk_norm=qk_norm, bias=bias).items():
        shape = tuple(sizes[d] for d in dims)
        if name.startswith("w_"):
            out[name] = rng.standard_normal(shape) * math.sqrt(2.0 / sum(shape))
        elif name.startswith("gamma"):
            out[name] = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            out[name] = 0.1 * rng.standard_normal(shape)
    return out


def params_from_torch(state: Mapping[str, ArrayLike]) -> dict[str, NDArray[np.floating]]:
    """The parameters of a ``torch.nn.TransformerEncoderLayer`` from its ``state_dict``, given
    as NumPy arrays (``{k: t.detach().numpy() for k, t in layer.state_dict().items()}``).

    PyTorch stores ``(out, in)`` matrices and computes ``x Wᵀ + b``; the query, key and
    value projections are stacked in ``self_attn.in_proj_weight``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.block import params_from_torch
        >>> d, f = 2, 3
        >>> state = {"self_attn.in_proj_weight": np.arange(12.0).reshape(6, 2),
        ...          "self_attn.in_proj_bias": np.zeros(6),
        ...          "self_attn.out_proj.weight": np.eye(d), "self_attn.out_proj.bias": np.zeros(d),
        ...          "linear1.weight": np.ones((f, d)), "linear1.bias": np.zeros(f),
        ...          "linear2.weight": np.ones((d, f)), "linear2.bias": np.zeros(d),
        ...          "norm1.weight": np.ones(d), "norm1.bias": np.zeros(d),
        ...          "norm2.weight": np.ones(d), "norm2.bias": np.zeros(d)}
        >>> params_from_torch(state)["w_k"]     # rows 2..3 of in_proj_weight, transposed
        array([[4., 6.],
               [5., 7.]])
    """
    s = {name: np.asarray(a) for name, a in state.items()}
    w_in, b_in = s["self_attn.in_proj_weight"], s["self_attn.in_proj_bias"]  # (3d, d), (3d,)
    d = w_in.shape[1]
    return {
        "w_q": w_in[:d].T,
        "b_q": b_in[:d],
        "w_k": w_in[d : 2 * d].T,
        "b_k": b_in[d : 2 * d],
        "w_v": w_in[2 * d :].T,
        "b_v": b_in[2 * d :],
        "w_o": s["self_attn.out_proj.weight"].T,
        "b_o": s["self_attn.out_proj.bias"],
        "w_1": s["linear1.weight"].T,
        "b_1": s["linear1.bias"],
        "w_2": s["linear2.weight"].T,
        "b_2": s["linear2.bias"],
        "gamma_1": s["norm1.weight"],
        "beta_1": s["norm1.bias"],
        "gamma_2": s["norm2.weight"],
        "beta_2": s["norm2.bias"],
    }
