"""The exercises, chapter by chapter. Every reference answer is computed, never typed.

Inputs are small integer or logarithmic matrices so that the exact answers stay short
(``softmax(0, log 2, log 3) = (1/6, 1/3, 1/2)``). Symbolic exercises declare the symbol
names a learner may type.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp

from attention_math import numeric, symbolic
from attention_math.examples import IDENTITY_2X2
from attention_math.exercises.build import (
    additive_mask,
    attention_exercise,
    drop_coinciding,
    float_array,
)
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["catalogue"]

L2, L3, L5 = sp.log(2), sp.log(3), sp.log(5)
CAUSAL3 = additive_mask(sp.Matrix(numeric.causal_mask(3).astype(int)))


def _forward() -> list[Exercise]:
    x = sp.Matrix([[1, 0, 1], [0, 2, 1]])
    w_q = sp.Matrix([[1, 0], [0, 1], [1, 1]])
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


def _examples() -> list[Exercise]:
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
    P_c = symbolic.softmax(c * sp.eye(2))
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
                "`sigma`. Every entry is linear in $\\sigma$."
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
                "Multiply the scores of the identity example by $c$: "
                "$P(c) = \\operatorname{softmax}(c\\,I)$. What is $\\lim_{c\\to\\infty} P(c)$?"
            ),
            answer=P_c.applyfunc(lambda e: sp.limit(e, c, sp.oo)),
            inputs={"I": sp.eye(2)},
            mistakes=(Mistake("missing_scale", P_c.subs(c, 0), "That is the limit c → 0."),),
            numeric=lambda: numeric.softmax(1e3 * np.eye(2)),
        ),
    ]


def _scaling() -> list[Exercise]:
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
            title="The factor for d_k = 64",
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
            title="A row of scores with d_k = 16",
            statement=(
                "A query and two keys with $d_k = 16$ give the unscaled scores $QK^\\top$ below. "
                "Compute the weights $\\operatorname{softmax}(QK^\\top/\\sqrt{d_k})$ exactly."
            ),
            q=sp.Matrix([[4] + [0] * 15]),
            k=sp.Matrix([[1] + [0] * 15, [0] * 16]),
            inputs={"QK^\\top": row},
        ),
    ]


def _masks() -> list[Exercise]:
    S = sp.Matrix([[0, 1, 1], [L3, 0, 2], [0, L2, L5]])
    V = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    pad = additive_mask(sp.Matrix([[1, 1, 0], [1, 1, 0]]))
    S_pad = sp.Matrix([[L2, 0, 5], [0, 0, -1]])
    unit = dict(k=sp.eye(3), scale=1, scale_slips=False)  # the scores are given: S·I·1 = S
    return [
        attention_exercise(
            id="mask-causal-weights",
            chapter="masks",
            title="Causal weights",
            statement=(
                "The scores $S$ are already scaled. Apply the causal mask $M$ (query $i$ sees "
                "keys $1..i$) and compute $P = \\operatorname{softmax}(S + M)$ exactly."
            ),
            q=S,
            mask=CAUSAL3,
            inputs={"S": S, "M": CAUSAL3},
            **unit,
        ),
        attention_exercise(
            id="mask-causal-output",
            chapter="masks",
            title="Causal output",
            statement="With the same $S$ and $M$, compute $O = \\operatorname{softmax}(S + M)V$.",
            q=S,
            v=V,
            mask=CAUSAL3,
            what="output",
            inputs={"S": S, "M": CAUSAL3, "V": V},
            **unit,
        ),
        attention_exercise(
            id="mask-padding",
            chapter="masks",
            title="A padded key",
            statement=(
                "The third key is padding, so the mask $M$ blocks it for both queries. Compute "
                "$P = \\operatorname{softmax}(S + M)$ exactly."
            ),
            q=S_pad,
            k=sp.eye(3),
            scale=1,
            scale_slips=False,
            mask=pad,
            inputs={"S": S_pad, "M": pad},
        ),
    ]


def _softmax() -> list[Exercise]:
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
            mistakes=(Mistake("unnormalized", sp.Matrix([[1, 3]]), "Divide by their sum."),),
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


def _multihead() -> list[Exercise]:
    X = sp.Matrix([[1, 1, 0, 2, 0, 1], [0, 1, 1, 0, 1, 1]])
    d_model, h = sp.symbols("d_model h", positive=True, integer=True)
    head = X[:, :3]  # head 1 sees features 1..3: d_k = d_model / h = 3
    heads = [X[:, 3 * i : 3 * i + 3] for i in range(2)]

    def concat(scale: sp.Expr) -> sp.Matrix:
        return sp.Matrix.hstack(*(symbolic.attention(x, x, x, scale=scale) for x in heads))

    wrong = Mistake("wrong_scale", concat(1 / sp.sqrt(6)), "Each head uses 1/√d_k, not 1/√d_model.")
    return [
        attention_exercise(
            id="multihead-head-weights",
            chapter="multihead",
            title="The weights of one head",
            statement=(
                "Two heads split $d_{model} = 6$ into $d_k = 3$ each: head 1 takes the first "
                "three columns of $X$ as its queries and keys ($W_Q = W_K = I$). Compute head 1's "
                "weights exactly."
            ),
            q=head,
            k=head,
            inputs={"X": X},
            extra=(
                Mistake(
                    "wrong_scale",
                    symbolic.softmax(symbolic.scores(head, head, 1 / sp.sqrt(6))),
                    "You scaled by 1/√d_model; a head scales by its own 1/√d_k.",
                ),
            ),
        ),
        Exercise(
            id="multihead-concat",
            chapter="multihead",
            title="Concatenated heads",
            statement=(
                "With the same split and $W_Q = W_K = W_V = I$ (so each head's $Q$, $K$, $V$ are "
                "its three columns of $X$), compute the concatenation of the two heads' outputs "
                "exactly."
            ),
            answer=concat(1 / sp.sqrt(3)),
            inputs={"X": X},
            mistakes=drop_coinciding(
                concat(1 / sp.sqrt(3)), [Mistake("missing_scale", concat(sp.S.One)), wrong]
            ),
            numeric=lambda: np.hstack([numeric.attention(*(float_array(x),) * 3) for x in heads]),
        ),
        Exercise(
            id="multihead-params",
            chapter="multihead",
            title="Parameters of multi-head attention",
            statement=(
                "$h$ heads with $d_k = d_v = d_{model}/h$, projections $W_Q^i, W_K^i, W_V^i$ "
                "of shape $d_{model} \\times d_k$ per head and $W_O$ of shape "
                "$h d_v \\times d_{model}$, no biases. How many parameters? Use `d_model`, `h`."
            ),
            answer=3 * h * d_model * (d_model / h) + (d_model / h) * h * d_model,
            symbols={"d_model": d_model, "h": h},
            kind="expression",
        ),
    ]


def _gradients() -> list[Exercise]:
    P = sp.Matrix(
        [
            [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)],
            [0, sp.Rational(1, 3), sp.Rational(2, 3)],
        ]
    )
    dO = sp.Matrix([[1, -1], [2, 0]])
    V = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    dS = sp.Matrix([[1, -1], [0, 2]])
    K = sp.Matrix([[1, 0, 1, 0], [0, 1, 0, 1]])
    Q = sp.Matrix([[1, 1, 0, 0], [0, 0, 1, 1]])
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
                "upstream gradient is $g = \\partial L/\\partial p$. Derive "
                "$\\partial L/\\partial s$ as a row in `p_1`, `p_2`, `p_3`, `g_1`, `g_2`, `g_3`."
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
                "derive $dS = \\partial L / \\partial S$."
            ),
            answer=ds2,
            mistakes=(
                Mistake("missing_term", P2.multiply_elementwise(G2)),
                Mistake(
                    "softmax_axis",
                    sp.Matrix(2, 2, lambda i, j: P2[i, j] * (G2[i, j] - col_dot[j])),
                    "The sum runs over the row (the keys of one query), not the column.",
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
                "With $S = QK^\\top/\\sqrt{d_k}$ ($d_k = 4$) and the gradient $dS$ of the scores, "
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
                    Mistake("transposed", dS * Q / 2, "dS must be transposed: dK = dSᵀ Q / √d_k."),
                    Mistake("missing_scale", dS.T * Q),
                ],
            ),
            numeric=lambda: float_array(dS).T @ float_array(Q) / np.sqrt(4),
        ),
    ]


@cache
def catalogue() -> dict[str, Exercise]:
    """Every exercise by id, in reading order (built once, on first use).

    Examples:
        >>> from attention_math.exercises.catalogue import catalogue
        >>> len(catalogue()) >= 20
        True
    """
    out: dict[str, Exercise] = {}
    for part in (_forward, _examples, _scaling, _masks, _softmax, _multihead, _gradients):
        for ex in part():
            if ex.id in out:
                raise ValueError(f"duplicate exercise id {ex.id!r}")
            out[ex.id] = ex
    return out
