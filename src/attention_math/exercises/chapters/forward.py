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
        ),
        attention_exercise(
            id="forward-scores",
            chapter="forward",
            title="Scaled scores",
            statement="Compute the scaled scores $S = QK^\\top/\\sqrt{d_k}$ exactly.",
            q=sp.Matrix([[1, 2], [0, 1]]),
            k=sp.Matrix([[1, 0], [1, 1]]),
            what="scores",
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
        ),
    ]
