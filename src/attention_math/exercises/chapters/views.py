"""Exercises: attention seen other ways (kernel smoothing, other scores, linear attention,
the FlashAttention backward). Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np
from attention_math.derivations.linear import crossover_length, linear_flops, softmax_flops
from attention_math.exercises.build import float_array
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    keys = sp.Matrix([0, 1, 2])  # 1-D sample points
    ys = sp.Matrix([0, 1, 4])
    h = 1
    nw_scores = [-((0 - x) ** 2) / (2 * h**2) for x in keys]
    nw_weights = symbolic.softmax([nw_scores])  # (1, 3)
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
            explanation=(
                "The scores are $-(0 - x_i)^2/2 = 0, -1/2, -2$; the weights are their softmax."
            ),
            solution=_solve_views_nw_weights,
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
            explanation=(
                r"As $\tau \to \infty$ every score tends to 0, so every weight tends to $1/3$: "
                "the estimate is the plain mean of the $y_i$. SymPy takes the limit of the "
                "exact estimate."
            ),
            solution=_solve_views_nw_limit,
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
            explanation=(
                r"$-\lVert q - k\rVert^2/2 = q\cdot k - \lVert q\rVert^2/2 - \lVert "
                r"k\rVert^2/2$; the query term is a row constant the softmax ignores, so $b_j "
                r"= -\lVert k_j\rVert^2/2$."
            ),
            solution=_solve_views_key_bias,
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
            explanation=(
                r"Row $i$, column $j$ is $q_i W k_j^\top$: one product $QW$, then against "
                "every key."
            ),
            solution=_solve_views_bilinear,
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
            explanation=(
                r"Run the recurrence: $U_t = U_{t-1} + \varphi(k_t) v_t$, $z_t = z_{t-1} + "
                r"\varphi(k_t)$, $o_t = \varphi(q_t) U_t / (\varphi(q_t) z_t)$ (with $d = 1$ "
                r"the $\varphi(q_t)$ cancels)."
            ),
            solution=_solve_views_linear_causal,
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
            explanation=(r"Set the two costs equal and divide by $L$: $(4d + 6)\,L = 4d^2 + 8d$."),
            solution=_solve_views_crossover,
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
            explanation=("Multiply entry by entry and add along each row."),
            solution=_solve_views_flash_d,
        ),
        Exercise(
            id="views-performer",
            chapter="views",
            title="What random features estimate",
            statement=(
                "With $\\omega \\sim \\mathcal N(0, I)$ and "
                "$\\varphi_\\omega(x) = e^{\\omega\\cdot x - \\lVert x\\rVert^2/2}$, what is "
                "$\\mathbb E_\\omega[\\varphi_\\omega(q)\\,\\varphi_\\omega(k)]$ for the rows $q$ "
                "and $k$ below?"
            ),
            answer=sp.exp((q2 * k2.T)[0]),
            inputs={"q": q2, "k": k2},
            kind="scalar",
            explanation=(
                r"The product is $e^{\omega\cdot(q + k)}\, e^{-\lVert q\rVert^2/2 - \lVert "
                r"k\rVert^2/2}$ and the coordinates of $\omega$ are independent: one Gaussian "
                r"integral $\mathbb E[e^{\omega c}]$, evaluated at $c = q_i + k_i$ for each "
                "coordinate."
            ),
            solution=_solve_views_performer,
        ),
    ]


def _nw_numeric() -> np.ndarray:
    from attention_math.kernels import nadaraya_watson  # NumPy, at build time only

    return nadaraya_watson([0.0], [0.0, 1.0, 2.0], np.eye(3), bandwidth=1.0)  # (1, 3)


def _linear_numeric(q: sp.Matrix, k: sp.Matrix, v: sp.Matrix) -> np.ndarray:
    from attention_math.linear import linear_attention  # NumPy, at build time only

    return linear_attention(float_array(q), float_array(k), float_array(v), is_causal=True)


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_views_nw_weights(ex: Exercise) -> object:
    x = ex.inputs["x"]  # (1, 3): the sample points
    scores = [-((0 - xi) ** 2) / 2 for xi in x]  # τ = 1
    e = [sp.exp(s) for s in scores]
    return sp.Matrix([[w / sum(e) for w in e]])


def _solve_views_nw_limit(ex: Exercise) -> object:
    inputs = ex.inputs
    x, y = list(inputs["x"]), list(inputs["y"])
    tau = sp.Symbol("tau", positive=True)  # the bandwidth
    scores = [-((sp.Rational(1, 4) - xi) ** 2) / (2 * tau**2) for xi in x]
    est = sum(sp.exp(s) * yi for s, yi in zip(scores, y, strict=True)) / sum(
        sp.exp(s) for s in scores
    )
    return sp.limit(est, tau, sp.oo)


def _solve_views_key_bias(ex: Exercise) -> object:
    K = ex.inputs["K"]  # (3, 2)
    b = sp.Matrix([[-(K[j, :] * K[j, :].T)[0] / 2 for j in range(K.rows)]])
    return b


def _solve_views_bilinear(ex: Exercise) -> object:
    inputs = ex.inputs
    Q, W, K = inputs["Q"], inputs["W"], inputs["K"]
    return Q * W * K.T  # (2, 3)


def _solve_views_linear_causal(ex: Exercise) -> object:
    inputs = ex.inputs
    q, k, v = inputs["q"], inputs["k"], inputs["v"]

    def phi(x: sp.Expr) -> sp.Expr:  # elu(x) + 1 for x ≥ 0
        return x + 1

    U = z = sp.Integer(0)
    out = []
    for t in range(3):
        U += phi(k[t]) * v[t]  # U_t = U_{t−1} + φ(k_t) v_t
        z += phi(k[t])  # z_t = z_{t−1} + φ(k_t)
        out.append(phi(q[t]) * U / (phi(q[t]) * z))
    return sp.Matrix(out)


def _solve_views_crossover(ex: Exercise) -> object:
    L, d = sp.symbols("L d", positive=True)
    (L_star,) = sp.solve(sp.Eq(4 * L**2 * d + 6 * L**2, 4 * L * d**2 + 8 * L * d), L)
    return L_star


def _solve_views_flash_d(ex: Exercise) -> object:
    inputs = ex.inputs
    O, dO = inputs["O"], inputs["dO"]
    D = sp.Matrix([sum(O.multiply_elementwise(dO)[i, :]) for i in range(O.rows)])
    return D


def _solve_views_performer(ex: Exercise) -> object:
    inputs = ex.inputs
    q, k = inputs["q"], inputs["k"]
    omega, c = sp.symbols("omega c", real=True)  # one coordinate of the direction ω
    density = sp.exp(-(omega**2) / 2) / sp.sqrt(2 * sp.pi)  # N(0, 1)
    mgf = sp.simplify(
        sp.integrate(sp.exp(omega * c) * density, (omega, -sp.oo, sp.oo))
    )  # E[e^{ωc}]
    total = sp.Integer(1)
    for qi, ki in zip(q, k, strict=True):  # independent coordinates: a product of 1-D integrals
        total *= mgf.subs(c, qi + ki) * sp.exp(-(qi**2 + ki**2) / 2)
    return sp.simplify(total)
