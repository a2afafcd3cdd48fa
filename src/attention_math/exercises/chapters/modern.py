"""Exercises: Long contexts and the modern block (RoPE scaling, RMSNorm, SwiGLU, QK-norm, T5
buckets, ALiBi against RoPE, dropout, StreamingLLM). Reference answers are computed, never
typed.

This module imports no NumPy (the checker also runs without it): every exact answer is
SymPy, and the NumPy references are looked up when they are called, at build time.
"""

from __future__ import annotations

import itertools
from typing import Any

import sympy as sp

from attention_math._lazy import np, numeric
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]

L2, L3 = sp.log(2), sp.log(3)


def _yarn_ramp(d: int, base: int, original: int) -> list[sp.Expr]:
    """YaRN's ramp exactly (beta_fast 32, beta_slow 1, truncated), as positional.yarn_ramp."""

    def pair(turns: int) -> sp.Expr:
        return d * sp.log(sp.Integer(original) / (turns * 2 * sp.pi)) / (2 * sp.log(base))

    low, high = sp.Max(sp.floor(pair(32)), 0), sp.Min(sp.ceiling(pair(1)), d - 1)
    return [sp.Min(sp.Max((i - low) / (high - low), 0), 1) for i in range(d // 2)]


def _t5_bucket(rel: int, *, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """T5's bucket of one offset, its logarithmic floor decided with integers only."""
    n, out, delta = num_buckets, 0, rel
    if bidirectional:
        n //= 2
        out, delta = (n if delta > 0 else 0), abs(delta)
    else:
        delta = max(-delta, 0)
    e = n // 2
    if delta < e:
        return out + delta
    m, j = n - e, 0
    while j + 1 < m and delta**m * e ** (j + 1) >= max_distance ** (j + 1) * e**m:
        j += 1
    return out + e + j


def _rms(x: list[sp.Expr]) -> sp.Expr:
    return sp.sqrt(sp.Add(*(e**2 for e in x)) / len(x))


def _silu(z: sp.Expr) -> sp.Expr:
    return sp.simplify(z / (1 + sp.exp(-z)))


def _pi_ref() -> np.ndarray:
    from attention_math.positional import rope_frequencies  # NumPy: build time only

    theta, _ = rope_frequencies(4, base=100.0, scaling={"rope_type": "linear", "factor": 3.0})
    return np.asarray(theta[1])


def _ramp_ref() -> np.ndarray:
    from attention_math.positional import yarn_ramp  # NumPy: build time only

    return np.asarray(yarn_ramp(16, base=10000.0, original_max_position_embeddings=2048)[3])


def _rms_ref() -> np.ndarray:
    from attention_math.block import rms_norm  # NumPy: build time only

    return rms_norm(np.array([[3.0, 4.0]]), eps=0.0)


def _rms_grad_ref() -> np.ndarray:
    from attention_math.block import rms_norm  # NumPy: build time only

    x = np.array([3.0, 4.0])
    y = rms_norm(x, eps=0.0)  # (2,)
    rms = np.sqrt(np.mean(x * x))
    row: np.ndarray = ((np.array([1.0, 0.0]) - y * y[0] / 2) / rms)[None, :]  # (1, 2): J[0]
    return row


def _swiglu_ref() -> np.ndarray:
    from attention_math.block import swiglu  # NumPy: build time only

    x = np.array([[np.log(2), np.log(3)]])
    return np.asarray(swiglu(x, np.eye(2), np.eye(2), np.ones((2, 1)))[0, 0])


def _t5_ref(rel: int) -> np.ndarray:
    from attention_math.positional import t5_relative_bucket  # NumPy: build time only

    return np.asarray(float(t5_relative_bucket([rel], bidirectional=True)[0]))


def _unseen_ref() -> np.ndarray:
    from attention_math.positional import unseen_angle_pairs  # NumPy: build time only

    return np.asarray(float(unseen_angle_pairs(8, base=1e4, train_len=100, test_len=400).sum()))


def _dropout_ref() -> np.ndarray:
    # the weight after inverted dropout, from numeric.attention_weights: two keys with equal scores,
    # so the row is (1/2, 1/2); with seed 1 at least one weight is kept (asserted)
    w = numeric.attention_weights(
        np.zeros((1, 1)), np.zeros((2, 1)), np.eye(2), dropout_p=0.25, rng=1
    )
    assert w.max() > 0, "seed 1 dropped both weights"
    return np.asarray(w.max())


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    out: list[Exercise] = []

    # --- RoPE for long contexts ---------------------------------------------------------
    theta = [sp.Integer(100) ** sp.Rational(-k, 4) for k in (0, 2)]  # d = 4, base 100
    out.append(
        Exercise(
            id="modern-pi-frequency",
            chapter="modern",
            title="A position-interpolation frequency",
            statement=(
                "RoPE with $d = 4$ and base $100$ has $\\theta_0 = 1$ and $\\theta_1 = 1/10$. "
                "Position interpolation stretches a model to $3$ times its training length "
                '(`rope_scaling = {"rope_type": "linear", "factor": 3.0}`). What does '
                "$\\theta_1$ become?"
            ),
            answer=theta[1] / 3,
            mistakes=(Mistake("pi_direction", theta[1] * 3),),
            numeric=_pi_ref,
            kind="scalar",
            explanation=(
                "Position interpolation rotates position $j$ as position $j/f$ was, which is the "
                "same as dividing every frequency by $f = 3$: $\\theta_1 = 1/10$ becomes $1/30$."
            ),
            solution=_solve_modern_pi_frequency,
        )
    )
    ramp = _yarn_ramp(16, 10000, 2048)
    out.append(
        Exercise(
            id="modern-yarn-ramp",
            chapter="modern",
            title="A YaRN ramp value",
            statement=(
                "YaRN with $d = 16$, base $10000$, an original context of $2048$ tokens, "
                "$\\beta_{\\text{fast}} = 32$ and $\\beta_{\\text{slow}} = 1$. The pair that turns "
                "$n$ times over the context is $i(n) = d \\ln(2048 / (2\\pi n)) / (2 \\ln 10000)$; "
                "the ramp rises linearly from $0$ at $\\lfloor i(32) \\rfloor$ to $1$ at "
                "$\\lceil i(1) \\rceil$. What is the ramp $\\gamma_3$ of pair $3$?"
            ),
            answer=sp.nsimplify(ramp[3]),
            mistakes=(Mistake("ramp_complement", 1 - sp.nsimplify(ramp[3])),),
            numeric=_ramp_ref,
            kind="scalar",
            explanation=(
                "$i(32) = 16 \\ln(2048/(64\\pi)) / (2 \\ln 10000)$ lies between 2 and 3, and "
                "$i(1)$ between 5 and 6, so the ramp runs from pair $2$ (value 0) to pair $6$ "
                "(value 1), linearly: pair $i$ gets $(i - 2)/(6 - 2)$."
            ),
            solution=_solve_modern_yarn_ramp,
        )
    )
    b, f, d = sp.symbols("b f d", positive=True)
    out.append(
        Exercise(
            id="modern-ntk-base",
            chapter="modern",
            title="The NTK-aware base",
            statement=(
                "NTK-aware scaling raises the base `b` of RoPE so that the slowest pair, "
                "$\\theta_{d/2-1} = b^{-(d-2)/d}$, is divided by exactly the factor `f`, while "
                "$\\theta_0 = 1$ stays. Which new base does that take? Use `b`, `f` and `d`."
            ),
            answer=b * f ** (d / (d - 2)),
            mistakes=(Mistake("ntk_exponent", b * f),),
            symbols={"b": b, "f": f, "d": d},
            kind="expression",
            explanation=(
                "With the new base $b'$, the slowest pair is $b'^{-(d-2)/d}$. Setting it to "
                "$b^{-(d-2)/d}/f$ and solving: $b'^{(d-2)/d} = f\\,b^{(d-2)/d}$, so $b' = "
                "b\\,f^{d/(d-2)}$."
            ),
            solution=_solve_modern_ntk_base,
        )
    )
    perm = sp.Matrix([[0, 2, 4, 1, 3, 5]])
    inverse = sp.Matrix([[list(perm).index(c) for c in range(6)]])
    out.append(
        Exercise(
            id="modern-rope-layout",
            chapter="modern",
            title="Converting a RoPE checkpoint between layouts",
            statement=(
                "A checkpoint was trained with the interleaved RoPE layout (pair $i$ is "
                "$(x_{2i}, x_{2i+1})$); your code uses `rotate_half` (pair $i$ is "
                "$(x_i, x_{i+d/2})$). With $d = 6$, you reorder the output columns of $W_Q$ and "
                "$W_K$ so that new column $c$ is old column $j_c$. Give $(j_0, \\ldots, j_5)$ as a "
                "$1 \\times 6$ row of indices (counting from 0)."
            ),
            answer=perm,
            mistakes=(Mistake("inverse_permutation", inverse),),
            numeric=lambda: np.concatenate([np.arange(0, 6, 2), np.arange(1, 6, 2)]).astype(
                np.float64
            ),
            explanation=(
                "In `rotate_half` pair $i$ is columns $(i, i + 3)$; in the checkpoint it was "
                "$(2i, 2i + 1)$. So new column $i$ must take old column $2i$ and new column $i + "
                "3$ old column $2i + 1$: the even columns first, then the odd ones."
            ),
            solution=_solve_modern_rope_layout,
        )
    )
    out.append(
        Exercise(
            id="modern-rope-unseen",
            chapter="modern",
            title="RoPE past its training length",
            statement=(
                "RoPE with $d = 8$ and base $10000$: $\\theta = (1, 10^{-1}, 10^{-2}, 10^{-3})$. A "
                "model is trained on $100$ tokens. Pair $i$ turns $100\\,\\theta_i / 2\\pi$ times "
                "over that length. How many pairs turn less than once, and so reach angles "
                "never seen in training when the model reads $400$ tokens?"
            ),
            answer=sp.Integer(
                sum(1 for k in range(4) if bool(100 * sp.Integer(10) ** -k < 2 * sp.pi))
            ),
            numeric=_unseen_ref,
            kind="scalar",
            explanation=(
                "Over 100 tokens pair $i$ turns $100 \\cdot 10^{-i} / 2\\pi$ times: more than "
                "once for $i = 0$ ($100/2\\pi$) and $i = 1$ ($10/2\\pi$), less than once for $i "
                "= 2$ and $i = 3$, since $2\\pi > 1$."
            ),
            solution=_solve_modern_rope_unseen,
        )
    )

    # --- the modern block ---------------------------------------------------------------
    x = [sp.Integer(3), sp.Integer(4)]
    rms = _rms(x)
    y = [e / rms for e in x]
    mean = sp.Add(*x) / 2
    centred = [e - mean for e in x]
    out.append(
        Exercise(
            id="modern-rmsnorm",
            chapter="modern",
            title="RMSNorm of a token",
            statement=(
                "Apply RMSNorm (gain $1$, no `eps`) to the token $x = (3, 4)$: divide "
                "it by $\\operatorname{rms}(x) = \\sqrt{(3^2 + 4^2)/2}$. Answer as a "
                "$1 \\times 2$ row."
            ),
            answer=sp.Matrix([y]),
            inputs={"x": sp.Matrix([x])},
            mistakes=(
                Mistake("layernorm_not_rms", sp.Matrix([[e / _rms(centred) for e in centred]])),
                Mistake("rms_vs_norm", sp.Matrix([[e / sp.sqrt(25) for e in x]])),
            ),
            numeric=_rms_ref,
            explanation=(
                "$\\operatorname{rms}(x) = \\sqrt{25/2} = 5/\\sqrt 2$, so $x / "
                "\\operatorname{rms}(x) = (3\\sqrt 2/5, 4\\sqrt 2/5)$. Nothing is subtracted "
                "first: that is the difference from LayerNorm."
            ),
            solution=_solve_modern_rmsnorm,
        )
    )
    jac_row = sp.Matrix([[((1 if j == 0 else 0) - y[j] * y[0] / 2) / rms for j in range(2)]])
    out.append(
        Exercise(
            id="modern-rmsnorm-grad",
            chapter="modern",
            title="An RMSNorm gradient",
            statement=(
                "$y = x / \\operatorname{rms}(x)$ with $x = (3, 4)$ and the loss "
                "$\\ell = y_1$ (the first output). Using "
                "$\\partial y / \\partial x = (I - y y^\\top / d) / \\operatorname{rms}(x)$, give "
                "$\\partial \\ell / \\partial x$ as a $1 \\times 2$ row."
            ),
            answer=jac_row.applyfunc(sp.simplify),
            inputs={"x": sp.Matrix([x])},
            mistakes=(Mistake("rms_projection", sp.Matrix([[1 / rms, 0]])),),
            numeric=_rms_grad_ref,
            explanation=(
                "$\\partial \\ell / \\partial x$ is the first row of the Jacobian (it is "
                "symmetric): $(e_1 - y\\,y_1/2) / \\operatorname{rms}(x)$ with $y = (3\\sqrt "
                "2/5, 4\\sqrt 2/5)$ and $\\operatorname{rms}(x) = 5/\\sqrt 2$. Differentiating "
                "$y_1$ directly gives the same."
            ),
            solution=_solve_modern_rmsnorm_grad,
        )
    )
    z = [L2, L3]
    out.append(
        Exercise(
            id="modern-swiglu",
            chapter="modern",
            title="A SwiGLU output",
            statement=(
                "$\\operatorname{SwiGLU}(x) = (\\operatorname{SiLU}(x W_{\\text{gate}}) \\odot "
                "x W_{\\text{up}}) W_{\\text{down}}$ with "
                "$\\operatorname{SiLU}(x) = x\\,\\operatorname{sigmoid}(x)$. "
                "Take $x = (\\log 2, \\log 3)$, $W_{\\text{gate}} = W_{\\text{up}} = I$ and "
                "$W_{\\text{down}}$ a column of ones. What is the output (exactly)?"
            ),
            answer=sp.simplify(sum(_silu(e) * e for e in z)),
            mistakes=(Mistake("gate_activation", sp.simplify(sum(e * e for e in z))),),
            numeric=_swiglu_ref,
            kind="scalar",
            explanation=(
                "With identity gate and up projections, hidden unit $j$ is "
                "$\\operatorname{SiLU}(x_j)\\,x_j$, and the column of ones sums them. "
                "$\\operatorname{sigmoid}(\\log 2) = 2/3$ and "
                "$\\operatorname{sigmoid}(\\log 3) = 3/4$, so the output is "
                "$\\tfrac{2}{3}\\log^2 2 + \\tfrac{3}{4}\\log^2 3$."
            ),
            solution=_solve_modern_swiglu,
        )
    )
    out.append(
        Exercise(
            id="modern-qk-bound",
            chapter="modern",
            title="What QK-norm bounds",
            statement=(
                "With QK-norm (RMSNorm, gains $1$) every query and key of a head of width "
                "$d = 16$ has squared norm exactly $16$. What is the largest possible size of a "
                "score $\\hat q \\cdot \\hat k / \\sqrt{d}$?"
            ),
            answer=sp.sqrt(16),
            mistakes=(Mistake("bound_scale", sp.Integer(16)),),
            numeric=lambda: np.asarray(np.sqrt(16.0)),
            kind="scalar",
            explanation=(
                "By Cauchy–Schwarz $\\lvert \\hat q \\cdot \\hat k \\rvert \\le \\lVert \\hat q "
                "\\rVert \\lVert \\hat k \\rVert = \\sqrt{16}\\sqrt{16} = 16$, reached when "
                "$\\hat k = \\hat q$; divided by $\\sqrt d = 4$ that is $4$."
            ),
            solution=_solve_modern_qk_bound,
        )
    )

    # --- positions side by side ---------------------------------------------------------
    t5: dict[str, Any] = {"bidirectional": True, "num_buckets": 32, "max_distance": 128}
    out.append(
        Exercise(
            id="modern-t5-bucket",
            chapter="modern",
            title="A T5 bucket",
            statement=(
                "T5, bidirectional, 32 buckets, `max_distance` 128. A key $20$ positions "
                "*before* the query (offset $j - i = -20$). Keys before the query use buckets "
                "$0$–$15$: offsets $0$ to $7$ exactly, then bucket "
                "$8 + \\lfloor \\ln(\\Delta/8) / \\ln(128/8) \\cdot 8 \\rfloor$ for distance "
                "$\\Delta$. Which bucket?"
            ),
            answer=sp.Integer(_t5_bucket(-20, **t5)),
            mistakes=(Mistake("bucket_direction", sp.Integer(_t5_bucket(20, **t5))),),
            numeric=lambda: _t5_ref(-20),
            kind="scalar",
            explanation=(
                "A key before the query stays in the lower half (no $+16$). Distance $20 \\ge "
                "8$, so the bucket is $8 + \\lfloor \\ln(20/8)/\\ln 16 \\cdot 8 \\rfloor = 8 + 2 "
                "= 10$."
            ),
            solution=_solve_modern_t5_bucket,
        )
    )
    first_last = next(r for r in range(8, 200) if _t5_bucket(-r, **t5) == 15)
    out.append(
        Exercise(
            id="modern-t5-last-bucket",
            chapter="modern",
            title="Where T5 stops telling distances apart",
            statement=(
                "Same T5 buckets (bidirectional, 32, `max_distance` 128). Every key far enough "
                "before the query shares bucket $15$. What is the smallest distance $\\Delta$ "
                "that lands in bucket $15$?"
            ),
            answer=sp.Integer(first_last),
            mistakes=(Mistake("max_distance_bucket", sp.Integer(128)),),
            numeric=lambda: np.asarray(float(next(r for r in range(8, 200) if _t5_ref(-r) == 15))),
            kind="scalar",
            explanation=(
                "Bucket 15 means $\\lfloor \\ln(\\Delta/8)/\\ln 16 \\cdot 8 \\rfloor \\ge 7$, "
                "that is $\\Delta \\ge 8 \\cdot 16^{7/8}$, a number between 90 and 91: the "
                "smallest integer distance is 91. Every distance from 91 on, 128 included, "
                "shares that bucket."
            ),
            solution=_solve_modern_t5_last_bucket,
        )
    )
    beta = L2  # the head's slope
    alibi_w = [sp.nsimplify(sp.exp(-beta * dist)) for dist in range(5)]  # 1, 1/2, …, 1/16
    alibi_total, alibi_beyond = sp.Add(*alibi_w), sp.Add(*alibi_w[2:])  # 31/16, 7/16
    far = sp.nsimplify(sp.simplify(alibi_beyond / alibi_total))
    assert far == sp.nsimplify(
        sp.simplify(
            sum(sp.exp(-beta * dist) for dist in (2, 3, 4))
            / sum(sp.exp(-beta * dist) for dist in range(5))
        )
    )
    out.append(
        Exercise(
            id="modern-alibi-far",
            chapter="modern",
            title="ALiBi past its training length",
            statement=(
                "An ALiBi head with slope $\\beta = \\log 2$ (weights "
                "$\\propto e^{-\\beta \\Delta}$ at distance $\\Delta = i - j$, equal content "
                "scores) was trained on 2 tokens "
                "and now reads 5: its last query sees distances $\\Delta = 0, 1, 2, 3, 4$. "
                "What weight does it put on the keys at "
                "distance $2$ or more, the ones beyond its training length?"
            ),
            answer=far,
            mistakes=(Mistake("bias_direction", 1 - far),),
            numeric=lambda: numeric.softmax(-np.log(2) * np.arange(4.0, -1.0, -1.0))[:3].sum(),
            kind="scalar",
            explanation=(
                "The weights are proportional to $2^{-\\Delta}$: "
                f"${', '.join(str(w) for w in alibi_w)}$, summing to ${alibi_total}$. The keys "
                f"at distance $2$ or more hold ${' + '.join(str(w) for w in alibi_w[2:])} = "
                f"{alibi_beyond}$ of that total: a weight of "
                f"${alibi_beyond} \\big/ ({alibi_total}) = {far}$. The longer sequence "
                "adds keys that get little weight; RoPE, in contrast, has no such preference "
                "built in."
            ),
            solution=_solve_modern_alibi_far,
        )
    )

    # --- dropout ----------------------------------------------------------------------
    a, p_drop, v1, v2 = sp.symbols("a p_drop v_1 v_2", positive=True)
    expectation = 0
    for k1 in (0, 1):
        for k2 in (0, 1):
            prob = ((1 - p_drop) if k1 else p_drop) * ((1 - p_drop) if k2 else p_drop)
            expectation += prob * (k1 * a * v1 + k2 * (1 - a) * v2) / (1 - p_drop)
    out.append(
        Exercise(
            id="modern-dropout-expectation",
            chapter="modern",
            title="Dropout's expectation",
            statement=(
                "A row of two weights `a` and `1 - a` over the values `v_1`, `v_2`. Inverted "
                "dropout keeps each weight with probability `1 - p_drop` and divides a kept "
                "weight by `1 - p_drop`. Average the output over the four masks: what is its "
                "expectation? Use `a`, `p_drop`, `v_1`, `v_2`."
            ),
            answer=sp.simplify(expectation),
            mistakes=(
                Mistake("dropout_scaling", sp.expand((1 - p_drop) * sp.simplify(expectation))),
            ),
            symbols={"a": a, "p_drop": p_drop, "v_1": v1, "v_2": v2},
            kind="expression",
            explanation=(
                "Each weight is kept with probability $1 - p_{\\text{drop}}$ and then divided by "
                "$1 - p_{\\text{drop}}$, so on "
                "average it is unchanged; the output is linear in the weights, so its "
                "expectation is the undropped output $a\\,v_1 + (1 - a)\\,v_2$."
            ),
            solution=_solve_modern_dropout_expectation,
        )
    )
    half = sp.Rational(1, 2)
    var = half / (1 - half) * (half**2 + half**2)
    out.append(
        Exercise(
            id="modern-dropout-rowsum",
            chapter="modern",
            title="What dropout does to a row's sum",
            statement=(
                "A row of weights $(1/2, 1/2)$, dropout with $p_{\\text{drop}} = 1/2$, kept "
                "weights divided by $1 - p_{\\text{drop}}$. The dropped row sums to $0$, $1$ or "
                "$2$. What is the variance of that sum?"
            ),
            answer=sp.nsimplify(var),
            mistakes=(Mistake("dropout_scaling", half * (1 - half) * (half**2 + half**2)),),
            kind="scalar",
            explanation=(
                "A kept weight is $(1/2)/(1/2) = 1$, so the sum counts the kept weights: $0$, "
                "$1$ or $2$ with probabilities $1/4$, $1/2$, $1/4$. Its mean is $1$ and its "
                "variance $(0 - 1)^2/4 + (2 - 1)^2/4 = 1/2$, which is "
                "$p_{\\text{drop}}/(1 - p_{\\text{drop}}) \\sum_j P_j^2$."
            ),
            solution=_solve_modern_dropout_rowsum,
        )
    )
    kept = half / (1 - sp.Rational(1, 4))
    out.append(
        Exercise(
            id="modern-dropout-kept",
            chapter="modern",
            title="A kept weight",
            statement=(
                "Two keys with equal scores give the weights $(1/2, 1/2)$. With "
                "`dropout_p = 0.25` (PyTorch's meaning), what does a weight that is *kept* "
                "become?"
            ),
            answer=kept,
            mistakes=(Mistake("dropout_scaling", half * (1 - sp.Rational(1, 4))),),
            numeric=_dropout_ref,
            kind="scalar",
            explanation=(
                "PyTorch's `dropout_p` is the probability of *dropping*; a kept weight is "
                "divided by $1 - 1/4 = 3/4$: $(1/2)/(3/4) = 2/3$."
            ),
            solution=_solve_modern_dropout_kept,
        )
    )

    # --- StreamingLLM -------------------------------------------------------------------
    c, s, t = 6, 2, 10
    keep = list(range(s)) + list(range(t - (c - s), t))
    out.append(
        Exercise(
            id="modern-streaming-evict",
            chapter="modern",
            title="StreamingLLM's eviction",
            statement=(
                f"StreamingLLM keeps a cache of $c = {c}$ tokens: the first $s = {s}$ (the "
                f"attention sinks) and the most recent $c - s$. After $t = {t}$ tokens "
                f"(positions $0$ to ${t - 1}$), which positions does the cache hold? Answer as a "
                f"$1 \\times {c}$ row, in increasing order."
            ),
            answer=sp.Matrix([keep]),
            mistakes=(Mistake("missing_sinks", sp.Matrix([list(range(t - c, t))])),),
            numeric=lambda: np.concatenate([np.arange(s), np.arange(t - (c - s), t)]).astype(
                np.float64
            ),
            explanation=(
                "The sinks are positions $0$ and $1$, kept forever; the other $c - s = 4$ slots "
                "hold the four most recent tokens, $6$ to $9$. Positions $2$ to $5$ were "
                "evicted."
            ),
            solution=_solve_modern_streaming_evict,
        )
    )
    return out


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs as a learner would, and must pass the checker.


def _solve_modern_pi_frequency(ex: Exercise) -> object:
    theta_1 = sp.Integer(100) ** sp.Rational(-2, 4)  # base^(-2i/d) with i = 1, d = 4
    return theta_1 / 3


def _solve_modern_yarn_ramp(ex: Exercise) -> object:
    def pair(turns: int) -> sp.Expr:  # the pair index that turns `turns` times over 2048 positions
        return 16 * sp.log(sp.Integer(2048) / (2 * sp.pi * turns)) / (2 * sp.log(10000))

    low, high = sp.floor(pair(32)), sp.ceiling(pair(1))
    return (3 - low) / (high - low)


def _solve_modern_ntk_base(ex: Exercise) -> object:
    b, f, d, b_new = sp.symbols("b f d b_new", positive=True)

    def slowest(base: sp.Expr) -> sp.Expr:  # the slowest pair's frequency, θ_(d/2-1)
        return base ** (-(d - 2) / d)

    sol = sp.solve(sp.Eq(slowest(b_new), slowest(b) / f), b_new)
    return sp.simplify(sol[0])


def _solve_modern_rope_layout(ex: Exercise) -> object:
    d = 6
    j = [0] * d
    for i in range(d // 2):
        j[i], j[i + d // 2] = 2 * i, 2 * i + 1  # pair i: (2i, 2i+1) -> (i, i + d/2)
    return sp.Matrix([j])


def _solve_modern_rope_unseen(ex: Exercise) -> object:
    turns = [100 * sp.Integer(10) ** -i / (2 * sp.pi) for i in range(4)]
    return sum(1 for t in turns if t < 1)


def _solve_modern_rmsnorm(ex: Exercise) -> object:
    x = ex.inputs["x"]  # (1, 2)
    rms = sp.sqrt(sum(e**2 for e in x) / 2)
    return x / rms


def _solve_modern_rmsnorm_grad(ex: Exercise) -> object:
    x1, x2 = sp.symbols("x1 x2", positive=True)
    y1 = x1 / sp.sqrt((x1**2 + x2**2) / 2)
    x = ex.inputs["x"]  # (1, 2): the point (3, 4)
    grad = sp.Matrix([[sp.diff(y1, v) for v in (x1, x2)]]).subs({x1: x[0], x2: x[1]})
    return grad.applyfunc(sp.simplify)


def _solve_modern_swiglu(ex: Exercise) -> object:
    def silu(z: sp.Expr) -> sp.Expr:
        return z / (1 + sp.exp(-z))

    x = [sp.log(2), sp.log(3)]
    return sp.simplify(sum(silu(z) * z for z in x))


def _solve_modern_qk_bound(ex: Exercise) -> object:
    d = 16
    return sp.sqrt(d) * sp.sqrt(d) / sp.sqrt(d)


def _solve_modern_t5_bucket(ex: Exercise) -> object:
    delta = 20
    return 8 + sp.floor(sp.log(sp.Rational(delta, 8)) / sp.log(16) * 8)


def _solve_modern_t5_last_bucket(ex: Exercise) -> object:
    return sp.ceiling(8 * sp.Integer(16) ** sp.Rational(7, 8))


def _solve_modern_alibi_far(ex: Exercise) -> object:
    w = [sp.Rational(1, 2) ** r for r in range(5)]
    return sum(w[2:]) / sum(w)


def _solve_modern_dropout_expectation(ex: Exercise) -> object:
    a, p_drop, v1, v2 = sp.symbols("a p_drop v_1 v_2", positive=True)
    w, v = [a, 1 - a], [v1, v2]
    mean = sp.Integer(0)
    for keep in itertools.product((0, 1), repeat=2):  # all four masks
        prob = sp.Mul(*((1 - p_drop) if z else p_drop for z in keep))
        mean += prob * sum(z * wj * vj for z, wj, vj in zip(keep, w, v, strict=True)) / (1 - p_drop)
    return sp.simplify(mean)


def _solve_modern_dropout_rowsum(ex: Exercise) -> object:
    sums, probs = [0, 1, 2], [sp.Rational(1, 4), sp.Rational(1, 2), sp.Rational(1, 4)]
    mean = sum(s * q for s, q in zip(sums, probs, strict=True))
    return sum((s - mean) ** 2 * q for s, q in zip(sums, probs, strict=True))


def _solve_modern_dropout_kept(ex: Exercise) -> object:
    return sp.Rational(1, 2) / (1 - sp.Rational(1, 4))


def _solve_modern_streaming_evict(ex: Exercise) -> object:
    c, s, t = 6, 2, 10
    kept = list(range(s)) + list(range(t - (c - s), t))
    return sp.Matrix([kept])
