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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math import positional
from attention_math.multihead import circuits
from attention_math.numeric import attention_weights

__all__ = ["Config", "ToyModel", "forward", "init_params", "weight_names"]

Floats = NDArray[np.floating]
Params = dict[str, Floats]


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
    names = ["w_e"]
    for layer in range(config.n_layers):
        names += [f"w_{m}.{layer}" for m in ("q", "k", "v", "o")]
    return [*names, "w_u"]


def init_params(config: Config, rng: np.random.Generator) -> Params:
    """Random weights (normal, variance ``1/fan-in``), drawn in ``weight_names`` order.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, init_params
        >>> p = init_params(Config(), np.random.default_rng(0))
        >>> p["w_e"].shape, p["w_q.1"].shape, p["w_u"].shape
        ((32, 32), (32, 32), (32, 32))
    """
    d = config.d_model
    shapes = {"w_e": (config.vocab, d), "w_u": (d, config.vocab)}
    params: Params = {}
    for name in weight_names(config):
        shape = shapes.get(name, (d, d))
        # the embedding's rows are read one at a time (fan-in 1); the rest are products
        std = 1.0 if name == "w_e" else 1.0 / np.sqrt(shape[0])
        params[name] = rng.normal(0.0, std, size=shape)  # (fan-in, fan-out)
    return params


def split_heads(t: Floats, n_heads: int) -> Floats:
    """``(..., L, h·d) → (..., h, L, d)``: head ``i`` owns columns ``i·d … (i+1)·d − 1``."""
    *lead, length, width = t.shape
    t = t.reshape(*lead, length, n_heads, width // n_heads)  # (..., L, h, d)
    return np.swapaxes(t, -3, -2)  # (..., h, L, d)


def merge_heads(t: Floats) -> Floats:
    """``(..., h, L, d) → (..., L, h·d)``: Concat(head_1, …, head_h)."""
    t = np.swapaxes(t, -3, -2)  # (..., L, h, d)
    *lead, length, n_heads, width = t.shape
    return t.reshape(*lead, length, n_heads * width)  # (..., L, h·d)


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
    ``"x.0"``, ``"x.1"``, …, the heads' ``"q.l"``, ``"k.l"``, ``"v.l"`` and attention weights
    ``"att.l"`` (``(..., h, L, L)``), and the concatenated heads ``"z.l"``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, forward, init_params
        >>> from attention_math.positional import sinusoidal
        >>> c = Config()
        >>> p = init_params(c, np.random.default_rng(0))
        >>> logits, saved = forward(p, sinusoidal(5, 32, base=100.0), c, np.arange(5)[None])
        >>> logits.shape, saved["att.1"].shape
        ((1, 5, 32), (1, 2, 5, 5))
    """
    h = config.n_heads
    x_onehot = np.eye(config.vocab)[tokens]  # (..., L, vocab)
    x = x_onehot @ params["w_e"] + pos  # (..., L, d_model): token + position
    saved: dict[str, Any] = {"x_onehot": x_onehot}
    for layer in range(config.n_layers):
        saved[f"x.{layer}"] = x
        q = split_heads(x @ params[f"w_q.{layer}"], h)  # (..., h, L, d_head)
        k = split_heads(x @ params[f"w_k.{layer}"], h)  # (..., h, L, d_head)
        v = split_heads(x @ params[f"w_v.{layer}"], h)  # (..., h, L, d_head)
        att = attention_weights(q, k, v, is_causal=True)  # (..., h, L, L)
        heads = att @ v  # (..., h, L, d_head)
        z = merge_heads(heads)  # (..., L, h·d_head)
        x = x + z @ params[f"w_o.{layer}"]  # (..., L, d_model): the layer adds to the stream
        saved.update({f"q.{layer}": q, f"k.{layer}": k, f"v.{layer}": v})
        saved.update({f"att.{layer}": att, f"z.{layer}": z})
    saved[f"x.{config.n_layers}"] = x
    logits = x @ params["w_u"]  # (..., L, vocab)
    return logits, saved


@dataclass
class ToyModel:
    """A trained (or freshly initialised) attention-only transformer.

    Attributes:
        config: its shapes.
        params: the weights, by ``weight_names`` (``w_e``, ``w_q.0`` … ``w_u``).
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
        att = [saved[f"att.{layer}"] for layer in range(self.config.n_layers)]
        return np.stack(att, axis=-4)  # (..., layers, heads, L, L)

    def circuits(self, layer: int) -> tuple[Floats, Floats]:
        """``(W_QK, W_OV)`` of every head of ``layer``: ``(h, d_model, d_model)`` each.

        ``multihead.circuits`` on this layer's weights (row-vector convention: head ``k``'s
        scores are ``x W_QK^k xᵀ/√d_head`` and it writes ``x W_OV^k`` into the stream).
        """
        if isinstance(layer, bool) or not isinstance(layer, int):
            raise TypeError(f"layer must be an int, got {layer!r}")
        if not 0 <= layer < self.config.n_layers:
            raise ValueError(f"layer must be in 0 … {self.config.n_layers - 1}, got {layer}")
        w_q, w_k, w_v, w_o = (self.params[f"w_{m}.{layer}"] for m in ("q", "k", "v", "o"))
        qk, ov = circuits(w_q, w_k, w_v, w_o, self.config.n_heads)
        return qk, ov
