"""Exercises: Multi-head attention. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np, numeric
from attention_math.exercises.build import (
    attention_exercise,
    drop_coinciding,
    float_array,
)
from attention_math.exercises.model import Exercise, Mistake
from attention_math.exercises.steps import step

__all__ = ["exercises"]


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    X = sp.Matrix([[1, 1, 0, 2, 0, 1], [0, 1, 1, 0, 1, 1]])
    d_model, h = sp.symbols("d_model h", positive=True, integer=True)
    head = X[:, :3]  # head 1 sees features 1..3: d_k = d_model / h = 3
    heads = [X[:, 3 * i : 3 * i + 3] for i in range(2)]

    def concat(scale: sp.Expr) -> sp.Matrix:
        return sp.Matrix.hstack(*(symbolic.attention(x, x, x, scale=scale) for x in heads))

    W_O = sp.Matrix([[1, 0, 2], [0, 1, 1], [3, 1, 0], [1, 2, 1]])  # (h·d_v, d_model) = (4, 3)
    wrong = Mistake("wrong_scale", concat(1 / sp.sqrt(6)), "Each head uses 1/√d_k, not 1/√d_model.")
    return [
        attention_exercise(
            id="multihead-head-weights",
            chapter="multihead",
            title="The weights of one head",
            statement=(
                "Two heads split $d_{\\text{model}} = 6$ into $d_k = 3$ each: head 1 takes the "
                "first three columns of $X$ as its queries and keys ($W_Q = W_K = I$). Compute "
                "head 1's weights exactly."
            ),
            q=head,
            k=head,
            inputs={"X": X},
            extra=(
                Mistake(
                    "wrong_scale",
                    symbolic.softmax(symbolic.scores(head, head, scale=1 / sp.sqrt(6))),
                    "You scaled by 1/√d_model; a head scales by its own 1/√d_k.",
                ),
            ),
            explanation=(
                "Head one's queries and keys are the first $d_k = 3$ columns of $X$, and it "
                r"scales by **its own** $1/\sqrt{d_k} = 1/\sqrt3$, not by "
                r"$1/\sqrt{d_{\text{model}}}$."
            ),
            solution=_solve_multihead_head_weights,
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
            explanation=(
                r"Each head attends within its own three columns; the outputs, each $2 \times "
                "3$, are placed side by side."
            ),
            solution=_solve_multihead_concat,
        ),
        Exercise(
            id="multihead-params",
            chapter="multihead",
            title="Parameters of multi-head attention",
            statement=(
                "$h$ heads with $d_k = d_v = d_{\\text{model}}/h$, projections "
                "$W_Q^{(i)}, W_K^{(i)}, W_V^{(i)}$ of shape $d_{\\text{model}} \\times d_k$ per "
                "head and $W_O$ of shape $h d_v \\times d_{\\text{model}}$, no biases. How many "
                "parameters? Use `d_model`, `h`."
            ),
            answer=3 * h * d_model * (d_model / h) + (d_model / h) * h * d_model,
            symbols={"d_model": d_model, "h": h},
            kind="expression",
            explanation=(
                "Three projections per head of $d_{\\text{model}} d_k$ each, plus $W_O$; with "
                "$d_k = d_v = d_{\\text{model}}/h$ the number of heads drops out."
            ),
            solution=_solve_multihead_params,
        ),
        Exercise(
            id="multihead-concat-sum",
            chapter="multihead",
            title="Concatenate, then project: a sum over heads",
            task="prove",
            statement=(
                "Two heads with $d_v = 2$ give outputs $\\text{head}_1, \\text{head}_2$ "
                "($n \\times 2$ each). Split $W_O$ ($4 \\times 3$, below) into blocks of rows "
                "$W_O^{(1)}, W_O^{(2)}$ and show that "
                "$\\operatorname{Concat}(\\text{head}_1, \\text{head}_2)\\,W_O = "
                "\\text{head}_1 W_O^{(1)} + \\text{head}_2 W_O^{(2)}$. Give $W_O^{(2)}$."
            ),
            answer=W_O[2:, :],
            inputs={"W_O": W_O},
            mistakes=(Mistake("head_block", W_O[:2, :]),),
            explanation=(
                "1. Write $C = [\\,\\text{head}_1 \\;\\; \\text{head}_2\\,]$ and "
                "$W_O = \\begin{bmatrix} W_O^{(1)} \\\\ W_O^{(2)} \\end{bmatrix}$, split after "
                "row $d_v = 2$: the column blocks of $C$ match the row blocks of $W_O$.\n"
                "2. Entry $(t, m)$ of $CW_O$ is $\\sum_{c=1}^{4} C_{tc} (W_O)_{cm}$; split the "
                "sum at $c = 2$: the first half is $(\\text{head}_1 W_O^{(1)})_{tm}$, the "
                "second $(\\text{head}_2 W_O^{(2)})_{tm}$.\n"
                "3. So $CW_O = \\text{head}_1 W_O^{(1)} + \\text{head}_2 W_O^{(2)}$, "
                "block multiplication; here $W_O^{(2)}$ is rows 3 and 4 of $W_O$.\n\n"
                "What it means: each head writes into the model's $d_{\\text{model}}$-wide "
                "stream through its own $d_v \\times d_{\\text{model}}$ matrix, and the writes "
                "add. Nothing mixes the heads but this sum, which is why a head can be studied, "
                "ablated (its block set to zero) or pruned on its own, and why "
                '$W_V^{(i)} W_O^{(i)}$ (the head\'s "OV circuit", in the terms of '
                "[Elhage et al., 2021]"
                "(https://transformer-circuits.pub/2021/framework/index.html)) "
                "is the unit that matters. SymPy checks it for symbolic heads."
            ),
            solution=_solve_multihead_concat_sum,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_multihead_head_weights(ex: Exercise) -> object:
    X = ex.inputs["X"]
    q = k = X[:, :3]  # (2, 3): head 1's slice
    S = q * k.T / sp.sqrt(3)
    E = S.applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P


def _solve_multihead_concat(ex: Exercise) -> object:
    X = ex.inputs["X"]
    outs = []
    for h in range(2):
        x = X[:, 3 * h : 3 * h + 3]  # (2, 3): Q = K = V for this head
        E = (x * x.T / sp.sqrt(3)).applyfunc(sp.exp)
        P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(2)))
        outs.append(P * x)
    return sp.Matrix.hstack(*outs)  # (2, 6)


def _solve_multihead_params(ex: Exercise) -> object:
    d_model, h = sp.symbols("d_model h", positive=True, integer=True)
    d_k = d_v = d_model / h
    count = h * 3 * d_model * d_k + (h * d_v) * d_model
    return sp.simplify(count)


def _solve_multihead_concat_sum(ex: Exercise) -> object:
    W_O = ex.inputs["W_O"]  # (4, 3): h·d_v rows, d_model columns
    head_1 = sp.Matrix(2, 2, lambda t, c: sp.Symbol(f"a_{t + 1}{c + 1}"))  # (n, d_v) = (2, 2)
    head_2 = sp.Matrix(2, 2, lambda t, c: sp.Symbol(f"b_{t + 1}{c + 1}"))  # (2, 2)
    C = sp.Matrix.hstack(head_1, head_2)  # (2, 4)
    W_1, W_2 = W_O[:2, :], W_O[2:, :]  # (2, 3) each: the blocks of rows
    step("Concat·W_O is the sum over heads", C * W_O, head_1 * W_1 + head_2 * W_2)
    W = sp.Matrix(4, 3, lambda c, m: sp.Symbol(f"w_{c + 1}{m + 1}"))  # any W_O, not just this one
    step("for every W_O", C * W, head_1 * W[:2, :] + head_2 * W[2:, :])
    return W_2
