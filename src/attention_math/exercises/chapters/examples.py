"""Exercises on the three slips of the worked examples (a score of 0 is not weight 0, the
softmax's axis, rounding before multiplying), on inputs of their own. Reference answers are
computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np, numeric
from attention_math.exercises.build import additive_mask, attention_exercise
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["TOKENS", "exercises", "sharp_c"]

TOKENS = sp.Matrix([[1, 0], [0, 1], [1, 1]])
"""Three tokens in two dimensions (``L × d_model`` = 3 × 2), projected by the identity as in
the five-words example: ``Q = K = V = X``, and some scores are ``0``."""


def sharp_c() -> float:
    """The ``c`` at which the sharpening exercise evaluates ``softmax(c S)`` in float64, with
    ``S = XXᵀ/√2`` of [`TOKENS`][attention_math.exercises.chapters.examples.TOKENS]: twice the
    point where ``e^{-c/√2}`` (the smallest gap between a row's largest score and another,
    times ``c``) falls below the smallest positive float64, so every small weight is exactly
    ``0`` and NumPy returns the limit itself.

    Examples:
        >>> import numpy as np
        >>> from attention_math.exercises.chapters.examples import sharp_c
        >>> float(np.exp(-sharp_c() / np.sqrt(2)))
        0.0
    """
    tiny = float(np.finfo(np.float64).smallest_subnormal)
    return float(2 * np.sqrt(2) * -np.log(tiny))


def _e0_as_zero(S: sp.Matrix) -> sp.Matrix:
    """The softmax of each row of ``S`` with every ``e^0`` written as ``0`` (the slip)."""
    E = S.applyfunc(lambda s: 0 if s == 0 else sp.exp(s))
    return sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))


def _rounded_first(P: sp.Matrix, V: sp.Matrix, digits: int) -> sp.Matrix:
    """``P`` rounded to ``digits`` decimals, then multiplied by ``V`` (the slip)."""
    return P.applyfunc(lambda p: sp.Float(round(float(p), digits), 30)) * V


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    X = TOKENS
    S = symbolic.scores(X, X)  # (3, 3): XXᵀ/√2, with zeros
    P = symbolic.softmax(S)
    shown = {"X": X}
    common = dict(chapter="examples", q=X, k=X, v=X, inputs=shown)
    zero = "Each score of 0 adds e⁰ = 1 to the sum that divides its row."
    # the causal example: logarithms keep the weights rational
    L2, L3 = sp.log(2), sp.log(3)
    S_c = sp.Matrix([[0, 0, 0], [0, L2, 0], [L3, 0, L2]])  # above the diagonal: masked
    M_c = additive_mask(sp.Matrix([[int(j <= i) for j in range(3)] for i in range(3)]))
    V_c = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    E_c = (S_c + M_c).applyfunc(sp.exp)  # blocked entries: e^(-oo) = 0
    whole = E_c / sum(E_c)  # one sum over the whole matrix: SciPy's softmax without an axis
    causal = dict(chapter="examples", q=S_c, k=sp.eye(3), scale=1, scale_slips=False, mask=M_c)
    c = sp.Symbol("c", positive=True)
    P_c = symbolic.softmax(c * S)
    return [
        attention_exercise(
            id="slip-zero-weights",
            title="Scores of zero",
            statement=(
                "Three tokens $X$ in two dimensions, projected by the identity "
                "($Q = K = V = X$, $d_k = 2$). Compute the attention weights $P$ exactly. "
                "Several scores are $0$."
            ),
            **common,
            extra=(Mistake("exp0_zero", _e0_as_zero(S), zero),),
            explanation=(
                r"$QK^\top = XX^\top$, divided by $\sqrt2$; a score of $0$ has "
                r"$e^0 = 1$ in the softmax, so its key keeps a weight. Only $-\infty$ "
                "(a mask) gives weight $0$."
            ),
            solution=_solve_zero_weights,
        ),
        attention_exercise(
            id="slip-zero-output",
            title="Scores of zero: the output",
            statement="With the same $X$, compute the output $O = PV$ exactly.",
            what="output",
            **common,
            extra=(Mistake("exp0_zero", _e0_as_zero(S) * X, zero),),
            explanation="Multiply the weights by $V = X$.",
            solution=_solve_zero_output,
        ),
        attention_exercise(
            id="slip-axis-weights",
            title="The softmax's axis",
            statement=(
                "The scores $S$ of a causal attention over three tokens are already scaled; "
                "$M$ masks the keys after each query. Compute "
                r"$P = \operatorname{softmax}(S + M)$ exactly, one softmax per row."
            ),
            **causal,
            inputs={"S": S_c, "M": M_c},
            extra=(Mistake("whole_matrix", whole),),
            explanation=(
                "Each row is its own softmax: row $i$ sums to one over the keys it may see. "
                "A softmax over the whole matrix divides by one sum of all nine exponentials "
                "instead, and no row then sums to one."
            ),
            solution=_solve_axis_weights,
        ),
        attention_exercise(
            id="slip-axis-output",
            title="The softmax's axis: the output",
            statement="With the same $S$ and $M$, compute $O = \\operatorname{softmax}(S + M)V$.",
            what="output",
            v=V_c,
            **causal,
            inputs={"S": S_c, "M": M_c, "V": V_c},
            extra=(Mistake("whole_matrix", whole * V_c),),
            explanation=(
                "The weights of each row times $V$. Each output row is a weighted average of "
                "the value rows its query may see; with the whole-matrix weights it would be "
                "that average scaled down by the row's share of the total."
            ),
            solution=_solve_axis_output,
        ),
        attention_exercise(
            id="slip-round-output",
            title="Round at the end",
            statement=(
                "With the three tokens $X$ of the first exercise, give the output $O = PV$ as "
                "decimals; every entry must be within the stated tolerance."
            ),
            what="output",
            tolerance=5e-5,
            **common,
            extra=tuple(
                Mistake(
                    "rounded_early",
                    _rounded_first(P, X, n),
                    f"Your weights were rounded to {n} decimals before multiplying.",
                )
                for n in (2, 3, 4)
            ),
            explanation=(
                "Compute in floating point and round only the result: weights rounded first "
                "carry their rounding error, times the values, into every output entry."
            ),
            solution=_solve_round_output,
        ),
        Exercise(
            id="slip-sharp",
            chapter="examples",
            title="Sharpening: ties share",
            statement=(
                r"Multiply the scaled scores $S = XX^\top/\sqrt2$ of the three tokens by $c$: "
                r"$P(c) = \operatorname{softmax}(c\,S)$. What is $\lim_{c\to\infty} P(c)$?"
            ),
            answer=P_c.applyfunc(lambda e: sp.limit(e, c, sp.oo)),
            inputs={"S": S},
            mistakes=(Mistake("wrong_limit", P_c.subs(c, 0)),),
            numeric=lambda: numeric.softmax(sharp_c() * _float(S)),
            explanation=(
                r"As $c \to \infty$ each row's weight goes to its largest scores: a key below "
                r"the row's maximum gets $e^{-c\,\mathrm{gap}} \to 0$. Where two keys tie for "
                "the maximum they share the weight equally. In floating point the limit is "
                r"reached at a finite $c$, where $e^{-c \cdot \mathrm{gap}}$ becomes too small "
                "to store and rounds to exactly $0$ (see [Masks](../why/masks.md)); the "
                r"decimals below are NumPy's $P(c)$ at such a $c$."
            ),
            solution=_solve_sharp,
        ),
    ]


def _float(m: sp.Matrix) -> np.ndarray:
    from attention_math.exercises.build import float_array

    return float_array(m)


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_zero_weights(ex: Exercise) -> object:
    X = ex.inputs["X"]
    S = X * X.T / sp.sqrt(X.cols)  # Q = K = X, d_k = 2
    E = S.applyfunc(sp.exp)  # exp(0) = 1, not 0
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # each row sums to 1
    return P


def _solve_zero_output(ex: Exercise) -> object:
    X = ex.inputs["X"]
    S = X * X.T / sp.sqrt(X.cols)  # Q = K = X, d_k = 2
    E = S.applyfunc(sp.exp)  # exp(0) = 1, not 0
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P * X  # V = X


def _solve_axis_weights(ex: Exercise) -> object:
    E = (ex.inputs["S"] + ex.inputs["M"]).applyfunc(sp.exp)  # exp(-oo) = 0
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # per row
    return P


def _solve_axis_output(ex: Exercise) -> object:
    E = (ex.inputs["S"] + ex.inputs["M"]).applyfunc(sp.exp)  # exp(-oo) = 0
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # per row
    return P * ex.inputs["V"]


def _solve_round_output(ex: Exercise) -> object:
    from attention_math import numeric
    from attention_math.exercises.build import float_array

    x = float_array(ex.inputs["X"])  # (3, 2)
    return numeric.attention(x, x, x)  # float64 throughout; round only what you print


def _solve_sharp(ex: Exercise) -> object:
    c = sp.Symbol("c", positive=True)
    E = (c * ex.inputs["S"]).applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P.applyfunc(lambda p: sp.limit(p, c, sp.oo))
