"""Exercises: Positions and decoding. Reference answers are computed, never typed.

This module imports no NumPy (the checker also runs without it); the NumPy references are
looked up when they are called, at build time.
"""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np, numeric
from attention_math.exercises.build import drop_coinciding
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]

L2, L3 = sp.log(2), sp.log(3)


def _rope(x: sp.Matrix, position: int, thetas: list[sp.Expr], *, interleaved: bool) -> sp.Matrix:
    """Exact RoPE of a row vector ``x`` at ``position`` (the layouts of ``positional.rope``)."""
    half = len(thetas)
    out = list(x)
    for i, th in enumerate(thetas):
        a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
        c, s = sp.cos(position * th), sp.sin(position * th)
        out[a], out[b] = x[a] * c - x[b] * s, x[b] * c + x[a] * s
    return sp.Matrix([out])


def _sinusoidal_ref() -> np.ndarray:
    from attention_math.positional import sinusoidal  # NumPy: build time only

    return np.asarray(sinusoidal(3, 4, base=100.0)[2])  # (4,)


def _rope_ref() -> np.ndarray:
    from attention_math.positional import rope  # NumPy: build time only

    return np.asarray(rope(np.array([[1.0, 0.0, 0.0, 1.0]] * 2), base=100.0)[1])  # (4,)


def _slopes_ref() -> np.ndarray:
    from attention_math.positional import alibi_slopes  # NumPy: build time only

    return alibi_slopes(4)


def _decode_ref() -> np.ndarray:
    from attention_math.decoding import KVCache  # NumPy: build time only

    cache = KVCache()
    for score, value in ((0.0, 1.0), (np.log(2), 0.0), (np.log(3), 3.0)):
        cache.append(np.array([score]), np.array([value]))  # key = score: the query is 1
    return np.asarray(cache.attend(np.array([1.0]), scale=1.0)[0])  # () : the one output


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    thetas = [sp.Integer(1), sp.Rational(1, 10)]  # d = 4, base 100: θ_i = 100^(−2i/4)
    x = sp.Matrix([[1, 0, 0, 1]])
    rope_right = _rope(x, 1, thetas, interleaved=False)
    pe = sp.Matrix([[f(2 * th) for th in thetas for f in (sp.sin, sp.cos)]])

    m, n = 3, 5
    q = sp.Matrix([[1, 0]])
    score = (
        _rope(q, m, [sp.Integer(1)], interleaved=False)
        * _rope(q, n, [sp.Integer(1)], interleaved=False).T
    )[0, 0]

    slope = L2
    # query 2, keys 0, 1, 2
    alibi = symbolic.softmax([[-slope * (2 - j) for j in range(3)]]).applyfunc(sp.simplify)

    n_layers, h_kv, d_head, L = sp.symbols("n_layers h_kv d_head L", positive=True, integer=True)
    n_, w_ = sp.symbols("n w", positive=True, integer=True)
    h, h_kv = sp.symbols("h h_kv", positive=True, integer=True)

    z = [sp.Integer(0), L2]
    soft1 = sp.Matrix([[sp.exp(x_) / (1 + sum(sp.exp(y) for y in z)) for x_ in z]])

    scores, values = [sp.Integer(0), L2, L3], sp.Matrix([1, 0, 3])
    decode = sp.simplify((symbolic.softmax([scores]) * values)[0, 0])  # the cache plus one key
    unnormalised = sp.simplify((sp.Matrix([[sp.exp(s) for s in scores]]) * values)[0, 0])

    return [
        Exercise(
            id="positions-sinusoidal",
            chapter="positions",
            title="A sinusoidal encoding",
            statement=(
                "With $d_{model} = 4$ and base $100$, the frequencies are "
                "$\\theta_0 = 1$ and $\\theta_1 = 100^{-2/4} = 1/10$. Write the encoding "
                "$PE(2) = (\\sin 2\\theta_0, \\cos 2\\theta_0, \\sin 2\\theta_1, "
                "\\cos 2\\theta_1)$ of position $j = 2$ exactly, as a $1 \\times 4$ row."
            ),
            answer=pe,
            numeric=_sinusoidal_ref,
            explanation=(
                "Multiply the position by each frequency; each frequency gives a sine and a "
                "cosine, in that order."
            ),
            solution=_solve_positions_sinusoidal,
        ),
        Exercise(
            id="positions-rope",
            chapter="positions",
            title="Rotate a query",
            statement=(
                "RoPE with $d = 4$, base $100$ ($\\theta_0 = 1$, $\\theta_1 = 1/10$) and the "
                "`rotate_half` layout: pair $i$ is $(x_i, x_{i+2})$, turned by the angle "
                "$j\\,\\theta_i$. Rotate $x$ at position $j = 1$ exactly."
            ),
            answer=rope_right,
            inputs={"x": x},
            mistakes=drop_coinciding(
                rope_right,
                [
                    Mistake("rope_layout", _rope(x, 1, thetas, interleaved=True)),
                    Mistake("rotation_direction", _rope(x, -1, thetas, interleaved=False)),
                ],
            ),
            numeric=_rope_ref,
            explanation=(
                "In the `rotate_half` layout pair $i$ is $(x_i, x_{i+2})$: here $(x_0, x_2) = "
                "(1, 0)$ turns by $1$ radian and $(x_1, x_3) = (0, 1)$ by $1/10$. A pair "
                r"turned by the angle $\vartheta$ becomes $\operatorname{rot}(\vartheta)$ times "
                r"it: $(x_i, x_{i+2}) \mapsto (x_i\cos\vartheta - x_{i+2}\sin\vartheta,\; "
                r"x_{i+2}\cos\vartheta + x_i\sin\vartheta)$."
            ),
            solution=_solve_positions_rope,
        ),
        Exercise(
            id="positions-rope-score",
            chapter="positions",
            title="A rotated score",
            statement=(
                "With $d = 2$ and $\\theta = 1$, the query $q = (1, 0)$ sits at position "
                f"$i = {m}$ and the key $k = (1, 0)$ at position $j = {n}$. What is the score "
                "$\\langle \\operatorname{rot}(i\\theta) q, "
                "\\operatorname{rot}(j\\theta) k \\rangle$ (no $1/\\sqrt{d}$; "
                "$\\operatorname{rot}(\\vartheta)$ turns a pair by the angle $\\vartheta$)?"
            ),
            answer=sp.simplify(sp.expand_trig(score)),
            mistakes=(Mistake("absolute_position", sp.cos(m + n)),),
            numeric=lambda: np.asarray(np.cos(n - m)),
            kind="scalar",
            explanation=(
                r"$\operatorname{rot}(i\theta)^\top \operatorname{rot}(j\theta) = "
                r"\operatorname{rot}((j - i)\theta)$, so the score is $q^\top "
                r"\operatorname{rot}(2) k = \cos 2$: only the offset $j - i = 2$ counts."
            ),
            solution=_solve_positions_rope_score,
        ),
        Exercise(
            id="positions-alibi-weights",
            chapter="positions",
            title="ALiBi weights",
            statement=(
                "One ALiBi head with slope $\\log 2$, a causal mask, and equal content scores "
                "$q \\cdot k_j$ for every key. Query $i = 2$ sees keys $j = 0, 1, 2$ with biases "
                "$-\\log 2 \\cdot (i - j)$. Compute its weights exactly, as a $1 \\times 3$ row."
            ),
            answer=alibi,
            mistakes=(Mistake("bias_direction", sp.Matrix([list(alibi)[::-1]])),),
            numeric=lambda: numeric.softmax(-np.log(2) * np.array([2.0, 1.0, 0.0])),
            explanation=(
                r"Equal content scores cancel in the softmax; what is left is the bias $-\log "
                r"2 \cdot (2, 1, 0)$, whose exponentials are $1/4, 1/2, 1$. Normalise by their "
                "sum $7/4$."
            ),
            solution=_solve_positions_alibi_weights,
        ),
        Exercise(
            id="positions-alibi-slopes",
            chapter="positions",
            title="ALiBi slopes for four heads",
            statement=(
                "ALiBi gives head $k = 1, \\ldots, h$ the slope $2^{-8k/h}$ when the head count "
                "$h$ is a power of two. Write the slopes of $h = 4$ heads as a $1 \\times 4$ row."
            ),
            answer=sp.Matrix([[sp.Integer(2) ** sp.Rational(-8 * k, 4) for k in range(1, 5)]]),
            numeric=_slopes_ref,
            explanation=(
                r"$2^{-8k/4} = 4^{-k}$ for $k = 1, \ldots, 4$: a geometric sequence starting "
                "at and multiplied by $1/4$."
            ),
            solution=_solve_positions_alibi_slopes,
        ),
        Exercise(
            id="positions-cache-size",
            chapter="positions",
            title="The size of a KV cache",
            statement=(
                "A decoder has `n_layers` layers, `h_kv` key/value heads of width `d_head`, and "
                "has seen `L` tokens. How many numbers does its key/value cache hold?"
            ),
            answer=2 * n_layers * h_kv * d_head * L,
            mistakes=(Mistake("kv_factor", n_layers * h_kv * d_head * L),),
            symbols={"n_layers": n_layers, "h_kv": h_kv, "d_head": d_head, "L": L},
            kind="expression",
            explanation=(
                "Per token, every layer stores one key and one value of width `d_head` for "
                "each of its `h_kv` key/value heads."
            ),
            solution=_solve_positions_cache_size,
        ),
        Exercise(
            id="positions-decode-step",
            chapter="positions",
            title="One decode step",
            statement=(
                "The cache holds two tokens whose scores against the new query are $0$ and "
                "$\\log 2$ (already scaled) and whose values are $1$ and $0$. The new token has "
                "score $\\log 3$ and value $3$. What is the output of this decode step?"
            ),
            answer=decode,
            mistakes=(Mistake("unnormalized", unnormalised),),
            numeric=_decode_ref,
            kind="scalar",
            explanation=(
                "Softmax over all three scores (cached and new): the exponentials are $1, 2, "
                "3$, so the weights are $1/6, 2/6, 3/6$. Merging the cached state with the "
                "new key gives the same (see [The KV cache](../positions/kv-cache.md))."
            ),
            solution=_solve_positions_decode_step,
        ),
        Exercise(
            id="positions-receptive-field",
            chapter="positions",
            title="Receptive field of a sliding window",
            statement=(
                "Every layer attends within a causal sliding window of `w` tokens (the token "
                "itself and the $w - 1$ before it). After `n` layers, how many tokens can the "
                "last token have read (in a long enough sequence)?"
            ),
            answer=n_ * (w_ - 1) + 1,
            mistakes=(Mistake("receptive_overlap", n_ * w_),),
            symbols={"n": n_, "w": w_},
            kind="expression",
            explanation=(
                "One layer reaches $w - 1$ tokens back; each further layer reaches $w - 1$ "
                "further from the tokens already reached. Counting the token itself: $n(w - "
                "1) + 1$ (see [Sliding windows](../positions/sliding-window.md) for the count "
                "by matrix powers)."
            ),
            solution=_solve_positions_receptive_field,
        ),
        Exercise(
            id="positions-gqa-cache",
            chapter="positions",
            title="How much GQA saves",
            statement=(
                "Multi-head attention with `h` heads caches a key and a value per head. "
                "Grouped-query attention with `h_kv` key/value heads (same head width) caches "
                "how many times fewer numbers? Use `h` and `h_kv`."
            ),
            answer=h / h_kv,
            symbols={"h": h, "h_kv": h_kv},
            kind="expression",
            explanation=(
                r"Per token and layer the cache holds $2\,d_{\text{head}}\,h$ numbers for "
                r"multi-head attention and $2\,d_{\text{head}}\,h_{kv}$ for grouped-query "
                "attention."
            ),
            solution=_solve_positions_gqa_cache,
        ),
        Exercise(
            id="positions-softmax-one",
            chapter="positions",
            title="softmax₁",
            statement=(
                "$\\operatorname{softmax}_1(s)_i = e^{s_i} / (1 + \\sum_j e^{s_j})$, the softmax "
                "with an extra zero logit. Compute $\\operatorname{softmax}_1(0, \\log 2)$ "
                "exactly, as a $1 \\times 2$ row."
            ),
            answer=soft1,
            mistakes=(Mistake("softmax_one", symbolic.softmax([z]).applyfunc(sp.simplify)),),
            numeric=lambda: numeric.softmax(np.array([0.0, np.log(2), 0.0]))[:2],
            explanation=(
                "The exponentials are $1$ and $2$; the denominator gets the extra $e^0 = 1$: "
                "$1 + 1 + 2 = 4$."
            ),
            solution=_solve_positions_softmax_one,
        ),
    ]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_positions_sinusoidal(ex: Exercise) -> object:
    thetas = [sp.Integer(1), sp.Rational(1, 10)]  # 100^(0), 100^(-2/4)
    j = 2  # the position
    pe = [f(j * theta) for theta in thetas for f in (sp.sin, sp.cos)]
    return sp.Matrix([pe])


def _solve_positions_rope(ex: Exercise) -> object:
    x = list(ex.inputs["x"])
    out = list(x)
    for i, angle in enumerate([sp.Integer(1), sp.Rational(1, 10)]):  # j·θ_i at position j = 1
        a, b = x[i], x[i + 2]  # rotate_half pairs coordinate i with i + d/2
        out[i] = a * sp.cos(angle) - b * sp.sin(angle)
        out[i + 2] = b * sp.cos(angle) + a * sp.sin(angle)
    return sp.Matrix([out])


def _solve_positions_rope_score(ex: Exercise) -> object:
    i, j = 3, 5  # the positions of the query and the key

    def rot(a: object) -> sp.Matrix:  # the rotation by angle a
        return sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])

    q = k = sp.Matrix([1, 0])
    score = ((rot(i) * q).T * (rot(j) * k))[0, 0]
    return sp.simplify(sp.expand_trig(score))


def _solve_positions_alibi_weights(ex: Exercise) -> object:
    e = [sp.exp(-sp.log(2) * (2 - j)) for j in range(3)]
    return sp.Matrix([[x / sum(e) for x in e]])


def _solve_positions_alibi_slopes(ex: Exercise) -> object:
    h = 4  # heads; k numbers them, as in the statement
    slopes = [sp.Integer(2) ** sp.Rational(-8 * k, h) for k in range(1, h + 1)]
    return sp.Matrix([slopes])


def _solve_positions_cache_size(ex: Exercise) -> object:
    n_layers, h_kv, d_head, L = sp.symbols("n_layers h_kv d_head L", positive=True, integer=True)
    return 2 * n_layers * h_kv * d_head * L


def _solve_positions_decode_step(ex: Exercise) -> object:
    scores = [0, sp.log(2), sp.log(3)]
    values = [1, 0, 3]
    e = [sp.exp(s) for s in scores]
    return sum(w * v for w, v in zip(e, values, strict=True)) / sum(e)


def _solve_positions_receptive_field(ex: Exercise) -> object:
    n, w = sp.symbols("n w", positive=True, integer=True)
    return n * (w - 1) + 1


def _solve_positions_gqa_cache(ex: Exercise) -> object:
    h, h_kv, d_head = sp.symbols("h h_kv d_head", positive=True, integer=True)
    return (2 * h * d_head) / (2 * h_kv * d_head)


def _solve_positions_softmax_one(ex: Exercise) -> object:
    z = [0, sp.log(2)]
    e = [sp.exp(x) for x in z]
    return sp.Matrix([[x / (1 + sum(e)) for x in e]])
