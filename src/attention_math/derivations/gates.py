"""Sinks and gates, exactly: a learned sink logit is softmax with one extra column.

* ``sink_softmax(z, s)_i = e^{z_i} / (Σ_j e^{z_j} + e^{s})`` equals ``softmax([z, s])`` with
  the last entry dropped (`sink_is_padded_softmax`): one more key, with score ``s`` for every
  query and value ``0`` (`sink_is_zero_value_key`).
* ``s = 0`` is softmax₁ (`sink_zero_is_softmax_one`), the attention sinks page's built-in sink.
* It is an ordinary softmax head scaled by a gate: ``σ(LSE(z) − s) · softmax(z)``
  (`sink_is_gated_softmax`), the scalar sibling of Qwen3-Next's sigmoid output gate.
* The sink's weight ``w = σ(s − LSE(z))`` has ``∂w/∂s = w (1 − w)`` (`sink_weight_slope`).

The NumPy side is [`gates`][attention_math.gates]; `crosscheck_sink` compares the two and raises
on a mismatch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy as sp

from attention_math import gates, symbolic
from attention_math.crosscheck import CrossCheck, crosscheck
from attention_math.derivations._once import derived_once
from attention_math.derivations.decoding import softmax_one
from attention_math.symbolic import is_zero

__all__ = [
    "crosscheck_sink",
    "lse",
    "sink_is_gated_softmax",
    "sink_is_padded_softmax",
    "sink_is_zero_value_key",
    "sink_softmax",
    "sink_weight",
    "sink_weight_slope",
    "sink_zero_is_softmax_one",
    "symbols",
]

s = sp.Symbol("s", real=True)


def symbols(n: int) -> tuple[list[sp.Symbol], sp.Symbol]:
    """Generic real scores ``z_1 … z_n`` and the sink logit ``s``.

    Examples:
        >>> from attention_math.derivations.gates import symbols
        >>> symbols(2)
        ([z_1, z_2], s)
    """
    return [sp.Symbol(f"z_{i}", real=True) for i in range(1, n + 1)], s


def lse(z: Sequence[object]) -> sp.Expr:
    """``log Σ_j e^{z_j}``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.gates import lse
        >>> lse([0, sp.log(3)])
        log(4)
    """
    return sp.simplify(sp.log(sp.Add(*(sp.exp(sp.sympify(x)) for x in z))))


def sink_softmax(z: Sequence[object], sink: object) -> list[sp.Expr]:
    """``e^{z_i} / (Σ_j e^{z_j} + e^{s})``, exactly.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.gates import sink_softmax
        >>> sink_softmax([0, sp.log(2)], sp.log(5))
        [1/8, 1/4]
    """
    return list(_sink_softmax(tuple(z), sink))  # a new list: the kept row is a tuple


@derived_once
def _sink_softmax(z: tuple[object, ...], sink: object) -> tuple[sp.Expr, ...]:
    e = [sp.exp(sp.sympify(x)) for x in z]
    total = sp.Add(*e) + sp.exp(sp.sympify(sink))
    return tuple(sp.simplify(x / total) for x in e)


@derived_once
def sink_weight(z: Sequence[object], sink: object) -> sp.Expr:
    """The sink's weight ``e^{s} / (Σ_j e^{z_j} + e^{s}) = σ(s − LSE(z))``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.gates import sink_weight
        >>> sink_weight([0, sp.log(2)], sp.log(5))
        5/8
    """
    return sp.simplify(1 - sp.Add(*sink_softmax(z, sink)))


@derived_once
def sink_is_padded_softmax(n: int = 3) -> bool:
    """True when ``sink_softmax(z, s)`` is ``softmax([z, s])`` without its last entry, for
    generic ``z`` and ``s``.

    Examples:
        >>> from attention_math.derivations.gates import sink_is_padded_softmax
        >>> sink_is_padded_softmax(3)
        True
    """
    z, sk = symbols(n)
    padded = symbolic.softmax(sp.Matrix([[*z, sk]]))
    return all(is_zero(a - padded[0, i]) for i, a in enumerate(sink_softmax(z, sk)))


@derived_once
def sink_zero_is_softmax_one(n: int = 3) -> bool:
    """True when ``sink_softmax(z, 0)`` is softmax₁ of the attention sinks page.

    Examples:
        >>> from attention_math.derivations.gates import sink_zero_is_softmax_one
        >>> sink_zero_is_softmax_one(3)
        True
    """
    z, _ = symbols(n)
    return all(is_zero(a - b) for a, b in zip(sink_softmax(z, 0), softmax_one(z), strict=True))


@derived_once
def sink_is_gated_softmax(n: int = 3) -> bool:
    """True when ``sink_softmax(z, s) = σ(LSE(z) − s) · softmax(z)``, for generic ``z``, ``s``.

    Examples:
        >>> from attention_math.derivations.gates import sink_is_gated_softmax
        >>> sink_is_gated_softmax(3)
        True
    """
    z, sk = symbols(n)
    total = sp.Add(*(sp.exp(x) for x in z))
    gate = symbolic.sigmoid(sp.log(total) - sk)
    plain = symbolic.softmax(sp.Matrix([z]))
    return all(
        is_zero(sp.expand_log(a - gate * plain[0, i], force=True))
        for i, a in enumerate(sink_softmax(z, sk))
    )


@derived_once
def sink_is_zero_value_key(n: int = 2, d_v: int = 2) -> bool:
    """True when attention over the keys plus one extra key (score ``s`` for every query,
    value ``0``) gives ``Σ_i sink_softmax(z, s)_i v_i``: a learned sink logit is a sink token
    whose score does not depend on the query and whose value is exactly zero.

    Examples:
        >>> from attention_math.derivations.gates import sink_is_zero_value_key
        >>> sink_is_zero_value_key(2, 2)
        True
    """
    z, sk = symbols(n)
    v = symbolic.generic_matrix("v", n, d_v)
    extra = symbolic.softmax(sp.Matrix([[*z, sk]])) * v.col_join(sp.zeros(1, d_v))  # (1, d_v)
    w = sp.Matrix([sink_softmax(z, sk)]) * v  # (1, d_v)
    return all(is_zero(a - b) for a, b in zip(extra, w, strict=True))


@derived_once
def sink_weight_slope(n: int = 2) -> sp.Expr:
    """``∂w/∂s − w (1 − w)`` for the sink weight ``w``, simplified: zero, for generic ``z``.

    Examples:
        >>> from attention_math.derivations.gates import sink_weight_slope
        >>> sink_weight_slope(3)
        0
    """
    z, sk = symbols(n)
    w = sink_weight(z, sk)
    return sp.simplify(sp.diff(w, sk) - w * (1 - w))


@derived_once
def crosscheck_sink(z: Sequence[object], sink: object) -> CrossCheck:
    """`sink_softmax` exactly against [`gates.sink_softmax`][attention_math.gates.sink_softmax]
    in float64; raises ``CrossCheckError`` if they disagree.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.gates import crosscheck_sink
        >>> crosscheck_sink([0, sp.log(2), 1], -1).error_eps < 4
        True
    """
    exact = sp.Matrix([sink_softmax(z, sink)])
    numeric = gates.sink_softmax(
        np.array([[float(sp.N(x, 20)) for x in z]]), float(sp.N(sp.sympify(sink), 20))
    )
    return crosscheck(exact, numeric, label="sink softmax")
