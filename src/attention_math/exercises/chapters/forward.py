"""Exercises: The forward pass. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math._lazy import numeric
from attention_math.exercises.build import (
    attention_exercise,
    float_array,
)
from attention_math.exercises.model import Exercise

__all__ = ["exercises"]


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    x = sp.Matrix([[1, 0, 1], [0, 2, 1]])
    w_q = sp.Matrix([[1, 0], [0, 1], [2, 1]])  # Q not symmetric: Qᵀ (a column convention) shows
    q4 = sp.Matrix([[1, 1, 0, 0], [0, 1, 1, 0]])
    k4 = sp.Matrix([[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]])
    v3 = sp.Matrix([[1, 0], [0, 1], [2, 2]])
    return [
        Exercise(
            id="forward-qkv",
            chapter="forward",
            title="Queries from embeddings",
            statement="Compute the queries $Q = X W_Q$ of two tokens.",
            answer=x * w_q,
            inputs={"X": x, "W_Q": w_q},
            numeric=lambda: numeric.compute_qkv(
                float_array(x), float_array(w_q), float_array(w_q), float_array(w_q)
            )[0],
            explanation=(
                r"Each row of $X$ (one token) is multiplied by $W_Q$: a $2 \times 3$ times a "
                r"$3 \times 2$ matrix gives $2 \times 2$."
            ),
            solution=_solve_forward_qkv,
        ),
        attention_exercise(
            id="forward-scores",
            chapter="forward",
            title="Scaled scores",
            statement="Compute the scaled scores $S = QK^\\top/\\sqrt{d_k}$ exactly.",
            q=sp.Matrix([[1, 2], [0, 1]]),
            k=sp.Matrix([[1, 0], [1, 1]]),
            what="scores",
            explanation=(
                "Entry $(i, j)$ is the dot product of query $i$ with key $j$, divided by "
                r"$\sqrt{d_k}$ with $d_k = 2$ (the width of $Q$). Note $QK^\top$, not "
                r"$KQ^\top$: rows are queries."
            ),
            solution=_solve_forward_scores,
        ),
        attention_exercise(
            id="forward-weights",
            chapter="forward",
            title="Weights of two queries over three keys",
            statement=(
                "Compute the attention weights $P = \\operatorname{softmax}(QK^\\top/\\sqrt{d_k})$"
                " exactly ($d_k = 4$)."
            ),
            q=q4,
            k=k4,
            explanation=(
                r"$QK^\top$ has integer entries and $\sqrt{d_k} = 2$; exponentiate each score "
                "and divide by its **row** sum (one row per query)."
            ),
            solution=_solve_forward_weights,
        ),
        attention_exercise(
            id="forward-output",
            chapter="forward",
            title="The output",
            statement=(
                "Compute the output $O = \\operatorname{softmax}(QK^\\top/\\sqrt{d_k})\\,V$"
                " exactly."
            ),
            q=q4,
            k=k4,
            v=v3,
            what="output",
            explanation=(
                "The weights of the previous exercise times $V$: each output row is a "
                "weighted average of the rows of $V$."
            ),
            solution=_solve_forward_output,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_forward_qkv(ex: Exercise) -> object:
    X, W_Q = ex.inputs["X"], ex.inputs["W_Q"]
    Q = X * W_Q  # (2, 3) @ (3, 2) -> (2, 2)
    return Q


def _solve_forward_scores(ex: Exercise) -> object:
    Q, K = ex.inputs["Q"], ex.inputs["K"]
    d_k = Q.cols
    S = Q * K.T / sp.sqrt(d_k)  # (2, 2): row i = query i
    return S


def _solve_forward_weights(ex: Exercise) -> object:
    Q, K = ex.inputs["Q"], ex.inputs["K"]
    S = Q * K.T / sp.sqrt(Q.cols)  # (2, 3)
    E = S.applyfunc(sp.exp)  # (2, 3)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # each row sums to 1
    return P


def _solve_forward_output(ex: Exercise) -> object:
    Q, K, V = ex.inputs["Q"], ex.inputs["K"], ex.inputs["V"]
    S = Q * K.T / sp.sqrt(Q.cols)  # (2, 3)
    E = S.applyfunc(sp.exp)  # (2, 3)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # each row sums to 1
    O = P * V  # (2, 3) @ (3, 2) -> (2, 2)
    return O
