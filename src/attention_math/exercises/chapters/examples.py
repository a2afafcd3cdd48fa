"""Exercises on the 2×2 identity example. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np, numeric
from attention_math.examples import IDENTITY_2X2
from attention_math.exercises.build import (
    attention_exercise,
)
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises", "sharp_c"]


def sharp_c() -> float:
    """The ``c`` at which the sharpening exercise evaluates ``softmax(c I/√2)`` in float64: twice
    the point where ``e^{-c/√2}`` falls below the smallest positive float64, so the small
    weight is exactly ``0`` and NumPy returns the limit itself.

    Examples:
        >>> import numpy as np
        >>> from attention_math.exercises.chapters.examples import sharp_c
        >>> float(np.exp(-sharp_c() / np.sqrt(2)))
        0.0
    """
    tiny = float(np.finfo(np.float64).smallest_subnormal)
    return float(2 * np.sqrt(2) * -np.log(tiny))


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    ex = IDENTITY_2X2
    X = ex.exact("x")
    Q, K, V = (X * ex.exact(w) for w in ("w_q", "w_k", "w_v"))
    shown = {"X": X, "W_Q": ex.exact("w_q"), "W_K": ex.exact("w_k"), "W_V": ex.exact("w_v")}
    common = dict(chapter="examples", q=Q, k=K, v=V, inputs=shown)
    out = attention_exercise(
        id="identity-output",
        title="Output of the 2×2 identity example",
        statement="Compute the output $O$ of the 2×2 identity example exactly.",
        what="output",
        **common,
        explanation=("Multiply the weights by $V = W_V$."),
        solution=_solve_identity_output,
    )
    p_1 = sp.Symbol("p_1", positive=True)  # the weight sigmoid(1/√2)
    a = 1 / sp.sqrt(2)
    in_p_1 = out.answer.applyfunc(lambda e: symbolic.in_terms_of_sigmoid(e, a, p_1))
    c = sp.Symbol("c", positive=True)
    S = symbolic.scores(Q, K)  # (2, 2): the example's scaled scores, I/√2
    P_c = symbolic.softmax(c * S)
    return [
        attention_exercise(
            id="identity-weights",
            title="Weights of the 2×2 identity example",
            statement=(
                "For the 2×2 identity example ($Q = XW_Q$, $K = XW_K$, $V = XW_V$), compute the "
                "attention weights $P$ exactly."
            ),
            **common,
            explanation=(
                r"With identity projections $Q = K = I$, so $QK^\top = I$ and the scores are "
                r"$1/\sqrt2$ on the diagonal and $0$ elsewhere."
            ),
            solution=_solve_identity_weights,
        ),
        out,
        Exercise(
            id="identity-sigma",
            chapter="examples",
            title="The identity example in one weight",
            statement=(
                "Write the output $O$ of the 2×2 identity example in terms of the weight "
                "$p_1 = \\operatorname{sigmoid}(1/\\sqrt2) = e^{1/\\sqrt2}/(1 + e^{1/\\sqrt2})$, "
                "the first entry of $\\operatorname{softmax}(1/\\sqrt2, 0)$; type it as `p_1`. "
                "Every entry is linear in $p_1$. (The checker compares values: a form that does "
                "not use $p_1$ but equals the output is accepted too.)"
            ),
            answer=in_p_1,
            inputs=shown,
            mistakes=out.mistakes,
            symbols={"p_1": p_1},
            subs={p_1: symbolic.sigmoid(a)},
            numeric=out.numeric,
            explanation=(
                r"Each row of scores is $(1/\sqrt2, 0)$ or $(0, 1/\sqrt2)$, so each row of "
                r"weights is $(p_1, 1 - p_1)$ or $(1 - p_1, p_1)$. Then $O = PV$ "
                r"is linear in $p_1$."
            ),
            solution=_solve_identity_sigma,
        ),
        attention_exercise(
            id="identity-numeric",
            title="The identity example to four decimals",
            statement=(
                "Give the output $O$ of the 2×2 identity example as decimals; every entry must "
                "be within the stated tolerance."
            ),
            what="output",
            tolerance=5e-5,
            **common,
            explanation=(
                "NumPy computes it in floating point; every entry is well within the tolerance."
            ),
            solution=_solve_identity_numeric,
        ),
        Exercise(
            id="identity-sharp",
            chapter="examples",
            title="Sharpening the identity example",
            statement=(
                "Multiply the scaled scores $S = QK^\\top/\\sqrt{d_k}$ of the identity example by "
                "$c$: $P(c) = \\operatorname{softmax}(c\\,S)$. What is "
                "$\\lim_{c\\to\\infty} P(c)$?"
            ),
            answer=P_c.applyfunc(lambda e: sp.limit(e, c, sp.oo)),
            inputs={"S": S},
            mistakes=(Mistake("wrong_limit", P_c.subs(c, 0)),),
            numeric=lambda: numeric.softmax(sharp_c() * np.eye(2) / np.sqrt(2)),
            explanation=(
                r"$S = I/\sqrt2$, so row one is $(e^{c/\sqrt2}, 1)/(e^{c/\sqrt2} + 1)$: as $c "
                r"\to \infty$ the diagonal weight tends to $1$ and the other to $0$. Large "
                "scores make the softmax a hard maximum. In floating point the limit is "
                r"reached at a finite $c$: once $e^{-c/\sqrt2}$ is at most half the smallest "
                r"positive (subnormal) number, $r_{\min}/2$ (see [Masks](../why/masks.md)), it "
                "rounds to exactly $0$ and so does the small weight; the decimals below are "
                "NumPy's $P(c)$ at such a $c$."
            ),
            solution=_solve_identity_sharp,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_identity_output(ex: Exercise) -> object:
    X = ex.inputs["X"]
    Q, K, V = X * ex.inputs["W_Q"], X * ex.inputs["W_K"], X * ex.inputs["W_V"]
    S = Q * K.T / sp.sqrt(Q.cols)  # d_k = 2: the diagonal score is 1/sqrt(2)
    E = S.applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # each row sums to 1
    return P * V


def _solve_identity_weights(ex: Exercise) -> object:
    X = ex.inputs["X"]
    Q, K = X * ex.inputs["W_Q"], X * ex.inputs["W_K"]  # the weights need no V
    S = Q * K.T / sp.sqrt(Q.cols)  # d_k = 2: the diagonal score is 1/sqrt(2)
    E = S.applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # each row sums to 1
    return P


def _solve_identity_sigma(ex: Exercise) -> object:
    p_1 = sp.Symbol("p_1")  # the weight sigmoid(1/√2)
    P = sp.Matrix([[p_1, 1 - p_1], [1 - p_1, p_1]])
    O = (P * ex.inputs["W_V"]).expand()  # V = X W_V = W_V
    return O


def _solve_identity_numeric(ex: Exercise) -> object:
    from attention_math import numeric
    from attention_math.exercises.build import float_array

    x, w_q, w_k, w_v = (float_array(ex.inputs[n]) for n in ("X", "W_Q", "W_K", "W_V"))
    q, k, v = numeric.compute_qkv(x, w_q, w_k, w_v)
    return numeric.attention(q, k, v)


def _solve_identity_sharp(ex: Exercise) -> object:
    c = sp.Symbol("c", positive=True)
    E = (c * ex.inputs["S"]).applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(2)))
    return P.applyfunc(lambda p: sp.limit(p, c, sp.oo))
