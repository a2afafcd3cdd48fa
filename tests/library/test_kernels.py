"""Nadaraya–Watson regression and the additive and bilinear scores: hand cases, limits,
the identity with dot-product attention, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.kernels import additive_scores, bilinear_scores, nadaraya_watson
from attention_math.numeric import attention, softmax


def test_nadaraya_watson_hand_case():
    # keys 0 and 1, query 0, h = 1: weights ∝ (e^0, e^{-1/2})
    got = nadaraya_watson([0.0], [0.0, 1.0], [0.0, 1.0], bandwidth=1.0)
    w1 = np.exp(-0.5) / (1 + np.exp(-0.5))
    assert got.shape == (1,)
    assert got[0] == pytest.approx(w1, rel=1e-15)


def test_nadaraya_watson_takes_q_k_v_by_name():
    # the kernel view's arguments are attention's: queries, keys, values
    got = nadaraya_watson(q=[0.0], k=[0.0, 1.0], v=[0.0, 1.0], bandwidth=1.0)
    assert got == pytest.approx(nadaraya_watson([0.0], [0.0, 1.0], [0.0, 1.0], bandwidth=1.0))


def test_nadaraya_watson_is_attention_with_a_key_bias():
    rng = np.random.default_rng(0)
    xq, xk, y = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    h = 0.7
    bias = -np.sum(xk * xk, axis=1) / (2 * h * h)  # −‖k‖²/(2h²), one per key
    via_dot = attention(xq, xk, y, mask=np.broadcast_to(bias, (4, 6)).copy(), scale=1 / h**2)
    assert np.allclose(nadaraya_watson(xq, xk, y, bandwidth=h), via_dot, rtol=1e-13, atol=0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-5, 5), min_size=2, max_size=6, unique=True),
    st.floats(-5, 5),
)
def test_nadaraya_watson_limits(keys, x):
    xk = np.array(keys)
    y = np.arange(len(keys), dtype=float) ** 2
    far = nadaraya_watson([x], xk, y, bandwidth=1e6)
    assert far[0] == pytest.approx(y.mean(), rel=1e-9, abs=1e-9)  # h → ∞: the plain mean
    d = np.abs(xk - x)
    nearest = np.flatnonzero(d == d.min())
    if len(nearest) == 1 and np.sort(d)[1] - d.min() > 1e-2:  # a clear nearest neighbour
        near = nadaraya_watson([x], xk, y, bandwidth=1e-3)
        assert near[0] == pytest.approx(y[nearest[0]], abs=1e-9)  # h → 0: nearest key


def test_nadaraya_watson_bandwidth_zero_splits_ties_equally():
    got = nadaraya_watson([0.5], [0.0, 1.0], [2.0, 4.0], bandwidth=1e-6)
    assert got[0] == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize("bad", [0, -1.0, np.inf, np.nan])
def test_nadaraya_watson_rejects_bandwidth(bad):
    with pytest.raises(ValueError, match="bandwidth must be finite and > 0"):
        nadaraya_watson([0.0], [0.0], [1.0], bandwidth=bad)


def test_nadaraya_watson_rejects_bad_input():
    with pytest.raises(TypeError, match="bandwidth must be a real number"):
        nadaraya_watson([0.0], [0.0], [1.0], bandwidth="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"k and v must share L_k"):
        nadaraya_watson([0.0], [0.0, 1.0], [1.0], bandwidth=1.0)
    with pytest.raises(ValueError, match=r"q and k must share d \(last axis\)"):
        nadaraya_watson(np.zeros((1, 2)), np.zeros((3, 3)), np.zeros(3), bandwidth=1.0)
    with pytest.raises(ValueError, match=r"scores .* overflow"):
        nadaraya_watson([1e200], [-1e200], [1.0], bandwidth=1e-200)


def test_additive_scores_match_a_loop():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 3))
    w_q, w_k, w_v = rng.normal(size=(4, 6)), rng.normal(size=(3, 6)), rng.normal(size=6)
    got = additive_scores(q, k, w_q, w_k, w_v)
    assert got.shape == (2, 3, 5)
    for b in range(2):
        for i in range(3):
            for j in range(5):
                want = w_v @ np.tanh(w_q.T @ q[b, i] + w_k.T @ k[b, j])
                assert got[b, i, j] == pytest.approx(want, rel=1e-13)


def test_additive_scores_reject_shapes():
    q, k = np.ones((2, 3)), np.ones((4, 5))
    with pytest.raises(ValueError, match="w_q must have shape"):
        additive_scores(q, k, np.ones((4, 2)), np.ones((5, 2)), np.ones(2))
    with pytest.raises(ValueError, match="w_k must have shape"):
        additive_scores(q, k, np.ones((3, 2)), np.ones((5, 3)), np.ones(2))
    with pytest.raises(ValueError, match="w_v must have shape"):
        additive_scores(q, k, np.ones((3, 2)), np.ones((5, 2)), np.ones(3))


def test_bilinear_with_product_weight_is_projected_dot_product():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 6))
    w_q, w_k = rng.normal(size=(6, 2)), rng.normal(size=(6, 2))
    s = bilinear_scores(x, x, w_q @ w_k.T)
    assert np.allclose(s, (x @ w_q) @ (x @ w_k).T, rtol=1e-12)
    assert np.linalg.matrix_rank(s) <= 2  # rank ≤ d_k
    a = rng.normal(size=(2, 2)) + 2 * np.eye(2)  # invertible
    s2 = bilinear_scores(x, x, (w_q @ a) @ (w_k @ np.linalg.inv(a).T).T)
    assert np.allclose(s, s2, rtol=1e-10, atol=1e-12)  # only W_Q W_Kᵀ matters
    assert np.allclose(softmax(s), softmax(s2), atol=1e-12)


def test_bilinear_rejects_shape():
    with pytest.raises(ValueError, match=r"w must have shape \(d_q, d_k\) = \(2, 3\)"):
        bilinear_scores(np.ones((1, 2)), np.ones((1, 3)), np.ones((3, 2)))


def test_a_bandwidth_too_small_for_the_distances_is_a_clear_error() -> None:
    import warnings

    x, y = np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning leaks before the error
        with pytest.raises(ValueError, match="overflow the float64 range for bandwidth = 1e-200"):
            nadaraya_watson([0.5], x, y, bandwidth=1e-200)
