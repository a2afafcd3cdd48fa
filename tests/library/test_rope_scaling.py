"""RoPE for long contexts (rope_frequencies with scaling, partial rotary, the decay bound) and
T5's relative buckets: exact in SymPy, and equal to Hugging Face where it is installed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_math.derivations.rope_scaling import (
    abel_summation_holds,
    check_frequencies,
    complex_score_holds,
    exact_yarn_ramp,
)
from attention_math.positional import (
    rope,
    rope_decay_bound,
    rope_frequencies,
    t5_relative_bucket,
    yarn_ramp,
)
from tests.conftest import require_or_skip

LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
SCALINGS = [
    {"rope_type": "linear", "factor": 4.0},
    {"rope_type": "dynamic", "factor": 2.0},
    {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096},
    {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 2048,
        "beta_fast": 16.0,
        "beta_slow": 2.0,
        "mscale": 0.707,
        "mscale_all_dim": 1.0,
    },
    {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 2048,
        "truncate": False,
    },
    LLAMA3,
]
MAX_POS, SEQ_LEN = 32768, 50000


@pytest.mark.parametrize("scaling", [None, *SCALINGS], ids=lambda s: (s or {}).get("rope_type"))
@pytest.mark.parametrize(("d", "base"), [(8, 100.0), (64, 10000.0), (128, 500000.0)])
def test_float64_frequencies_are_exact_to_a_few_ulp(scaling, d, base):
    seq = SEQ_LEN if scaling and scaling["rope_type"] == "dynamic" else None
    c = check_frequencies(
        d, base=base, scaling=scaling, max_position_embeddings=MAX_POS, seq_len=seq
    )
    assert c.error_eps <= 8


def test_yarn_ramp_is_exact():
    for d, base, n in ((16, 10000.0, 2048), (128, 500000.0, 8192), (64, 10000.0, 4096)):
        got = yarn_ramp(d, base=base, original_max_position_embeddings=n)
        want = [
            float(e) for e in exact_yarn_ramp(d, base=int(base), original_max_position_embeddings=n)
        ]
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
        assert got[0] == 0 and got[-1] == 1 and (np.diff(got) >= 0).all()


def test_each_method_keeps_what_it_should():
    theta = rope_frequencies(128, base=500000.0)
    lin, _ = rope_frequencies(128, base=500000.0, scaling={"rope_type": "linear", "factor": 8.0})
    np.testing.assert_allclose(lin * 8, theta, rtol=1e-15)
    yarn, t = rope_frequencies(128, base=500000.0, scaling=SCALINGS[2])
    assert yarn[0] == theta[0] and yarn[-1] == pytest.approx(theta[-1] / 8, rel=1e-15)
    assert t == pytest.approx(0.1 * math.log(8) + 1)
    llama, t = rope_frequencies(128, base=500000.0, scaling=LLAMA3)
    wavelen = 2 * math.pi / theta
    short, long = wavelen < 8192 / 4, wavelen > 8192
    np.testing.assert_array_equal(llama[short], theta[short])
    np.testing.assert_allclose(llama[long], theta[long] / 8, rtol=1e-15)
    assert t == 1.0 and ((llama <= theta) & (llama >= theta / 8)).all()
    dyn_short, _ = rope_frequencies(
        64, scaling={"rope_type": "dynamic", "factor": 2.0}, max_position_embeddings=100, seq_len=50
    )
    np.testing.assert_array_equal(dyn_short, rope_frequencies(64))  # not longer: unchanged


def test_linear_scaling_is_position_interpolation():
    x = np.random.default_rng(0).standard_normal((3, 16))
    scaled = rope(x, [0, 40, 400], scaling={"rope_type": "linear", "factor": 4.0})
    np.testing.assert_allclose(scaled, rope(x, [0, 10, 100]), rtol=1e-13, atol=1e-13)


def test_yarn_attention_factor_multiplies_cos_and_sin():
    x = np.random.default_rng(1).standard_normal((2, 8))
    sc = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    _, t = rope_frequencies(8, scaling=sc)
    out = rope(x, [0, 5], scaling=sc)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), t * np.linalg.norm(x, axis=-1))


def test_partial_rotary_rotates_the_first_coordinates_only():
    x = np.random.default_rng(2).standard_normal((5, 12))
    for interleaved in (False, True):
        out = rope(x, partial_rotary_factor=0.5, interleaved=interleaved, base=50.0)
        want = rope(x[:, :6], interleaved=interleaved, base=50.0)
        np.testing.assert_array_equal(out[:, :6], want)
        np.testing.assert_array_equal(out[:, 6:], x[:, 6:])
    with pytest.raises(ValueError, match=r"rotates int\(12 · 0.25\) = 3 coordinates"):
        rope(x, partial_rotary_factor=0.25)
    with pytest.raises(ValueError, match=r"partial_rotary_factor must be in \(0, 1\]"):
        rope(x, partial_rotary_factor=1.5)


def test_scaling_errors_name_the_field():
    with pytest.raises(
        ValueError, match="scaling\\['factor'\\] is required for rope_type 'linear'"
    ):
        rope_frequencies(8, scaling={"rope_type": "linear"})
    with pytest.raises(ValueError, match="'dynamic' needs max_position_embeddings"):
        rope_frequencies(8, scaling={"rope_type": "dynamic", "factor": 2.0})
    with pytest.raises(ValueError, match="original_max_position_embeddings"):
        rope_frequencies(8, scaling={"rope_type": "yarn", "factor": 2.0})
    with pytest.raises(TypeError, match="scaling must be a dictionary"):
        rope_frequencies(8, scaling=2.0)


# --- RoFormer's long-term decay ---------------------------------------------------------


def test_decay_steps_are_exact():
    assert complex_score_holds(2) and abel_summation_holds(5)


def test_decay_bound_bounds_every_score():
    d, base = 32, 10000.0
    r = np.arange(0, 2000, 7)
    bound = rope_decay_bound(r, d=d, base=base)
    assert bound[0] == pytest.approx((d / 2 + 1) / 2, rel=1e-15)
    assert bound[-1] < bound[0] / 3  # it decays
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, k = rng.standard_normal(d), rng.standard_normal(d)
        h = (q[0::2] + 1j * q[1::2]) * np.conj(k[0::2] + 1j * k[1::2])  # (d/2,)
        step = np.abs(np.diff(np.append(h, 0))).max()  # max |h_i − h_{i+1}|, h_{d/2} = 0
        rq = rope(np.tile(q, (r.size, 1)), np.zeros(r.size, dtype=int), interleaved=True)
        rk = rope(np.tile(k, (r.size, 1)), r, interleaved=True)
        score = np.abs((rq * rk).sum(axis=-1))  # |⟨R(0) q, R(r) k⟩|
        assert (score <= step * bound * d / 2 * (1 + 1e-12)).all()


# --- T5's buckets --------------------------------------------------------------------------


def _t5_bucket_reference(rel, bidirectional, num_buckets, max_distance):
    """Written from Hugging Face's ``T5Attention._relative_position_bucket`` (float32, as there)."""
    ret = np.zeros_like(rel)
    n = -rel
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).astype(np.int64) * num_buckets
        n = np.abs(n)
    else:
        n = np.maximum(n, 0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        val = np.float32(max_exact) + (
            np.log(n.astype(np.float32) / np.float32(max_exact))
            / np.float32(math.log(max_distance / max_exact))
            * np.float32(num_buckets - max_exact)
        )
    val_if_large = np.minimum(np.where(is_small, 0, val).astype(np.int64), num_buckets - 1)
    return ret + np.where(is_small, n, val_if_large)


CONFIGS = [(True, 32, 128), (False, 32, 128), (True, 64, 256), (False, 16, 50), (True, 8, 20)]
OFFSETS = np.arange(-4096, 4097, dtype=np.int64)


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), CONFIGS)
def test_t5_bucket_equals_a_reimplementation_for_every_offset(
    bidirectional, num_buckets, max_distance
):
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    got = t5_relative_bucket(OFFSETS, **kw)
    np.testing.assert_array_equal(
        got, _t5_bucket_reference(OFFSETS, bidirectional, num_buckets, max_distance)
    )
    assert got.min() == 0 and got.max() == num_buckets - 1
    # buckets never decrease with the distance, on either side
    after = got[OFFSETS >= 0]
    before = got[OFFSETS <= 0][::-1]
    assert (np.diff(after) >= 0).all() and (np.diff(before) >= 0).all()


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), CONFIGS)
def test_t5_float32_bucket_equals_exact_integer_arithmetic(
    bidirectional, num_buckets, max_distance
):
    from attention_math.derivations.positions_compared import exact_t5_bucket

    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    offsets = np.arange(-600, 601, dtype=np.int64)
    want = [exact_t5_bucket(int(r), **kw) for r in offsets]
    np.testing.assert_array_equal(t5_relative_bucket(offsets, **kw), want)


def test_t5_bucket_errors():
    with pytest.raises(TypeError, match="relative_position must be integers"):
        t5_relative_bucket(np.array([0.5]))
    with pytest.raises(ValueError, match="no logarithmic range"):
        t5_relative_bucket([1], num_buckets=32, max_distance=8)


# --- Hugging Face --------------------------------------------------------------------------

HF_MISSING = (
    "Hugging Face transformers, the optional test-time oracle, is not installed: "
    "python3 -m uv sync --group test"
)


# importing transformers alone takes seconds of CPU: left to the full suite, as every
# Hugging Face oracle is (the quick loop keeps the exact tests above)
@pytest.mark.slow
@pytest.mark.oracle
@pytest.mark.parametrize("scaling", [None, *SCALINGS], ids=lambda s: (s or {}).get("rope_type"))
@pytest.mark.parametrize("d", [64, 128])
def test_frequencies_equal_hugging_face_within_float32_rounding(torch, scaling, d):
    require_or_skip("transformers", HF_MISSING)
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    kind = (scaling or {}).get("rope_type", "default")
    config = LlamaConfig(
        hidden_size=4 * d,
        num_attention_heads=4,
        max_position_embeddings=MAX_POS,
        rope_theta=500000.0,
        rope_scaling=dict(scaling) if scaling else None,
    )
    kw = {"seq_len": SEQ_LEN} if kind == "dynamic" else {}
    if kind in ROPE_INIT_FUNCTIONS:
        want, want_factor = ROPE_INIT_FUNCTIONS[kind](config, torch.device("cpu"), **kw)
    else:  # transformers 5 keeps the unscaled frequencies on the rotary module
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

        rotary = LlamaRotaryEmbedding(config)
        want, want_factor = rotary.inv_freq, rotary.attention_scaling
    if scaling is None:
        got, got_factor = rope_frequencies(d, base=500000.0), 1.0
    else:
        got, got_factor = rope_frequencies(
            d,
            base=500000.0,
            scaling=scaling,
            max_position_embeddings=MAX_POS,
            seq_len=kw.get("seq_len"),
        )
    # Hugging Face raises base to a float32 exponent in float32: a relative error of a few
    # float32 ε on each frequency (measured: under 3 ε)
    rel = np.abs(got - want.double().numpy()) / got
    assert rel.max() <= 8 * np.finfo(np.float32).eps
    assert got_factor == pytest.approx(want_factor, rel=1e-15)


# importing transformers alone takes seconds of CPU: left to the full suite, as every
# Hugging Face oracle is (the quick loop keeps the exact tests above)
@pytest.mark.slow
@pytest.mark.oracle
@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), CONFIGS)
def test_t5_bucket_equals_hugging_face(torch, bidirectional, num_buckets, max_distance):
    require_or_skip("transformers", HF_MISSING)
    from transformers.models.t5.modeling_t5 import T5Attention

    want = T5Attention._relative_position_bucket(
        torch.from_numpy(OFFSETS),
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    ).numpy()
    got = t5_relative_bucket(
        OFFSETS, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    np.testing.assert_array_equal(got, want)
