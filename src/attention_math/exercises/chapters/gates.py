"""Exercises: Sinks and gates (gpt-oss's learned sink logits, Qwen3-Next's output gate,
QK-norm and partial RoPE). Reference answers are computed, never typed.

This module imports no NumPy (the checker also runs without it): every exact answer is
SymPy, and the NumPy references are looked up when they are called, at build time.
"""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]

L2, L3 = sp.log(2), sp.log(3)


def _sink_weights(z: list[sp.Expr], s: sp.Expr) -> sp.Matrix:
    e = [sp.exp(x) for x in z]
    total = sp.Add(*e) + sp.exp(s)
    return sp.Matrix([[sp.simplify(x / total) for x in e]])


def _sink_ref() -> np.ndarray:
    from attention_math.gates import sink_softmax  # NumPy: build time only

    return sink_softmax(np.log([1.0, 2.0, 3.0]), np.log(2.0))


def _sink_mass_ref() -> np.ndarray:
    from attention_math.gates import sink_gate  # NumPy: build time only

    return 1 - sink_gate(np.log([3.0, 4.0]), np.log(2.0))


def _half_ref() -> np.ndarray:
    from attention_math.gates import sink_gate  # NumPy: build time only

    z, s = np.log([2.0, 6.0]), np.log(8.0)
    if abs(float(sink_gate(z, s)) - 0.5) > 1e-15:  # the answer does give half to the sink
        raise AssertionError("the sink logit log 8 does not take half the weight")
    return np.asarray(s)


def _slope_ref() -> np.ndarray:
    from attention_math.gates import sink_gate  # NumPy: build time only

    z, h = np.log([1.0, 2.0]), 1e-5  # sink weight 1/4 at s = 0: e^0 / (1 + 2 + 1)
    w = [1 - float(sink_gate(z, s)) for s in (-h, h)]
    return np.asarray((w[1] - w[0]) / (2 * h))


def _gate_ref() -> np.ndarray:
    from attention_math.gates import sigmoid_gate  # NumPy: build time only

    return sigmoid_gate(np.array([[2.0, -4.0]]), np.array([[0.0, np.log(3.0)]]))


def _split_ref() -> np.ndarray:
    both = np.arange(8.0).reshape(2, 4)  # (H, 2d): Qwen3-Next's view of one token's q_proj
    return both[1, :2]  # head 1's query: the first d of its slice


def _norm_ref() -> np.ndarray:
    from attention_math.gates import zero_centred_rms_norm  # NumPy: build time only

    return zero_centred_rms_norm(np.array([[3.0, 4.0]]), np.array([1.0, -0.5]), eps=0.0)


def _rope_ref() -> np.ndarray:
    from attention_math.positional import rope  # NumPy: build time only

    x = np.ones((2, 256))  # position 0, position 1: what turned is what changed
    return np.asarray(float((rope(x, partial_rotary_factor=0.25)[1] != 1.0).sum() // 2))


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    z3 = [sp.Integer(0), L2, L3]
    s_hat, z_sum = sp.symbols("s_sink lambda", positive=True)
    rms = sp.sqrt(sp.Rational(25, 2))
    x = [sp.Integer(3), sp.Integer(4)]
    w = [sp.Integer(1), sp.Rational(-1, 2)]
    return [
        Exercise(
            id="gates-sink-weights",
            chapter="gates",
            title="Weights beside a sink",
            statement=(
                "A gpt-oss head has the sink logit $s_{\\text{sink}} = \\log 2$. A query's scores "
                "are $s = (0, \\log 2, \\log 3)$. Give the three weights on the keys "
                "$e^{s_j} / (\\sum_k e^{s_k} + e^{s_{\\text{sink}}})$ exactly, as a $1 \\times 3$ "
                "row."
            ),
            answer=_sink_weights(z3, L2),
            mistakes=(
                Mistake("sink_missing", symbolic.softmax([z3]).applyfunc(sp.simplify)),
                Mistake("softmax_one", _sink_weights(z3, sp.Integer(0))),
            ),
            numeric=_sink_ref,
            explanation=(
                "The exponentials are $1, 2, 3$ and the sink adds $e^{\\log 2} = 2$: the "
                "denominator is $8$, and the keys keep $6/8$ of the weight."
            ),
            solution=_solve_gates_sink_weights,
        ),
        Exercise(
            id="gates-sink-mass",
            chapter="gates",
            title="The sink's share",
            statement=(
                "Scores $s = (\\log 3, \\log 4)$ and a sink logit $s_{\\text{sink}} = \\log 2$. "
                "Which weight "
                "goes to the sink (the column that is dropped)?"
            ),
            answer=sp.Rational(2, 9),
            mistakes=(Mistake("softmax_one", sp.Rational(1, 8)),),
            numeric=_sink_mass_ref,
            kind="scalar",
            explanation=(
                "The sink's weight is "
                "$e^{s_{\\text{sink}}} / (\\sum_k e^{s_k} + e^{s_{\\text{sink}}}) "
                "= 2 / (3 + 4 + 2)$: "
                "$\\operatorname{sigmoid}(s_{\\text{sink}} - \\operatorname{lse}(s))$."
            ),
            solution=_solve_gates_sink_mass,
        ),
        Exercise(
            id="gates-sink-half",
            chapter="gates",
            title="A sink that takes half",
            statement=(
                "The scores of a query are $s = (\\log 2, \\log 6)$. Which sink logit "
                "$s_{\\text{sink}}$ makes "
                "the sink take exactly half of the weight?"
            ),
            answer=sp.log(8),
            numeric=_half_ref,
            kind="scalar",
            explanation=(
                "The sink takes half when $e^{s_{\\text{sink}}}$ equals the sum of the keys' "
                "exponentials, $2 + 6 = 8$: "
                "$s_{\\text{sink}} = \\log 8 = \\operatorname{lse}(s)$."
            ),
            solution=_solve_gates_sink_half,
        ),
        Exercise(
            id="gates-sink-as-gate",
            chapter="gates",
            title="A sink is a gate",
            statement=(
                "Write $\\lambda = \\sum_k e^{s_k}$ for a row of scores $s$. Which total weight do "
                "the keys keep beside a sink logit $s_{\\text{sink}}$? Give it in terms of `lam` "
                "($\\lambda$) and `s_sink`; it is the factor by which the "
                "sink scales the ordinary softmax head's output."
            ),
            answer=z_sum / (z_sum + sp.exp(s_hat)),
            mistakes=(Mistake("sink_missing", sp.Integer(1)),),
            symbols={"lam": z_sum, "s_sink": s_hat},
            kind="expression",
            explanation=(
                "Each weight is $e^{s_j} / (\\lambda + e^{s_{\\text{sink}}})$; summed over "
                "the keys, "
                "$\\lambda / (\\lambda + e^{s_{\\text{sink}}}) = "
                "\\operatorname{sigmoid}(\\log \\lambda - s_{\\text{sink}})$. Every weight is the "
                "softmax weight $e^{s_j}/\\lambda$ times this one number, so the head's output "
                "is too."
            ),
            solution=_solve_gates_sink_as_gate,
        ),
        Exercise(
            id="gates-sink-slope",
            chapter="gates",
            title="How a sink's weight moves",
            statement=(
                "Scores $s = (0, \\log 2)$ and a sink logit $s_{\\text{sink}} = 0$: the sink's "
                "weight is $p_{\\text{sink}} = 1/4$. What is "
                "$\\partial p_{\\text{sink}} / \\partial s_{\\text{sink}}$ there?"
            ),
            answer=sp.Rational(3, 16),
            numeric=_slope_ref,
            tolerance=None,
            bound_eps=1e8,  # a central difference: about 1e-10 off, far below the answer
            kind="scalar",
            explanation=(
                "$p_{\\text{sink}} = "
                "\\operatorname{sigmoid}(s_{\\text{sink}} - \\operatorname{lse}(s))$ "
                "and $\\operatorname{sigmoid}' = \\operatorname{sigmoid}\\,(1 - "
                "\\operatorname{sigmoid})$, so "
                "$\\partial p_{\\text{sink}}/\\partial s_{\\text{sink}} = "
                "p_{\\text{sink}}(1 - p_{\\text{sink}}) = \\frac14 \\cdot \\frac34$."
            ),
            solution=_solve_gates_sink_slope,
        ),
        Exercise(
            id="gates-output-gate",
            chapter="gates",
            title="The sigmoid output gate",
            statement=(
                "A head's output is $y = (2, -4)$ and its gate logits, from the same token's "
                "hidden state, are $g = (0, \\log 3)$. What does Qwen3-Next's gate "
                "$y \\odot \\operatorname{sigmoid}(g)$ pass on, as a $1 \\times 2$ row?"
            ),
            answer=sp.Matrix([[2 * symbolic.sigmoid(0), -4 * symbolic.sigmoid(L3)]]).applyfunc(
                sp.simplify
            ),
            mistakes=(
                Mistake(
                    "gate_sign",
                    sp.Matrix([[2 * symbolic.sigmoid(0), -4 * symbolic.sigmoid(-L3)]]).applyfunc(
                        sp.simplify
                    ),
                ),
            ),
            numeric=_gate_ref,
            explanation=(
                "$\\operatorname{sigmoid}(0) = 1/2$ and "
                "$\\operatorname{sigmoid}(\\log 3) = 3/(3 + 1) = 3/4$, coordinate by "
                "coordinate: $(2 \\cdot \\frac12, -4 \\cdot \\frac34)$."
            ),
            solution=_solve_gates_output_gate,
        ),
        Exercise(
            id="gates-query-split",
            chapter="gates",
            title="Where Qwen3-Next's query is",
            statement=(
                "Qwen3-Next's `q_proj` gives each token $h \\cdot 2d$ numbers, viewed as $h$ "
                "heads of $2d$ and split in two per head (`torch.chunk(..., 2, dim=-1)`): "
                "query first, then gate. With $h = 2$ and $d = 2$, the numbers are indexed "
                "$0 \\ldots 7$. Which indices are the query of head 1 (the second head), as a "
                "$1 \\times 2$ row?"
            ),
            answer=sp.Matrix([[4, 5]]),
            mistakes=(Mistake("chunk_whole", sp.Matrix([[2, 3]])),),
            numeric=_split_ref,
            explanation=(
                "Head $i$ owns indices $4i \\ldots 4i + 3$; the query is the first half of that "
                "slice: $4, 5$ for $i = 1$ (its gate is $6, 7$). Splitting all eight numbers in "
                "two halves would give the queries $0 \\ldots 3$, head 1's at $2, 3$."
            ),
            solution=_solve_gates_query_split,
        ),
        Exercise(
            id="gates-zero-centred-norm",
            chapter="gates",
            title="A zero-centred RMSNorm",
            statement=(
                "Qwen3-Next normalises each head's query with "
                "$x / \\operatorname{rms}(x) \\cdot (1 + \\gamma)$, its gain $1 + \\gamma$ "
                "(no small constant under the root here). Give it for $x = (3, 4)$ and "
                "$\\gamma = (1, -1/2)$, as a $1 \\times 2$ row."
            ),
            answer=sp.Matrix([[x[i] / rms * (1 + w[i]) for i in range(2)]]).applyfunc(sp.radsimp),
            mistakes=(
                Mistake(
                    "gain_offset",
                    sp.Matrix([[x[i] / rms * w[i] for i in range(2)]]).applyfunc(sp.radsimp),
                ),
            ),
            numeric=_norm_ref,
            explanation=(
                "$\\operatorname{rms}(x)^2 = 25/2$, so $x$ is divided by $5/\\sqrt2$; the gains "
                "are $1 + 1 = 2$ and $1 - 1/2 = 1/2$."
            ),
            solution=_solve_gates_zero_centred_norm,
        ),
        Exercise(
            id="gates-partial-rope",
            chapter="gates",
            title="Partial RoPE's frequencies",
            statement=(
                "Qwen3-Next's heads have $d = 256$ and `partial_rotary_factor` $= 0.25$. How many "
                "different rotation frequencies $\\theta_i$ does one head use?"
            ),
            answer=sp.Integer(32),
            numeric=_rope_ref,
            kind="scalar",
            explanation=(
                "RoPE turns the first $\\lfloor 256 \\cdot 0.25 \\rfloor = 64$ coordinates, in "
                "$32$ pairs, one frequency each; the other $192$ coordinates carry no position."
            ),
            solution=_solve_gates_partial_rope,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_gates_sink_weights(ex: Exercise) -> object:
    z, s = [0, sp.log(2), sp.log(3)], sp.log(2)
    e = [sp.exp(x) for x in z]
    return sp.Matrix([[x / (sum(e) + sp.exp(s)) for x in e]])


def _solve_gates_sink_mass(ex: Exercise) -> object:
    z, s = [sp.log(3), sp.log(4)], sp.log(2)
    return sp.exp(s) / (sum(sp.exp(x) for x in z) + sp.exp(s))


def _solve_gates_sink_half(ex: Exercise) -> object:
    s = sp.Symbol("s", real=True)
    z = [sp.log(2), sp.log(6)]
    (root,) = sp.solve(sp.Eq(sp.exp(s), sum(sp.exp(x) for x in z)), s)
    return root


def _solve_gates_sink_as_gate(ex: Exercise) -> object:
    lam, s_sink = sp.symbols("lambda s_sink", positive=True)
    return lam / (lam + sp.exp(s_sink))  # Σ_j e^{s_j} / (λ + e^{s_sink})


def _solve_gates_sink_slope(ex: Exercise) -> object:
    s = sp.Symbol("s", real=True)
    w = sp.exp(s) / (1 + 2 + sp.exp(s))  # e^0 + e^{log 2} = 3
    return sp.diff(w, s).subs(s, 0)


def _solve_gates_output_gate(ex: Exercise) -> object:
    y, g = [2, -4], [0, sp.log(3)]
    return sp.Matrix([[y[i] / (1 + sp.exp(-g[i])) for i in range(2)]]).applyfunc(sp.simplify)


def _solve_gates_query_split(ex: Exercise) -> object:
    h, d = 2, 2
    heads = [list(range(i * 2 * d, (i + 1) * 2 * d)) for i in range(h)]  # each head's slice
    return sp.Matrix([heads[1][:d]])  # query first, then gate


def _solve_gates_zero_centred_norm(ex: Exercise) -> object:
    x, w = [3, 4], [1, sp.Rational(-1, 2)]
    rms = sp.sqrt(sp.Rational(sum(v * v for v in x), len(x)))
    return sp.Matrix([[x[i] / rms * (1 + w[i]) for i in range(2)]])


def _solve_gates_partial_rope(ex: Exercise) -> object:
    rotated = int(256 * sp.Rational(1, 4))  # coordinates that turn
    return sp.Integer(rotated // 2)  # one frequency per pair
