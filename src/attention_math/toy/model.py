"""The model: two layers of causal multi-head attention on a residual stream, no MLP.

The architecture of Elhage et al. (2021), "A Mathematical Framework for Transformer
Circuits", in its attention-only form:

    x₀ = onehot(tokens) W_E + W_pos                     (L, d_model)   token + position
    x₁ = x₀ + Σ_h  softmax(x₀ W_QK^h x₀ᵀ/√d_head + M) x₀ W_OV^h   layer 1 writes into the stream
    x₂ = x₁ + Σ_h  softmax(x₁ W_QK^h x₁ᵀ/√d_head + M) x₁ W_OV^h   layer 2 reads what layer 1 wrote
    logits = x₂ W_U                                     (L, vocab)

with ``M`` the causal mask: a token sees itself and what came before, so each position
predicts the *next* token. The heads are computed as multi-head attention computes them
(``Concat(head_1, …, head_h) W_O``), which is the sum over heads written above.

The positions are the sinusoidal encoding (``attention_math.positional.sinusoidal``), fixed,
not learned: "attend to the previous token" is close to the same rotation of every
frequency pair at every position, which a head of small width expresses with a low-rank
``W_QK`` (a one-hot position would need a rank-``L`` shift matrix), so the previous-token
head the induction circuit needs forms early in training, with nothing to learn about
positions but how to read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math import positional
from attention_math._checks import as_float
from attention_math.multihead import (
    AttentionParams,
    circuits,
    merge_heads,
    multi_head_weights,
    split_heads,
)
from attention_math.numeric import attention

__all__ = [
    "Config",
    "Params",
    "ToyModel",
    "forward",
    "init_params",
    "patterns",
    "weight_names",
]

Floats = NDArray[np.floating]


@dataclass(frozen=True)
class Config:
    """The shapes of the model.

    Attributes:
        vocab: number of distinct tokens.
        d_model: width of the residual stream.
        n_heads: heads per layer.
        n_layers: attention layers (two for an induction circuit).
        n_ctx: the longest sequence (rows of the positional table).
        pos_base: the sinusoidal encoding's base (smaller than the usual 10000, as the
            sequences are short: more of the frequencies turn within ``n_ctx`` positions).

    Examples:
        >>> from attention_math.toy.model import Config
        >>> Config().d_head
        16
    """

    vocab: int = 32
    d_model: int = 32
    n_heads: int = 2
    n_layers: int = 2
    n_ctx: int = 40
    pos_base: float = 100.0

    @property
    def d_head(self) -> int:
        """Width of one head's queries, keys and values, ``d_model / n_heads``."""
        return self.d_model // self.n_heads

    def __post_init__(self) -> None:
        for name in ("vocab", "d_model", "n_heads", "n_layers", "n_ctx"):
            n = getattr(self, name)
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"{name} must be a positive integer, got {n!r}")
        if self.d_model % self.n_heads or self.d_model % 2:
            raise ValueError(
                f"d_model = {self.d_model} must be even and divisible by n_heads = {self.n_heads}"
            )


def weight_names(config: Config) -> list[str]:
    """The trained weights, in the fixed order that training and the cache use.

    Examples:
        >>> from attention_math.toy.model import Config, weight_names
        >>> weight_names(Config(n_layers=1))
        ['w_e', 'w_q.0', 'w_k.0', 'w_v.0', 'w_o.0', 'w_u']
    """
    return _names(config.n_layers)


@dataclass(frozen=True, eq=False)
class Params:
    """The weights: the embedding, one attention layer per layer, the unembedding.

    Each layer is the [`AttentionParams`][attention_math.multihead.AttentionParams] that
    `multi_head_attention` and the transformer block take (without biases). The gradient of
    the loss (`attention_math.toy.grad.loss_and_grads`) is a ``Params`` too: one array of the
    same shape for every weight.

    Attributes:
        w_e: the embedding ``(vocab, d_model)``: row ``t`` is token ``t``'s vector.
        layers: ``(W_Q, W_K, W_V, W_O)`` of each layer, each ``(d_model, d_model)``.
        w_u: the unembedding ``(d_model, vocab)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, init_params
        >>> p = init_params(Config(n_layers=1), np.random.default_rng(0))
        >>> p.layers[0].w_q.shape, list(p.as_dict())
        ((32, 32), ['w_e', 'w_q.0', 'w_k.0', 'w_v.0', 'w_o.0', 'w_u'])
    """

    w_e: Floats
    layers: tuple[AttentionParams, ...]
    w_u: Floats

    def __post_init__(self) -> None:
        for name in ("w_e", "w_u"):
            a = as_float(name, getattr(self, name), min_ndim=2)
            if a.ndim != 2:
                raise ValueError(f"{name} must be a matrix (2 axes), got shape {a.shape}")
            object.__setattr__(self, name, a)
        layers = tuple(self.layers)
        if not all(isinstance(layer, AttentionParams) for layer in layers):
            raise TypeError("layers must be a sequence of AttentionParams")
        object.__setattr__(self, "layers", layers)

    def as_dict(self) -> dict[str, Floats]:
        """Every weight by its name in `weight_names` (``w_q.0`` is layer 0's ``W_Q``), the
        stored arrays themselves: an in-place update of one (an Adam step) updates the model."""
        out = {"w_e": self.w_e}
        for i, layer in enumerate(self.layers):
            out |= {f"{name}.{i}": a for name, a in layer.as_dict().items()}
        out["w_u"] = self.w_u
        return out

    @classmethod
    def from_dict(cls, arrays: Mapping[str, ArrayLike]) -> Params:
        """The inverse of `as_dict`: the layers are those with a ``w_q.{i}``.

        Examples:
            >>> import numpy as np
            >>> from attention_math.toy.model import Params
            >>> w = {n: np.eye(2) for n in ("w_e", "w_q.0", "w_k.0", "w_v.0", "w_o.0", "w_u")}
            >>> len(Params.from_dict(w).layers)
            1
            >>> Params.from_dict({k: v for k, v in w.items() if k != "w_o.0"})
            Traceback (most recent call last):
            ...
            ValueError: missing weights ['w_o.0']; expected ['w_e', 'w_q.0', 'w_k.0', \
'w_v.0', 'w_o.0', 'w_u']
        """
        n_layers = sum(1 for name in arrays if name.startswith("w_q."))
        names = _names(n_layers)
        missing = [n for n in names if n not in arrays]
        extra = sorted(n for n in arrays if n not in names)
        if missing or extra:
            what = f"missing weights {missing}" if missing else f"unknown weights {extra}"
            raise ValueError(f"{what}; expected {names}")
        layers = tuple(
            AttentionParams(*(arrays[f"w_{m}.{i}"] for m in ("q", "k", "v", "o")))  # type: ignore[arg-type]
            for i in range(n_layers)
        )
        return cls(arrays["w_e"], layers, arrays["w_u"])  # type: ignore[arg-type]


def _names(n_layers: int) -> list[str]:
    names = ["w_e"]
    for layer in range(n_layers):
        names += [f"w_{m}.{layer}" for m in ("q", "k", "v", "o")]
    return [*names, "w_u"]


def init_params(config: Config, rng: np.random.Generator) -> Params:
    """Random weights (normal, variance ``1/fan-in``), drawn in ``weight_names`` order.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, init_params
        >>> p = init_params(Config(), np.random.default_rng(0))
        >>> p.w_e.shape, p.layers[1].w_q.shape, p.w_u.shape
        ((32, 32), (32, 32), (32, 32))
    """
    d = config.d_model
    shapes = {"w_e": (config.vocab, d), "w_u": (d, config.vocab)}
    arrays: dict[str, Floats] = {}
    for name in weight_names(config):
        shape = shapes.get(name, (d, d))
        # the embedding's rows are read one at a time (fan-in 1); the rest are products
        std = 1.0 if name == "w_e" else 1.0 / np.sqrt(shape[0])
        arrays[name] = rng.normal(0.0, std, size=shape)  # (fan-in, fan-out)
    return Params.from_dict(arrays)


def check_tokens(tokens: ArrayLike, config: Config) -> NDArray[np.int64]:
    """``tokens`` as an integer array ``(..., L)`` with ``1 ≤ L ≤ n_ctx`` and ids in range."""
    t = np.asarray(tokens)
    if t.dtype == np.bool_ or not np.issubdtype(t.dtype, np.integer):
        raise TypeError(f"tokens must be integers (token ids), got dtype {t.dtype}")
    if t.ndim < 1 or not 1 <= t.shape[-1] <= config.n_ctx:
        raise ValueError(
            f"tokens must have shape (..., L) with 1 ≤ L ≤ n_ctx = {config.n_ctx}, got {t.shape}"
        )
    if t.size and (t.min() < 0 or t.max() >= config.vocab):
        bad = int(t[(t < 0) | (t >= config.vocab)].flat[0])
        raise ValueError(f"tokens must lie in 0 … {config.vocab - 1} (the vocab), got {bad}")
    return t.astype(np.int64)


def forward(
    params: Params, pos: Floats, config: Config, tokens: NDArray[np.int64]
) -> tuple[Floats, dict[str, Any]]:
    """``(logits, saved)``: the forward pass, and what the backward pass reuses.

    ``pos`` holds the positional vectors of the tokens' positions, ``(..., L, d_model)``
    (``W_pos[:L]`` for a sequence that starts at position 0).

    ``saved`` holds the one-hot tokens ``"x_onehot"``, the residual stream before each layer
    ``"x.0"``, ``"x.1"``, …, the heads' ``"q.l"``, ``"k.l"``, ``"v.l"`` and the concatenated
    heads ``"z.l"``. The attention weights are not formed (training needs none):
    `patterns` computes them from ``saved``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, forward, init_params
        >>> from attention_math.positional import sinusoidal
        >>> c = Config()
        >>> p = init_params(c, np.random.default_rng(0))
        >>> logits, saved = forward(p, sinusoidal(5, 32, base=100.0), c, np.arange(5)[None])
        >>> logits.shape, saved["q.1"].shape
        ((1, 5, 32), (1, 2, 5, 16))
    """
    h = config.n_heads
    x_onehot = np.eye(config.vocab)[tokens]  # (..., L, vocab)
    x = x_onehot @ params.w_e + pos  # (..., L, d_model): token + position
    saved: dict[str, Any] = {"x_onehot": x_onehot}
    for layer, p in enumerate(params.layers):
        saved[f"x.{layer}"] = x
        q = split_heads(x @ p.w_q, h)  # (..., h, L, d_head)
        k = split_heads(x @ p.w_k, h)  # (..., h, L, d_head)
        v = split_heads(x @ p.w_v, h)  # (..., h, L, d_head)
        heads = attention(q, k, v, is_causal=True)  # (..., h, L, d_head)
        z = merge_heads(heads)  # (..., L, h·d_head)
        x = x + z @ p.w_o  # (..., L, d_model): the layer adds to the stream
        saved.update({f"q.{layer}": q, f"k.{layer}": k, f"v.{layer}": v, f"z.{layer}": z})
    saved[f"x.{config.n_layers}"] = x
    logits = x @ params.w_u  # (..., L, vocab)
    return logits, saved


def patterns(params: Params, config: Config, saved: Mapping[str, Any]) -> Floats:
    """Every head's attention weights on the run ``saved`` by `forward`:
    ``(..., layers, heads, L, L)`` (row = query), `multi_head_weights` on each layer's input.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, forward, init_params, patterns
        >>> from attention_math.positional import sinusoidal
        >>> c = Config()
        >>> p = init_params(c, np.random.default_rng(0))
        >>> _, saved = forward(p, sinusoidal(5, 32, base=100.0), c, np.arange(5)[None])
        >>> w = patterns(p, c, saved)
        >>> w.shape, bool(np.allclose(w.sum(axis=-1), 1)), bool((np.triu(w[0, 1, 0], 1) == 0).all())
        ((1, 2, 2, 5, 5), True, True)
    """
    att = [
        multi_head_weights(saved[f"x.{i}"], saved[f"x.{i}"], p, config.n_heads, is_causal=True)
        for i, p in enumerate(params.layers)
    ]  # each (..., h, L, L)
    return np.stack(att, axis=-4)  # (..., layers, heads, L, L)


@dataclass
class ToyModel:
    """A trained (or freshly initialised) attention-only transformer.

    Attributes:
        config: its shapes.
        params: the weights (`Params`: ``w_e``, one ``AttentionParams`` per layer, ``w_u``).
        history: what training recorded per step (``"loss"``, ``"loss_repeat"``,
            ``"loss_other"``), empty for an untrained model.
        hyper: the training hyper-parameters (seed included), empty if untrained.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> m.attention_patterns([3, 1, 4, 1, 5]).shape
        (2, 2, 5, 5)
        >>> m.logits([3, 1, 4]).shape
        (3, 32)
        >>> m.attention_patterns([3, 32])
        Traceback (most recent call last):
        ...
        ValueError: tokens must lie in 0 … 31 (the vocab), got 32
    """

    config: Config
    params: Params
    history: dict[str, Floats] = field(default_factory=dict)
    hyper: dict[str, Any] = field(default_factory=dict)

    @property
    def pos(self) -> Floats:
        """The fixed positional table ``W_pos``, ``(n_ctx, d_model)``."""
        c = self.config
        return positional.sinusoidal(c.n_ctx, c.d_model, base=c.pos_base)

    def run(self, tokens: ArrayLike) -> tuple[Floats, dict[str, Any]]:
        """``forward`` on ``tokens`` ``(..., L)``: the logits and the saved activations."""
        t = check_tokens(tokens, self.config)
        return forward(self.params, self.pos[: t.shape[-1]], self.config, t)

    def logits(self, tokens: ArrayLike) -> Floats:
        """The next-token logits, ``(..., L, vocab)``: row ``i`` predicts token ``i + 1``."""
        return self.run(tokens)[0]

    def attention_patterns(self, tokens: ArrayLike) -> Floats:
        """Every head's attention weights, ``(..., layers, heads, L, L)`` (row = query)."""
        _, saved = self.run(tokens)
        return patterns(self.params, self.config, saved)  # (..., layers, heads, L, L)

    def circuits(self, layer: int) -> tuple[Floats, Floats]:
        """``(W_QK, W_OV)`` of every head of ``layer``: ``(h, d_model, d_model)`` each.

        ``multihead.circuits`` on this layer's weights (row-vector convention: head ``k``'s
        scores are ``x W_QK^k xᵀ/√d_head`` and it writes ``x W_OV^k`` into the stream).
        """
        if isinstance(layer, bool) or not isinstance(layer, int):
            raise TypeError(f"layer must be an int, got {layer!r}")
        if not 0 <= layer < self.config.n_layers:
            raise ValueError(f"layer must be in 0 … {self.config.n_layers - 1}, got {layer}")
        return circuits(self.params.layers[layer], self.config.n_heads)
