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
    z = sp.Matrix([[0, L2, L3]])
    z2 = sp.Matrix([[0, L3], [L2, 0]])
    p1, p2 = sp.symbols("p_1 p_2", positive=True)
    a = sp.Symbol("a", real=True)
    p = sp.Matrix([p1, p2])
    exps = z2.applyfunc(sp.exp)
    return [
        Exercise(
            id="softmax-logs",
            chapter="softmax",
            title="Softmax of logarithms",
            statement="Compute $\\operatorname{softmax}(z)$ exactly.",
            answer=symbolic.softmax(z),
            inputs={"z": z},
            mistakes=(Mistake("unnormalized", z.applyfunc(sp.exp)),),
            numeric=lambda: numeric.softmax(float_array(z)),
            kind="weights",
        ),
        Exercise(
            id="softmax-shift",
            chapter="softmax",
            title="Large scores",
            statement=(
                "Compute $\\operatorname{softmax}(z)$ exactly. (Hint: subtracting the same "
                "number from every entry does not change the softmax.)"
            ),
            answer=symbolic.softmax(sp.Matrix([[1000, 1000 + L3]])),
            inputs={"z": sp.Matrix([[1000, 1000 + L3]])},
            mistakes=(Mistake("unnormalized", sp.Matrix([[1, 3]])),),
            numeric=lambda: numeric.softmax(np.array([1000.0, 1000.0 + np.log(3.0)])),
            # float64 stores 1000 + ln 3 only to ulp(1000) = 512 ε; the weights inherit it
            bound_eps=256.0,
            kind="weights",
        ),
        Exercise(
            id="softmax-rows",
            chapter="softmax",
            title="Row by row",
            statement="Compute the row-wise softmax of the matrix $Z$ exactly.",
            answer=symbolic.softmax(z2),
            inputs={"Z": z2},
            mistakes=drop_coinciding(
                symbolic.softmax(z2),
                [
                    Mistake("softmax_axis", symbolic.softmax(z2, axis=0)),
                    Mistake(
                        "softmax_axis",
                        exps / sum(exps),
                        "You normalised over the whole matrix instead of each row.",
                    ),
                ],
            ),
            numeric=lambda: numeric.softmax(float_array(z2)),
            kind="weights",
        ),
        Exercise(
            id="softmax-jacobian",
            chapter="softmax",
            title="The Jacobian of a two-entry softmax",
            statement=(
                "Let $p = \\operatorname{softmax}(z_1, z_2)$. Give the Jacobian "
                "$J_{ij} = \\partial p_i / \\partial z_j$ in terms of `p_1` and `p_2`."
            ),
            answer=sp.diag(p1, p2) - p * p.T,
            mistakes=(Mistake("missing_term", sp.diag(p1, p2)),),
            symbols={"p_1": p1, "p_2": p2},
            subs={p2: 1 - p1},
            kind="expression",
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
        ),
    ]
