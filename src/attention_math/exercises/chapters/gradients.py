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
from attention_math.exercises.steps import step

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
            explanation=(
                r"$O_{ij} = \sum_l P_{il} V_{lj}$, so $\partial \ell/\partial V_{lj} = \sum_i "
                r"P_{il}\,dO_{ij}$: $dV = P^\top dO$, with the shape of $V$."
            ),
            solution=_solve_grad_dv,
        ),
        Exercise(
            id="grad-dp",
            chapter="gradients",
            title="The gradient with respect to P",
            statement="With $O = PV$ and upstream gradient $dO$, compute $dP$ exactly.",
            answer=dO * V.T,
            inputs={"dO": dO, "V": V},
            numeric=lambda: float_array(dO) @ float_array(V).T,
            explanation=(
                r"$\partial \ell/\partial P_{il} = \sum_j dO_{ij} V_{lj}$: $dP = dO\,V^\top$, "
                "with the shape of $P$."
            ),
            solution=_solve_grad_dp,
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
            explanation=(
                r"By the chain rule, $\partial \ell/\partial s_j = \sum_i g_i\,\partial "
                r"p_i/\partial s_j = \sum_i g_i\,p_i(\delta_{ij} - p_j) = p_j\,(g_j - \sum_i "
                r"p_i g_i)$. SymPy differentiates $\ell = \sum_i g_i p_i(s)$ and confirms."
            ),
            solution=_solve_grad_ds_row,
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
            explanation=(
                "Each row of $P$ depends only on the same row of $S$, so the previous "
                r"exercise applies row by row: $dS = P \circ (dP - \operatorname{rowsum}(P "
                r"\circ dP))$, the sum running over the keys of each query."
            ),
            solution=_solve_grad_ds,
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
            explanation=(r"$S = QK^\top/\sqrt{d_k}$ is linear in $Q$: $dQ = dS\,K/\sqrt{d_k}$."),
            solution=_solve_grad_dq,
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
            explanation=(
                r"$S^\top = KQ^\top/\sqrt{d_k}$, so $dK = dS^\top Q/\sqrt{d_k}$: key $j$ "
                "collects the gradients of column $j$ of the scores."
            ),
            solution=_solve_grad_dk,
        ),
        Exercise(
            id="grad-ds-rowsum",
            chapter="gradients",
            title="Why each row of dS sums to zero",
            task="prove",
            statement=(
                "For one row, $\\partial \\ell/\\partial s_j = p_j\\,(g_j - \\sum_i p_i g_i)$ "
                "(exercise above). Show that these three entries sum to zero for every "
                "upstream gradient $g$, and explain why they must. Give "
                "$\\sum_j \\partial \\ell/\\partial s_j$ in `p_1`, `p_2`, `p_3`, `g_1`, "
                "`g_2`, `g_3`."
            ),
            answer=sp.Integer(0),
            mistakes=(
                Mistake(
                    "missing_term",
                    dot,
                    "That is the sum without the subtracted p_j·(p·g): the entries are "
                    "p_j·(g_j − p·g).",
                ),
            ),
            symbols={str(s): s for s in (*ps, *gs)},
            subs={ps[2]: 1 - ps[0] - ps[1]},
            kind="expression",
            explanation=(
                "1. Sum the entries: $\\sum_j p_j g_j - (\\sum_i p_i g_i)\\sum_j p_j$.\n"
                "2. The weights sum to one, so the second term is $\\sum_i p_i g_i$ and the "
                "two cancel: the sum is $0$, whatever $g$ is.\n\n"
                "Why it must: adding the same $c$ to every score of the row leaves the "
                "weights, hence the loss, unchanged (shift invariance), so the loss's "
                "derivative along $(1, 1, 1)$, which is this sum, is zero. In matrix form "
                "it is $\\mathbf{1}^\\top J = 0$ for the softmax's Jacobian. A useful check "
                "on any hand-written backward pass: every row of $dS$ must sum to zero "
                "(up to rounding)."
            ),
            solution=_solve_grad_ds_rowsum,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_grad_dv(ex: Exercise) -> object:
    dV = ex.inputs["P"].T * ex.inputs["dO"]  # (3, 2) @ (2, 2) -> (3, 2), the shape of V
    return dV


def _solve_grad_dp(ex: Exercise) -> object:
    dP = ex.inputs["dO"] * ex.inputs["V"].T  # (2, 2) @ (2, 3) -> (2, 3), the shape of P
    return dP


def _solve_grad_ds_row(ex: Exercise) -> object:
    from attention_math import symbolic

    s = sp.Matrix([sp.symbols("s_1:4", real=True)])
    g = sp.Matrix([sp.symbols("g_1:4", real=True)])
    p_of_s = symbolic.softmax(s)  # (1, 3)
    L = (p_of_s * g.T)[0]
    ds_of_s = sp.Matrix([[sp.diff(L, s_j) for s_j in s]])
    p = sp.Matrix([sp.symbols("p_1:4")])
    ds = p.multiply_elementwise(g - (p * g.T)[0] * sp.ones(1, 3))  # p ∘ (g − (p·g))
    assert all(sp.simplify(d) == 0 for d in ds_of_s - ds.subs(dict(zip(p, p_of_s, strict=True))))
    return ds


def _solve_grad_ds(ex: Exercise) -> object:
    P = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"p_{i + 1}{j + 1}"))
    G = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"g_{i + 1}{j + 1}"))  # dP
    row_dot = (P.multiply_elementwise(G)) * sp.ones(2, 1)  # (2, 1): sum over the keys
    dS = P.multiply_elementwise(G - row_dot * sp.ones(1, 2))
    return dS


def _solve_grad_dq(ex: Exercise) -> object:
    dQ = ex.inputs["dS"] * ex.inputs["K"] / sp.sqrt(4)  # (2, 2) @ (2, 4) -> (2, 4), shape of Q
    return dQ


def _solve_grad_dk(ex: Exercise) -> object:
    dK = ex.inputs["dS"].T * ex.inputs["Q"] / sp.sqrt(4)  # (2, 2) @ (2, 4) -> (2, 4), shape of K
    return dK


def _solve_grad_ds_rowsum(ex: Exercise) -> object:
    p = sp.Matrix([[ex.symbols[f"p_{j}"] for j in (1, 2, 3)]])  # (1, 3)
    g = sp.Matrix([[ex.symbols[f"g_{j}"] for j in (1, 2, 3)]])  # (1, 3)
    pg = (p * g.T)[0]  # p·g
    dS = sp.Matrix([[p[j] * (g[j] - pg) for j in range(3)]])  # (1, 3)
    total = step("the sum of the entries", sum(dS), pg - pg * sum(p))
    one = {p[2]: 1 - p[0] - p[1]}  # the weights sum to one
    return step("the weights sum to one", total, sp.Integer(0), given=one)
