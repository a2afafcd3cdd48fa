"""Exercises: Scaling by 1/√d_k. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math._lazy import np
from attention_math.exercises.build import (
    attention_exercise,
)
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    d_k = sp.Symbol("d_k", positive=True, integer=True)
    s = sp.Symbol("s", positive=True)
    row = sp.Matrix([[4, 0]])
    return [
        Exercise(
            id="scaling-variance",
            chapter="scaling",
            title="Variance of a dot product",
            statement=(
                "The $d_k$ entries of $q$ and of $k$ are independent with mean $0$ and variance "
                "$1$. What is the variance of $q \\cdot k$? Type $d_k$ as `d_k`."
            ),
            answer=d_k,
            mistakes=(Mistake("std_vs_variance", sp.sqrt(d_k)),),
            symbols={"d_k": d_k},
            kind="expression",
        ),
        Exercise(
            id="scaling-variance-s",
            chapter="scaling",
            title="Variance after scaling",
            statement=(
                "Now each entry of $q$ and $k$ has variance $s^2$ (mean $0$, all independent). "
                "What is the variance of $q \\cdot k / \\sqrt{d_k}$? Use `s` and `d_k`."
            ),
            answer=s**4,
            mistakes=(
                Mistake("missing_scale", d_k * s**4, "That is the variance of q·k itself."),
                Mistake("std_vs_variance", s**2),
            ),
            symbols={"s": s, "d_k": d_k},
            kind="expression",
        ),
        Exercise(
            id="scaling-factor",
            chapter="scaling",
            title="The factor for $d_k = 64$",
            statement="By what number are the scores multiplied when $d_k = 64$?",
            answer=1 / sp.sqrt(64),
            mistakes=(
                Mistake("missing_scale", sp.S.One),
                Mistake("wrong_scale", sp.Rational(1, 64), "That is 1/d_k, not 1/√d_k."),
                Mistake("wrong_scale", sp.sqrt(64), "That is √d_k: divide by it."),
            ),
            numeric=lambda: np.float64(1 / np.sqrt(64)),
            kind="scalar",
        ),
        attention_exercise(
            id="scaling-row",
            chapter="scaling",
            title="A row of scores with $d_k = 16$",
            statement=(
                "A query and two keys with $d_k = 16$ give the unscaled scores "
                "$S_{\\text{raw}} = QK^\\top$ below. Compute the weights "
                "$\\operatorname{softmax}(S_{\\text{raw}}/\\sqrt{d_k})$ exactly."
            ),
            q=sp.Matrix([[4] + [0] * 15]),
            k=sp.Matrix([[1] + [0] * 15, [0] * 16]),
            inputs={"S_raw": row},
        ),
    ]
