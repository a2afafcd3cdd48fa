"""Linear attention (both forms, causal recurrence) and Performer's random features."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.linear import elu_feature_map, linear_attention, random_features


def _quadratic(q, k, v, causal=False):
    """The masked quadratic form: weights φ(Q) φ(K)ᵀ (lower triangle if causal), normalised."""
    a = elu_feature_map(q) @ np.swapaxes(elu_feature_map(k), -1, -2)  # (..., L, L)
    if causal:
        a = np.tril(a)
    return (a @ v) / a.sum(axis=-1, keepdims=True)


def test_hand_case():
    q = k = np.array([[0.0], [1.0]])  # φ = 1 and 2
    v = np.array([[1.0], [4.0]])
    # row 1 causal: weights φ(q1)φ(k) = (2, 4) → (1·2 + 4·4)/6 = 3
    assert np.allclose(linear_attention(q, k, v, is_causal=True), [[1.0], [3.0]], rtol=1e-15)
    # row 0 non-causal: weights (1, 2) → (1 + 8)/3 = 3
    assert linear_attention(q, k, v)[0, 0] == pytest.approx(3.0, rel=1e-15)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 7),
    st.integers(1, 4),
    st.integers(1, 3),
    st.sampled_from([(), (2,), (2, 3)]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_equals_masked_quadratic_form(n, d_k, d_v, lead, causal, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(*lead, n, d_k)), rng.normal(size=(*lead, n, d_k))
    v = rng.normal(size=(*lead, n, d_v))
    got = linear_attention(q, k, v, is_causal=causal)
    assert np.allclose(got, _quadratic(q, k, v, causal), rtol=1e-12, atol=1e-12)


def test_causal_row_t_ignores_later_keys():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 6, 2))
    base = linear_attention(q, k, v, is_causal=True)
    k2, v2 = k.copy(), v.copy()
    k2[4:] += 10.0
    v2[4:] -= 5.0
    assert np.array_equal(linear_attention(q, k2, v2, is_causal=True)[:4], base[:4])


def test_float32_stays_float32_and_callable_feature_map():
    q = np.ones((3, 2), dtype=np.float32)
    out = linear_attention(q, q, q, feature_map=lambda x: x * x + 1)
    assert out.dtype == np.float32
    assert np.allclose(out, 1.0)


def test_bad_input():
    q = np.ones((3, 2))
    with pytest.raises(ValueError, match='feature_map must be "elu" or a callable'):
        linear_attention(q, q, q, feature_map="relu")
    with pytest.raises(ValueError, match="is_causal=True needs L_q = L_k"):
        linear_attention(np.ones((2, 2)), q, q, is_causal=True)
    with pytest.raises(ValueError, match=r"feature_map\(q\) must return finite values ≥ 0"):
        linear_attention(q, q, q, feature_map=lambda x: -x)
    with pytest.raises(ValueError, match=r"feature_map\(q\) must return floats of shape"):
        linear_attention(q, q, q, feature_map=lambda x: x[..., 0])
    with pytest.raises(ValueError, match="normaliser"):
        linear_attention(q, q, q, feature_map=lambda x: np.zeros_like(x))
    with pytest.raises(TypeError, match="is_causal must be True or False"):
        linear_attention(q, q, q, is_causal=1)  # type: ignore[arg-type]


def test_random_features_formula_and_shape():
    x = np.array([[1.0, 0.0], [0.0, 2.0]])
    w = np.array([[1.0, 1.0], [0.0, -1.0], [2.0, 0.0]])
    got = random_features(x, w)
    want = np.exp(x @ w.T - 0.5 * np.sum(x * x, axis=1, keepdims=True)) / np.sqrt(3)
    assert got.shape == (2, 3)
    assert np.allclose(got, want, rtol=1e-15)


def test_random_features_estimate_is_unbiased_and_error_shrinks():
    rng = np.random.default_rng(7)
    q, k = np.array([0.4, -0.2, 0.1]), np.array([0.3, 0.5, -0.4])
    exact = np.exp(q @ k)
    errs = {}
    for m in (64, 4096):
        ests = []
        for _ in range(200):
            w = rng.standard_normal((m, 3))
            ests.append(random_features(q, w) @ random_features(k, w))
        ests_a = np.array(ests)
        # unbiased: the mean of 200 estimates is within 4 standard errors of exp(q·k)
        assert abs(ests_a.mean() - exact) < 4 * ests_a.std() / np.sqrt(200)
        errs[m] = np.sqrt(np.mean((ests_a - exact) ** 2))
    ratio = errs[64] / errs[4096]  # 1/√m: 64× more features, 8× smaller error
    assert 5 < ratio < 13


def test_random_features_bad_input():
    with pytest.raises(ValueError, match=r"w must have shape \(m, d\) with d = 2"):
        random_features(np.ones(2), np.ones((4, 3)))
    with pytest.raises(ValueError, match="overflow"):
        random_features(np.array([1e3]), np.array([[1e3]]))


def test_linear_attention_crossover_moves_with_the_number_of_features():
    from attention_math.derivations.linear import (
        crossover_length,
        d,
        n_features,
        performer_crossover,
    )

    for width, m in ((64, 64), (64, 256), (128, 512), (32, 1024)):
        at = float(performer_crossover().subs({d: width, n_features: m}))
        assert 1.5 * m < at < 2.5 * m  # near m (about 2m), however small d is
        assert at > float(crossover_length().subs(d, width))  # never below elu's d-sized one


def test_one_features_relative_variance_is_exp_of_the_squared_norm_of_q_plus_k():
    from attention_math.derivations.linear import performer_relative_variance

    for dim in (1, 3):
        value, equal = performer_relative_variance(dim)
        assert equal, value
    # numerically, where the tails are light enough for a sample to see the whole variance
    rng = np.random.default_rng(7)
    q, k = np.array([0.3, -0.2, 0.1]), np.array([0.1, 0.2, -0.4])
    omega = rng.standard_normal((400_000, 3))  # (draws, d)
    x = np.exp(omega @ (q + k) - (q @ q + k @ k) / 2)  # one feature's estimate, each draw
    rel_var = np.var(x) / np.exp(q @ k) ** 2
    assert rel_var == pytest.approx(np.expm1(np.sum((q + k) ** 2)), rel=0.02)
    assert rel_var != pytest.approx(np.expm1(np.sum((q - k) ** 2)), rel=0.02)


def test_the_monte_carlo_pair_is_the_one_its_errors_follow():
    from attention_math.derivations.linear import monte_carlo_errors, monte_carlo_pair

    q, k = monte_carlo_pair()
    assert q.shape == k.shape == (8,)
    errs, _ = monte_carlo_errors((1024, 4096), trials=200)
    predicted = np.sqrt(np.expm1(np.sum((q + k) ** 2)) / np.array([1024, 4096]))
    assert np.all((0.5 < errs / predicted) & (errs / predicted < 1.25)), errs / predicted
    q1, _ = monte_carlo_pair(seed=1)
    assert not np.array_equal(q, q1)
