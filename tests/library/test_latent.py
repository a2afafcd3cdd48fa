"""Multi-head latent attention: the absorption exact and numeric, the decoupled RoPE key, the
scale, the cache and the decode step's intensity, and bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.crosscheck import CrossCheckError
from attention_math.latent import (
    DEEPSEEK_V2,
    DEEPSEEK_V3,
    MLAConfig,
    MLAWeights,
    absorb,
    absorption_error,
    absorption_proof,
    cache_bytes_per_token,
    cache_entries,
    decode_work,
    decoupled_rope,
    expand_latent,
    intensity_formula,
    kv_latent,
    mla_attention,
    mla_query,
    random_weights,
    rope_breaks_absorption,
    softmax_scale,
    yarn_mscale,
)
from attention_math.reference import attention as reference_attention

SMALL = MLAConfig(
    hidden_size=12,
    n_heads=3,
    q_lora_rank=5,
    kv_lora_rank=4,
    qk_nope_head_dim=3,
    qk_rope_head_dim=4,
    v_head_dim=2,
    rope_theta=100.0,
)
YARN = {
    "rope_type": "yarn",
    "factor": 4.0,
    "original_max_position_embeddings": 8,
    "mscale": 0.707,
    "mscale_all_dim": 0.707,
}


def _plain_by_hand(x, w, c):
    """MLA written out from the paper's equations, with `reference.attention`: every head's
    query, key and value formed, nothing shared with `mla_attention` but RoPE and RMSNorm."""
    q = mla_query(x, w, c)  # (h, L, d_qk)
    c_kv, k_r = kv_latent(x, w, c)  # (L, d_c), (L, d_R)
    q_r, k_r = decoupled_rope(q[..., c.qk_nope_head_dim :], k_r, c)
    n = len(x)
    out = np.zeros((n, c.hidden_size))
    mask = np.tril(np.ones((n, n), dtype=bool))
    for i in range(c.n_heads):
        cols = slice(
            i * (c.qk_nope_head_dim + c.v_head_dim), (i + 1) * (c.qk_nope_head_dim + c.v_head_dim)
        )
        w_uk = w.w_kv_b[:, cols][:, : c.qk_nope_head_dim]  # (d_c, d_nope)
        w_uv = w.w_kv_b[:, cols][:, c.qk_nope_head_dim :]  # (d_c, d_v)
        k = np.concatenate([c_kv @ w_uk, k_r], 1)  # (L, d_qk)
        qi = np.concatenate([q[i, :, : c.qk_nope_head_dim], q_r[i]], 1)  # (L, d_qk)
        o = reference_attention(qi, k, c_kv @ w_uv, mask, scale=softmax_scale(c))  # (L, d_v)
        out += o @ w.w_o[i * c.v_head_dim : (i + 1) * c.v_head_dim]
    return out if w.b_o is None else out + w.b_o


@pytest.mark.parametrize("q_lora_rank", [5, None])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("scaling", [None, YARN])
def test_plain_form_equals_the_papers_equations_written_out(q_lora_rank, bias, scaling):
    c = dataclasses.replace(SMALL, q_lora_rank=q_lora_rank, rope_scaling=scaling)
    w = random_weights(c, seed=3, bias=bias)
    x = np.random.default_rng(4).standard_normal((7, 12))
    got, want = mla_attention(x, w, c), _plain_by_hand(x, w, c)
    assert np.abs(got - want).max() <= 1e-13 * np.abs(want).max()


@settings(max_examples=25, deadline=None)
@given(
    h=st.integers(1, 4),
    d_c=st.integers(1, 6),
    d_nope=st.integers(1, 4),
    half_r=st.integers(1, 3),
    d_v=st.integers(1, 4),
    lora=st.one_of(st.none(), st.integers(1, 6)),
    length=st.integers(1, 9),
    seed=st.integers(0, 2**16),
    interleave=st.booleans(),
)
def test_absorbed_form_equals_plain_form(
    h, d_c, d_nope, half_r, d_v, lora, length, seed, interleave
):
    c = MLAConfig(10, h, lora, d_c, d_nope, 2 * half_r, d_v, rope_interleave=interleave)
    w = random_weights(c, seed=seed, bias=seed % 2 == 0)
    x = np.random.default_rng(seed).standard_normal((length, 10))
    assert absorption_error(x, w, c) <= 1e-12


def test_a_wrong_absorption_is_caught():
    c = SMALL
    w = random_weights(c, seed=1)
    x = np.random.default_rng(1).standard_normal((5, 12))
    assert absorption_error(x, w, c) < 1e-13
    with pytest.raises(CrossCheckError, match="absorbed MLA differs"):
        absorption_error(x, w, c, bound=-1.0)


def test_absorbed_weights_are_the_per_head_products():
    c = SMALL
    w = random_weights(c, seed=2)
    a = absorb(w, c)
    per = c.qk_nope_head_dim + c.v_head_dim
    for i in range(c.n_heads):
        w_uk = w.w_kv_b[:, i * per : i * per + c.qk_nope_head_dim]
        w_uv = w.w_kv_b[:, i * per + c.qk_nope_head_dim : (i + 1) * per]
        w_uq = w.w_q_b[:, i * c.qk_head_dim : i * c.qk_head_dim + c.qk_nope_head_dim]
        np.testing.assert_allclose(a.w_q_uk[i], w_uq @ w_uk.T, rtol=0, atol=1e-14)
        w_o = w.w_o[i * c.v_head_dim : (i + 1) * c.v_head_dim]
        np.testing.assert_allclose(a.w_uv_o[i], w_uv @ w_o, rtol=0, atol=1e-14)


@pytest.mark.parametrize("sizes", [{}, {"d_c": 3, "d_nope": 1, "n_heads": 1, "length": 3}])
def test_absorption_is_proven_exactly(sizes):
    p = absorption_proof(**sizes)
    assert p.scores != p.scores_absorbed  # different expressions …
    assert (p.scores - p.scores_absorbed).expand().is_zero_matrix  # … for equal matrices
    assert (p.output - p.output_absorbed).expand().is_zero_matrix
    assert p.w_q_uk.shape == (sizes.get("d_q", 2), sizes.get("d_c", 2))


@pytest.mark.slow  # a symbolic rotation between the factors: seconds of SymPy
def test_rope_between_the_factors_moves_the_matrix_to_absorb():
    m, dm = rope_breaks_absorption()
    delta = sp.Symbol("Delta", real=True)
    values = {
        s: sp.Rational(k + 2, 3) for k, s in enumerate(sorted(m.free_symbols - {delta}, key=str))
    }
    at0, at1 = (m.subs(values).subs(delta, v) for v in (0, 1))
    assert sp.N((at0 - at1).norm()) > 0.1
    assert not all(sp.simplify(e.subs(values)) == 0 for e in dm)


def test_scores_depend_on_the_distance_only():
    c = dataclasses.replace(SMALL, rope_scaling=YARN, max_position_embeddings=32)
    w = random_weights(c, seed=7)
    x = np.random.default_rng(7).standard_normal((6, 12))
    at0 = mla_attention(x, w, c)
    at9 = mla_attention(x, w, c, positions=np.arange(9, 15))
    assert np.abs(at0 - at9).max() <= 1e-12 * np.abs(at0).max()


def test_causal_and_one_token():
    c = SMALL
    w = random_weights(c, seed=8)
    x = np.random.default_rng(8).standard_normal((6, 12))
    y = x.copy()
    y[4:] += 1.0
    np.testing.assert_allclose(mla_attention(x, w, c)[:4], mla_attention(y, w, c)[:4], atol=1e-14)
    # one token attends to itself only: its value, projected
    c_kv, _ = kv_latent(x[:1], w, c)
    _, v = expand_latent(c_kv, w, c)  # (h, 1, d_v)
    want = v.transpose(1, 0, 2).reshape(1, -1) @ w.w_o
    np.testing.assert_allclose(mla_attention(x[:1], w, c), want, rtol=1e-13)


def test_softmax_scale():
    assert softmax_scale(SMALL) == 1 / np.sqrt(7)
    m = 0.1 * 0.707 * np.log(40) + 1
    assert softmax_scale(DEEPSEEK_V2) == pytest.approx(m * m / np.sqrt(192), rel=1e-15)
    assert yarn_mscale(40, 1.0) == pytest.approx(1 + 0.1 * np.log(40), rel=1e-15)
    no_all_dim = dataclasses.replace(SMALL, rope_scaling={"rope_type": "yarn", "factor": 4.0})
    assert softmax_scale(no_all_dim) == 1 / np.sqrt(7)
    with pytest.raises(ValueError, match="'dynamic'"):
        softmax_scale(dataclasses.replace(SMALL, rope_scaling={"rope_type": "dynamic"}))


def test_cache_of_the_published_configurations():
    for c in (DEEPSEEK_V2, DEEPSEEK_V3):
        d_h = c.qk_nope_head_dim
        assert cache_entries("mla", c) == sp.Rational(9, 2) * d_h  # DeepSeek-V2, Table 1
        assert sp.Rational(cache_entries("mla", c), 2 * d_h) == sp.Rational(9, 4)  # 2.25 groups
        assert cache_entries("mha", c) == 2 * c.n_heads * d_h
        assert cache_bytes_per_token("mla", c, n_bytes=1) == 576 * c.n_layers
    assert cache_bytes_per_token("mha", DEEPSEEK_V3) / cache_bytes_per_token(
        "mla", DEEPSEEK_V3
    ) == pytest.approx(32768 / 576)


@pytest.mark.parametrize("kind", ["mha", "gqa", "mqa", "mla", "mla-expanded"])
@pytest.mark.parametrize("config", [DEEPSEEK_V2, DEEPSEEK_V3, SMALL])
def test_decode_intensity_is_its_formula(kind, config):
    w1, w2 = decode_work(kind, config, 100), decode_work(kind, config, 4096)
    assert sp.Rational(w1.flops, w1.n_bytes) == sp.Rational(w2.flops, w2.n_bytes)  # t cancels
    n_h, d_h, n_g, d_c, d_r, d_v, b = sp.symbols("n_h d_h n_g d_c d_R d_v b", positive=True)
    values = {
        n_h: config.n_heads,
        d_h: config.qk_nope_head_dim,
        n_g: 8,
        d_c: config.kv_lora_rank,
        d_r: config.qk_rope_head_dim,
        d_v: config.v_head_dim,
        b: 2,
    }
    assert intensity_formula(kind).subs(values) == sp.Rational(w2.flops, w2.n_bytes)


def test_absorbed_mla_decode_is_past_the_a100_ridge_and_mha_is_not():
    from attention_math.hardware import bound

    w = decode_work("mla", DEEPSEEK_V3, 4096)
    assert bound(w.flops, w.n_bytes) == "compute"
    w = decode_work("mha", DEEPSEEK_V3, 4096)
    assert bound(w.flops, w.n_bytes) == "memory"


def test_bad_input_is_named():
    w = random_weights(SMALL)
    with pytest.raises(
        ValueError, match=r"x must have shape \(L, hidden_size = 12\), got \(3, 5\)"
    ):
        mla_attention(np.ones((3, 5)), w, SMALL)
    bad = dataclasses.replace(w, w_kv_b=np.ones((4, 9)))
    with pytest.raises(ValueError, match=r"w_kv_b must have shape \(4, 15\), got \(4, 9\)"):
        mla_attention(np.ones((3, 12)), bad, SMALL)
    plain = dataclasses.replace(SMALL, q_lora_rank=None)
    with pytest.raises(ValueError, match="w_q is missing"):
        mla_attention(np.ones((3, 12)), w, plain)
    with pytest.raises(TypeError, match="weights must be an MLAWeights"):
        mla_attention(np.ones((3, 12)), {"w_q": 1}, SMALL)
    with pytest.raises(ValueError, match="qk_rope_head_dim = 3 must be even"):
        MLAConfig(8, 2, None, 4, 2, 3, 2)
    with pytest.raises(ValueError, match="n_heads must be a positive integer, got 0"):
        MLAConfig(8, 0, None, 4, 2, 2, 2)
    with pytest.raises(ValueError, match="kind must be one of"):
        cache_entries("gqa8", SMALL)
    with pytest.raises(ValueError, match="c_kv must have shape"):
        expand_latent(np.ones((3, 5)), w, SMALL)
    with pytest.raises(ValueError, match="b_q_a is given but q_lora_rank is None"):
        mla_attention(
            np.ones((3, 12)), dataclasses.replace(random_weights(plain), b_q_a=np.ones(5)), plain
        )
    assert isinstance(w, MLAWeights)
