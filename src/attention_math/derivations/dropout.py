"""Dropout on the attention weights, exactly: the expectation over every Bernoulli mask.

Inverted dropout keeps each weight ``P_ij`` with probability ``1 − p`` and divides the kept
ones by ``1 − p``. For a row of ``n`` weights there are ``2ⁿ`` masks; summing the dropped
output over all of them, each with its probability ``(1 − p)^kept · p^dropped``, gives the
undropped output exactly (`dropout_expectation`). The row's sum is no longer 1: its
expectation is 1 and its variance ``p/(1 − p) · Σ_j P_ij²``. `check_expectation` repeats the
enumeration in NumPy with `numeric.attention`'s weights and cross-checks it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import sympy as sp

from attention_math.crosscheck import CrossCheck, crosscheck

__all__ = ["check_expectation", "dropout_expectation"]


def dropout_expectation(
    weights: Sequence[sp.Expr], values: sp.Matrix, p: sp.Expr | None = None
) -> dict[str, sp.Expr | sp.Matrix]:
    """Expectation and variance of one dropped row, over all ``2ⁿ`` masks, in SymPy.

    Args:
        weights: one row of weights ``P_i1 … P_in`` (symbols or numbers).
        values: the value rows, ``n × d_v``.
        p: the drop probability (default: a symbol ``p`` in ``(0, 1)``).

    Raises:
        AssertionError: if the expectation is not the undropped output (the derivation failed).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.dropout import dropout_expectation
        >>> a, b = sp.symbols("a b", positive=True)
        >>> r = dropout_expectation([a, b], sp.Matrix([[1], [2]]))
        >>> r["E[output]"], r["E[row sum]"], sp.factor(r["Var[row sum]"])
        (Matrix([[a + 2*b]]), a + b, -p*(a**2 + b**2)/(p - 1))
    """
    n = len(weights)
    if values.rows != n:
        raise ValueError(f"values must have one row per weight ({n}), got {values.rows}")
    p = sp.Symbol("p", positive=True) if p is None else p
    w = sp.Matrix([list(weights)])  # (1, n)
    mean_out = sp.zeros(1, values.cols)
    mean_sum = sp.Integer(0)
    mean_sq = sp.Integer(0)
    for keep in itertools.product((0, 1), repeat=n):
        prob = sp.Mul(*((1 - p) if z else p for z in keep))
        dropped = sp.Matrix([[z * wj / (1 - p) for z, wj in zip(keep, weights, strict=True)]])
        mean_out += prob * dropped * values
        row_sum = sp.Add(*dropped)
        mean_sum += prob * row_sum
        mean_sq += prob * row_sum**2
    mean_out = mean_out.applyfunc(sp.simplify)
    undropped = w * values
    if any(sp.simplify(e) for e in mean_out - undropped):
        raise AssertionError("the expected dropped output is not the undropped one")
    mean_sum = sp.simplify(mean_sum)
    var = sp.simplify(mean_sq - mean_sum**2)
    closed = p / (1 - p) * sp.Add(*(wj**2 for wj in weights))
    if sp.simplify(var - closed) != 0:
        raise AssertionError("the variance of the row sum is not p/(1 − p)·Σ P²")
    return {
        "E[output]": mean_out,
        "undropped output": undropped,
        "E[row sum]": mean_sum,
        "Var[row sum]": var,
        "masks": sp.Integer(2**n),
        "P[row sum = 0]": p**n,
    }


def check_expectation(
    q: sp.Matrix, k: sp.Matrix, v: sp.Matrix, p: sp.Rational, *, label: str = "E[dropout]"
) -> CrossCheck:
    """The average of ``numeric.attention``'s dropped output over every mask of every row,
    each weighted by its probability (NumPy), against the exact undropped output (SymPy).

    Raises:
        CrossCheckError: if they differ by more than 16 ε.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.dropout import check_expectation
        >>> q = k = sp.eye(2); v = sp.Matrix([[1, 2], [3, 4]])
        >>> check_expectation(q, k, v, sp.Rational(1, 4)).passed
        True
    """
    import numpy as np

    from attention_math import symbolic
    from attention_math.numeric import attention_weights

    exact = symbolic.attention(q, k, v)
    qn, kn, vn = (np.array(m, dtype=np.float64) for m in (q, k, v))
    w = attention_weights(qn, kn, vn)  # (L_q, L_k): undropped weights
    pf = float(p)
    n_k = w.shape[-1]
    mean = np.zeros((w.shape[0], vn.shape[1]))  # (L_q, d_v)
    for keep in itertools.product((0.0, 1.0), repeat=n_k):  # each row's mask, one at a time
        z = np.array(keep)  # (L_k,)
        prob = np.prod(np.where(z == 1, 1 - pf, pf))
        mean += prob * ((w * z / (1 - pf)) @ vn)
    return crosscheck(exact, mean, label=label)
