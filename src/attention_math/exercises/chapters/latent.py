"""Exercises: Latent attention (MLA): the cache of a latent, the absorbed weights, the
decoupled RoPE key, the YaRN scale and the decode step on the roofline. Reference answers are
computed, never typed.

This module imports no NumPy (the checker also runs without it): every exact answer is SymPy,
and the NumPy references (`attention_math.latent`) are imported when they are called, at build
time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

from attention_math._lazy import np
from attention_math.exercises.model import Exercise, Mistake

if TYPE_CHECKING:
    from attention_math.latent import MLAConfig

__all__ = ["exercises"]

# DeepSeek-V3's attention sizes (its config.json, quoted in attention_math.latent.DEEPSEEK_V3,
# which the NumPy references below read: a mismatch fails the cross-check)
N_H, D_H, D_C, D_R = 128, 128, 512, 64


def _v3() -> MLAConfig:
    from attention_math.latent import DEEPSEEK_V3  # NumPy: build time only

    return DEEPSEEK_V3


def _entries_ref(kind: str) -> np.ndarray:
    from attention_math.latent import cache_entries  # NumPy: build time only

    return np.asarray(float(cache_entries(kind, _v3())))


def _ratio_ref() -> np.ndarray:
    from attention_math.latent import cache_entries  # NumPy: build time only

    c = _v3()
    return np.asarray(cache_entries("mha", c) / cache_entries("mla", c))


def _groups_ref() -> np.ndarray:
    from attention_math.latent import cache_entries  # NumPy: build time only

    c = _v3()
    return np.asarray(cache_entries("mla", c) / cache_entries("gqa", c, n_kv_heads=1))


def _mscale_ref() -> np.ndarray:
    from attention_math.latent import softmax_scale  # NumPy: build time only

    c = _v3()
    return np.asarray(softmax_scale(c) * np.sqrt(c.qk_head_dim))


def _intensity_ref() -> np.ndarray:
    from attention_math.latent import decode_work  # NumPy: build time only

    return np.asarray(decode_work("mla", _v3(), 4096).intensity)


def _absorbed_query_ref(q: sp.Matrix, w_uk: sp.Matrix) -> np.ndarray:
    from attention_math.latent import MLAConfig, MLAWeights, absorb  # NumPy: build time only

    # one head, no query latent: W_Q = [q-part | rope part] read on the token x = (1, 0)
    d_c, d_nope = w_uk.shape
    c = MLAConfig(2, 1, None, d_c, d_nope, 2, 1)
    w_q = np.zeros((2, d_nope + 2))
    w_q[0, :d_nope] = np.array(q, dtype=float)[0]  # x = (1, 0) reads row 0: q_C
    w = MLAWeights(
        w_kv_a=np.zeros((2, d_c + 2)),
        kv_norm=np.ones(d_c),
        w_kv_b=np.hstack([np.array(w_uk, dtype=float), np.zeros((d_c, 1))]),
        w_o=np.zeros((1, 2)),
        w_q=w_q,
    )
    out: np.ndarray = np.array([1.0, 0.0]) @ absorb(w, c).w_q_uk[0]  # (d_c,)
    return out


def _absorbed_output_ref(w_uv: sp.Matrix, w_o: sp.Matrix) -> np.ndarray:
    from attention_math.latent import MLAConfig, MLAWeights, absorb  # NumPy: build time only

    d_c, d_v = w_uv.shape
    hidden = w_o.shape[1]
    c = MLAConfig(hidden, 1, None, d_c, 1, 2, d_v)
    w = MLAWeights(
        w_kv_a=np.zeros((hidden, d_c + 2)),
        kv_norm=np.ones(d_c),
        w_kv_b=np.hstack([np.zeros((d_c, 1)), np.array(w_uv, dtype=float)]),
        w_o=np.array(w_o, dtype=float),
        w_q=np.zeros((hidden, 3)),
    )
    out: np.ndarray = absorb(w, c).w_uv_o[0]
    return out


def _score_ref() -> np.ndarray:
    from attention_math.latent import MLAConfig, decoupled_rope  # NumPy: build time only

    c = MLAConfig(2, 1, None, 1, 1, 2, 1)  # d_R = 2: one pair, θ_0 = base⁰ = 1
    unit = np.tile([1.0, 0.0], (3, 1))  # (3, 2): (1, 0) at positions 0, 1, 2
    q_r, k_r = decoupled_rope(unit[None], unit, c)
    return np.asarray(4.0 + q_r[0, 2] @ k_r[1])  # query at 2, key at 1


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    entries = sp.Integer(D_C + D_R)
    mha = sp.Integer(2 * N_H * D_H)
    q = sp.Matrix([[1, 2]])
    w_uk = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    w_uv = sp.Matrix([[1], [2]])
    w_o = sp.Matrix([[3, 1]])
    theta = sp.Integer(1)
    factor, m_all = sp.Integer(40), sp.Integer(1)
    mscale = (sp.Rational(1, 10) * m_all * sp.log(factor) + 1) ** 2
    intensity = sp.Rational(N_H * (2 * (D_C + D_R) + 2 * D_C), (D_C + D_R) * 2)
    return [
        Exercise(
            id="latent-cache-entries",
            chapter="latent",
            title="What MLA caches",
            statement=(
                "DeepSeek-V3 caches, per token and layer, the latent $c^{KV}$ of width "
                f"$d_c = {D_C}$ and the decoupled RoPE key $k^R$ of width $d_R = {D_R}$, shared "
                f"by its ${N_H}$ heads. How many numbers is that?"
            ),
            answer=entries,
            mistakes=(
                Mistake(
                    "kv_factor",
                    2 * entries,
                    "Here it is the other way round: one latent serves as key AND value.",
                ),
            ),
            numeric=lambda: _entries_ref("mla"),
            kind="scalar",
            explanation=(
                "The keys and values of all heads are linear images of the one latent, so the "
                "latent is all there is to cache, with the one RoPE key: $d_c + d_R$."
            ),
            solution=_solve_cache_entries,
        ),
        Exercise(
            id="latent-mha-ratio",
            chapter="latent",
            title="Against multi-head attention",
            statement=(
                f"Multi-head attention with ${N_H}$ heads of width $d_h = {D_H}$ caches a key and "
                "a value per head. By what factor is its cache per token and layer larger than "
                f"MLA's ${D_C} + {D_R}$ numbers? Give the exact fraction."
            ),
            answer=mha / entries,
            mistakes=(Mistake("kv_factor", mha / 2 / entries),),
            numeric=_ratio_ref,
            kind="scalar",
            explanation=(
                f"Multi-head attention caches $2 n_h d_h = 2 \\cdot {N_H} \\cdot {D_H}$ numbers; "
                f"divide by $d_c + d_R$."
            ),
            solution=_solve_mha_ratio,
        ),
        Exercise(
            id="latent-gqa-groups",
            chapter="latent",
            title="As many groups as the latent",
            statement=(
                f"Grouped-query attention with $n_g$ key/value heads of width $d_h = {D_H}$ caches "
                f"$2 n_g d_h$ numbers per token and layer. For which $n_g$ would that equal MLA's "
                f"$d_c + d_R = {D_C} + {D_R}$? (Not a whole number: give it exactly.)"
            ),
            answer=entries / (2 * D_H),
            mistakes=(Mistake("kv_factor", entries / D_H),),
            numeric=_groups_ref,
            kind="scalar",
            explanation=(
                "Solve $2 n_g d_h = d_c + d_R$: DeepSeek-V2's paper says MLA's cache equals that "
                "of GQA with only 2.25 groups."
            ),
            solution=_solve_gqa_groups,
        ),
        Exercise(
            id="latent-absorbed-query",
            chapter="latent",
            title="The absorbed query",
            statement=(
                "One head's query without position is $q^C$ (the input "
                "$q_{\\text{nope}}$), and its keys are "
                "$k^C_t = c^{KV}_t W^{UK}$ with $W^{UK}$ below ($d_c = 3$, $d_{\\text{nope}} = 2$, "
                "rows acting on the latent). Give the absorbed query $\\tilde q$, a $1 \\times 3$ "
                "row with $\\tilde q \\cdot c^{KV}_t = q^C \\cdot k^C_t$ for every latent."
            ),
            answer=q * w_uk.T,
            inputs={"q_nope": q, "W_UK": w_uk},
            numeric=lambda: _absorbed_query_ref(q, w_uk),
            explanation=(
                "$q^C \\cdot k^C_t = q^C (c^{KV}_t W^{UK})^\\top = (q^C W^{UK\\top}) "
                "c^{KV\\top}_t$: the absorbed query is $q^C W^{UK\\top}$, the same for every "
                "cached latent."
            ),
            solution=_solve_absorbed_query,
        ),
        Exercise(
            id="latent-absorbed-output",
            chapter="latent",
            title="The absorbed output projection",
            statement=(
                "A head's value is $v_t = c^{KV}_t W^{UV}$ and its output $o = (\\sum_t a_t v_t) "
                "W^O_i$. Give the matrix $M$ with $o = (\\sum_t a_t c^{KV}_t) M$ for the "
                "$W^{UV}$ ($2 \\times 1$) and $W^O_i$ ($1 \\times 2$) below."
            ),
            answer=w_uv * w_o,
            inputs={"W_UV": w_uv, "W_O": w_o},
            mistakes=(Mistake("transposed", (w_uv * w_o).T),),
            numeric=lambda: _absorbed_output_ref(w_uv, w_o),
            explanation=(
                "$\\sum_t a_t (c^{KV}_t W^{UV}) W^O_i = (\\sum_t a_t c^{KV}_t)(W^{UV} W^O_i)$: "
                "the weighted sum commutes with the linear maps, so $M = W^{UV} W^O_i$."
            ),
            solution=_solve_absorbed_output,
        ),
        Exercise(
            id="latent-decoupled-score",
            chapter="latent",
            title="A score with the decoupled key",
            statement=(
                "A head's score is $q^C \\cdot k^C + \\operatorname{RoPE}(q^R) \\cdot "
                "\\operatorname{RoPE}(k^R)$ (before the scale). Here $q^C \\cdot k^C = 4$, "
                "$q^R = k^R = (1, 0)$, one RoPE pair with $\\theta = 1$; the query is at position "
                "$2$ and the key at position $1$. Give the score exactly."
            ),
            answer=4 + sp.cos(theta * (2 - 1)),
            mistakes=(Mistake("absolute_position", 4 + sp.cos(theta * (2 + 1))),),
            numeric=_score_ref,
            kind="scalar",
            explanation=(
                "RoPE turns $q^R$ by $2\\theta$ and $k^R$ by $1\\theta$; the dot product of two "
                "unit vectors at angles $2$ and $1$ is $\\cos(2 - 1)$. The part without position "
                "adds $4$."
            ),
            solution=_solve_decoupled_score,
        ),
        Exercise(
            id="latent-mscale",
            chapter="latent",
            title="The YaRN factor in the softmax scale",
            statement=(
                "DeepSeek-V3 stretches its context $40$ times with YaRN and multiplies its "
                "softmax scale $1/\\sqrt{d_{\\text{nope}} + d_R}$ by $m^2$, with "
                "$m = 0.1\\,\\mu \\ln(\\text{factor}) + 1$, where $\\mu = 1$ is the "
                "configuration's `mscale_all_dim`. Give $m^2$ exactly."
            ),
            answer=mscale,
            mistakes=(Mistake("wrong_scale", sp.sqrt(mscale)),),
            numeric=_mscale_ref,
            kind="scalar",
            explanation=(
                "$m = 1 + \\ln(40)/10$; the scale is multiplied by its square, "
                "$(1 + \\ln(40)/10)^2 \\approx 1.874$."
            ),
            solution=_solve_mscale,
        ),
        Exercise(
            id="latent-decode-intensity",
            chapter="latent",
            title="FLOPs per byte of an absorbed decode step",
            statement=(
                f"Absorbed MLA, one new token, ${N_H}$ heads, $d_c = {D_C}$, $d_R = {D_R}$: per "
                "cached token each head does $2(d_c + d_R)$ FLOPs for its score and $2 d_c$ for "
                "its weighted sum of latents, and the cache of that token, $d_c + d_R$ numbers "
                "of $2$ bytes, is read once for all heads. How many FLOPs per byte is that?"
            ),
            answer=intensity,
            numeric=_intensity_ref,
            kind="scalar",
            explanation=(
                "$n_h (4 d_c + 2 d_R) / (2 (d_c + d_R))$; every head reads the same cache, so the "
                "FLOPs grow with $n_h$ and the bytes do not: past the A100's ridge of about 153."
            ),
            solution=_solve_decode_intensity,
        ),
    ]


def _solve_cache_entries(ex: Exercise) -> object:
    d_c, d_r = 512, 64
    return sp.Integer(d_c + d_r)


def _solve_mha_ratio(ex: Exercise) -> object:
    n_h, d_h, d_c, d_r = 128, 128, 512, 64
    return sp.Rational(2 * n_h * d_h, d_c + d_r)


def _solve_gqa_groups(ex: Exercise) -> object:
    n_g = sp.Symbol("n_g", positive=True)
    return sp.solve(sp.Eq(2 * n_g * 128, 512 + 64), n_g)[0]


def _solve_absorbed_query(ex: Exercise) -> object:
    x = ex.inputs
    return x["q_nope"] * x["W_UK"].T


def _solve_absorbed_output(ex: Exercise) -> object:
    x = ex.inputs
    return x["W_UV"] * x["W_O"]


def _solve_decoupled_score(ex: Exercise) -> object:
    def turn(angle: sp.Expr) -> sp.Matrix:
        return sp.Matrix([[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]])

    q_r = turn(2) * sp.Matrix([1, 0])  # position 2, θ = 1
    k_r = turn(1) * sp.Matrix([1, 0])  # position 1
    return sp.simplify(4 + (q_r.T * k_r)[0])


def _solve_mscale(ex: Exercise) -> object:
    m = sp.Rational(1, 10) * 1 * sp.log(40) + 1
    return m**2


def _solve_decode_intensity(ex: Exercise) -> object:
    n_h, d_c, d_r = 128, 512, 64
    flops = n_h * (2 * (d_c + d_r) + 2 * d_c)  # per cached token
    return sp.Rational(flops, (d_c + d_r) * 2)
