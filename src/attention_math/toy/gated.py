"""A one-head toy where some queries have nothing to read: does it grow an attention sink?

The task ("ask or rest"). A sequence is a start token ``BOS`` followed by ``L − 1`` content
tokens drawn from ``1 … V``; each content token is flagged *ask* or *rest* at random. An
*ask* position must output the average of the one-hot vectors of the content tokens so far
(uniform attention over them, none on ``BOS``); a *rest* position must output **zero**. The
loss is the mean squared error over the content positions.

A softmax head cannot output zero by weighting content tokens (their values carry the tokens),
so it must learn to park a rest query's weight on ``BOS`` and give ``BOS`` a zero value: an
attention sink. Two ways out, trained from the same start on the same batches:

* ``"sink"``: a learned sink logit ``s`` (gpt-oss), softmax over ``[scores, s]``;
* ``"gate"``: a sigmoid output gate from the query token (Qwen3-Next, Qiu et al. 2025):
  ``y = σ(x W_g + b_g) ⊙ (attention output)``.

The model: ``q = x W_q``, ``k = x W_k``, ``v = x W_v`` (``x`` the one-hot token and flag),
causal single-head attention, no other layer. The gradients are written out here, each one
line of the chain rule; `loss_and_grads` is checked against finite differences in the tests.
Training takes about a second of CPU per variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from attention_math import gates
from attention_math._once import derived_once
from attention_math.numeric import causal_mask
from attention_math.toy.train import Hyper, adam_step

__all__ = [
    "KINDS",
    "GatedToy",
    "Measured",
    "ask_rest_batch",
    "attention_mass",
    "forward",
    "init",
    "loss_and_grads",
    "measured",
    "train",
]

Floats = NDArray[np.floating]

KINDS = ("softmax", "sink", "gate")
"""The three variants: a plain softmax head, a learned sink logit, a sigmoid output gate."""


@dataclass
class GatedToy:
    """A trained (or fresh) toy: its variant, sizes, weights and loss history.

    Attributes:
        kind: one of `KINDS`.
        vocab: content tokens ``1 … vocab`` (``0`` is ``BOS``).
        d_head: width of the queries and keys.
        weights: ``w_q``, ``w_k`` ``(d_in, d_head)``, ``w_v`` ``(d_in, vocab)``; ``sink``
            ``()`` for ``"sink"``; ``w_g`` ``(d_in, vocab)`` and ``b_g`` ``(vocab,)`` for
            ``"gate"``. ``d_in = vocab + 3``: the one-hot token (with ``BOS``) and flag.
        loss: the training loss of each step.
    """

    kind: str
    vocab: int
    d_head: int
    weights: dict[str, Floats]
    loss: Floats = field(default_factory=lambda: np.empty(0))


def init(kind: str, vocab: int = 6, d_head: int = 8, *, seed: int = 0) -> GatedToy:
    """Fresh weights, N(0, 0.3²); the same ``seed`` gives the same shared weights to every kind.

    Examples:
        >>> from attention_math.toy.gated import init
        >>> sorted(init("gate").weights)
        ['b_g', 'w_g', 'w_k', 'w_q', 'w_v']
        >>> init("sink").weights["sink"].shape
        ()
        >>> init("other")
        Traceback (most recent call last):
        ...
        ValueError: kind must be one of ('softmax', 'sink', 'gate'), got 'other'
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rng = np.random.default_rng(seed)
    d_in = vocab + 3
    w: dict[str, Floats] = {
        "w_q": rng.normal(0, 0.3, (d_in, d_head)),
        "w_k": rng.normal(0, 0.3, (d_in, d_head)),
        "w_v": rng.normal(0, 0.3, (d_in, vocab)),
    }
    extra = {
        "w_g": rng.normal(0, 0.3, (d_in, vocab)),
        "b_g": np.zeros(vocab),
    }  # drawn for every kind, so that the shared weights start equal
    if kind == "gate":
        w.update(extra)
    if kind == "sink":
        w["sink"] = np.zeros(())
    return GatedToy(kind, vocab, d_head, w)


def ask_rest_batch(
    rng: np.random.Generator, batch: int, length: int, vocab: int, *, bos: bool = True
) -> tuple[Floats, Floats, NDArray[np.bool_]]:
    """``(x, target, rest)``: inputs ``(batch, L, vocab + 3)``, targets ``(batch, L, vocab)``
    and the rest flags ``(batch, L)``.

    With ``bos`` position 0 is the start token ``0`` (no flag, no value needed: the model may
    give it a zero value); without, position 0 is a content token like the others, whose
    value carries its token. Position 0 predicts nothing either way.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.gated import ask_rest_batch
        >>> x, t, rest = ask_rest_batch(np.random.default_rng(0), 2, 5, 4)
        >>> x.shape, t.shape, rest.shape, bool(rest[:, 0].any())
        ((2, 5, 7), (2, 5, 4), (2, 5), False)
        >>> bool(np.all(t[rest] == 0))   # rest positions output zero
        True
    """
    tokens = rng.integers(1, vocab + 1, size=(batch, length))  # (B, L)
    rest = rng.random((batch, length)) < 0.5  # (B, L)
    rest[:, 0] = False
    if bos:
        tokens[:, 0] = 0
    x = np.zeros((batch, length, vocab + 3))  # (B, L, d_in)
    np.put_along_axis(x, tokens[..., None], 1.0, axis=-1)
    x[..., vocab + 1] = ~rest  # ask flag
    x[..., vocab + 2] = rest  # rest flag
    if bos:
        x[:, 0, vocab + 1 :] = 0.0  # BOS has no flag
    onehot = x[..., 1 : vocab + 1]  # (B, L, vocab): the content tokens (BOS is all zero)
    seen = np.cumsum(onehot, axis=1)  # (B, L, vocab)
    count = seen.sum(axis=-1, keepdims=True).clip(min=1)  # (B, L, 1): content tokens so far
    target = np.where(rest[..., None], 0.0, seen / count)  # (B, L, vocab)
    target[:, 0] = 0.0
    return x, target, rest


def forward(toy: GatedToy, x: Floats) -> dict[str, Floats]:
    """Every intermediate of the forward pass: ``q, k, v, P`` (weights ``(B, L, L)``),
    ``o`` (attention output), ``G`` (gate, or ones), ``y`` (output).

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.gated import ask_rest_batch, forward, init
        >>> x, _, _ = ask_rest_batch(np.random.default_rng(0), 2, 5, 6)
        >>> f = forward(init("sink"), x)
        >>> bool(np.all(f["P"].sum(-1) < 1))   # the sink takes some of every row
        True
    """
    w = toy.weights
    n = x.shape[-2]
    c = 1.0 / np.sqrt(toy.d_head)
    q, k, v = x @ w["w_q"], x @ w["w_k"], x @ w["w_v"]  # (B, L, d), (B, L, d), (B, L, V)
    scores = np.where(causal_mask(n), q @ np.swapaxes(k, -1, -2) * c, -np.inf)  # (B, L, L)
    sink = w["sink"] if toy.kind == "sink" else -np.inf
    p = gates.sink_softmax(scores, sink)  # (B, L, L): plain softmax for a sink at −∞
    o = p @ v  # (B, L, V)
    if toy.kind == "gate":
        g = gates.sigmoid(x @ w["w_g"] + w["b_g"])  # (B, L, V): from the query token
    else:
        g = np.ones_like(o)
    return {"q": q, "k": k, "v": v, "P": p, "o": o, "G": g, "y": g * o}


def loss_and_grads(toy: GatedToy, x: Floats, target: Floats) -> tuple[float, dict[str, Floats]]:
    """The mean squared error over the content positions and its gradient for every weight.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.gated import ask_rest_batch, init, loss_and_grads
        >>> x, t, _ = ask_rest_batch(np.random.default_rng(0), 2, 5, 6)
        >>> loss, g = loss_and_grads(init("gate"), x, t)
        >>> sorted(g) == sorted(init("gate").weights), loss > 0
        (True, True)
    """
    f = forward(toy, x)
    c = 1.0 / np.sqrt(toy.d_head)
    n_rows = x.shape[0] * (x.shape[1] - 1)  # the content positions
    diff = f["y"] - target  # (B, L, V)
    diff[:, 0] = 0.0  # BOS predicts nothing
    loss = float((diff**2).sum() / n_rows)
    dy = 2.0 * diff / n_rows  # (B, L, V)
    grads: dict[str, Floats] = {}
    xt = x.reshape(-1, x.shape[-1]).T  # (d_in, B·L): sums over batch and positions
    if toy.kind == "gate":
        da = dy * f["o"] * f["G"] * (1 - f["G"])  # (B, L, V): σ' = σ(1 − σ)
        grads["w_g"] = xt @ da.reshape(-1, da.shape[-1])
        grads["b_g"] = da.reshape(-1, da.shape[-1]).sum(axis=0)
    do = dy * f["G"]  # (B, L, V)
    p = f["P"]  # (B, L, L)
    dp = do @ np.swapaxes(f["v"], -1, -2)  # (B, L, L)
    dv = np.swapaxes(p, -1, -2) @ do  # (B, L, V)
    row = (p * dp).sum(axis=-1, keepdims=True)  # (B, L, 1): Σ_j p_j dp_j
    ds = p * (dp - row)  # (B, L, L): the softmax rule; the sink's value is 0, its dp is 0
    if toy.kind == "sink":
        grads["sink"] = np.asarray(-((1 - p.sum(axis=-1)) * row[..., 0]).sum())
    dq = ds @ f["k"] * c  # (B, L, d)
    dk = np.swapaxes(ds, -1, -2) @ f["q"] * c  # (B, L, d)
    grads["w_q"] = xt @ dq.reshape(-1, dq.shape[-1])
    grads["w_k"] = xt @ dk.reshape(-1, dk.shape[-1])
    grads["w_v"] = xt @ dv.reshape(-1, dv.shape[-1])
    return loss, grads


def train(
    kind: str,
    *,
    steps: int = 600,
    batch: int = 32,
    length: int = 12,
    vocab: int = 6,
    lr: float = 0.03,
    weight_decay: float = 0.0,
    bos: bool = True,
    seed: int = 0,
) -> GatedToy:
    """Adam on fresh batches; the same ``seed`` gives every kind the same start and batches.

    Examples:
        >>> from attention_math.toy.gated import train
        >>> toy = train("gate", steps=5)
        >>> toy.loss.shape
        (5,)
    """
    toy = init(kind, vocab, seed=seed)
    rng = np.random.default_rng(seed + 1)
    hyper = Hyper(lr=lr, beta2=0.999)
    m = {n: np.zeros_like(w) for n, w in toy.weights.items()}
    v = {n: np.zeros_like(w) for n, w in toy.weights.items()}
    toy.loss = np.empty(steps)
    with threadpool_limits(limits=1, user_api="blas"):
        for step in range(steps):
            x, target, _ = ask_rest_batch(rng, batch, length, vocab, bos=bos)
            toy.loss[step], grads = loss_and_grads(toy, x, target)
            for n, g in grads.items():
                toy.weights[n] *= 1 - lr * weight_decay  # AdamW: decay decoupled from the step
                adam_step(toy.weights[n], g, m[n], v[n], step + 1, lr, hyper)
    return toy


def attention_mass(
    toy: GatedToy, *, bos: bool = True, seed: int = 99, batch: int = 256, length: int = 12
) -> dict[str, float]:
    """Measured on fresh sequences: the mean weight on the first token (``BOS``, or the first
    content token without ``bos``) of the ask and of the rest queries (``first_ask``,
    ``first_rest``), the mean weight on the sink, the mean gate of each, and the loss.

    Examples:
        >>> from attention_math.toy.gated import attention_mass, init
        >>> sorted(attention_mass(init("softmax"), batch=4))[:3]
        ['first_ask', 'first_rest', 'gate_ask']
    """
    x, target, rest = ask_rest_batch(np.random.default_rng(seed), batch, length, toy.vocab, bos=bos)
    f = forward(toy, x)
    ask = ~rest
    ask[:, 0] = False
    first = f["P"][..., 0]  # (B, L): the weight on the first token
    sink = 1 - f["P"].sum(axis=-1)  # (B, L)
    gate = f["G"].mean(axis=-1)  # (B, L)
    diff = (f["y"] - target)[:, 1:]
    return {
        "first_ask": float(first[ask].mean()),
        "first_rest": float(first[rest].mean()),
        "sink_ask": float(sink[ask].mean()),
        "sink_rest": float(sink[rest].mean()),
        "gate_ask": float(gate[ask].mean()),
        "gate_rest": float(gate[rest].mean()),
        "loss": float((diff**2).sum() / diff[..., 0].size),
    }


@dataclass(frozen=True)
class Measured:
    """One trained variant as the sinks page shows it (`measured`), read-only.

    Attributes:
        mass: `attention_mass` of the trained toy on fresh sequences.
        loss: the training loss of each step.
    """

    mass: Mapping[str, float]
    loss: Floats


@derived_once
def measured(kind: str, *, steps: int = 600, bos: bool = True, seed: int = 0) -> Measured:
    """`train`, then `attention_mass` of the trained toy (with the same ``bos``).

    A pure function of its arguments (fixed seeds, one BLAS thread), kept in memory by them:
    a page that shows it trains each variant once per process, not at every rebuild of
    ``mkdocs serve``.

    Examples:
        >>> from attention_math.toy.gated import measured
        >>> run = measured("gate", steps=5)
        >>> measured("gate", steps=5) is run, run.loss.shape, run.loss.flags.writeable
        (True, (5,), False)
        >>> sorted(run.mass)[:2]
        ['first_ask', 'first_rest']
    """
    toy = train(kind, steps=steps, bos=bos, seed=seed)
    return Measured(MappingProxyType(attention_mass(toy, bos=bos)), toy.loss)
