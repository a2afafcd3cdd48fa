"""Non-zero means and the scores of one row: a key mean shifts the row, a query mean widens it.

The softmax of a row ignores a constant added to every score of that row, so what matters is
the spread of the scores *within* a row, that is, given the query ``q``. With the key entries
``k_l`` uncorrelated, of mean ``μ_k`` and variance ``σ_k²`` (the query ``q`` held fixed):

* ``E[q·k | q] = μ_k Σ_l q_l``: the same for every key of the row, so the key mean only adds a
  constant to the row;
* ``Var(q·k | q) = σ_k² Σ_l q_l²``: no ``μ_k`` in it; averaged over queries of mean ``μ_q``
  and variance ``σ_q²`` it is ``d_k σ_k² (σ_q² + μ_q²)``, so a query mean widens the row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from attention_math.derivations.scaling import d_k, mu_k, mu_q, sigma_k, sigma_q
from attention_math.numeric import softmax

__all__ = ["EXPERIMENT", "MeanShift", "MeanShiftSetup", "RowMoments", "mean_shift", "row_moments"]


@dataclass(frozen=True)
class RowMoments:
    """The scores ``q·k_j`` of one row, given its query ``q``, and their average spread."""

    mean_given_q: sp.Expr  # E[q·k | q]: one constant for the whole row
    variance_given_q: sp.Expr  # Var(q·k | q): the spread within the row
    expected_variance: sp.Expr  # E_q[Var(q·k | q)]


def row_moments(
    mu: tuple[sp.Expr, sp.Expr] = (mu_q, mu_k),
    sigma: tuple[sp.Expr, sp.Expr] = (sigma_q, sigma_k),
    d: sp.Expr = d_k,
) -> RowMoments:
    """Mean and variance of ``q·k`` given ``q`` (key entries uncorrelated), then averaged over q.

    Expectation over ``k`` only, ``q`` held as symbols: ``E[q_l k_l | q] = q_l μ_k``,
    ``Var(q_l k_l | q) = q_l² σ_k²``, and different coordinates do not covary.

    Examples:
        >>> from attention_math.derivations.mean_shift import row_moments
        >>> m = row_moments()
        >>> m.mean_given_q
        mu_k*Sum(q[l], (l, 1, d_k))
        >>> m.variance_given_q
        sigma_k**2*Sum(q[l]**2, (l, 1, d_k))
        >>> m.expected_variance
        d_k*sigma_k**2*(mu_q**2 + sigma_q**2)
    """
    m_q, m_k = (sp.sympify(x) for x in mu)
    s_q, s_k = (sp.sympify(x) for x in sigma)
    q, idx = sp.IndexedBase("q"), sp.Symbol("l", integer=True, positive=True)
    k1, k2 = sp.symbols("k_1 k_2", real=True)  # two different coordinates of the key
    e_k = {k1: m_k, k2: m_k, k1**2: s_k**2 + m_k**2, k1 * k2: m_k**2}  # uncorrelated entries

    def expect_k(expr: sp.Expr) -> sp.Expr:  # E over k, q fixed: replace each k-monomial
        return sp.expand(expr).xreplace({k1**2: e_k[k1**2], k1 * k2: e_k[k1 * k2]}).subs(e_k)

    q1, q2 = q[1], q[2]
    mean1 = expect_k(q1 * k1)  # q_1 μ_k
    var1 = sp.expand(expect_k((q1 * k1) ** 2) - mean1**2)  # q_1² σ_k²
    cov12 = sp.expand(expect_k(q1 * k1 * q2 * k2) - mean1 * expect_k(q2 * k2))
    if cov12 != 0:
        raise ArithmeticError(f"uncorrelated key entries must not covary, got {cov12}")
    mean = m_k * sp.Sum(sp.simplify(mean1 / m_k).subs(q1, q[idx]), (idx, 1, d)) if m_k != 0 else 0
    variance = s_k**2 * sp.Sum(sp.simplify(var1 / s_k**2).subs(q1, q[idx]), (idx, 1, d))
    expected = sp.factor(d * var1.subs(q1**2, s_q**2 + m_q**2))  # E[q_l²] = σ_q² + μ_q²
    return RowMoments(sp.sympify(mean), variance, expected)


@dataclass(frozen=True)
class MeanShiftSetup:
    """The sizes of the experiment the site shows (package data, not typed on the page)."""

    d: int  # d_k, the width of queries and keys
    n_keys: int  # keys per row (L_k)
    rows: int  # rows drawn, one query each
    shift: float  # the mean added to every key entry, or to every query entry
    seed: int  # of numpy.random.default_rng
    key_bound_eps: float  # the most a key mean may move a weight: float64 rounding, in ε


EXPERIMENT = MeanShiftSetup(d=64, n_keys=16, rows=2000, shift=1.0, seed=0, key_bound_eps=64.0)
"""The experiment on the page Why it works: scaling (non-zero means)."""


@dataclass(frozen=True)
class MeanShift:
    """One draw of rows of scaled scores, as drawn, with a key mean and with a query mean."""

    d: int  # d_k
    n_keys: int  # keys per row
    rows: int  # rows drawn
    shift: float
    weight_change_key: float  # max |P(k + μ) − P(k)|, in units of float64 ε
    spread: dict[str, float]  # mean within-row variance of the scaled scores
    largest_weight: dict[str, float]  # mean largest weight of a row


def mean_shift(
    rng: np.random.Generator,
    shift: float = EXPERIMENT.shift,
    d: int = EXPERIMENT.d,
    n_keys: int = EXPERIMENT.n_keys,
    rows: int = EXPERIMENT.rows,
) -> MeanShift:
    """Standard normal ``q``, ``k``; then ``μ_k = shift`` on the keys, or ``μ_q = shift``.

    The defaults are the sizes of ``EXPERIMENT`` (the experiment on the page).

    Raises:
        ValueError: unless ``d > 0`` and ``n_keys > 1`` are integers.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.mean_shift import EXPERIMENT, mean_shift
        >>> r = mean_shift(np.random.default_rng(0), rows=200)
        >>> r.d, r.n_keys, r.rows
        (64, 16, 200)
        >>> r.weight_change_key < EXPERIMENT.key_bound_eps
        True
        >>> r.largest_weight["query mean"] > r.largest_weight["none"]
        True
    """
    if not (isinstance(d, int) and isinstance(n_keys, int) and d > 0 and n_keys > 1):
        raise ValueError(f"need integers d > 0 and n_keys > 1, got d={d!r}, n_keys={n_keys!r}")
    q = rng.standard_normal((rows, 1, d))  # (rows, 1, d_k): one query per row
    k = rng.standard_normal((rows, n_keys, d))  # (rows, L_k, d_k)
    cases = {"none": (q, k), "key mean": (q, k + shift), "query mean": (q + shift, k)}
    spread, largest, weights = {}, {}, {}
    for name, (qq, kk) in cases.items():
        s = (qq @ np.swapaxes(kk, -1, -2))[:, 0, :] / np.sqrt(d)  # (rows, L_k)
        weights[name] = softmax(s)  # (rows, L_k)
        spread[name] = float(s.var(axis=1, ddof=1).mean())
        largest[name] = float(weights[name].max(axis=1).mean())
    change = np.abs(weights["key mean"] - weights["none"]).max() / np.finfo(np.float64).eps
    return MeanShift(d, n_keys, rows, shift, float(change), spread, largest)
