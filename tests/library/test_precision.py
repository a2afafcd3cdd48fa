"""Low precision: the package's rounding against exact rationals and PyTorch's casts, the
error bound of low-precision attention, the Hadamard rotation, KV-cache quantisation."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric
from attention_math import precision as pr

FP = [pr.BFLOAT16, pr.FLOAT8_E4M3, pr.FLOAT8_E5M2]
TORCH_DTYPE = {
    "bfloat16": "bfloat16",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
}


# --- the formats, from their bit counts -------------------------------------------------


def test_published_constants_follow_from_the_bit_counts():
    e4, e5, bf = pr.FLOAT8_E4M3, pr.FLOAT8_E5M2, pr.BFLOAT16
    assert (e4.max_finite, e5.max_finite) == (448, 57344)
    assert bf.max_finite == Fraction(2**8 - 1, 2**7) * 2**127
    assert (e4.unit_roundoff, e5.unit_roundoff, bf.unit_roundoff) == (
        Fraction(1, 16),
        Fraction(1, 8),
        Fraction(1, 256),
    )
    assert (e4.min_subnormal, e5.min_subnormal) == (Fraction(1, 2**9), Fraction(1, 2**16))
    assert pr.FLOAT32.max_finite == Fraction(np.finfo(np.float32).max.item())
    assert pr.FLOAT32.min_subnormal == Fraction(float(np.finfo(np.float32).smallest_subnormal))


@pytest.mark.parametrize("fmt", FP, ids=lambda f: f.name)
def test_the_worst_relative_error_is_u_over_one_plus_u(fmt):
    u = fmt.unit_roundoff
    assert pr.max_relative_error(fmt) == u / (1 + u)
    # and no value of the grid's normal range does worse: sampled exactly on midpoints
    g = [x for x in pr.grid(fmt) if x >= fmt.min_normal][:300]
    for a, b in itertools.pairwise(g):
        mid = (a + b) / 2
        y = pr.round_exact(mid, fmt)
        assert isinstance(y, Fraction)
        assert abs(y - mid) / mid <= u


def test_grid_sizes_and_ends():
    assert len(pr.grid("e4m3")) == 127  # 128 patterns with the sign clear, one NaN
    assert len(pr.grid("e5m2")) == 124  # four of the top binade are inf and NaNs
    assert pr.grid("e5m2")[-1] == pr.FLOAT8_E5M2.max_finite
    for fmt in FP:
        assert fmt.finite_values == len(pr.grid(fmt))


@pytest.mark.parametrize("fmt", FP, ids=lambda f: f.name)
def test_rounding_a_grid_value_gives_it_back_and_neighbours_bracket(fmt):
    g = pr.grid(fmt)[:: max(1, len(pr.grid(fmt)) // 2000) if fmt.bits == 16 else 1]
    for x in g:
        assert pr.round_exact(x, fmt) == x
        assert pr.round_exact(-x, fmt) == -x
        assert pr.neighbours(x, fmt) == (x, x)
    assert np.array_equal(pr.round_to_format([float(x) for x in g], fmt), [float(x) for x in g])


def test_ties_go_to_the_even_significand():
    assert pr.round_exact(304, "e4m3") == 320  # between 288 (1.001) and 320 (1.010)
    assert pr.round_exact(272, "e4m3") == 256  # between 256 (1.000) and 288 (1.001)
    assert pr.round_exact(Fraction(1, 2**10), "e4m3") == 0  # half the smallest subnormal
    assert pr.round_exact(Fraction(3, 2**10), "e4m3") == Fraction(2, 2**9)


def test_overflow_saturates_or_goes_to_infinity():
    assert pr.round_exact(464, "e4m3") == 448  # the tie past 448 rounds to even 448 anyway
    assert pr.round_exact(10**6, "e4m3") == 448
    assert pr.round_exact(61439, "e5m2") == 57344
    assert pr.round_exact(61440, "e5m2") == np.inf  # the midpoint to 2^16: to even, overflow
    assert pr.round_exact(61440, "e5m2", overflow="saturate") == 57344
    assert pr.round_to_format([np.inf, -np.inf], "e4m3").tolist() == [448.0, -448.0]
    assert pr.round_to_format([np.inf, -1e6], "e5m2").tolist() == [np.inf, -np.inf]


def test_round_exact_and_round_to_format_agree_on_random_floats():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(3000) * np.exp(rng.uniform(-30, 12, 3000))  # (3000,)
    for fmt in FP:
        got = pr.round_to_format(x, fmt)
        want = [float(pr.round_exact(float(a), fmt)) for a in x]
        assert np.array_equal(got, want), fmt.name


def test_float32_rounding_is_numpys_cast():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(20000) * np.exp(rng.uniform(-100, 80, 20000))  # (20000,)
    assert np.array_equal(pr.round_to_format(x, "float32"), x.astype(np.float32).astype(float))


def _cases(fmt):
    """Float32 values that test a cast: every grid value, the midpoints (ties), one float32
    step either side of each, past the maximum, and random values across the range."""
    g = np.array([float(x) for x in pr.grid(fmt)], dtype=np.float32)
    mids = ((g[:-1].astype(np.float64) + g[1:]) / 2).astype(np.float32)  # exact in float32
    up, down = np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(0))
    top32 = float(np.finfo(np.float32).max)
    big = np.minimum(float(fmt.max_finite) * np.array([1.03, 1.0625, 1.07, 1.5, 4]), top32)
    rng = np.random.default_rng(2)
    top = np.log(float(fmt.max_finite))
    rand = np.exp(rng.uniform(np.log(float(fmt.min_subnormal)) - 2, top, 50000))
    x = np.concatenate([g, mids, up, down, big.astype(np.float32), rand.astype(np.float32)])
    return np.concatenate([x, -x])


@pytest.mark.oracle
@pytest.mark.parametrize("fmt", FP, ids=lambda f: f.name)
def test_rounding_is_torchs_cast(torch, fmt):
    x = _cases(fmt)  # float32
    want = torch.from_numpy(x).to(getattr(torch, TORCH_DTYPE[fmt.name])).float().numpy()
    got = pr.round_to_format(x.astype(np.float64), fmt)
    assert np.array_equal(got, want.astype(np.float64))


@pytest.mark.oracle
def test_every_bfloat16_value_is_torchs(torch):
    bits = torch.from_numpy(np.arange(2**16, dtype=np.uint16).view(np.int16))  # every pattern
    with np.errstate(invalid="ignore"):  # the NaN patterns
        values = bits.view(torch.bfloat16).float().numpy().astype(np.float64)  # (65536,)
    finite = np.isfinite(values)
    assert np.array_equal(pr.round_to_format(values[finite], "bfloat16"), values[finite])
    for code in range(0, 2**16, 97):
        mine = pr.decode(code, "bfloat16")
        assert (np.isnan(values[code]) and mine != mine) or float(mine) == values[code]


@pytest.mark.oracle
@pytest.mark.parametrize("fmt", [pr.FLOAT8_E4M3, pr.FLOAT8_E5M2], ids=lambda f: f.name)
def test_every_fp8_bit_pattern_decodes_as_torch(torch, fmt):
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    values = codes.view(getattr(torch, TORCH_DTYPE[fmt.name])).float().numpy()
    for code in range(256):
        mine = pr.decode(code, fmt)
        if np.isnan(values[code]):
            assert mine != mine, code
        else:
            assert float(mine) == values[code], code


# --- attention in low precision ---------------------------------------------------------

reals = st.floats(-4, 4, allow_nan=False, width=32).filter(lambda x: x == 0 or abs(x) > 1e-6)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 5),
    st.integers(1, 6),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from(["bfloat16", "e4m3", "e5m2"]),
    st.booleans(),
    st.data(),
)
def test_the_bound_holds(n_q, n_k, d, fmt, round_p, data):
    def mat(r, c):
        return np.array(data.draw(st.lists(reals, min_size=r * c, max_size=r * c))).reshape(r, c)

    q, k, v = mat(n_q, d), mat(n_k, d), mat(n_k, d)
    got = pr.low_precision_attention(q, k, v, fmt, round_p=round_p)
    bound = pr.low_precision_error_bound(q, k, v, fmt, round_p=round_p)
    assert (np.abs(got - numeric.attention(q, k, v)) <= bound).all()


def test_the_bound_holds_on_larger_random_inputs_and_shrinks_with_u():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 32, 16))
    exact = numeric.attention(q, k, v)
    bounds = {}
    for fmt in FP:
        err = np.abs(pr.low_precision_attention(q, k, v, fmt) - exact)
        bounds[fmt.name] = pr.low_precision_error_bound(q, k, v, fmt)
        assert (err <= bounds[fmt.name]).all() and err.max() > 0
    assert bounds["bfloat16"].max() < bounds["float8_e4m3fn"].max()
    assert bounds["float8_e4m3fn"].max() < bounds["float8_e5m2"].max()


def test_an_overflowing_bound_is_inf_never_nan():
    # scores of 2760 with E4M3 inputs: e^{2E} overflows; a zero value column still bounds 0
    q, k, v = np.array([[40.0]]), np.array([[69.0]]), np.array([[0.0]])
    bound = pr.low_precision_error_bound(q, k, v, "e4m3", round_p=False)
    assert not np.isnan(bound).any() and bound[0, 0] >= 0
    q, k, v = np.array([[40.0, 1.0]]), np.array([[69.0, 1.0], [-69.0, 2.0]]), np.ones((2, 1))
    bound = pr.low_precision_error_bound(q, k, v, "e5m2")
    assert np.isinf(bound).all()


def test_the_float64_reference_is_exact_attention():
    # the reference the errors are measured against, checked against 60-digit exact values
    from attention_math.crosscheck import crosscheck

    q = sp.Matrix([[1, -2], [sp.Rational(1, 2), 3]])
    k = sp.Matrix([[2, 1], [-1, sp.Rational(3, 4)], [0, 1]])
    v = sp.Matrix([[1, 0], [0, 1], [2, -1]])
    s = q * k.T / sp.sqrt(2)
    w = sp.Matrix(2, 3, lambda i, j: sp.exp(s[i, j]) / sum(sp.exp(s[i, t]) for t in range(3)))
    got = numeric.attention(*(np.array(m.tolist(), dtype=float) for m in (q, k, v)))
    assert crosscheck(w * v, got, bound_eps=16).passed


def test_where_the_kernel_rounds():
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((3, 8, 8))
    exact = numeric.attention(q, k, v)
    full = pr.low_precision_attention(q, k, v, "e4m3")
    no_p = pr.low_precision_attention(q, k, v, "e4m3", round_p=False)
    fp32 = pr.low_precision_attention(q, k, v, "e4m3", round_inputs=False, round_p=False)
    assert np.abs(fp32 - exact).max() < 1e-5  # float32 everywhere
    assert np.abs(no_p - exact).max() > 1e-3 and not np.array_equal(full, no_p)
    # inputs already on the E4M3 grid (and within range): rounding them changes nothing
    qg, kg, vg = (pr.round_to_format(a, "e4m3") for a in (q, k, v))
    assert np.array_equal(
        pr.low_precision_attention(qg, kg, vg, "e4m3", round_p=False, scaling=False),
        pr.low_precision_attention(qg, kg, vg, "e4m3", round_inputs=False, round_p=False),
    )


# --- incoherent processing --------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 4])
def test_the_rotation_keeps_the_scores_exactly(d):
    assert pr.rotation_keeps_scores(d)


@pytest.mark.slow
def test_the_rotation_keeps_the_scores_exactly_at_d_8():
    assert pr.rotation_keeps_scores(8)


def test_hadamard_rotation_is_orthogonal_and_spreads_a_coordinate():
    for d in (1, 2, 16, 64):
        r = pr.hadamard_rotation(d, rng=d)
        assert np.allclose(r @ r.T, np.eye(d), atol=1e-14)
        assert np.allclose(np.abs(np.eye(d)[0] @ r), 1 / np.sqrt(d))
    h = pr.hadamard_matrix(8)
    assert h * h.T == 8 * sp.eye(8)
    # the numeric R is D H / √d with the exact H
    r = pr.hadamard_rotation(8, rng=3)
    signs = np.sign(r[:, 0])
    assert np.array_equal(r * np.sqrt(8) * signs[:, None], np.array(h.tolist(), dtype=float))


def test_the_rotation_leaves_exact_attention_unchanged_numerically():
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((3, 6, 8))
    r = pr.hadamard_rotation(8, rng=1)
    assert np.allclose(numeric.attention(q @ r, k @ r, v), numeric.attention(q, k, v), atol=1e-13)
    fp32 = pr.low_precision_attention(q, k, v, "bfloat16", round_inputs=False, round_p=False)
    rot = pr.low_precision_attention(
        q, k, v, "bfloat16", round_inputs=False, round_p=False, rotation=r
    )
    assert np.abs(fp32 - rot).max() < 1e-5


def test_the_rotation_helps_an_integer_grid_with_outliers():
    e = pr.outlier_errors(8, [1.0, 30.0, 100.0], n=32, d=32, seeds=2)
    assert e.plain[2] > 2 * e.rotated[2]  # one outlier sets every entry's step
    assert abs(e.plain[0] - e.rotated[0]) < 0.5 * e.plain[0]  # no outliers: about the same


# --- KV-cache quantisation --------------------------------------------------------------


def test_int_quantisation_moves_each_entry_by_at_most_half_a_step():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((20, 8)) * np.arange(1, 9)  # (20, 8): channels of different size
    for bits in (2, 4, 8):
        for per, axis in (("channel", 0), ("token", 1)):
            xq = pr.quantize_int(x, bits, per=per)
            step = np.ptp(x, axis=axis, keepdims=True) / (2**bits - 1)
            assert (np.abs(xq - x) <= step / 2 * (1 + 1e-12)).all()
            assert (
                np.abs(
                    (xq - x.min(axis=axis, keepdims=True)) / step
                    - np.round((xq - x.min(axis=axis, keepdims=True)) / step)
                )
                < 1e-9
            ).all()  # on the grid


def test_int_quantisation_of_the_tie_is_to_even():
    assert pr.quantize_int([[-1.0], [0.5], [2.0]], 4, per="channel")[1, 0] == pytest.approx(0.6)
    # (0.5 + 1) / (3/15) = 7.5: to 8, so 8 · 3/15 − 1 = 3/5


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 5),
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from([2, 4, 8]),
    st.sampled_from(["channel", "token"]),
    st.data(),
)
def test_the_kv_bound_holds(n_q, n_k, d, bits, key_per, data):
    def mat(r, c):
        return np.array(data.draw(st.lists(reals, min_size=r * c, max_size=r * c))).reshape(r, c)

    q, k, v = mat(n_q, d), mat(n_k, d), mat(n_k, d)
    got = pr.kv_quantized_attention(q, k, v, bits, key_per=key_per)
    bound = pr.kv_quantized_error_bound(q, k, v, bits, key_per=key_per)
    assert (np.abs(got - numeric.attention(q, k, v)) <= bound).all()


def test_keys_with_outlier_channels_want_per_channel_scales():
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((3, 64, 32))
    k[:, :2] *= 20  # two outlier channels, as KIVI finds in keys
    exact = numeric.attention(q, k, v)
    err = {
        per: np.abs(pr.kv_quantized_attention(q, k, v, 4, key_per=per) - exact).max()
        for per in ("channel", "token")
    }
    assert err["channel"] < err["token"]


# --- bad input --------------------------------------------------------------------------


def test_bad_input_is_refused_by_name():
    q = np.ones((2, 4))
    with pytest.raises(ValueError, match="unknown format 'fp4'"):
        pr.round_to_format([1.0], "fp4")
    with pytest.raises(ValueError, match="no infinity"):
        pr.round_to_format([1.0], "e4m3", overflow="inf")
    with pytest.raises(ValueError, match="x has NaN"):
        pr.round_to_format([1.0, np.nan], "bfloat16")
    with pytest.raises(TypeError, match="x must be a rational"):
        pr.round_exact("1/3", "e4m3")
    with pytest.raises(ValueError, match=r"q and k must share d_k: q has shape \(2, 4\)"):
        pr.low_precision_attention(q, np.ones((3, 5)), np.ones((3, 4)), "e4m3")
    with pytest.raises(ValueError, match=r"k and v must share L_k"):
        pr.low_precision_attention(q, np.ones((3, 4)), np.ones((2, 4)), "e4m3")
    with pytest.raises(ValueError, match="rotation must have shape"):
        pr.low_precision_attention(q, q, q, "e4m3", rotation=np.eye(3))
    with pytest.raises(ValueError, match="orthogonal"):
        pr.low_precision_attention(q, q, q, "e4m3", rotation=2 * np.eye(4))
    with pytest.raises(ValueError, match="d must be a power of two"):
        pr.hadamard_rotation(6)
    with pytest.raises(ValueError, match="bits must be an integer from 2 to 16"):
        pr.quantize_int(q, 1, per="channel")
    with pytest.raises(ValueError, match="per must be 'channel' or 'token'"):
        pr.quantize_int(q, 4, per="row")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outside"):
        pr.neighbours(500, "e4m3")
    with pytest.raises(ValueError, match="code must be an integer"):
        pr.decode(256, "e4m3")
    with pytest.raises(TypeError, match="round_p must be True or False"):
        pr.low_precision_attention(q, q, q, "e4m3", round_p=1)  # type: ignore[arg-type]
