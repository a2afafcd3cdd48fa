"""The cost of attention, step by step, as symbolic expressions.

Conventions: a matrix product of an ``(n₁ × n₂)`` by an ``(n₂ × n₃)`` matrix costs ``2n₁n₂n₃``
FLOPs (``n₂`` multiplications and ``n₂`` additions per entry, counting the first addition, as
``numpy.einsum_path`` does); every elementwise operation (scale, mask, subtract, exp, divide)
and every reduction step (max, sum) costs one FLOP per entry it reads. Memory counts the
entries of each intermediate array (multiply by the bytes per entry of the format). All
``h`` heads are counted; ``d_model`` is the width of the inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from attention_math.derivations._once import derived_once

__all__ = [
    "STEPS",
    "Step",
    "crossover",
    "feed_forward_flops",
    "leading_in_L",
    "symbols",
    "total_flops",
    "total_memory",
]

L_q, L_k, d_k, d_v, h, d_model, L = sp.symbols("L_q L_k d_k d_v h d_model L", positive=True)
d_ff = sp.Symbol("d_ff", positive=True)


def symbols() -> dict[str, sp.Symbol]:
    """The size symbols, by name.

    Examples:
        >>> from attention_math.derivations.cost import symbols
        >>> sorted(symbols())
        ['L', 'L_k', 'L_q', 'd_ff', 'd_k', 'd_model', 'd_v', 'h']
    """
    return {str(s): s for s in (L_q, L_k, d_k, d_v, h, d_model, L, d_ff)}


@dataclass(frozen=True)
class Step:
    """One step: what it computes, its FLOPs and the entries of the array it produces."""

    name: str
    formula: str  # LaTeX
    flops: sp.Expr
    memory: sp.Expr


STEPS = (
    Step("query projection", r"Q = X_q W_Q", 2 * L_q * d_model * h * d_k, h * L_q * d_k),
    Step("key projection", r"K = X_{kv} W_K", 2 * L_k * d_model * h * d_k, h * L_k * d_k),
    Step("value projection", r"V = X_{kv} W_V", 2 * L_k * d_model * h * d_v, h * L_k * d_v),
    Step("scores", r"Q^{(i)} K^{(i)\top}", h * 2 * L_q * L_k * d_k, h * L_q * L_k),
    Step("scale", r"\cdot 1/\sqrt{d_k}", h * L_q * L_k, 0),  # in place
    Step("mask", r"+ M", h * L_q * L_k, 0),  # in place
    Step("row max", r"m = \max_j S_{ij}", h * L_q * L_k, h * L_q),
    Step("shift and exp", r"e^{S - m}", 2 * h * L_q * L_k, 0),  # in place
    Step("row sum", r"\lambda_i = \sum_j e^{S_{ij} - m_i}", h * L_q * L_k, h * L_q),
    Step("normalise", r"P = e^{S-m} / \lambda", h * L_q * L_k, 0),  # in place
    Step("weighted sum", r"P^{(i)} V^{(i)}", h * 2 * L_q * L_k * d_v, h * L_q * d_v),
    Step(
        "output projection",
        r"\mathrm{Concat}(\ldots) W_O",
        2 * L_q * h * d_v * d_model,
        L_q * d_model,
    ),
)
"""The steps of multi-head attention in order, each with its FLOPs and the memory it writes."""


@derived_once
def total_flops() -> sp.Expr:
    """All FLOPs of multi-head attention.

    Examples:
        >>> from attention_math.derivations.cost import total_flops, L_q, L_k, d_k, d_v, h
        >>> import sympy as sp
        >>> sp.Poly(total_flops(), L_q, L_k).coeff_monomial(L_q * L_k)
        2*d_k*h + 2*d_v*h + 7*h
    """
    return sp.expand(sp.Add(*(s.flops for s in STEPS)))


@derived_once
def total_memory() -> sp.Expr:
    """Entries of all intermediate arrays (the scores buffer counted once, updated in place).

    Examples:
        >>> from attention_math.derivations.cost import total_memory
        >>> total_memory()
        L_k*L_q*h + L_k*d_k*h + L_k*d_v*h + L_q*d_k*h + L_q*d_model + L_q*d_v*h + 2*L_q*h
    """
    return sp.expand(sp.Add(*(s.memory for s in STEPS)))


def leading_in_L(expr: sp.Expr) -> tuple[int, sp.Expr]:
    """For self-attention (``L_q = L_k = L``): the degree in ``L`` and its coefficient.

    Examples:
        >>> from attention_math.derivations.cost import leading_in_L, total_memory
        >>> leading_in_L(total_memory())
        (2, h)
    """
    e = sp.expand(expr.subs({L_q: L, L_k: L}))
    poly = sp.Poly(e, L)
    return poly.degree(), sp.factor(poly.LC())


@derived_once
def feed_forward_flops() -> sp.Expr:
    """FLOPs of the block's feed-forward network on ``L_q`` tokens: two matrix products,
    ``d_model × d_ff`` and ``d_ff × d_model`` (the activation's FLOPs, ``L_q d_ff``, left out).

    Examples:
        >>> from attention_math.derivations.cost import feed_forward_flops
        >>> feed_forward_flops()
        4*L_q*d_ff*d_model
    """
    return sp.expand(2 * L_q * d_model * d_ff + 2 * L_q * d_ff * d_model)


@derived_once
def crossover(*, with_feed_forward: bool = False) -> sp.Expr:
    """The length ``L*`` of self-attention (``L_q = L_k = L``, ``d_k = d_v = d_model / h``) at
    which the FLOPs that grow like ``L²`` equal those that grow like ``L``: of the attention
    layer alone, or with the feed-forward network of the same block (``d_ff = 4 d_model``, as
    in Vaswani et al.'s base model, 2048 = 4 · 512), whose FLOPs are all linear in ``L``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.cost import crossover, d_model
        >>> crossover()
        8*d_model**2/(4*d_model + 7*h)
        >>> sp.limit(crossover() / d_model, d_model, sp.oo)  # about twice the width
        2
        >>> sp.limit(crossover(with_feed_forward=True) / d_model, d_model, sp.oo)
        6
    """
    sizes = {L_q: L, L_k: L, d_k: d_model / h, d_v: d_model / h}
    f = sp.expand(total_flops().subs(sizes))
    if with_feed_forward:
        f = sp.expand(f + feed_forward_flops().subs({**sizes, d_ff: 4 * d_model}))
    quad, lin = f.coeff(L, 2), f.coeff(L, 1)
    if sp.expand(f - quad * L**2 - lin * L) != 0:
        raise AssertionError(f"FLOPs not of the form a L² + b L: {f}")
    return sp.factor(lin / quad)
