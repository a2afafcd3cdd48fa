"""Exercises: Gradients (the backward pass). Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math._lazy import np
from attention_math.derivations.gradients import backward
from attention_math.exercises.build import (
    drop_coinciding,
    float_array,
)
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    P = sp.Matrix(
        [
            [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)],
            [0, sp.Rational(1, 3), sp.Rational(2, 3)],
        ]
    )
    dO = sp.Matrix([[1, -1], [2, 0]])
    V = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    K = sp.Matrix([[1, 0, 1, 0], [0, 1, 0, 1]])
    Q = sp.Matrix([[1, 1, 0, 0], [0, 0, 1, 1]])
    # dS is the real gradient of the scores for these Q, K (so every row sums to zero), with
    # V = I and the upstream gradient dO_s: computed by the backward pass, not typed
    dO_s = sp.Matrix([[2, 0], [1, 5]])
    dS = backward(Q, K, sp.eye(2), dO_s)["dS"]
    ps = sp.symbols("p_1:4", positive=True)
    gs = sp.symbols("g_1:4", real=True)
    pr, gr = sp.Matrix([ps]), sp.Matrix([gs])
    dot = (pr * gr.T)[0]
    P2 = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"p_{i + 1}{j + 1}", positive=True))
    G2 = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"g_{i + 1}{j + 1}", real=True))
    row_dot = [sum(P2[i, c] * G2[i, c] for c in range(2)) for i in range(2)]
    col_dot = [sum(P2[r, j] * G2[r, j] for r in range(2)) for j in range(2)]
    ds2 = sp.Matrix(2, 2, lambda i, j: P2[i, j] * (G2[i, j] - row_dot[i]))
    names2 = {str(s): s for s in (*P2, *G2)}
    return [
        Exercise(
            id="grad-dv",
            chapter="gradients",
            title="The gradient with respect to V",
            statement="With $O = PV$ and upstream gradient $dO$, compute $dV$ exactly.",
            answer=P.T * dO,
            inputs={"P": P, "dO": dO},
            numeric=lambda: float_array(P).T @ float_array(dO),
        ),
        Exercise(
            id="grad-dp",
            chapter="gradients",
            title="The gradient with respect to P",
            statement="With $O = PV$ and upstream gradient $dO$, compute $dP$ exactly.",
            answer=dO * V.T,
            inputs={"dO": dO, "V": V},
            numeric=lambda: float_array(dO) @ float_array(V).T,
        ),
        Exercise(
            id="grad-ds-row",
            chapter="gradients",
            title="Derive dS for one row",
            statement=(
                "One row of weights $p = \\operatorname{softmax}(s)$ has three entries; the "
                "upstream gradient is $g = \\partial \\ell/\\partial p$. Derive "
                "$\\partial \\ell/\\partial s$ as a row in `p_1`, `p_2`, `p_3`, "
                "`g_1`, `g_2`, `g_3`."
            ),
            answer=sp.Matrix([[ps[j] * (gs[j] - dot) for j in range(3)]]),
            mistakes=(Mistake("missing_term", pr.multiply_elementwise(gr)),),
            symbols={str(s): s for s in (*ps, *gs)},
            subs={ps[2]: 1 - ps[0] - ps[1]},
            kind="expression",
        ),
        Exercise(
            id="grad-ds",
            chapter="gradients",
            title="Derive dS",
            statement=(
                "For $P = \\operatorname{softmax}(S)$ (row-wise) with 2×2 entries `p_11`, "
                "`p_12`, `p_21`, `p_22` and upstream gradient $dP$ with entries `g_11` … `g_22`, "
                "derive $dS = \\partial \\ell / \\partial S$."
            ),
            answer=ds2,
            mistakes=(
                Mistake("missing_term", P2.multiply_elementwise(G2)),
                Mistake(
                    "sum_axis",
                    sp.Matrix(2, 2, lambda i, j: P2[i, j] * (G2[i, j] - col_dot[j])),
                ),
            ),
            symbols=names2,
            subs={P2[0, 1]: 1 - P2[0, 0], P2[1, 1]: 1 - P2[1, 0]},
            kind="expression",
        ),
        Exercise(
            id="grad-dq",
            chapter="gradients",
            title="The gradient with respect to Q",
            statement=(
                "With $S = QK^\\top/\\sqrt{d_k}$ ($d_k = 4$) and the gradient $dS$ of the scores "
                "(from the backward pass with $V = I$; like every $dS$, each row sums to zero), "
                "compute $dQ$ exactly."
            ),
            answer=dS * K / 2,
            inputs={"dS": dS, "K": K},
            mistakes=drop_coinciding(
                dS * K / 2,
                [Mistake("missing_scale", dS * K), Mistake("wrong_scale", dS * K / 4)],
            ),
            numeric=lambda: float_array(dS) @ float_array(K) / np.sqrt(4),
        ),
        Exercise(
            id="grad-dk",
            chapter="gradients",
            title="The gradient with respect to K",
            statement=("With the same $S = QK^\\top/\\sqrt{d_k}$ and $dS$, compute $dK$ exactly."),
            answer=dS.T * Q / 2,
            inputs={"dS": dS, "Q": Q},
            mistakes=drop_coinciding(
                dS.T * Q / 2,
                [
                    Mistake("missing_transpose", dS * Q / 2, "dK = dSᵀ Q / √d_k."),
                    Mistake("missing_scale", dS.T * Q),
                ],
            ),
            numeric=lambda: float_array(dS).T @ float_array(Q) / np.sqrt(4),
        ),
    ]
