"""Training: Adam on fresh batches of the repeated-segment task, with our own gradients.

Adam (Kingma & Ba, 2015) keeps, per weight, running means of the gradient ``m`` and of its
square ``v`` and steps by ``lr · m̂ / (√v̂ + ε)`` (``m̂``, ``v̂`` corrected for their start at
zero). Every random draw comes from one ``np.random.Generator`` in a fixed order (the
weights, then each step's batch), and every update is the same sequence of NumPy operations,
so the same seed gives the same weights, bit for bit, on the same NumPy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from attention_math import positional
from attention_math.toy.data import induction_batch
from attention_math.toy.grad import loss_and_grads
from attention_math.toy.model import Config, ToyModel, init_params

__all__ = ["Hyper", "adam_step", "train"]

Floats = NDArray[np.floating]


@dataclass(frozen=True)
class Hyper:
    """The training hyper-parameters.

    Attributes:
        seed: the one seed every random draw comes from.
        steps: Adam steps (one fresh batch each).
        batch: sequences per batch.
        length: tokens per training sequence.
        lr: Adam's largest step size, reached after a linear warm-up over ``warmup``
            steps, then lowered along a cosine to ``lr · lr_end`` at the last step.
        warmup: steps of linear warm-up.
        lr_end: the last step's size, as a fraction of ``lr``.
        beta1: Adam's decay of the gradient's mean.
        beta2: Adam's decay of the squared gradient's mean.
        eps: Adam's ε.
        min_repeat: shortest repeated segment.
        repeat_power: segment lengths ``m`` are drawn with probability ∝ ``m^(−repeat_power)``.

    Examples:
        >>> from attention_math.toy.train import Hyper
        >>> Hyper(steps=10).steps
        10
    """

    seed: int = 0
    steps: int = 6000
    batch: int = 16
    length: int = 32
    lr: float = 1e-2
    warmup: int = 100
    lr_end: float = 0.05
    beta1: float = 0.9
    beta2: float = 0.99
    eps: float = 1e-8
    min_repeat: int = 2
    repeat_power: float = 0.5

    def as_dict(self) -> dict[str, float | int]:
        """The fields as a plain dict (for the cache key and the page)."""
        return asdict(self)


def adam_step(w: Floats, g: Floats, m: Floats, v: Floats, t: int, lr: float, hyper: Hyper) -> None:
    """One Adam update of ``w`` in place (``m``, ``v`` updated in place; ``t`` counts from 1).

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.train import Hyper, adam_step
        >>> w, m, v = np.zeros(2), np.zeros(2), np.zeros(2)
        >>> adam_step(w, np.array([1.0, -4.0]), m, v, 1, 0.1, Hyper())
        >>> w.round(6)  # the first step moves every weight by lr against its gradient's sign
        array([-0.1,  0.1])
    """
    m *= hyper.beta1
    m += (1 - hyper.beta1) * g
    v *= hyper.beta2
    v += (1 - hyper.beta2) * g * g
    m_hat = m / (1 - hyper.beta1**t)  # the means start at 0: undo that bias
    v_hat = v / (1 - hyper.beta2**t)
    w -= lr * m_hat / (np.sqrt(v_hat) + hyper.eps)


def train(config: Config | None = None, hyper: Hyper | None = None) -> ToyModel:
    """Train a model from scratch (no cache: see ``attention_math.toy.load``).

    Examples:
        >>> from attention_math.toy.model import Config
        >>> from attention_math.toy.train import Hyper, train
        >>> m = train(Config(vocab=8, d_model=8, n_ctx=12), Hyper(steps=3, batch=2, length=12))
        >>> m.history["loss"].shape
        (3,)
    """
    config = Config() if config is None else config
    hyper = Hyper() if hyper is None else hyper
    if hyper.length > config.n_ctx:
        raise ValueError(f"hyper.length = {hyper.length} exceeds config.n_ctx = {config.n_ctx}")
    # BLAS on one thread: these matrices are small, and a second thread burns CPU for nothing
    with threadpool_limits(limits=1, user_api="blas"):
        return _train(config, hyper)


def _train(config: Config, hyper: Hyper) -> ToyModel:
    rng = np.random.default_rng(hyper.seed)
    params = init_params(config, rng)
    pos = positional.sinusoidal(config.n_ctx, config.d_model, base=config.pos_base)
    weights = params.as_dict()  # the arrays themselves: Adam updates them in place
    m = {n: np.zeros_like(w) for n, w in weights.items()}
    v = {n: np.zeros_like(w) for n, w in weights.items()}
    history: dict[str, Floats] = {
        k: np.empty(hyper.steps) for k in ("loss", "loss_repeat", "loss_other")
    }
    for step in range(hyper.steps):
        tokens, repeat = induction_batch(
            rng, hyper.batch, hyper.length, config.vocab, hyper.min_repeat, power=hyper.repeat_power
        )  # (batch, L), (batch, L−1)
        # each sequence starts at a random place in the positional table: a head must then
        # do the same thing at every position (a key late in one sequence is early in
        # another), so "attend to the previous token" is learned for all of them
        start = rng.integers(0, config.n_ctx - hyper.length + 1, size=hyper.batch)  # (batch,)
        where = pos[start[:, None] + np.arange(hyper.length)]  # (batch, L, d_model)
        loss, grads, nll = loss_and_grads(params, where, config, tokens)
        history["loss"][step] = loss
        history["loss_repeat"][step] = nll[repeat].mean()
        history["loss_other"][step] = nll[~repeat].mean()
        lr = hyper.lr * min(1.0, (step + 1) / max(hyper.warmup, 1))
        lr *= hyper.lr_end + (1 - hyper.lr_end) * (1 + np.cos(np.pi * step / hyper.steps)) / 2
        for n, g in grads.as_dict().items():
            adam_step(weights[n], g, m[n], v[n], step + 1, lr, hyper)
    return ToyModel(config, params, history, hyper.as_dict())
