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
    )
    sigma = sp.Symbol("sigma", positive=True)
    a = 1 / sp.sqrt(2)
    in_sigma = out.answer.applyfunc(lambda e: symbolic.in_terms_of_sigmoid(e, a, sigma))
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
        ),
        out,
        Exercise(
            id="identity-sigma",
            chapter="examples",
            title="The identity example in σ",
            statement=(
                "Write the output $O$ of the 2×2 identity example in terms of "
                "$\\sigma = \\sigma(1/\\sqrt2) = e^{1/\\sqrt2}/(1 + e^{1/\\sqrt2})$; type it as "
                "`sigma`. Every entry is linear in $\\sigma$. (The checker compares values: a "
                "form that does not use $\\sigma$ but equals the output is accepted too.)"
            ),
            answer=in_sigma,
            inputs=shown,
            mistakes=out.mistakes,
            symbols={"sigma": sigma},
            subs={sigma: symbolic.sigmoid(a)},
            numeric=out.numeric,
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
        ),
    ]
