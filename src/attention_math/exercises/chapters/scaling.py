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
            explanation=(
                r"Each term $q_l k_l$ has mean $\mathbb{E}[q_l]\mathbb{E}[k_l] = 0$ and "
                r"variance $\mathbb{E}[q_l^2]\,\mathbb{E}[k_l^2] = 1$ (independence). The "
                "$d_k$ terms are independent, so their variances add."
            ),
            solution=_solve_scaling_variance,
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
            explanation=(
                r"Each term now has variance $s^2 \cdot s^2$, the sum $d_k s^4$; dividing a "
                r"random variable by $\sqrt{d_k}$ divides its variance by $d_k$."
            ),
            solution=_solve_scaling_variance_s,
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
            explanation=(r"The factor is $1/\sqrt{d_k}$."),
            solution=_solve_scaling_factor,
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
            explanation=(r"Divide by $\sqrt{16} = 4$ first, then take the softmax of the row."),
            solution=_solve_scaling_row,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_scaling_variance(ex: Exercise) -> object:
    d_k = sp.Symbol("d_k", positive=True, integer=True)
    mean_q = mean_k = 0
    second_q = second_k = 1  # E[q²] = Var + mean² = 1
    var_term = second_q * second_k - (mean_q * mean_k) ** 2
    return d_k * var_term


def _solve_scaling_variance_s(ex: Exercise) -> object:
    d_k, s = sp.Symbol("d_k", positive=True, integer=True), sp.Symbol("s", positive=True)
    var_dot = d_k * (s**2 * s**2)
    return var_dot / sp.sqrt(d_k) ** 2


def _solve_scaling_factor(ex: Exercise) -> object:
    return 1 / sp.sqrt(64)


def _solve_scaling_row(ex: Exercise) -> object:
    z = ex.inputs["S_raw"] / sp.sqrt(16)  # (1, 2)
    E = z.applyfunc(sp.exp)
    return E / sum(E)
