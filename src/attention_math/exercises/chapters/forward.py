"""Exercises: The forward pass. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import numeric
from attention_math.exercises.build import (
    attention_exercise,
    float_array,
)
from attention_math.exercises.model import Exercise, Mistake
from attention_math.exercises.steps import fact, step

__all__ = ["exercises"]


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    x = sp.Matrix([[1, 0, 1], [0, 2, 1]])
    w_q = sp.Matrix([[1, 0], [0, 1], [2, 1]])  # Q not symmetric: Qᵀ (a column convention) shows
    q4 = sp.Matrix([[1, 1, 0, 0], [0, 1, 1, 0]])
    k4 = sp.Matrix([[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]])
    v3 = sp.Matrix([[1, 0], [0, 1], [2, 2]])
    Pi = sp.Matrix([[0, 0, 1], [1, 0, 0], [0, 1, 0]])  # new token 1 is old token 3
    s_hull = sp.Matrix([[0, sp.log(2), sp.log(3)]])  # weights (1/6, 1/3, 1/2)
    V_hull = sp.Matrix([[1, 0], [0, 1], [2, -1]])  # each row on the line x_1 + x_2 = 1
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
            explanation=(
                r"Each row of $X$ (one token) is multiplied by $W_Q$: a $2 \times 3$ times a "
                r"$3 \times 2$ matrix gives $2 \times 2$."
            ),
            solution=_solve_forward_qkv,
        ),
        attention_exercise(
            id="forward-scores",
            chapter="forward",
            title="Scaled scores",
            statement="Compute the scaled scores $S = QK^\\top/\\sqrt{d_k}$ exactly.",
            q=sp.Matrix([[1, 2], [0, 1]]),
            k=sp.Matrix([[1, 0], [1, 1]]),
            what="scores",
            explanation=(
                "Entry $(i, j)$ is the dot product of query $i$ with key $j$, divided by "
                r"$\sqrt{d_k}$ with $d_k = 2$ (the width of $Q$). Note $QK^\top$, not "
                r"$KQ^\top$: rows are queries."
            ),
            solution=_solve_forward_scores,
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
            explanation=(
                r"$QK^\top$ has integer entries and $\sqrt{d_k} = 2$; exponentiate each score "
                "and divide by its **row** sum (one row per query)."
            ),
            solution=_solve_forward_weights,
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
            explanation=(
                "The weights of the previous exercise times $V$: each output row is a "
                "weighted average of the rows of $V$."
            ),
            solution=_solve_forward_output,
        ),
        Exercise(
            id="forward-permutation",
            chapter="forward",
            title="Permuting the tokens",
            task="prove",
            statement=(
                "Self-attention without positions or a mask: "
                "$A(X) = \\operatorname{softmax}(XW_Q (XW_K)^\\top/\\sqrt{d_k})\\,XW_V$. "
                "Reorder the three tokens with the permutation matrix $\\Pi$ below (row $i$ "
                "of $\\Pi X$ is a row of $X$). Show that $A(\\Pi X) = R\\,A(X)$ for a matrix "
                "$R$ that does not depend on $X$ or the weights, and give $R$."
            ),
            answer=Pi,
            inputs={"Pi": Pi},
            mistakes=(
                Mistake(
                    "inverse_permutation",
                    Pi.T,
                    "Here the tokens are rows: the outputs are reordered by the same Π.",
                ),
            ),
            explanation=(
                "1. The projections act on each row: $(\\Pi X)W = \\Pi(XW)$, so the new "
                "$Q, K, V$ are $\\Pi Q, \\Pi K, \\Pi V$.\n"
                "2. The scores: $(\\Pi Q)(\\Pi K)^\\top = \\Pi\\,QK^\\top\\,\\Pi^\\top$, the "
                "same scores with rows and columns reordered alike.\n"
                "3. A row-wise softmax does not care about the order within a row and moves "
                "with its row: $\\operatorname{softmax}(\\Pi S \\Pi^\\top) = "
                "\\Pi\\,\\operatorname{softmax}(S)\\,\\Pi^\\top$.\n"
                "4. $\\Pi^\\top \\Pi = I$ (a permutation matrix is orthogonal), so "
                "$\\Pi P \\Pi^\\top \\cdot \\Pi V = \\Pi\\,(PV)$: $R = \\Pi$.\n\n"
                "Attention is *permutation equivariant*: shuffle the tokens and the outputs "
                "are shuffled the same way, nothing else changes. So it cannot know word "
                'order on its own: "dog bites man" and "man bites dog" give the same '
                "outputs, reordered. That is what positional encodings (and a causal mask, "
                "which is not permutation-symmetric) are for. SymPy checks each step with "
                "symbolic $X$ and weights."
            ),
            solution=_solve_forward_permutation,
        ),
        Exercise(
            id="forward-convex-hull",
            chapter="forward",
            title="The output lies among the values",
            task="prove",
            statement=(
                "Show that every output row $o = \\sum_j p_j v_j$ lies in the convex hull of "
                "the value rows $v_j$. Consequence: when every value row lies on the line "
                "$x_1 + x_2 = 1$, so does $o$. Check it on the scores $s$ and values $V$ "
                "below: give $o_1 + o_2$ for $o = \\operatorname{softmax}(s)V$."
            ),
            answer=sp.Integer(1),
            inputs={"s": s_hull, "V": V_hull},
            mistakes=(Mistake("unnormalized", sum(s_hull.applyfunc(sp.exp) * V_hull)),),
            kind="scalar",
            explanation=(
                "1. The weights are non-negative, $p_j = e^{s_j}/\\sum_l e^{s_l} \\ge 0$, "
                "and sum to one. A sum $\\sum_j p_j v_j$ with such weights is a *convex "
                "combination*: by definition a point of the convex hull of the $v_j$.\n"
                "2. A linear condition that every $v_j$ meets, $a^\\top v_j = b$, passes to "
                "$o$: $a^\\top o = \\sum_j p_j\\, a^\\top v_j = b \\sum_j p_j = b$. The step "
                "uses $\\sum_j p_j = 1$; unnormalised weights would give $b \\sum_j "
                "e^{s_j}$.\n"
                "3. Here the weights are $(1/6, 1/3, 1/2)$ and $o = (7/6, -1/6)$: "
                "$o_1 + o_2 = 1$.\n\n"
                "So each coordinate of an output lies between the smallest and the largest "
                "value in that coordinate: attention averages, it never extrapolates. "
                "(Dropout on the weights breaks this: the kept weights are divided by "
                "$1 - p_{\\text{drop}}$ and need not sum to one.)"
            ),
            solution=_solve_forward_convex_hull,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_forward_qkv(ex: Exercise) -> object:
    X, W_Q = ex.inputs["X"], ex.inputs["W_Q"]
    Q = X * W_Q  # (2, 3) @ (3, 2) -> (2, 2)
    return Q


def _solve_forward_scores(ex: Exercise) -> object:
    Q, K = ex.inputs["Q"], ex.inputs["K"]
    d_k = Q.cols
    S = Q * K.T / sp.sqrt(d_k)  # (2, 2): row i = query i
    return S


def _solve_forward_weights(ex: Exercise) -> object:
    Q, K = ex.inputs["Q"], ex.inputs["K"]
    S = Q * K.T / sp.sqrt(Q.cols)  # (2, 3)
    E = S.applyfunc(sp.exp)  # (2, 3)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # each row sums to 1
    return P


def _solve_forward_output(ex: Exercise) -> object:
    Q, K, V = ex.inputs["Q"], ex.inputs["K"], ex.inputs["V"]
    S = Q * K.T / sp.sqrt(Q.cols)  # (2, 3)
    E = S.applyfunc(sp.exp)  # (2, 3)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))  # each row sums to 1
    O = P * V  # (2, 3) @ (3, 2) -> (2, 2)
    return O


def _solve_forward_permutation(ex: Exercise) -> object:
    Pi = ex.inputs["Pi"]  # (3, 3)
    X = sp.Matrix(3, 2, lambda i, c: sp.Symbol(f"x_{i + 1}{c + 1}", real=True))  # (n, d) = (3, 2)
    W_Q, W_K, W_V = (
        sp.Matrix(2, 2, lambda r, c, w=w: sp.Symbol(f"{w}_{r + 1}{c + 1}", real=True))
        for w in "abc"
    )  # (2, 2) each: any weights
    Q, K, V = X * W_Q, X * W_K, X * W_V  # (3, 2) each
    step("a projection acts on each row", (Pi * X) * W_Q, Pi * Q)
    S = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"s_{i + 1}{j + 1}", real=True))  # any scores
    step("the scores are reordered alike", (Pi * Q) * (Pi * K).T, Pi * (Q * K.T) * Pi.T)
    P = symbolic.softmax(S)  # (3, 3), row-wise
    step("the softmax moves with its rows", symbolic.softmax(Pi * S * Pi.T), Pi * P * Pi.T)
    step("a permutation is orthogonal", Pi.T * Pi, sp.eye(3))
    step("so the outputs are reordered", (Pi * P * Pi.T) * (Pi * V), Pi * (P * V))
    return Pi


def _solve_forward_convex_hull(ex: Exercise) -> object:
    s, V = ex.inputs["s"], ex.inputs["V"]  # (1, 3), (3, 2)
    E = s.applyfunc(sp.exp)  # (1, 3)
    p = E / sum(E)  # (1, 3)
    fact("the weights are non-negative", all(w >= 0 for w in p))
    step("and sum to one", sum(p), 1)
    a = sp.Matrix([1, 1])  # (2, 1): the line x_1 + x_2 = 1
    step("every value row is on the line", V * a, sp.ones(3, 1))
    o = p * V  # (1, 2)
    return step("so is the output", (o * a)[0], sum(p))
