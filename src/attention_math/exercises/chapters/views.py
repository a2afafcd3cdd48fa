"""Exercises: attention seen other ways (kernel smoothing, other scores, linear attention,
the FlashAttention backward). Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math._lazy import np
from attention_math.derivations.linear import crossover_length, linear_flops, softmax_flops
from attention_math.exercises.build import float_array
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]


def _softmax_row(scores: list[sp.Expr]) -> sp.Matrix:
    e = [sp.exp(s) for s in scores]
    return sp.Matrix([[x / sum(e) for x in e]])


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    keys = sp.Matrix([0, 1, 2])  # 1-D sample points
    ys = sp.Matrix([0, 1, 4])
    h = 1
    nw_scores = [-((0 - x) ** 2) / (2 * h**2) for x in keys]
    nw_weights = _softmax_row(nw_scores)
    unnormalised = sp.Matrix([[sp.exp(s) for s in nw_scores]])
    kb = sp.Matrix([[1, 0], [1, 1], [0, 2]])  # keys as rows
    bias = sp.Matrix([[-(kb[j, :] * kb[j, :].T)[0] / 2 for j in range(3)]])
    qb = sp.Matrix([[1, 2], [0, 1]])
    wb = sp.Matrix([[1, 0], [2, 1]])
    kk = sp.Matrix([[1, 1], [3, 0], [0, 1]])
    bil = qb * wb * kk.T
    # causal linear attention, φ = elu + 1 = x + 1 on non-negative inputs
    ql = sp.Matrix([0, 1, 2])
    kl = sp.Matrix([1, 0, 1])
    vl = sp.Matrix([2, 4, 6])
    fq, fk = ql.applyfunc(lambda x: x + 1), kl.applyfunc(lambda x: x + 1)
    a = fq * fk.T  # (3, 3) weights before normalising
    causal = sp.Matrix(
        [sum(a[t, j] * vl[j] for j in range(t + 1)) / sum(a[t, : t + 1]) for t in range(3)]
    )
    full = sp.Matrix([sum(a[t, j] * vl[j] for j in range(3)) / sum(a[t, :]) for t in range(3)])
    d = sp.Symbol("d", positive=True)
    o = sp.Matrix([[1, 2], [3, -1]])
    d_o = sp.Matrix([[2, 0], [1, 1]])
    d_row = sp.Matrix([sum(o.multiply_elementwise(d_o)[i, :]) for i in range(2)])
    q2, k2 = sp.Matrix([[1, 0]]), sp.Matrix([[sp.Rational(1, 2), 3]])
    return [
        Exercise(
            id="views-nw-weights",
            chapter="views",
            title="Kernel regression weights",
            statement=(
                "Samples at the points $x_i$ of the row $x$ below; Gaussian kernel "
                "$e^{-(q - x_i)^2/(2\\tau^2)}$ of bandwidth $\\tau = 1$. Give the "
                "Nadaraya–Watson weights of the query $q = 0$ over the three samples (a row), "
                "exactly."
            ),
            answer=nw_weights,
            inputs={"x": keys.T},
            mistakes=(Mistake("unnormalized", unnormalised),),
            numeric=lambda: _nw_numeric(),
        ),
        Exercise(
            id="views-nw-limit",
            chapter="views",
            title="A very wide kernel",
            statement=(
                "Samples $(x_i, y_i)$ from the rows $x$ and $y$ below; Gaussian kernel "
                "$e^{-(q - x_i)^2/(2\\tau^2)}$. What does the Nadaraya–Watson estimate at the "
                "query $q = 1/4$ tend to as the bandwidth $\\tau \\to \\infty$?"
            ),
            answer=sum(ys) / 3,
            inputs={"x": keys.T, "y": ys.T},
            kind="scalar",
        ),
        Exercise(
            id="views-key-bias",
            chapter="views",
            title="The key bias of the Gaussian kernel",
            statement=(
                "Gaussian-kernel attention with $\\tau = 1$ equals dot-product attention (scale 1) "
                "plus a bias $b_j$ added to the scores of key $j$: the Gaussian score is "
                "$-\\lVert q - k_j \\rVert^2 / 2 = q \\cdot k_j + b_j - \\lVert q \\rVert^2 / 2$, "
                "where the last term is the same for every key. For the keys $K$ (one per row), "
                "give the row $(b_1, b_2, b_3)$ exactly."
            ),
            answer=bias,
            inputs={"K": kb},
            mistakes=(Mistake("wrong_factor", 2 * bias, "The bias is −‖k‖²/2, not −‖k‖²."),),
        ),
        Exercise(
            id="views-bilinear",
            chapter="views",
            title="Bilinear scores",
            statement="Compute the bilinear scores $Q W K^\\top$ exactly (queries, keys are rows).",
            answer=bil,
            inputs={"Q": qb, "W": wb, "K": kk},
            mistakes=(
                Mistake("transposed", bil.T, "That is K Wᵀ Qᵀ = (Q W Kᵀ)ᵀ: keys against queries."),
            ),
            numeric=lambda: float_array(qb) @ float_array(wb) @ float_array(kk).T,
        ),
        Exercise(
            id="views-linear-causal",
            chapter="views",
            title="Causal linear attention",
            statement=(
                "Linear attention with $\\varphi(x) = \\operatorname{elu}(x) + 1$ (which is "
                "$x + 1$ for $x \\ge 0$), $d = 1$, queries $q$, keys $k$, values $v$ as columns, "
                "and a causal mask (query $t$ sees keys $1..t$). Give the three outputs as a "
                "column, exactly."
            ),
            answer=causal,
            inputs={"q": ql, "k": kl, "v": vl},
            mistakes=(
                Mistake(
                    "missing_mask", full, "Query t may only use keys 1..t; yours used every key."
                ),
            ),
            numeric=lambda: _linear_numeric(ql, kl, vl),
        ),
        Exercise(
            id="views-crossover",
            chapter="views",
            title="When linear attention is cheaper",
            statement=(
                "One head, $d_k = d_v = d$, no mask. Softmax attention (scores to weighted "
                f"sum) costs ${sp.latex(softmax_flops())}$ FLOPs; linear attention with elu "
                f"features costs ${sp.latex(linear_flops())}$. Above which length $L$ (in "
                "terms of `d`) is linear attention cheaper?"
            ),
            answer=crossover_length(),
            symbols={"d": d},
            kind="expression",
        ),
        Exercise(
            id="views-flash-d",
            chapter="views",
            title="The FlashAttention correction term",
            statement=(
                "The tiled backward keeps one number per query row, "
                "$D = \\operatorname{rowsum}(dO \\circ O)$. Compute $D$ exactly (a column, "
                "one entry per query row; typed as a flat list it is read as that column)."
            ),
            answer=d_row,
            inputs={"O": o, "dO": d_o},
            numeric=lambda: np.sum(float_array(o) * float_array(d_o), axis=1, keepdims=True),
        ),
        Exercise(
            id="views-performer",
            chapter="views",
            title="What random features estimate",
            statement=(
                "With $w \\sim \\mathcal N(0, I)$ and "
                "$\\varphi_w(x) = e^{w\\cdot x - \\lVert x\\rVert^2/2}$, what is "
                "$\\mathbb E_w[\\varphi_w(q)\\,\\varphi_w(k)]$ for the rows $q$ and $k$ below?"
            ),
            answer=sp.exp((q2 * k2.T)[0]),
            inputs={"q": q2, "k": k2},
            kind="scalar",
        ),
    ]


def _nw_numeric() -> np.ndarray:
    from attention_math.kernels import nadaraya_watson  # NumPy, at build time only

    return nadaraya_watson([0.0], [0.0, 1.0, 2.0], np.eye(3), bandwidth=1.0)  # (1, 3)


def _linear_numeric(q: sp.Matrix, k: sp.Matrix, v: sp.Matrix) -> np.ndarray:
    from attention_math.linear import linear_attention  # NumPy, at build time only

    return linear_attention(float_array(q), float_array(k), float_array(v), is_causal=True)
