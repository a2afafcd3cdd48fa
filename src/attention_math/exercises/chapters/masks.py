"""Exercises: Masks. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math.exercises.build import (
    additive_mask,
    attention_exercise,
)
from attention_math.exercises.model import Exercise

__all__ = ["exercises"]

L2, L3, L5 = sp.log(2), sp.log(3), sp.log(5)  # logarithms keep the weights rational
CAUSAL3 = additive_mask(sp.Matrix([[int(j <= i) for j in range(3)] for i in range(3)]))  # j ≤ i


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    S = sp.Matrix([[0, 1, 1], [L3, 0, 2], [0, L2, L5]])
    V = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    pad = additive_mask(sp.Matrix([[1, 1, 0], [1, 1, 0]]))
    S_pad = sp.Matrix([[L2, 0, 5], [0, 0, -1]])
    unit = dict(k=sp.eye(3), scale=1, scale_slips=False)  # the scores are given: S·I·1 = S
    return [
        attention_exercise(
            id="mask-causal-weights",
            chapter="masks",
            title="Causal weights",
            statement=(
                "The scores $S$ are already scaled. Apply the causal mask $M$ (query $i$ sees "
                "keys $1..i$) and compute $P = \\operatorname{softmax}(S + M)$ exactly."
            ),
            q=S,
            mask=CAUSAL3,
            inputs={"S": S, "M": CAUSAL3},
            **unit,
            explanation=(
                "Add the mask, then take the softmax of each row: a blocked score is "
                r"$-\infty$ and gets weight $e^{-\infty} = 0$, so row $i$ normalises over its "
                "first $i$ entries only. The logarithms make the weights rational."
            ),
            solution=_solve_mask_causal_weights,
        ),
        attention_exercise(
            id="mask-causal-output",
            chapter="masks",
            title="Causal output",
            statement="With the same $S$ and $M$, compute $O = \\operatorname{softmax}(S + M)V$.",
            q=S,
            v=V,
            mask=CAUSAL3,
            what="output",
            inputs={"S": S, "M": CAUSAL3, "V": V},
            **unit,
            explanation=(
                "The masked weights times $V$; the first output row is the first value row, "
                "since query one sees only key one."
            ),
            solution=_solve_mask_causal_output,
        ),
        attention_exercise(
            id="mask-padding",
            chapter="masks",
            title="A padded key",
            statement=(
                "The third key is padding, so the mask $M$ blocks it for both queries. Compute "
                "$P = \\operatorname{softmax}(S + M)$ exactly."
            ),
            q=S_pad,
            k=sp.eye(3),
            scale=1,
            scale_slips=False,
            mask=pad,
            inputs={"S": S_pad, "M": pad},
            explanation=(
                "The padded key gets weight zero in both rows, however large its score; the "
                "other two share the row."
            ),
            solution=_solve_mask_padding,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_mask_causal_weights(ex: Exercise) -> object:
    S, M = ex.inputs["S"], ex.inputs["M"]
    Z = S + M  # blocked entries become -oo BEFORE the softmax
    E = Z.applyfunc(sp.exp)  # exp(-oo) = 0
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P


def _solve_mask_causal_output(ex: Exercise) -> object:
    S, M = ex.inputs["S"], ex.inputs["M"]
    Z = S + M  # blocked entries become -oo BEFORE the softmax
    E = Z.applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P * ex.inputs["V"]


def _solve_mask_padding(ex: Exercise) -> object:
    S, M = ex.inputs["S"], ex.inputs["M"]
    Z = S + M  # blocked entries become -oo BEFORE the softmax
    E = Z.applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P
