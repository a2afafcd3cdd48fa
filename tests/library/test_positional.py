"""Positions: sinusoidal encoding, RoPE (both layouts), ALiBi slopes and biases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.positional import (
    alibi_bias,
    alibi_exponents,
    alibi_slopes,
    rope,
    rope_frequencies,
    sinusoidal,
)


def test_sinusoidal_hand_case():
    pe = sinusoidal(3, 4, base=100.0)
    # frequencies 1 and 100^(-1/2) = 0.1
    want = [[math.sin(p), math.cos(p), math.sin(0.1 * p), math.cos(0.1 * p)] for p in range(3)]
    np.testing.assert_allclose(pe, want, rtol=0, atol=1e-15)


def test_sinusoidal_shift_is_a_rotation_independent_of_position():
    pe = sinusoidal(40, 8)
    theta = rope_frequencies(8)
    delta = 5
    c, s = np.cos(theta * delta), np.sin(theta * delta)
    for p in range(35):
        sin_p, cos_p = pe[p, 0::2], pe[p, 1::2]
        np.testing.assert_allclose(pe[p + delta, 0::2], sin_p * c + cos_p * s, atol=1e-13)
        np.testing.assert_allclose(pe[p + delta, 1::2], cos_p * c - sin_p * s, atol=1e-13)


@pytest.mark.parametrize(
    ("args", "kwargs", "err", "match"),
    [
        ((3, 5), {}, ValueError, "d_model must be even"),
        ((0, 4), {}, ValueError, "n_positions must be a positive integer"),
        ((3, 4), {"base": 1.0}, ValueError, "base must be finite and > 1"),
        ((3, 4), {"base": "1e4"}, TypeError, "base must be a real number"),
    ],
)
def test_sinusoidal_bad_input(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        sinusoidal(*args, **kwargs)


def _rotate_half_reference(x, positions, base=10000.0):
    """Hugging Face's formula, written independently: x·cos + rotate_half(x)·sin."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    freqs = np.outer(positions, inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    rotated = np.concatenate([-x2, x1], axis=-1)
    return x * np.cos(emb) + rotated * np.sin(emb)


def _interleaved_reference(x, positions, base=10000.0):
    """RoFormer's formula with complex numbers: pairs (x[2i], x[2i+1]) as x[2i] + i·x[2i+1]."""
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    theta = base ** (-np.arange(0, d, 2) / d)
    z = z * np.exp(1j * np.outer(positions, theta))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


@pytest.mark.parametrize("seed", range(5))
def test_rope_matches_both_reference_formulas(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 7, 8))
    pos = rng.integers(0, 1000, size=7)
    np.testing.assert_allclose(rope(x, pos), _rotate_half_reference(x, pos), atol=1e-12)
    np.testing.assert_allclose(
        rope(x, pos, interleaved=True), _interleaved_reference(x, pos), atol=1e-12
    )


def test_rope_hand_case_and_position_zero_is_identity():
    x = np.array([[1.0, 2.0, 3.0, 4.0]] * 2)
    out = rope(x, base=100.0)
    np.testing.assert_array_equal(out[0], x[0])  # angle 0
    # pairs (x0, x2) and (x1, x3), angles 1 and 0.1
    c1, s1, c2, s2 = math.cos(1), math.sin(1), math.cos(0.1), math.sin(0.1)
    want = [1 * c1 - 3 * s1, 2 * c2 - 4 * s2, 3 * c1 + 1 * s1, 4 * c2 + 2 * s2]
    np.testing.assert_allclose(out[1], want, atol=1e-15)


def test_rope_conventions_differ_by_a_fixed_permutation():
    rng = np.random.default_rng(1)
    d = 8
    x = rng.standard_normal((5, d))
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # interleaved → halves
    inverse = np.argsort(perm)
    half = rope(x[:, perm])  # the halves layout of the permuted vector
    inter = rope(x, interleaved=True)
    np.testing.assert_allclose(half[:, inverse], inter, atol=1e-15)
    assert not np.allclose(rope(x), inter)  # without the permutation they differ


def test_rope_keeps_float32_and_float16():
    for dt in (np.float32, np.float16):
        x = np.ones((3, 4), dtype=dt)
        assert rope(x).dtype == dt
    assert rope(np.ones((3, 4), dtype=int)).dtype == np.float64


@pytest.mark.parametrize(
    ("x", "kwargs", "err", "match"),
    [
        (np.ones((3, 5)), {}, ValueError, r"last axis of x \(d = 5\) must be even"),
        (np.ones(4), {}, ValueError, "x must have at least 2 dimensions"),
        (np.ones((3, 4)), {"positions": [0, 1]}, ValueError, r"positions must have shape \(L,\)"),
        (np.ones((3, 4)), {"positions": [[0, 1, 2]]}, ValueError, "positions must have shape"),
        (np.ones((3, 4)), {"positions": [0.0, 1.0, 2.0]}, TypeError, "positions must be integers"),
        (np.ones((3, 4)), {"positions": [True] * 3}, TypeError, "positions must be integers"),
        (np.ones((3, 4)), {"interleaved": "yes"}, TypeError, "interleaved must be True or False"),
        (np.array([[np.nan, 0.0]]), {}, ValueError, "x contains NaN"),
    ],
)
def test_rope_bad_input(x, kwargs, err, match):
    with pytest.raises(err, match=match):
        rope(x, **kwargs)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(-500, 500),
    st.integers(0, 2**31 - 1),
    st.booleans(),
)
def test_rope_keeps_norms(half_d, position, seed, interleaved):
    x = np.random.default_rng(seed).standard_normal((1, 2 * half_d))
    out = rope(x, [position], interleaved=interleaved)
    np.testing.assert_allclose(np.linalg.norm(out), np.linalg.norm(x), rtol=1e-14)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(-300, 300),
    st.integers(-300, 300),
    st.integers(-300, 300),
    st.integers(0, 2**31 - 1),
    st.booleans(),
)
def test_rope_scores_depend_only_on_the_offset(half_d, m, n, shift, seed, interleaved):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 1, 2 * half_d))
    score = (rope(q, [m], interleaved=interleaved) @ rope(k, [n], interleaved=interleaved).T)[0, 0]
    moved = (
        rope(q, [m + shift], interleaved=interleaved)
        @ rope(k, [n + shift], interleaved=interleaved).T
    )
    bound = 1e-12 * (1 + abs(m) + abs(n) + abs(shift)) * np.abs(q).sum() * np.abs(k).sum()
    assert abs(score - moved[0, 0]) <= bound


def test_alibi_slopes_paper_values():
    np.testing.assert_array_equal(alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    np.testing.assert_array_equal(alibi_slopes(16), 2.0 ** -(np.arange(1, 17) / 2))
    # 12 heads: the 8 slopes of n = 8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (every other of 16)
    want = np.concatenate([2.0 ** -np.arange(1, 9), 2.0 ** -(np.arange(1, 8, 2) / 2)])
    np.testing.assert_allclose(alibi_slopes(12), want, rtol=1e-15)
    assert alibi_slopes(1).tolist() == [2.0**-8]
    assert [str(e) for e in alibi_exponents(3)] == ["4", "8", "2"]


def test_alibi_bias_entries_and_shape():
    b = alibi_bias(4, 3, 5)
    assert b.shape == (4, 3, 5)
    m = alibi_slopes(4)
    for h in range(4):
        for i in range(3):
            for j in range(5):
                assert b[h, i, j] == -m[h] * abs(i - j)
    assert not np.signbit(b[:, 0, 0]).any()  # +0 on the diagonal, not -0


@pytest.mark.parametrize(
    ("bad", "exc"),
    [(0, ValueError), (-2, ValueError), (2.0, TypeError), (True, TypeError), ("4", TypeError)],
)
def test_alibi_bad_head_count(bad, exc):
    with pytest.raises(exc, match="n_heads must be a positive integer"):
        alibi_slopes(bad)
    with pytest.raises(exc, match="n_heads must be a positive integer"):
        alibi_bias(bad, 3)


@pytest.mark.parametrize("base", [100.0, 10000.0, 500000.0])
@pytest.mark.parametrize("d", [2, 16, 64, 128, 1024])
def test_rope_frequencies_are_correctly_rounded(d, base):
    """Each θ_i is base^(−2i/d) rounded once (the exponent as the float −2i/d), on any CPU: NumPy's
    vectorised power was one ulp off on AVX-512 processors, and the page's figures moved."""
    import mpmath

    with mpmath.workdps(40):
        want = [float(mpmath.power(mpmath.mpf(base), mpmath.mpf(-k / d))) for k in range(0, d, 2)]
    assert rope_frequencies(d, base=base).tolist() == want
