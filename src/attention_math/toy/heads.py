"""Which head does what: every head scored on held-out sequences, the best found by argmax.

Nothing here is chosen by hand: the previous-token head is the layer-1 head with the highest
``previous_token_score``, the induction head the layer-2 head with the highest
``prefix_matching_score``, both measured on repeated random sequences the model never saw
(a seed of their own, not the training seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_math.toy.data import repeated_tokens
from attention_math.toy.grad import cross_entropy
from attention_math.toy.model import ToyModel, patterns
from attention_math.toy.scores import (
    copying_score,
    k_composition_score,
    prefix_matching_score,
    previous_token_score,
)

__all__ = ["HELD_OUT_SEED", "ByLength", "HeadReport", "held_out", "induction_by_length", "report"]

HELD_OUT_SEED = 20221011
"""Seed of the held-out sequences (training draws from ``Hyper.seed``, a stream of its own)."""

Floats = NDArray[np.floating]


def held_out(model: ToyModel, batch: int = 64, n: int = 16) -> NDArray[np.int64]:
    """``(batch, 2n)`` held-out sequences: ``n`` distinct random tokens, then again.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.heads import held_out
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> held_out(m, batch=2).shape
        (2, 32)
    """
    return repeated_tokens(np.random.default_rng(HELD_OUT_SEED), batch, n, model.config.vocab)


@dataclass(frozen=True)
class HeadReport:
    """Every head's scores, and the heads they single out.

    Attributes:
        previous_token: ``(layers, heads)`` previous-token scores.
        prefix_matching: ``(layers, heads)`` prefix-matching scores.
        copying: ``(layers, heads)`` OV copying scores of ``W_E W_OV W_U``.
        k_composition: ``(heads of layer 2, heads of layer 1)`` K-composition scores.
        previous_head: ``(layer, head)`` of the best previous-token head of layer 1.
        induction_head: ``(layer, head)`` of the best prefix-matching head of layer 2.
        loss_first: mean loss on the first half of the held-out sequences.
        loss_repeat: mean loss on the repeated half.
    """

    previous_token: Floats
    prefix_matching: Floats
    copying: Floats
    k_composition: Floats
    previous_head: tuple[int, int]
    induction_head: tuple[int, int]
    loss_first: float
    loss_repeat: float


def full_ov(model: ToyModel, layer: int) -> Floats:
    """``W_E W_OV^h W_U`` for every head of ``layer``: ``(heads, vocab, vocab)``.

    Row ``a``, column ``b``: how much attending to token ``a`` raises the logit of ``b``
    (through this head alone, reading the token's embedding).

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.heads import full_ov
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> full_ov(m, 1).shape
        (2, 32, 32)
    """
    _, ov = model.circuits(layer)  # (h, d_model, d_model)
    return model.params.w_e @ ov @ model.params.w_u  # (h, vocab, vocab)


def report(model: ToyModel, tokens: NDArray[np.int64] | None = None) -> HeadReport:
    """Score every head of a two-layer ``model`` on ``tokens`` (default ``held_out``).

    Raises:
        ValueError: the model does not have two layers.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.heads import report
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> r = report(m)
        >>> r.prefix_matching.shape, r.k_composition.shape
        ((2, 2), (2, 2))
    """
    c = model.config
    if c.n_layers != 2:
        raise ValueError(f"report() reads a two-layer circuit; model has {c.n_layers} layers")
    t = held_out(model) if tokens is None else tokens  # (batch, 2n)
    logits, saved = model.run(t)
    pat = patterns(model.params, c, saved)  # (batch, layers, heads, L, L)
    shape = (c.n_layers, c.n_heads)
    prev, prefix, copy = np.empty(shape), np.empty(shape), np.empty(shape)
    for layer in range(c.n_layers):
        circuits = full_ov(model, layer)  # (h, vocab, vocab)
        for head in range(c.n_heads):
            prev[layer, head] = previous_token_score(pat[:, layer, head])
            prefix[layer, head] = prefix_matching_score(pat[:, layer, head], t)
            copy[layer, head] = copying_score(circuits[head])
    qk2, _ = model.circuits(1)
    _, ov1 = model.circuits(0)
    kcomp = np.array(
        [[k_composition_score(qk2[i], ov1[j]) for j in range(c.n_heads)] for i in range(c.n_heads)]
    )  # (h of layer 2, h of layer 1)
    nll, _ = cross_entropy(logits, t)  # (batch, 2n − 1)
    n = t.shape[-1] // 2
    return HeadReport(
        previous_token=prev,
        prefix_matching=prefix,
        copying=copy,
        k_composition=kcomp,
        previous_head=(0, int(prev[0].argmax())),
        induction_head=(1, int(prefix[1].argmax())),
        # predictions of tokens 1 … n−1 (random) and of n+1 … 2n−1 (copies)
        loss_first=float(nll[:, : n - 1].mean()),
        loss_repeat=float(nll[:, n:].mean()),
    )


@dataclass(frozen=True)
class ByLength:
    """Induction on repeats of each length: what `induction_by_length` measures.

    Attributes:
        lengths: ``(k,)`` the repeated segment's lengths ``n``.
        prefix: random tokens before the segment in every sequence.
        prefix_matching: ``(k, heads)`` each layer-2 head's prefix-matching score.
        loss_repeat: ``(k,)`` mean loss (nats) on the tokens of the repeat that induction
            predicts (the 2nd … n-th of the copy).
    """

    lengths: NDArray[np.int64]
    prefix: int
    prefix_matching: Floats
    loss_repeat: Floats

    @property
    def best(self) -> Floats:
        """``(k,)`` the best layer-2 head's prefix-matching score at each length."""
        best: Floats = self.prefix_matching.max(axis=1)  # (k,)
        return best


def induction_by_length(
    model: ToyModel,
    lengths: Sequence[int] = tuple(range(4, 17)),
    *,
    prefix: int = 8,
    batch: int = 200,
    seed: int = HELD_OUT_SEED,
) -> ByLength:
    """Score the layer-2 heads and the loss on held-out repeats of each segment length.

    For each ``n`` in ``lengths``: ``batch`` sequences of ``prefix`` random tokens, then
    ``n`` tokens, then the same ``n`` again (`repeated_tokens`: the first ``prefix + n``
    distinct, so the repeat is the only recurrence), all drawn from one generator seeded by
    ``seed``. Every query of the repeat is scored by `prefix_matching_score`, and the loss
    is the mean over the predictions that induction makes possible (of the copy's 2nd …
    n-th token).

    Args:
        model: a two-layer model.
        lengths: segment lengths, each ≥ 2.
        prefix: random tokens before the segment (8 by default: with ``n = 16`` the
            sequence is 40 tokens, the model's ``n_ctx``).
        batch: sequences per length.
        seed: seed of the held-out draws (not the training seed).

    Raises:
        ValueError: a length is below 2, a sequence is longer than ``n_ctx``, or the model
            does not have two layers.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.heads import induction_by_length
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> r = induction_by_length(m, [4, 8], batch=4)
        >>> r.prefix_matching.shape, r.loss_repeat.shape, r.best.shape
        ((2, 2), (2,), (2,))
    """
    c = model.config
    if c.n_layers != 2:
        raise ValueError(f"induction_by_length reads layer 2; model has {c.n_layers} layers")
    ns = [int(n) for n in lengths]
    if not ns or min(ns) < 2 or prefix + 2 * max(ns) > c.n_ctx:
        raise ValueError(
            f"need lengths ≥ 2 with prefix + 2·max(lengths) ≤ n_ctx = {c.n_ctx}, "
            f"got lengths {ns}, prefix {prefix}"
        )
    rng = np.random.default_rng(seed)
    scores = np.empty((len(ns), c.n_heads))
    losses = np.empty(len(ns))
    for k, n in enumerate(ns):
        t = repeated_tokens(rng, batch, n, c.vocab, prefix=prefix)  # (batch, prefix + 2n)
        logits, saved = model.run(t)  # (batch, L, vocab)
        pat = patterns(model.params, c, saved)  # (batch, layers, heads, L, L)
        for head in range(c.n_heads):
            scores[k, head] = prefix_matching_score(pat[:, 1, head], t)
        nll, _ = cross_entropy(logits, t)  # (batch, L − 1): row i predicts token i + 1
        losses[k] = nll[:, prefix + n :].mean()  # the copy's 2nd … n-th token
    return ByLength(np.array(ns, dtype=np.int64), prefix, scores, losses)
