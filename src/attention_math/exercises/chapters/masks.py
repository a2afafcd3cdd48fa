"""Exercises: Masks. Reference answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np, numeric
from attention_math.exercises.build import (
    additive_mask,
    attention_exercise,
    float_array,
)
from attention_math.exercises.model import Exercise, Mistake
from attention_math.exercises.steps import fact, step

__all__ = ["exercises"]

L2, L3, L5 = sp.log(2), sp.log(3), sp.log(5)  # logarithms keep the weights rational
F16_MAX = sp.Integer(65504)  # float16's largest finite number
CAUSAL3 = additive_mask(sp.Matrix([[int(j <= i) for j in range(3)] for i in range(3)]))  # j ≤ i


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    S = sp.Matrix([[0, 1, 1], [L3, 0, 2], [0, L2, L5]])
    V = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    pad = additive_mask(sp.Matrix([[1, 1, 0], [1, 1, 0]]))
    S_pad = sp.Matrix([[L2, 0, 5], [0, 0, -1]])
    unit = dict(k=sp.eye(3), scale=1, scale_slips=False)  # the scores are given: S·I·1 = S
    s_row = sp.Matrix([[1, 3, -2]])  # scores of a row whose keys are all blocked
    s_logs = sp.Matrix([[0, L2, L3]])
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
            explanation=(
                "Add the mask, then take the softmax of each row: a blocked score is "
                r"$-\infty$ and gets weight $e^{-\infty} = 0$, so row $i$ normalises over its "
                "first $i$ entries only. The logarithms make the weights rational."
            ),
            solution=_solve_mask_causal_weights,
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
            explanation=(
                "The masked weights times $V$; the first output row is the first value row, "
                "since query one sees only key one."
            ),
            solution=_solve_mask_causal_output,
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
            explanation=(
                "The padded key gets weight zero in both rows, however large its score; the "
                "other two share the row."
            ),
            solution=_solve_mask_padding,
        ),
        Exercise(
            id="mask-fill-float16",
            chapter="masks",
            title="The −1e9 fill in float16",
            task="explain",
            statement=(
                "Much code blocks a score by filling it with $-10^9$ (`masked_fill(mask, "
                "-1e9)`). What is $-10^9$ once stored as float16? Explain, and say what a row "
                "whose every key is blocked then gives. Type $\\pm\\infty$ as `oo` or `-oo`."
            ),
            answer=-sp.oo,
            mistakes=(Mistake("fp16_saturates", -F16_MAX),),
            kind="scalar",
            explanation=(
                "1. float16 has 10 fraction bits and exponents up to 15, so its largest "
                "finite number is $(2 - 2^{-10})\\cdot 2^{15} = 65504$; the next step up "
                "would be $2^{16}$.\n"
                "2. Rounding to nearest sends everything from halfway, $65520$, upward to "
                "$\\infty$: there is no saturation at $\\pm 65504$.\n"
                "3. $10^9 > 65520$, so float16 stores $-10^9$ as $-\\infty$ (NumPy and "
                "PyTorch agree: `float16(-1e9)` is `-inf`).\n\n"
                "A partly blocked row is then fine: its blocked entries are $-\\infty$ and "
                "get weight $e^{-\\infty} = 0$. A row blocked everywhere is all $-\\infty$: "
                "the stable softmax subtracts its maximum, $-\\infty - (-\\infty)$ is NaN, "
                "and the whole row, then the output, then (backward) every gradient it "
                "touches is NaN. A fill meant to be finite, to avoid exactly that, is not "
                "finite in float16: use the dtype's own `finfo(dtype).min` ($-65504$), or "
                "treat an empty row on purpose (next exercises)."
            ),
            solution=_solve_mask_fill_float16,
        ),
        Exercise(
            id="mask-fill-float32",
            chapter="masks",
            title="The −1e9 fill in float32",
            task="explain",
            statement=(
                "In float32 the fill $-10^9$ is finite. A query whose three keys are all "
                "blocked has the scores $s_j + (-10^9)$ for the scores $s$ below. Show that "
                "float32 rounds each sum to $-10^9$ itself, and give the row's weights."
            ),
            answer=sp.Matrix([[sp.Rational(1, 3)] * 3]),
            inputs={"s": s_row},
            mistakes=(Mistake("fill_absorbs", symbolic.softmax(s_row)),),
            numeric=lambda: numeric.softmax(
                (np.float32(-1e9) + float_array(s_row).astype(np.float32)).astype(np.float64)
            ),
            kind="weights",
            explanation=(
                "1. $2^{29} \\le 10^9 < 2^{30}$, and float32 keeps 23 fraction bits, so "
                "float32 numbers near $10^9$ are $2^{29 - 23} = 64$ apart.\n"
                "2. Each $|s_j| \\le 3 < 32$, half that spacing: $s_j - 10^9$ rounds back to "
                "$-10^9$. The scores are gone before the softmax runs.\n"
                "3. Three equal scores: by shift invariance the weights are those of "
                "$(0, 0, 0)$, $e^0/(3e^0) = 1/3$ each.\n\n"
                "In exact arithmetic the shared fill would cancel and leave "
                "$\\operatorname{softmax}(s)$; in float32 the row is uniform. Either way an "
                "empty row averages over keys it must not see (the future, or padding), "
                "quietly: no NaN warns of it."
            ),
            solution=_solve_mask_fill_float32,
        ),
        Exercise(
            id="mask-empty-row",
            chapter="masks",
            title="The fully masked row",
            task="explain",
            statement=(
                "Every key of a row is blocked. With the mask $-\\infty$ the weights are "
                "$0/0$. With a finite fill $-c$ on every entry, take the limit: give "
                "$\\lim_{c \\to \\infty} \\operatorname{softmax}(s - c\\mathbf{1})$ for the "
                "scores $s$ below, exactly, and explain why it is not what masking means."
            ),
            answer=symbolic.softmax(s_logs),
            inputs={"s": s_logs},
            mistakes=(Mistake("fill_absorbs", sp.Matrix([[sp.Rational(1, 3)] * 3])),),
            kind="weights",
            explanation=(
                "1. With $-\\infty$ every exponential is $e^{-\\infty} = 0$ and the "
                "weights are $0/0$: undefined, NaN in floating point.\n"
                "2. With a finite fill, shift invariance gives "
                "$\\operatorname{softmax}(s - c\\mathbf{1}) = \\operatorname{softmax}(s)$ "
                "for every $c$, so the limit is $\\operatorname{softmax}(s) = (1/6, 1/3, "
                "1/2)$: the limit is not the value at the limit, and the mask did nothing "
                "at all.\n"
                "3. In floating point the fill swallows the scores first (previous "
                "exercise) and the row comes out uniform instead.\n\n"
                'None of the three says "this query sees nothing". For a partly blocked '
                "row every convention agrees; for an empty one it must be a choice. "
                "PyTorch's `scaled_dot_product_attention` chose, in version 2.5, a zero "
                "output row: its safe softmax gives an empty row zero weights "
                "([pytorch/pytorch#133882](https://github.com/pytorch/pytorch/pull/133882); "
                "before, NaN), while `torch.softmax` of a row of "
                "$-\\infty$ is still NaN. This project returns zeros too; see "
                "[Masks](../why/masks.md)."
            ),
            solution=_solve_mask_empty_row,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_mask_causal_weights(ex: Exercise) -> object:
    S, M = ex.inputs["S"], ex.inputs["M"]
    Z = S + M  # blocked entries become -oo BEFORE the softmax
    E = Z.applyfunc(sp.exp)  # exp(-oo) = 0
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P


def _solve_mask_causal_output(ex: Exercise) -> object:
    S, M = ex.inputs["S"], ex.inputs["M"]
    Z = S + M  # blocked entries become -oo BEFORE the softmax
    E = Z.applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P * ex.inputs["V"]


def _solve_mask_padding(ex: Exercise) -> object:
    S, M = ex.inputs["S"], ex.inputs["M"]
    Z = S + M  # blocked entries become -oo BEFORE the softmax
    E = Z.applyfunc(sp.exp)
    P = sp.Matrix.vstack(*(E.row(i) / sum(E.row(i)) for i in range(E.rows)))
    return P


def _solve_mask_fill_float16(ex: Exercise) -> object:
    largest = step("the largest float16", (2 - sp.Rational(1, 2**10)) * 2**15, sp.Integer(65504))
    halfway = largest + sp.Rational(2**16 - largest, 2)  # 65520: from here, round to ∞
    fact("10⁹ is beyond the halfway point", sp.Integer(10**9) > halfway)
    with np.errstate(over="ignore"):  # the overflow to -inf is the point
        fact("NumPy agrees: float16(-1e9) is -inf", np.float16(-1e9) == -np.inf)
    return -sp.oo


def _solve_mask_fill_float32(ex: Exercise) -> object:
    s = ex.inputs["s"]  # (1, 3)
    fact("2²⁹ ≤ 10⁹ < 2³⁰", 2**29 <= 10**9 < 2**30)
    spacing = step("float32 numbers near 10⁹ are 64 apart", sp.Integer(2) ** (29 - 23), 64)
    fact("every |s_j| is below half the spacing", all(abs(x) < spacing / 2 for x in s))
    fill = np.float32(-1e9)
    fact("float32 agrees", all(fill + np.float32(float(x)) == fill for x in s))
    E = sp.ones(1, 3)  # three equal scores, shifted to 0: e^0 = 1 each
    return E / sum(E)


def _solve_mask_empty_row(ex: Exercise) -> object:
    s = ex.inputs["s"]  # (1, 3)
    fact("0/0 is undefined", sp.exp(-sp.oo) / (3 * sp.exp(-sp.oo)) is sp.nan)
    c = sp.Symbol("c", positive=True)
    filled = symbolic.softmax(s - c * sp.ones(1, 3))  # (1, 3)
    step("the fill cancels, for every c", filled, symbolic.softmax(s))
    limit = filled.applyfunc(lambda w: sp.limit(w, c, sp.oo))  # (1, 3)
    return step("so does its limit", limit, symbolic.softmax(s))
