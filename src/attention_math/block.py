"""One transformer block around attention: LayerNorm, multi-head attention, feed-forward.

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
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_count
from attention_math.multihead import _merge_heads, _split_heads
from attention_math.numeric import attention

__all__ = [
    "PARAM_SHAPES",
    "feed_forward",
    "layer_norm",
    "params_from_torch",
    "random_params",
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
    params: Mapping[str, ArrayLike], d_model: int, dtype: np.dtype[np.floating]
) -> dict[str, NDArray[np.floating]]:
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping name → array, got {type(params).__name__}")
    missing = sorted(set(PARAM_SHAPES) - set(params))
    extra = sorted(set(params) - set(PARAM_SHAPES))
    if missing or extra:
        raise ValueError(
            f"params: missing {missing}, unknown {extra}; expected the names {list(PARAM_SHAPES)}"
        )
    w1 = as_float("params['w_1']", params["w_1"], min_ndim=2)
    sizes = {"d_model": d_model, "d_ff": w1.shape[-1]}
    out = {}
    for name, dims in PARAM_SHAPES.items():
        a = as_float(f"params[{name!r}]", params[name])
        want = tuple(sizes[d] for d in dims)
        if a.shape != want:
            raise ValueError(
                f"params[{name!r}] must have shape {dims} = {want} (d_model = {d_model} from x, "
                f"d_ff = {sizes['d_ff']} from w_1), got {a.shape}"
            )
        out[name] = a.astype(dtype, copy=False)
    return out


def _self_attention(
    x: NDArray[np.floating],
    p: Mapping[str, NDArray[np.floating]],
    n_heads: int,
    mask: ArrayLike | None,
    note: Trace | None,
) -> NDArray[np.floating]:
    """Multi-head self-attention with biases on the four projections."""
    q = x @ p["w_q"] + p["b_q"]  # (..., L, d_model)
    k = x @ p["w_k"] + p["b_k"]  # (..., L, d_model)
    v = x @ p["w_v"] + p["b_v"]  # (..., L, d_model)
    q, k, v = (_split_heads(t, n_heads) for t in (q, k, v))  # (..., h, L, d_model/h)
    if mask is not None and np.ndim(mask) >= 3:
        mask = np.expand_dims(np.asarray(mask), -3)  # (..., 1, L, L): the same for every head
    heads = attention(q, k, v, mask=mask)  # (..., h, L, d_model/h)
    assert isinstance(heads, np.ndarray)
    out: NDArray[np.floating] = _merge_heads(heads) @ p["w_o"] + p["b_o"]  # (..., L, d_model)
    if note is not None:
        note.extend(
            [
                ("Q, K, V split into heads", q.shape),
                ("scores per head", (*q.shape[:-1], k.shape[-2])),
                ("heads", heads.shape),
                ("attention output (Concat · W_O)", out.shape),
            ]
        )
    return out


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
) -> NDArray[np.floating]:
    """One transformer encoder block (self-attention + feed-forward, each with a residual).

    Args:
        x: the residual stream ``(..., L, d_model)``.
        params: the weights by name (see `PARAM_SHAPES` and the module docstring).
        n_heads: ``h``, dividing ``d_model``; each head has ``d_model / h`` columns.
        mask: as in ``numeric.attention``: boolean with **True = may attend** (the opposite
            of the boolean ``src_mask`` of ``torch.nn.TransformerEncoderLayer``, where True
            blocks) or additive float; ``(L, L)`` or with batch axes ``(..., L, L)``.
        norm_first: pre-LN (True) or post-LN (False), see the module docstring.
        activation: ``"relu"`` or ``"gelu"`` (exact, erf-based).
        eps: the LayerNorm's epsilon.
        trace: if a list, receives ``(step, shape)`` of every intermediate.

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
        >>> transformer_block(x, random_params(8, 16), n_heads=3)
        Traceback (most recent call last):
        ...
        ValueError: n_heads = 3 must divide d_model = 8
    """
    a = as_float("x", x, min_ndim=2)
    dtype = a.dtype
    d_model = a.shape[-1]
    n_heads = check_count("n_heads", n_heads)
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} must divide d_model = {d_model}")
    if not isinstance(norm_first, bool | np.bool_):
        raise TypeError(f"norm_first must be True or False, got {norm_first!r}")
    p = _check_params(params, d_model, a.dtype)
    note = trace

    def sa(t: NDArray[np.floating]) -> NDArray[np.floating]:
        return _self_attention(t, p, int(n_heads), mask, note)

    def ff(t: NDArray[np.floating]) -> NDArray[np.floating]:
        out = feed_forward(t, p["w_1"], p["b_1"], p["w_2"], p["b_2"], activation=activation)
        if note is not None:
            note.append(("feed-forward hidden", (*t.shape[:-1], p["w_1"].shape[1])))
            note.append(("feed-forward output", out.shape))
        return out

    def ln(t: NDArray[np.floating], i: int) -> NDArray[np.floating]:
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


def random_params(d_model: int, d_ff: int, *, seed: int = 0) -> dict[str, NDArray[np.float64]]:
    """Random weights for `transformer_block` (Glorot-scaled matrices, small biases, LayerNorm
    gains near one), for examples and tests.

    Examples:
        >>> from attention_math.block import random_params
        >>> {k: v.shape for k, v in random_params(4, 6).items()}["w_1"]
        (4, 6)
    """
    rng = np.random.default_rng(seed)
    sizes = {"d_model": d_model, "d_ff": d_ff}
    out = {}
    for name, dims in PARAM_SHAPES.items():
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
