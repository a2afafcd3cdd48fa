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
from attention_math.exercises.steps import fact, step

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
    c = sp.Symbol("c", real=True)
    p3 = sp.Symbol("p_3", positive=True)
    pv = sp.Matrix([p1, p2, p3])  # (3, 1)
    big = sp.Matrix([[1000, 1000 + L3]])
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
        Exercise(
            id="softmax-shift-proof",
            chapter="softmax",
            title="Why a shift changes nothing",
            task="prove",
            statement=(
                "Show that adding the same number $c$ to every score leaves the softmax as it "
                "is: $\\operatorname{softmax}(s + c\\mathbf{1}) = \\operatorname{softmax}(s)$. "
                "Give the ratio $\\operatorname{softmax}(s + c\\mathbf{1})_i / "
                "\\operatorname{softmax}(s)_i$ (it may use `c`)."
            ),
            answer=sp.Integer(1),
            mistakes=(
                Mistake(
                    "unnormalized",
                    sp.exp(c),
                    "The denominator gains the factor e^c as well, and it cancels.",
                ),
            ),
            symbols={"c": c},
            kind="scalar",
            explanation=(
                "1. Each exponential gains the same factor: $e^{s_i + c} = e^c\\,e^{s_i}$.\n"
                "2. So does their sum: $\\sum_l e^{s_l + c} = e^c \\sum_l e^{s_l}$.\n"
                "3. In the quotient the factor $e^c$ cancels: "
                "$\\dfrac{e^c e^{s_i}}{e^c \\sum_l e^{s_l}} = \\dfrac{e^{s_i}}{\\sum_l e^{s_l}}"
                "$, for every $i$ and every $c$, so the ratio is $1$.\n\n"
                "The softmax sees only the differences $s_i - s_j$. That is why the stable "
                "softmax may subtract $\\max s$ before exponentiating, and why a bias shared "
                "by a whole row (a key mean, a query's own norm) does nothing. SymPy checks "
                "each step for three scores."
            ),
            solution=_solve_softmax_shift_proof,
        ),
        Exercise(
            id="softmax-jacobian-rows",
            chapter="softmax",
            title="The Jacobian's rows sum to zero",
            task="prove",
            statement=(
                "For $p = \\operatorname{softmax}(s)$ with three entries, the Jacobian is "
                "$J = \\operatorname{diag}(p) - pp^\\top$. Show that $J$ is symmetric and that "
                "$J\\mathbf{1} = 0$, and explain why it must be so. Give $J\\mathbf{1}$ in "
                "terms of `p_1`, `p_2`, `p_3`."
            ),
            answer=sp.zeros(3, 1),
            mistakes=(Mistake("missing_term", pv),),
            symbols={"p_1": p1, "p_2": p2, "p_3": p3},
            subs={p3: 1 - p1 - p2},
            kind="expression",
            explanation=(
                "1. Differentiate $p_i = e^{s_i}/\\sum_l e^{s_l}$: "
                "$J_{ij} = \\partial p_i/\\partial s_j = p_i(\\delta_{ij} - p_j)$, which is "
                "$\\operatorname{diag}(p) - pp^\\top$.\n"
                "2. Symmetric: $(pp^\\top)^\\top = pp^\\top$ and a diagonal matrix is "
                "symmetric, so $J^\\top = J$.\n"
                "3. $J\\mathbf{1} = p - p\\,(p^\\top\\mathbf{1}) = p\\,(1 - \\sum_l p_l)$, "
                "which is $0$ because the weights sum to one.\n\n"
                "Why it must be so: moving every score by the same $c$ does not change $p$ "
                "(the exercise above), so the derivative of $p$ along $\\mathbf{1}$, which "
                "is $J\\mathbf{1}$, is zero. And $\\sum_i p_i = 1$ for every $s$, so the "
                "derivative of that sum, $\\mathbf{1}^\\top J$, is zero too: with "
                "symmetry, the columns say the same as the rows. The backward pass inherits "
                "it: each row of $dS$ sums to zero."
            ),
            solution=_solve_softmax_jacobian_rows,
        ),
        Exercise(
            id="softmax-logsumexp",
            chapter="softmax",
            title="The log-sum-exp and its maximum",
            task="explain",
            statement=(
                "The log-sum-exp $\\operatorname{lse}(s) = \\log \\sum_i e^{s_i}$ is the "
                "logarithm of the softmax's denominator. For $s$ below, $e^{1000}$ overflows "
                "float64. Show that $\\operatorname{lse}(s) = m + \\operatorname{lse}(s - "
                "m\\mathbf{1})$ with $m = \\max_i s_i$, explain why the right-hand side "
                "cannot overflow, and give $\\operatorname{lse}(s)$ exactly."
            ),
            answer=1000 + sp.log(4),
            inputs={"s": big},
            mistakes=(Mistake("lse_shift", sp.log(4)),),
            numeric=lambda: _lse_float64(),
            kind="scalar",
            explanation=(
                "1. Factor $e^m$ out of the sum: $\\sum_i e^{s_i} = e^m \\sum_i e^{s_i - m}$.\n"
                "2. Take the logarithm of the product: $\\operatorname{lse}(s) = m + \\log "
                "\\sum_i e^{s_i - m}$.\n"
                "3. Every $s_i - m \\le 0$, so every term is at most $1$ and one of them is "
                "$e^0 = 1$: the sum lies between $1$ and $n$, and its logarithm between $0$ "
                "and $\\log n$. Nothing overflows, and nothing underflows to $\\log 0$.\n"
                "4. Here $m = 1000 + \\log 3$ and $s - m = (-\\log 3, 0)$, so the sum is "
                "$1/3 + 1 = 4/3$ and $\\operatorname{lse}(s) = 1000 + \\log 3 + \\log(4/3) = "
                "1000 + \\log 4$.\n\n"
                "The same $m$ is what the online softmax keeps as its running maximum; "
                "$\\operatorname{lse}$ is what FlashAttention stores per row for the "
                "backward pass."
            ),
            solution=_solve_softmax_logsumexp,
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


def _solve_softmax_shift_proof(ex: Exercise) -> object:
    s = sp.Matrix([sp.symbols("s_1:4", real=True)])  # (1, 3): three scores
    c = ex.symbols["c"]
    e = s.applyfunc(sp.exp)  # (1, 3)
    e_c = (s + c * sp.ones(1, 3)).applyfunc(sp.exp)  # (1, 3): the shifted exponentials
    step("each exponential gains e^c", e_c, sp.exp(c) * e)
    step("so does their sum", sum(e_c), sp.exp(c) * sum(e))
    step("e^c cancels in the quotient", e_c / sum(e_c), e / sum(e))
    ratio = step("the ratio is 1", (e_c[0] / sum(e_c)) / (e[0] / sum(e)), sp.Integer(1))
    return ratio


def _solve_softmax_jacobian_rows(ex: Exercise) -> object:
    s = sp.Matrix([sp.symbols("s_1:4", real=True)])  # (1, 3)
    p_s = symbolic.softmax(s)  # (1, 3), in terms of the scores
    p_1, p_2, p_3 = (ex.symbols[f"p_{i}"] for i in (1, 2, 3))
    p = sp.Matrix([p_1, p_2, p_3])  # (3, 1)
    J = sp.diag(p_1, p_2, p_3) - p * p.T  # (3, 3)
    in_s = {p_1: p_s[0], p_2: p_s[1], p_3: p_s[2]}
    step("J is the derivative", sp.Matrix(3, 3, lambda i, j: sp.diff(p_s[i], s[j])), J.subs(in_s))
    step("J is symmetric", J.T, J)
    ones = sp.ones(3, 1)
    J1 = step("J·1 = p(1 − Σp)", J * ones, p * (1 - p_1 - p_2 - p_3))
    return step("the weights sum to one", J1, sp.zeros(3, 1), given={p_3: 1 - p_1 - p_2})


def _solve_softmax_logsumexp(ex: Exercise) -> object:
    s = ex.inputs["s"]  # (1, 2)
    fact("e^1000 overflows float64", s[0] > sp.log(sp.Float("1.7976931348623157e308")))
    m = max(s)  # 1000 + log 3
    lse = sp.log(sum(s.applyfunc(sp.exp)))
    shifted = m + sp.log(sum((s - m * sp.ones(1, 2)).applyfunc(sp.exp)))
    step("factor e^m out of the sum", lse, shifted)
    fact("every shifted score is at most 0", all(x - m <= 0 for x in s))
    return step("the sum is 4/3", shifted, 1000 + sp.log(4))


def _lse_float64() -> np.floating:
    s = np.array([1000.0, 1000.0 + np.log(3.0)])  # (2,)
    m = s.max()
    lse: np.floating = m + np.log(np.exp(s - m).sum())
    return lse
