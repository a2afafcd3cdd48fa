"""Exercises: Long contexts and the modern block (RoPE scaling, RMSNorm, SwiGLU, QK-norm, T5
buckets, ALiBi against RoPE, dropout, StreamingLLM). Reference answers are computed, never
typed.

This module imports no NumPy (the checker also runs without it): every exact answer is
SymPy, and the NumPy references are looked up when they are called, at build time.
"""

from __future__ import annotations

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
    # the weight after inverted dropout, from numeric.attention: two keys with equal scores,
    # so the row is (1/2, 1/2); with seed 1 at least one weight is kept (asserted)
    _, w = numeric.attention(
        np.zeros((1, 1)), np.zeros((2, 1)), np.eye(2), return_weights=True, dropout_p=0.25, rng=1
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
                "$r$ times over the context is $i(r) = d \\ln(2048 / (2\\pi r)) / (2 \\ln 10000)$; "
                "the ramp rises linearly from $0$ at $\\lfloor i(32) \\rfloor$ to $1$ at "
                "$\\lceil i(1) \\rceil$. What is the ramp $\\gamma_3$ of pair $3$?"
            ),
            answer=sp.nsimplify(ramp[3]),
            mistakes=(Mistake("ramp_complement", 1 - sp.nsimplify(ramp[3])),),
            numeric=_ramp_ref,
            kind="scalar",
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
                "$\\operatorname{SiLU}(z) = z\\,\\sigma(z)$. "
                "Take $x = (\\log 2, \\log 3)$, $W_{\\text{gate}} = W_{\\text{up}} = I$ and "
                "$W_{\\text{down}}$ a column of ones. What is the output (exactly)?"
            ),
            answer=sp.simplify(sum(_silu(e) * e for e in z)),
            mistakes=(Mistake("gate_activation", sp.simplify(sum(e * e for e in z))),),
            numeric=_swiglu_ref,
            kind="scalar",
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
                "$8 + \\lfloor \\ln(\\delta/8) / \\ln(128/8) \\cdot 8 \\rfloor$ for distance "
                "$\\delta$. Which bucket?"
            ),
            answer=sp.Integer(_t5_bucket(-20, **t5)),
            mistakes=(Mistake("bucket_direction", sp.Integer(_t5_bucket(20, **t5))),),
            numeric=lambda: _t5_ref(-20),
            kind="scalar",
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
                "before the query shares bucket $15$. What is the smallest distance $\\delta$ "
                "that lands in bucket $15$?"
            ),
            answer=sp.Integer(first_last),
            mistakes=(Mistake("max_distance_bucket", sp.Integer(128)),),
            numeric=lambda: np.asarray(float(next(r for r in range(8, 200) if _t5_ref(-r) == 15))),
            kind="scalar",
        )
    )
    m = L2
    far = sp.nsimplify(
        sp.simplify(sum(sp.exp(-m * r) for r in (2, 3, 4)) / sum(sp.exp(-m * r) for r in range(5)))
    )
    out.append(
        Exercise(
            id="modern-alibi-far",
            chapter="modern",
            title="ALiBi past its training length",
            statement=(
                "An ALiBi head with slope $m = \\log 2$ (weights $\\propto e^{-m r}$ at distance "
                "$r$, equal content scores) was trained on 2 tokens and now reads 5: its last "
                "query sees distances $r = 0, 1, 2, 3, 4$. What weight does it put on the keys at "
                "distance $2$ or more, the ones beyond its training length?"
            ),
            answer=far,
            mistakes=(Mistake("bias_direction", 1 - far),),
            numeric=lambda: numeric.softmax(-np.log(2) * np.arange(4.0, -1.0, -1.0))[:3].sum(),
            kind="scalar",
        )
    )

    # --- dropout ----------------------------------------------------------------------
    a, p, v1, v2 = sp.symbols("a p v_1 v_2", positive=True)
    expectation = 0
    for k1 in (0, 1):
        for k2 in (0, 1):
            prob = ((1 - p) if k1 else p) * ((1 - p) if k2 else p)
            expectation += prob * (k1 * a * v1 + k2 * (1 - a) * v2) / (1 - p)
    out.append(
        Exercise(
            id="modern-dropout-expectation",
            chapter="modern",
            title="Dropout's expectation",
            statement=(
                "A row of two weights `a` and `1 - a` over the values `v_1`, `v_2`. Inverted "
                "dropout keeps each weight with probability `1 - p` and divides a kept weight "
                "by `1 - p`. Average the output over the four masks: what is its expectation? "
                "Use `a`, `p`, `v_1`, `v_2`."
            ),
            answer=sp.simplify(expectation),
            mistakes=(Mistake("dropout_scaling", sp.expand((1 - p) * sp.simplify(expectation))),),
            symbols={"a": a, "p": p, "v_1": v1, "v_2": v2},
            kind="expression",
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
        )
    )
    return out
