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

The parameters are one [`BlockParams`][attention_math.block.BlockParams]: the attention
layer's [`AttentionParams`][attention_math.multihead.AttentionParams] (the type
`multi_head_attention` takes) as ``attn``, and the norms' and feed-forward network's arrays,
multiplied on the right as everywhere in this package (``x @ w``). The options are one
[`BlockConfig`][attention_math.block.BlockConfig]; `param_shapes` lists the arrays a
configuration needs:

| name | shape | role |
|---|---|---|
| `attn.w_q`, `attn.w_k`, `attn.w_v` | `(d_model, d_model)` | projections, ``d_model/h`` each head |
| `attn.b_q`, `attn.b_k`, `attn.b_v` | `(d_model,)` | their biases |
| `attn.w_o`, `attn.b_o` | `(d_model, d_model)`, `(d_model,)` | output projection |
| `w_1`, `b_1` | `(d_model, d_ff)`, `(d_ff,)` | first feed-forward layer |
| `w_2`, `b_2` | `(d_ff, d_model)`, `(d_model,)` | second feed-forward layer |
| `gamma_1`, `beta_1` | `(d_model,)` | LayerNorm 1 (before or after attention) |
| `gamma_2`, `beta_2` | `(d_model,)` | LayerNorm 2 (before or after the FFN) |

**The modern (Llama-style) block** is the same pre-norm skeleton with four changes, each an
option of `BlockConfig`, and its parameter names from `param_shapes`:

* ``norm="rms"``: RMSNorm (`rms_norm`, Zhang & Sennrich 2019) instead of LayerNorm: no mean
  is subtracted and there is no ``beta``;
* ``ffn="swiglu"``: the gated feed-forward `swiglu` (Shazeer 2020), weights `w_gate`,
  `w_up` ``(d_model, d_ff)`` and `w_down` ``(d_ff, d_model)``;
* ``qk_norm=True``: RMSNorm on each head's queries and keys before the scores (gains
  `gamma_q`, `gamma_k` of shape ``(d_head,)``), which bounds every score;
* ``rope_base=…`` rotary positions on the queries and keys, and ``n_kv_heads`` key/value
  heads shared by groups of query heads (GQA): `attn.w_k`, `attn.w_v` are
  ``(d_model, n_kv_heads·d_head)``.

``bias=False`` (the default with ``norm="rms"``) drops every projection and feed-forward bias,
as Llama does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_count, check_flag
from attention_math.multihead import AttentionParams, _check_heads, merge_heads, split_heads
from attention_math.numeric import attention
from attention_math.positional import rope

__all__ = [
    "BlockConfig",
    "BlockParams",
    "feed_forward",
    "layer_norm",
    "param_shapes",
    "params_from_torch",
    "random_params",
    "rms_norm",
    "swiglu",
    "transformer_block",
]

Trace = list[tuple[str, tuple[int, ...]]]

_NORMS = ("layer", "rms")
_FFNS = ("mlp", "swiglu")


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)


@dataclass(frozen=True)
class BlockConfig:
    """The options of a transformer block: everything but its weights.

    The defaults are the block of GPT-2 (pre-LN, LayerNorm, a ReLU MLP, biases); a Llama-style
    block is ``BlockConfig(n_heads, n_kv_heads=…, norm="rms", ffn="swiglu", rope_base=…)``.

    Attributes:
        n_heads: ``h``, dividing ``d_model``; each head has ``d_head = d_model / h`` columns.
        n_kv_heads: key/value heads (GQA), dividing ``n_heads``; ``None``: ``n_heads``.
        norm: ``"layer"`` (LayerNorm) or ``"rms"`` (RMSNorm, gains only).
        ffn: ``"mlp"`` (``act(x W₁ + b₁) W₂ + b₂``) or ``"swiglu"`` (`swiglu`).
        activation: ``"relu"`` or ``"gelu"`` (exact, erf-based), for ``ffn="mlp"``.
        norm_first: pre-norm (True) or post-norm (False), see the module docstring.
        qk_norm: RMSNorm (gains `gamma_q`, `gamma_k`) on each head's queries and keys
            before the scores.
        rope_base: rotary positions of this base on queries and keys (positions
            ``0 … L − 1``, the ``rotate_half`` layout); ``None``: no rotary positions.
        bias: projection and feed-forward biases; ``None``: with LayerNorm, not with RMSNorm.
        eps: the epsilon of every norm (LayerNorm, RMSNorm, QK-norm).

    See Also:
        - [`transformer_block`][attention_math.block.transformer_block]: the block this configures.
        - [`BlockParams`][attention_math.block.BlockParams]: its weights.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3.1: the block.
        - [Xiong et al., 2020](https://arxiv.org/abs/2002.04745): layer normalisation before each
          sublayer.

    Examples:
        >>> from attention_math.block import BlockConfig
        >>> BlockConfig(n_heads=4, norm="rms").with_bias
        False
        >>> BlockConfig(n_heads=4, n_kv_heads=3)
        Traceback (most recent call last):
        ...
        ValueError: n_kv_heads = 3 must divide n_heads = 4: each key/value head serves a \
whole group of query heads
    """

    n_heads: int
    n_kv_heads: int | None = None
    norm: str = "layer"
    ffn: str = "mlp"
    activation: str = "relu"
    norm_first: bool = True
    qk_norm: bool = False
    rope_base: float | None = None
    bias: bool | None = None
    eps: float = 1e-5

    def __post_init__(self) -> None:
        _check_heads(self.n_heads, self.n_kv_heads)
        _choice("norm", self.norm, _NORMS)
        _choice("ffn", self.ffn, _FFNS)
        _choice("activation", self.activation, ("relu", "gelu"))
        check_flag("norm_first", self.norm_first)
        check_flag("qk_norm", self.qk_norm)
        if self.bias is not None:
            check_flag("bias", self.bias)
        for name in ("rope_base", "eps"):
            value = getattr(self, name)
            if value is None and name == "rope_base":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} must be a real number, got {value!r}")
            if not math.isfinite(value) or value < 0 or (name == "rope_base" and value <= 1):
                bound = "> 1" if name == "rope_base" else ">= 0"
                raise ValueError(f"{name} must be finite and {bound}, got {value!r}")

    @property
    def with_bias(self) -> bool:
        """Whether the projections and the MLP have biases (``bias``, or the norm's custom)."""
        return self.norm == "layer" if self.bias is None else bool(self.bias)

    @property
    def kv_heads(self) -> int:
        """``n_kv_heads``, or ``n_heads`` without GQA."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads


def param_shapes(config: BlockConfig) -> dict[str, tuple[str, ...]]:
    """The arrays of a block with these options → their shapes, in terms of ``d_model``,
    ``d_ff``, ``d_kv`` (``n_kv_heads · d_head``, which is ``d_model`` without GQA) and
    ``d_head``. The names are those of
    [`BlockParams.as_dict`][attention_math.block.BlockParams.as_dict] (the attention layer's
    with the prefix ``attn.``).

    Examples:
        >>> from attention_math.block import BlockConfig, param_shapes
        >>> llama = BlockConfig(n_heads=2, norm="rms", ffn="swiglu", qk_norm=True)
        >>> list(param_shapes(llama))
        ['attn.w_q', 'attn.w_k', 'attn.w_v', 'attn.w_o', 'w_gate', 'w_up', 'w_down', \
'gamma_1', 'gamma_2', 'gamma_q', 'gamma_k']
        >>> param_shapes(BlockConfig(n_heads=2))["attn.w_k"]
        ('d_model', 'd_kv')
    """
    if not isinstance(config, BlockConfig):
        raise TypeError(f"config must be a BlockConfig, got {type(config).__name__}")
    with_bias = config.with_bias
    out: dict[str, tuple[str, ...]] = {}
    attn: dict[str, tuple[str, ...]] = {}
    for name, cols in (("q", "d_model"), ("k", "d_kv"), ("v", "d_kv")):
        attn[f"w_{name}"] = ("d_model", cols)
    attn["w_o"] = ("d_model", "d_model")
    if with_bias:
        attn.update(b_q=("d_model",), b_k=("d_kv",), b_v=("d_kv",), b_o=("d_model",))
    out.update({f"attn.{name}": dims for name, dims in attn.items()})
    if config.ffn == "mlp":
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
        if config.norm == "layer":
            out[f"beta_{i}"] = ("d_model",)
    if config.qk_norm:
        out.update(gamma_q=("d_head",), gamma_k=("d_head",))
    return out


_ORDER = (
    "w_1",
    "b_1",
    "w_2",
    "b_2",
    "w_gate",
    "w_up",
    "w_down",
    "gamma_1",
    "beta_1",
    "gamma_2",
    "beta_2",
    "gamma_q",
    "gamma_k",
)


@dataclass(frozen=True, eq=False)
class BlockParams:
    """The weights of one transformer block: the attention layer's and the rest.

    Which of the optional arrays a block needs depends on its
    [`BlockConfig`][attention_math.block.BlockConfig] (`param_shapes` lists them);
    `transformer_block` checks that exactly those are given. Every array is checked (real,
    finite) and kept as a float array, not copied.

    Attributes:
        attn: the attention layer, an
            [`AttentionParams`][attention_math.multihead.AttentionParams].
        gamma_1: gain of the norm before (pre-LN) or after (post-LN) attention, ``(d_model,)``.
        gamma_2: gain of the norm around the feed-forward network, ``(d_model,)``.
        beta_1: LayerNorm 1's shift ``(d_model,)``; ``None`` with RMSNorm.
        beta_2: LayerNorm 2's shift; ``None`` with RMSNorm.
        w_1: the MLP's first layer ``(d_model, d_ff)``; ``None`` with SwiGLU.
        b_1: its bias ``(d_ff,)``, or ``None``.
        w_2: the MLP's second layer ``(d_ff, d_model)``; ``None`` with SwiGLU.
        b_2: its bias ``(d_model,)``, or ``None``.
        w_gate: SwiGLU's gate ``(d_model, d_ff)``; ``None`` with the MLP.
        w_up: SwiGLU's up projection ``(d_model, d_ff)``.
        w_down: SwiGLU's down projection ``(d_ff, d_model)``.
        gamma_q: the QK-norm gain of the queries ``(d_head,)``; ``None`` without QK-norm.
        gamma_k: the QK-norm gain of the keys ``(d_head,)``.

    See Also:
        - [`random_params`][attention_math.block.random_params] and
          [`params_from_torch`][attention_math.block.params_from_torch]: where they come from.
        - [`multihead.AttentionParams`][attention_math.multihead.AttentionParams]: its attention
          weights.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3.1 and §3.3: the block's two
          sublayers.

    Examples:
        >>> from attention_math.block import BlockConfig, random_params
        >>> p = random_params(4, 6, BlockConfig(n_heads=2))
        >>> p.attn.w_q.shape, p.w_1.shape, p.w_gate is None
        ((4, 4), (4, 6), True)
        >>> list(p.as_dict())[:5]
        ['attn.w_q', 'attn.w_k', 'attn.w_v', 'attn.w_o', 'attn.b_q']
    """

    attn: AttentionParams
    gamma_1: NDArray[np.floating]
    gamma_2: NDArray[np.floating]
    beta_1: NDArray[np.floating] | None = None
    beta_2: NDArray[np.floating] | None = None
    w_1: NDArray[np.floating] | None = None
    b_1: NDArray[np.floating] | None = None
    w_2: NDArray[np.floating] | None = None
    b_2: NDArray[np.floating] | None = None
    w_gate: NDArray[np.floating] | None = None
    w_up: NDArray[np.floating] | None = None
    w_down: NDArray[np.floating] | None = None
    gamma_q: NDArray[np.floating] | None = None
    gamma_k: NDArray[np.floating] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.attn, AttentionParams):
            raise TypeError(
                f"attn must be an AttentionParams(w_q, w_k, w_v, w_o, …), "
                f"got {type(self.attn).__name__}"
            )
        for f in fields(self)[1:]:
            value = getattr(self, f.name)
            if value is None and f.name not in ("gamma_1", "gamma_2"):
                continue
            a = as_float(f.name, value, min_ndim=0)
            axes = 2 if f.name.startswith("w_") else 1
            if a.ndim != axes:
                kind = "a matrix (2 axes)" if axes == 2 else "a vector (1 axis)"
                raise ValueError(f"{f.name} must be {kind}, got shape {a.shape}")
            object.__setattr__(self, f.name, a)

    def as_dict(self) -> dict[str, NDArray[np.floating]]:
        """Every array given, by name (``attn.w_q``, …, then the block's own), the stored
        arrays themselves: the names of `param_shapes`."""
        out = {f"attn.{name}": a for name, a in self.attn.as_dict().items()}
        for name in _ORDER:  # the order of param_shapes: the FFN, the norms, the QK-norm
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    @classmethod
    def from_dict(cls, arrays: Mapping[str, ArrayLike]) -> BlockParams:
        """The inverse of `as_dict`: ``attn.``-prefixed names go to the attention layer.

        Examples:
            >>> import numpy as np
            >>> from attention_math.block import BlockParams
            >>> names = ["attn.w_q", "attn.w_k", "attn.w_v", "attn.w_o", "w_gate", "w_up"]
            >>> arrays = {n: np.eye(2) for n in [*names, "w_down"]}
            >>> arrays |= {"gamma_1": np.ones(2), "gamma_2": np.ones(2)}
            >>> BlockParams.from_dict(arrays).w_up.shape
            (2, 2)
            >>> BlockParams.from_dict({**arrays, "w_3": np.eye(2)})
            Traceback (most recent call last):
            ...
            ValueError: unknown names ['w_3']; a block has attn.w_q … attn.b_o, w_1, b_1, w_2, \
b_2, w_gate, w_up, w_down, gamma_1, beta_1, gamma_2, beta_2, gamma_q, gamma_k
        """
        own = list(_ORDER)
        attn_names = [f.name for f in fields(AttentionParams)]
        known = {*own, *(f"attn.{n}" for n in attn_names)}
        unknown = sorted(n for n in arrays if n not in known)
        if unknown:
            raise ValueError(
                f"unknown names {unknown}; a block has attn.w_q … attn.b_o, {', '.join(own)}"
            )
        attn = {n.removeprefix("attn."): a for n, a in arrays.items() if n.startswith("attn.")}
        rest = {n: a for n, a in arrays.items() if not n.startswith("attn.")}
        return cls(AttentionParams(**attn), **rest)  # type: ignore[arg-type]


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
    params: BlockParams,
    config: BlockConfig,
    sizes: dict[str, int],
    dtype: np.dtype[np.floating],
) -> dict[str, NDArray[np.floating]]:
    """The arrays of ``params`` by name, checked against the shapes ``config`` needs."""
    if not isinstance(params, BlockParams):
        raise TypeError(f"params must be a BlockParams, got {type(params).__name__}")
    shapes = param_shapes(config)
    given = params.as_dict()
    missing = [n for n in shapes if n not in given]
    extra = [n for n in given if n not in shapes]
    if missing or extra:
        raise ValueError(
            f"params: missing {missing}, not used {extra} by {config}; "
            f"expected the names {list(shapes)}"
        )
    first = "w_1" if "w_1" in shapes else "w_up"
    sizes = {**sizes, "d_ff": given[first].shape[-1]}
    out = {}
    for name, dims in shapes.items():
        a = given[name]
        want = tuple(sizes[d] for d in dims)
        if a.shape != want:
            got = ", ".join(f"{k} = {v}" for k, v in sizes.items())
            raise ValueError(
                f"params.{name} must have shape {dims} = {want} ({got}; d_model from x, d_ff "
                f"from {first}), got {a.shape}"
            )
        out[name] = a.astype(dtype, copy=False)
    return out


def _self_attention(
    x: NDArray[np.floating],
    p: Mapping[str, NDArray[np.floating]],
    config: BlockConfig,
    mask: ArrayLike | None,
    is_causal: bool,
    note: Trace | None,
) -> NDArray[np.floating]:
    """Multi-head self-attention: GQA when ``n_kv_heads < n_heads``, optional QK-norm and
    rotary positions; a missing bias is zero."""
    n_heads, n_kv = config.n_heads, config.kv_heads
    zero = x.dtype.type(0)
    q = x @ p["attn.w_q"] + p.get("attn.b_q", zero)  # (..., L, h·d_head)
    k = x @ p["attn.w_k"] + p.get("attn.b_k", zero)  # (..., L, h_kv·d_head)
    v = x @ p["attn.w_v"] + p.get("attn.b_v", zero)  # (..., L, h_kv·d_head)
    q = split_heads(q, n_heads)  # (..., h, L, d_head)
    k, v = split_heads(k, n_kv), split_heads(v, n_kv)  # (..., h_kv, L, d_head)
    if config.qk_norm:  # every query and key of a head gets rms 1 before the scores
        q = rms_norm(q, p["gamma_q"], eps=config.eps)  # (..., h, L, d_head)
        k = rms_norm(k, p["gamma_k"], eps=config.eps)  # (..., h_kv, L, d_head)
    if config.rope_base is not None:  # rotated after the norm: a rotation keeps the rms
        q, k = rope(q, base=config.rope_base), rope(k, base=config.rope_base)
    group = n_heads // n_kv  # query head i reads key/value head i // group
    k, v = np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3)  # (..., h, L, d_head)
    if mask is not None and np.ndim(mask) >= 3:
        mask = np.expand_dims(np.asarray(mask), -3)  # (..., 1, L, L): the same for every head
    att = attention(q, k, v, mask=mask, is_causal=is_causal)  # (..., h, L, d_head)
    out: NDArray[np.floating] = merge_heads(att) @ p["attn.w_o"] + p.get("attn.b_o", zero)
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
    params: BlockParams,
    config: BlockConfig,
    *,
    mask: ArrayLike | None = None,
    is_causal: bool = False,
    trace: Trace | None = None,
) -> NDArray[np.floating]:
    """One transformer block (self-attention + feed-forward, each with a residual).

    Args:
        x: the residual stream ``(..., L, d_model)``.
        params: the weights, a [`BlockParams`][attention_math.block.BlockParams] holding
            exactly the arrays `param_shapes` lists for ``config``.
        config: the options, a [`BlockConfig`][attention_math.block.BlockConfig].
        mask: as in [`attention`][attention_math.numeric.attention]: boolean with **True =
            may attend** (the opposite of the boolean ``src_mask`` of
            ``torch.nn.TransformerEncoderLayer``, where True blocks) or additive float;
            ``(L, L)`` or with batch axes ``(..., L, L)``.
        is_causal: a causal mask (a decoder block), combined with ``mask``.
        trace: if a list, receives ``(step, shape)`` of every intermediate.

    Returns:
        The new residual stream, ``(..., L, d_model)``, in the floating dtype of ``x``
            (float64 for integer ``x``).

    See Also:
        [`multi_head_attention`][attention_math.multihead.multi_head_attention]: the
        attention layer alone, with the same ``AttentionParams``.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3: the block (post-LN).
        - [Xiong et al., 2020](https://arxiv.org/abs/2002.04745): pre-LN.
        - [Ainslie et al., 2023](https://arxiv.org/abs/2305.13245): grouped-query attention.

    Examples:
        >>> import numpy as np
        >>> from attention_math.block import BlockConfig, random_params, transformer_block
        >>> x = np.random.default_rng(0).standard_normal((2, 5, 8))   # (B, L, d_model)
        >>> gpt2 = BlockConfig(n_heads=2)
        >>> transformer_block(x, random_params(8, 16, gpt2), gpt2, is_causal=True).shape
        (2, 5, 8)
        >>> llama = BlockConfig(n_heads=4, n_kv_heads=2, norm="rms", ffn="swiglu",
        ...                     qk_norm=True, rope_base=1e4)
        >>> transformer_block(x, random_params(8, 16, llama), llama).shape
        (2, 5, 8)
        >>> transformer_block(x, random_params(8, 16, gpt2), BlockConfig(n_heads=3))
        Traceback (most recent call last):
        ...
        ValueError: n_heads = 3 must divide d_model = 8
    """
    a = as_float("x", x, min_ndim=2)
    dtype = a.dtype
    d_model = a.shape[-1]
    if not isinstance(config, BlockConfig):
        raise TypeError(f"config must be a BlockConfig, got {type(config).__name__}")
    h, g = _heads(config.n_heads, config.n_kv_heads, d_model)
    is_causal = check_flag("is_causal", is_causal)
    sizes = {"d_model": d_model, "d_kv": g * (d_model // h), "d_head": d_model // h}
    p = _check_params(params, config, sizes, a.dtype)
    note = trace
    eps = config.eps

    def sa(t: NDArray[np.floating]) -> NDArray[np.floating]:
        return _self_attention(t, p, config, mask, is_causal, note)

    def ff(t: NDArray[np.floating]) -> NDArray[np.floating]:
        if config.ffn == "swiglu":
            out = swiglu(t, p["w_gate"], p["w_up"], p["w_down"])
            width = p["w_up"].shape[1]
        else:
            zero = t.dtype.type(0)
            b_1, b_2 = p.get("b_1", zero), p.get("b_2", zero)
            out = feed_forward(t, p["w_1"], b_1, p["w_2"], b_2, activation=config.activation)
            width = p["w_1"].shape[1]
        if note is not None:
            note.append(("feed-forward hidden", (*t.shape[:-1], width)))
            note.append(("feed-forward output", out.shape))
        return out

    def ln(t: NDArray[np.floating], i: int) -> NDArray[np.floating]:
        if config.norm == "rms":
            return rms_norm(t, p[f"gamma_{i}"], eps=eps)
        return layer_norm(t, p[f"gamma_{i}"], p[f"beta_{i}"], eps=eps)

    if note is not None:
        note.append(("input x (residual stream)", a.shape))
    if config.norm_first:
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
    return _check_heads(h, n_kv_heads)


def random_params(d_model: int, d_ff: int, config: BlockConfig, *, seed: int = 0) -> BlockParams:
    """Random weights for `transformer_block` (Glorot-scaled matrices, small biases, norm
    gains near one), for examples and tests: the arrays `param_shapes` lists for ``config``.

    Examples:
        >>> from attention_math.block import BlockConfig, random_params
        >>> random_params(4, 6, BlockConfig(n_heads=2)).w_1.shape
        (4, 6)
        >>> random_params(8, 6, BlockConfig(n_heads=4, n_kv_heads=1, norm="rms")).attn.w_k.shape
        (8, 2)
    """
    d_model = check_count("d_model", d_model)
    d_ff = check_count("d_ff", d_ff)
    h, g = _heads(config.n_heads, config.n_kv_heads, d_model)
    rng = np.random.default_rng(seed)
    sizes = {"d_model": d_model, "d_ff": d_ff, "d_kv": g * (d_model // h), "d_head": d_model // h}
    out = {}
    for name, dims in param_shapes(config).items():
        shape = tuple(sizes[d] for d in dims)
        kind = name.removeprefix("attn.")
        if kind.startswith("w_"):
            out[name] = rng.standard_normal(shape) * math.sqrt(2.0 / sum(shape))
        elif kind.startswith("gamma"):
            out[name] = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            out[name] = 0.1 * rng.standard_normal(shape)
    return BlockParams.from_dict(out)


def params_from_torch(state: Mapping[str, ArrayLike]) -> BlockParams:
    """The parameters of a ``torch.nn.TransformerEncoderLayer`` from its ``state_dict``, given
    as NumPy arrays (``{k: t.detach().numpy() for k, t in layer.state_dict().items()}``).

    PyTorch stores ``(out, in)`` matrices and computes ``x Wᵀ + b``; the query, key and
    value projections are stacked in ``self_attn.in_proj_weight``
    ([`AttentionParams.from_torch`][attention_math.multihead.AttentionParams.from_torch]).
    Use them with ``BlockConfig(n_heads, norm_first=layer.norm_first, activation=…)``:
    PyTorch's default is post-LN (``norm_first=False``), `BlockConfig`'s pre-LN.

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
        >>> params_from_torch(state).attn.w_k     # rows 2..3 of in_proj_weight, transposed
        array([[4., 6.],
               [5., 7.]])
    """
    s = {name: np.asarray(a) for name, a in state.items()}
    return BlockParams(
        attn=AttentionParams.from_torch(s, prefix="self_attn."),
        w_1=s["linear1.weight"].T,
        b_1=s["linear1.bias"],
        w_2=s["linear2.weight"].T,
        b_2=s["linear2.bias"],
        gamma_1=s["norm1.weight"],
        beta_1=s["norm1.bias"],
        gamma_2=s["norm2.weight"],
        beta_2=s["norm2.bias"],
    )
