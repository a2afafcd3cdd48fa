"""Exercises: Softmax. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np, numeric
from attention_math.exercises.build import (
    drop_coinciding,
    float_array,
)
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]

L2, L3 = sp.log(2), sp.log(3)  # logarithms keep the weights rational


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    s = sp.Matrix([[0, L2, L3]])  # one row of scores
    S = sp.Matrix([[0, L3], [L2, 0]])  # a matrix of scores
    p1, p2 = sp.symbols("p_1 p_2", positive=True)
    a = sp.Symbol("a", real=True)
    p = sp.Matrix([p1, p2])
    exps = S.applyfunc(sp.exp)
    return [
        Exercise(
            id="softmax-logs",
            chapter="softmax",
            title="Softmax of logarithms",
            statement="Compute $\\operatorname{softmax}(s)$ exactly.",
            answer=symbolic.softmax(s),
            inputs={"s": s},
            mistakes=(Mistake("unnormalized", s.applyfunc(sp.exp)),),
            numeric=lambda: numeric.softmax(float_array(s)),
            kind="weights",
            explanation=(
                r"$e^{\log n} = n$, so the exponentials are $1, 2, 3$; divide by their sum."
            ),
            solution=_solve_softmax_logs,
        ),
        Exercise(
            id="softmax-shift",
            chapter="softmax",
            title="Large scores",
            statement=(
                "Compute $\\operatorname{softmax}(s)$ exactly. (Hint: subtracting the same "
                "number from every entry does not change the softmax.)"
            ),
            answer=symbolic.softmax(sp.Matrix([[1000, 1000 + L3]])),
            inputs={"s": sp.Matrix([[1000, 1000 + L3]])},
            mistakes=(Mistake("unnormalized", sp.Matrix([[1, 3]])),),
            numeric=lambda: numeric.softmax(np.array([1000.0, 1000.0 + np.log(3.0)])),
            # float64 stores 1000 + ln 3 only to ulp(1000) = 512 ε; the weights inherit it
            bound_eps=256.0,
            kind="weights",
            explanation=(
                r"Subtract the largest entry: $\operatorname{softmax}(s) = "
                r"\operatorname{softmax}(s - \max s)$, because the common factor $e^{-\max s}$ "
                r"cancels. The shifted row is $(-\log 3, 0)$."
            ),
            solution=_solve_softmax_shift,
            remark=_remark_softmax_shift,
        ),
        Exercise(
            id="softmax-rows",
            chapter="softmax",
            title="Row by row",
            statement="Compute the row-wise softmax of the score matrix $S$ exactly.",
            answer=symbolic.softmax(S),
            inputs={"S": S},
            mistakes=drop_coinciding(
                symbolic.softmax(S),
                [
                    Mistake("softmax_axis", symbolic.softmax(S, axis=0)),
                    Mistake(
                        "softmax_axis",
                        exps / sum(exps),
                        "You normalised over the whole matrix instead of each row.",
                    ),
                ],
            ),
            numeric=lambda: numeric.softmax(float_array(S)),
            kind="weights",
            explanation=("Row by row: $(1, 3)/4$ and $(2, 1)/3$."),
            solution=_solve_softmax_rows,
        ),
        Exercise(
            id="softmax-jacobian",
            chapter="softmax",
            title="The Jacobian of a two-entry softmax",
            statement=(
                "Let $p = \\operatorname{softmax}(s_1, s_2)$. Give the Jacobian "
                "$J_{ij} = \\partial p_i / \\partial s_j$ in terms of `p_1` and `p_2`."
            ),
            answer=sp.diag(p1, p2) - p * p.T,
            mistakes=(Mistake("missing_term", sp.diag(p1, p2)),),
            symbols={"p_1": p1, "p_2": p2},
            subs={p2: 1 - p1},
            kind="expression",
            explanation=(
                r"Differentiate $p_i = e^{s_i}/\sum_l e^{s_l}$: the quotient rule gives "
                r"$\partial p_i/\partial s_j = p_i(\delta_{ij} - p_j)$, i.e. $J = "
                r"\operatorname{diag}(p) - pp^\top$. SymPy differentiates and confirms it."
            ),
            solution=_solve_softmax_jacobian,
        ),
        Exercise(
            id="softmax-sigmoid",
            chapter="softmax",
            title="Two scores make a sigmoid",
            statement=(
                "Give the first entry of $\\operatorname{softmax}(a, 0)$ as a function of `a`."
            ),
            answer=symbolic.softmax(sp.Matrix([[a, 0]]))[0],
            mistakes=(Mistake("unnormalized", sp.exp(a)),),
            symbols={"a": a},
            kind="expression",
            explanation=(
                "$e^a/(e^a + e^0)$; divide numerator and denominator by $e^a$ to get $1/(1 + "
                r"e^{-a}) = \operatorname{sigmoid}(a)$, the logistic sigmoid."
            ),
            solution=_solve_softmax_sigmoid,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_softmax_logs(ex: Exercise) -> object:
    E = ex.inputs["s"].applyfunc(sp.exp)  # (1, 2, 3)
    return E / sum(E)


def _solve_softmax_shift(ex: Exercise) -> object:
    s = ex.inputs["s"]
    shifted = s - sp.ones(1, 2) * max(s)  # (-log 3, 0): nothing overflows
    E = shifted.applyfunc(sp.exp)
    return E / sum(E)


def _solve_softmax_rows(ex: Exercise) -> object:
    E = ex.inputs["S"].applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P


def _solve_softmax_jacobian(ex: Exercise) -> object:
    s = sp.Matrix([sp.symbols("s_1 s_2", real=True)])
    p = symbolic.softmax(s)  # (1, 2), in terms of the scores s
    J_s = sp.Matrix(2, 2, lambda i, j: sp.diff(p[i], s[j]))
    p_1, p_2 = sp.symbols("p_1 p_2")
    P = sp.Matrix([p_1, p_2])
    J = sp.diag(p_1, p_2) - P * P.T
    assert all(sp.simplify(d) == 0 for d in J_s - J.subs({p_1: p[0], p_2: p[1]}))
    return J


def _solve_softmax_sigmoid(ex: Exercise) -> object:
    a = sp.Symbol("a", real=True)
    first = sp.exp(a) / (sp.exp(a) + sp.exp(0))
    divided = 1 / (1 + sp.exp(-a))  # numerator and denominator divided by e^a
    assert sp.simplify(first - divided) == 0
    return divided


def _remark_softmax_shift(ex: Exercise) -> str:
    r"""Why NumPy is tens of ε off here and not one: $1000 + \log 3$ is not a float64 number,
    and storing it moves it before any softmax runs. To first order the weights then move by
    $J\delta$ with $J = \operatorname{diag}(p) - pp^\top$:"""
    import numpy as np

    from attention_math.derivations.softmax_stability import input_rounding
    from attention_math.symbolic import latex

    r = input_rounding(ex.inputs["s"])
    return (
        f"The stored second score is off by $\\delta_2 = {r.delta_eps[1]:.4g}\\,\\varepsilon$ "
        f"(float64 numbers near 1000 are "
        f"${np.spacing(1000.0) / np.finfo(np.float64).eps:g}\\,\\varepsilon$ apart); "
        f"$p_2(1 - p_2) = {latex(r.jacobian[1, 1])}$, so the weights move by "
        f"${abs(r.moved_eps[1]):.3g}\\,\\varepsilon$, which is "
        f"${r.normwise_eps:.3g}\\,\\varepsilon$ relative to the largest weight, the units of "
        "the check above."
    )
