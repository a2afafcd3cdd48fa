"""The 768-dimensional causal notebook ("Self-Attention Mechanism for One Head"): which
softmax produced its numbers.

The notebook calls ``scipy.special.softmax(scaled + M)`` without ``axis``, and SciPy then
normalises over *all* entries of the matrix, not over each row. This module shows that from
the printed numbers alone: the weights the printed output implies (solved from the printed
columns of ``V`` and ``new_V``) against the weights each normalisation gives for the
printed scaled scores. Its random inputs cannot be recovered, so `reproduce` reruns
the example with a seeded generator and the correct per-row softmax.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from attention_math import numeric, symbolic
from attention_math.crosscheck import crosscheck
from attention_math.examples import NOTEBOOK_768, Example

__all__ = [
    "Reproduction",
    "implied_weights",
    "normalisations",
    "reproduce",
    "whole_matrix_weight",
]


def normalisations(ex: Example = NOTEBOOK_768) -> dict[str, sp.Matrix]:
    """Exact weights of ``scaled + M`` under each normalisation of the exponentials.

    Keys: ``"per row"`` (the definition of attention), ``"whole matrix"`` (what
    ``scipy.special.softmax`` does without ``axis``) and ``"per column"``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.causal768 import normalisations
        >>> w = normalisations()
        >>> [sp.simplify(sum(w["per row"].row(i))) for i in range(3)]
        [1, 1, 1]
        >>> sp.simplify(sum(w["whole matrix"]))
        1
    """
    z = ex.exact("scaled")
    if ex.is_causal:
        z = z.applyfunc(lambda e: e)
        for i in range(z.rows):
            for j in range(i + 1, z.cols):
                z[i, j] = -sp.oo
    e = z.applyfunc(lambda t: sp.S.Zero if t == -sp.oo else sp.exp(t))
    total = sum(e)
    return {
        "per row": symbolic.softmax(z),
        "whole matrix": e / total,
        "per column": symbolic.softmax(z, axis=0),
    }


def _expand(term: sp.Expr, limits: tuple[tuple[sp.Symbol, sp.Expr, sp.Expr], ...]) -> sp.Expr:
    """The finite sum of ``term`` over ``limits`` (innermost first, as in ``Sum.limits``)."""
    if not limits:
        return term
    *inner, (var, lo, hi) = limits
    return sp.Add(
        *(
            _expand(
                term.subs(var, k), tuple((w, a.subs(var, k), b.subs(var, k)) for w, a, b in inner)
            )
            for k in range(int(lo), int(hi) + 1)
        )
    )


def whole_matrix_weight(ex: Example = NOTEBOOK_768) -> tuple[sp.Expr, sp.Expr]:
    r"""The formula of the first weight under the whole-matrix softmax, and its exact value.

    The denominator sums ``e^{S_ij}`` over every entry the causal mask keeps, *all* rows
    ``i`` and ``j ≤ i``; a per-row denominator would sum over ``j ≤ 1`` only and give 1.
    The value substitutes the printed scaled scores and is checked against
    `normalisations` (a mismatch raises).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.causal768 import whole_matrix_weight
        >>> formula, value = whole_matrix_weight()
        >>> print(sp.latex(formula))
        \frac{e^{{S}_{1,1}}}{\sum_{\substack{1 \leq j \leq i\\1 \leq i \leq 3}} e^{{S}_{i,j}}}
        >>> round(float(value), 4)
        0.1737
    """
    s = sp.IndexedBase("S")
    i, j = sp.symbols("i j", integer=True, positive=True)
    n = ex.exact("scaled").rows
    keep = (j, sp.Integer(1), i) if ex.is_causal else (j, sp.Integer(1), sp.Integer(n))
    total = sp.Sum(sp.exp(s[i, j]), keep, (i, 1, n))  # every unmasked entry of the matrix
    formula = sp.exp(s[1, 1]) / total
    scores = ex.exact("scaled")  # (L, L)
    entries = {s[a + 1, b + 1]: scores[a, b] for a in range(n) for b in range(n)}
    value = (sp.exp(s[1, 1]) / _expand(total.function, total.limits)).xreplace(entries)
    if sp.simplify(value - normalisations(ex)["whole matrix"][0, 0]) != 0:
        raise ArithmeticError("the whole-matrix formula disagrees with the normalised weights")
    return formula, value


def implied_weights(ex: Example = NOTEBOOK_768) -> tuple[NDArray[np.float64], float]:
    """The weights the printed output implies, and the largest residual of the fit.

    Row ``i`` of ``new_V`` is ``Σ_{k ≤ i} w_ik · V_k`` (causal), so the printed columns of
    ``V`` and ``new_V`` give 20 equations for at most 3 unknowns per row: least squares.

    Examples:
        >>> from attention_math.causal768 import implied_weights
        >>> w, residual = implied_weights()
        >>> w.sum(axis=1).round(3)    # per-row weights would sum to 1
        array([0.174, 0.334, 0.493])
        >>> residual < 1e-6
        True
    """
    v = ex.numeric("v")  # (L, printed columns)
    out = np.array(
        [[float(sp.Rational(s)) for s in c.published] for c in ex.claims if c.quantity == "output"]
    )  # (L, printed columns)
    n = len(v)
    w = np.zeros((n, n))
    residual = 0.0
    for i in range(n):
        keys = i + 1 if ex.is_causal else n
        a = v[:keys].T  # (columns, keys)
        sol = np.linalg.lstsq(a, out[i], rcond=None)[0]
        w[i, :keys] = sol
        residual = max(residual, float(np.abs(a @ sol - out[i]).max()))
    return w, residual


@dataclass(frozen=True)
class Reproduction:
    """The notebook rerun with seeded inputs, correctly and as published."""

    seed: int
    q: NDArray[np.float64]  # (L, d_k)
    k: NDArray[np.float64]  # (L, d_k)
    v: NDArray[np.float64]  # (L, d_v)
    scaled: NDArray[np.float64]  # (L, L)
    weights: NDArray[np.float64]  # (L, L), per row: the correct weights
    output: NDArray[np.float64]  # (L, d_v)
    weights_whole: NDArray[np.float64]  # (L, L), normalised over the whole matrix
    output_whole: NDArray[np.float64]  # (L, d_v)
    exact_weights: sp.Matrix  # the correct weights, exactly, from the float inputs
    checks: tuple[str, ...]  # the cross-check reports


def _columns(cols: list[int]) -> str:
    """``"column 1"``, ``"columns 1 and 2"``, ``"columns 1, 2 and 768"``; ``cols`` are 0-based."""
    names = [str(c + 1) for c in cols]
    if len(names) == 1:
        return f"column {names[0]}"
    return f"columns {', '.join(names[:-1])} and {names[-1]}"


def reproduce(seed: int = 0, length: int = 3, d: int = 768) -> Reproduction:
    """Rerun the notebook with ``numpy.random.default_rng(seed)`` inputs, cross-checked.

    The exact side treats the float64 inputs as exact rationals; the weights are checked
    exactly, and the output through them (``exact weights · V`` in exact arithmetic) on
    columns 1, 2 and ``d`` (those of them that exist and are distinct).

    Examples:
        >>> from attention_math.causal768 import reproduce
        >>> r = reproduce(seed=0)
        >>> r.q.shape, r.output.shape
        ((3, 768), (3, 768))
        >>> bool((r.output[0] == r.v[0]).all())   # the first token sees only itself
        True
        >>> r.weights.sum(axis=1)
        array([1., 1., 1.])
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if length < 1 or d < 1:
        raise ValueError(f"length and d must be positive, got length={length}, d={d}")
    rng = np.random.default_rng(seed)
    q, k, v = (rng.random((length, d)) for _ in range(3))  # each (L, d), like np.random.rand
    mask = numeric.causal_mask(length)
    output = numeric.attention(q, k, v, mask=mask)  # (L, d)
    weights = numeric.attention_weights(q, k, v, mask=mask)  # (L, L)
    scaled = q @ k.T / np.sqrt(d)  # (L, L)
    e = np.exp(np.where(mask, scaled - scaled.max(), -np.inf))
    weights_whole = e / e.sum()  # what the notebook's softmax(scaled + M) computes
    # Exact: the float inputs as rationals; q kᵀ exactly, then the exact softmax.
    qf, kf = ([[Fraction(x) for x in row] for row in a.tolist()] for a in (q, k))  # exact
    dots = [[sum(a * b for a, b in zip(qi, kj, strict=True)) for kj in kf] for qi in qf]
    z = sp.Matrix(
        length,
        length,
        lambda i, j: (
            sp.Rational(dots[i][j].numerator, dots[i][j].denominator) / sp.sqrt(d)
            if j <= i
            else -sp.oo
        ),
    )
    exact_weights = symbolic.softmax(z)
    checks = [str(crosscheck(exact_weights, weights, label="weights"))]
    cols = sorted({0, 1, d - 1} & set(range(d)))  # at most three columns: the build stays fast
    exact_out = exact_weights * symbolic.as_matrix(v[:, cols], "v")
    label = f"output, {_columns(cols)}"
    checks.append(str(crosscheck(exact_out, output[:, cols], label=label)))
    return Reproduction(
        seed,
        q,
        k,
        v,
        scaled,
        weights.astype(np.float64, copy=False),  # float64 already (the inputs are): no copy
        output.astype(np.float64, copy=False),
        weights_whole,
        weights_whole @ v,
        exact_weights,
        tuple(checks),
    )
