"""The NumPy reference: hand-derived cases, properties, and every kind of bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_math.numeric import attention, causal_mask, compute_qkv, softmax

# ---------------------------------------------------------------- cases derived by hand


def test_softmax_of_equal_scores_is_uniform():
    # e^c / (n e^c) = 1/n for any c
    np.testing.assert_array_equal(softmax([3.0, 3.0, 3.0, 3.0]), np.full(4, 0.25))


def test_softmax_of_zero_and_log2():
    # (e^0, e^{ln 2}) = (1, 2) → (1/3, 2/3): a zero score keeps a positive weight
    np.testing.assert_allclose(softmax([0.0, math.log(2)]), [1 / 3, 2 / 3], rtol=1e-15)


def test_softmax_is_per_row_not_over_the_whole_matrix():
    s = np.array([[0.0, 0.0], [0.0, math.log(3)]])
    # row 1: (1/2, 1/2); row 2: (1/4, 3/4) — a whole-matrix normalisation would give sums ≠ 1
    np.testing.assert_allclose(softmax(s), [[0.5, 0.5], [0.25, 0.75]], rtol=1e-15)


def test_softmax_large_scores_do_not_overflow():
    # e^1000 overflows float64; shifted: (1, e^-1)/(1 + e^-1)
    expected = np.array([1.0, math.exp(-1)]) / (1 + math.exp(-1))
    np.testing.assert_allclose(softmax([1000.0, 999.0]), expected, rtol=1e-15)
    np.testing.assert_allclose(softmax(np.array([1000.0, 999.0], np.float32)), expected, rtol=1e-6)


def test_softmax_masked_entries_and_all_masked_row():
    out = softmax([[0.0, -np.inf, 0.0], [-np.inf, -np.inf, -np.inf]])
    np.testing.assert_array_equal(out, [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]])


def test_softmax_axis_zero_normalises_columns():
    s = np.array([[0.0, 0.0], [math.log(3), 0.0]])
    np.testing.assert_allclose(softmax(s, axis=0), [[0.25, 0.5], [0.75, 0.5]], rtol=1e-15)


def test_causal_mask_shapes_and_pattern():
    np.testing.assert_array_equal(causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    assert causal_mask(2, 4).shape == (2, 4)
    assert causal_mask(3).dtype == np.bool_


def test_identity_example_by_hand():
    # q = k = I, d_k = 2 → scores diag(1/√2); row softmax (σ, 1 − σ) with σ = 1/(1 + e^{-1/√2})
    sigma = 1 / (1 + math.exp(-1 / math.sqrt(2)))
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    out, w = attention(np.eye(2), np.eye(2), v, return_weights=True)
    np.testing.assert_allclose(w, [[sigma, 1 - sigma], [1 - sigma, sigma]], rtol=1e-15)
    np.testing.assert_allclose(
        out, [[3 - 2 * sigma, 4 - 2 * sigma], [1 + 2 * sigma, 2 + 2 * sigma]], rtol=1e-15
    )


def test_compute_qkv_is_three_products():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    w_q = np.array([[1.0], [0.0]])
    w_k = np.array([[0.0], [1.0]])
    w_v = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    q, k, v = compute_qkv(x, w_q, w_k, w_v)
    np.testing.assert_array_equal(q, [[1.0], [3.0], [5.0]])  # first column of x
    np.testing.assert_array_equal(k, [[2.0], [4.0], [6.0]])  # second column
    np.testing.assert_array_equal(v, [[1, 3, 2], [3, 7, 4], [5, 11, 6]])


def test_scale_zero_gives_uniform_weights_and_mean_of_values():
    v = np.array([[1.0], [2.0], [6.0]])
    out, w = attention(
        np.ones((1, 2)), np.arange(6.0).reshape(3, 2), v, scale=0.0, return_weights=True
    )
    np.testing.assert_allclose(w, np.full((1, 3), 1 / 3), rtol=1e-15)
    np.testing.assert_allclose(out, [[3.0]], rtol=1e-15)


def test_boolean_and_additive_masks_agree():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 4, 3))
    allowed = causal_mask(4)
    additive = np.where(allowed, 0.0, -np.inf)
    np.testing.assert_array_equal(attention(q, k, v, allowed), attention(q, k, v, additive))
    # causal: the first query sees only the first key, so it returns the first value row
    np.testing.assert_allclose(attention(q, k, v, allowed)[0], v[0], rtol=1e-15)


def test_additive_finite_mask_shifts_scores():
    # adding ln 3 to key 2's score multiplies its unnormalised weight by 3
    q = np.zeros((1, 1))
    k = np.zeros((2, 1))
    v = np.array([[0.0], [1.0]])
    out = attention(q, k, v, np.array([[0.0, math.log(3)]]))
    np.testing.assert_allclose(out, [[0.75]], rtol=1e-15)


def test_fully_masked_row_is_zero_not_nan():
    mask = np.array([[True, True], [False, False]])
    out, w = attention(
        np.eye(2), np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]), mask, return_weights=True
    )
    np.testing.assert_array_equal(w[1], [0.0, 0.0])
    np.testing.assert_array_equal(out[1], [0.0, 0.0])
    assert np.isfinite(out).all()


def test_cross_attention_shapes():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((3, 4))
    k = rng.standard_normal((7, 4))
    v = rng.standard_normal((7, 5))
    out, w = attention(q, k, v, return_weights=True)
    assert out.shape == (3, 5)
    assert w.shape == (3, 7)


def test_broadcasting_matches_a_loop():
    rng = np.random.default_rng(2)
    q = rng.standard_normal((2, 3, 5, 4))  # (batch, heads, L_q, d_k)
    k = rng.standard_normal((3, 6, 4))  # shared over the batch
    v = rng.standard_normal((1, 3, 6, 2))
    mask = rng.random((5, 6)) < 0.7
    out = attention(q, k, v, mask)
    assert out.shape == (2, 3, 5, 2)
    for b in range(2):
        for h in range(3):
            np.testing.assert_allclose(
                out[b, h], attention(q[b, h], k[h], v[0, h], mask), rtol=1e-14, atol=1e-15
            )


def test_mask_may_not_add_batch_dimensions():
    # A (2, 4, 4) stack of masks over one (4, 4) problem used to broadcast silently to two
    # outputs; PyTorch raises, and so does the reference: the message names both shapes.
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 4, 2))
    masks = np.stack([causal_mask(4), np.ones((4, 4), bool)])  # (2, 4, 4)
    with pytest.raises(ValueError, match=r"\(2, 4, 4\).*\(4, 4\)"):
        attention(q, k, v, masks)
    # the same stack with a batch of inputs to match is what was meant
    out = attention(np.stack([q, q]), np.stack([k, k]), np.stack([v, v]), masks)
    np.testing.assert_array_equal(out[0], attention(q, k, v, causal_mask(4)))
    np.testing.assert_array_equal(out[1], attention(q, k, v))


def test_annotated_transformer_mask_on_unsplit_inputs_raises():
    # (B, 1, 1, L) against (B, L, d): B × B outputs before; now both shapes are named.
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4))  # (B, L, d)
    mask = np.ones((2, 1, 1, 3), bool)
    with pytest.raises(ValueError, match=r"\(2, 1, 1, 3\).*\(2, 3, 3\)"):
        attention(x, x, x, mask)
    with pytest.raises(ValueError, match="enlarge"):
        attention(x, x, x, mask, block_size=2)


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (np.float32, np.float32),
        (np.float64, np.float64),
        (np.int64, np.float64),
        (np.int32, np.float64),
        (np.float16, np.float16),
    ],
)
def test_dtype_rules(dtype, expected):
    q = np.array([[1, 0], [0, 1]], dtype=dtype)
    out, w = attention(q, q, q, return_weights=True)
    assert out.dtype == expected
    assert w.dtype == expected


def test_float32_is_not_promoted_with_masks_and_scale():
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((3, 5, 8)).astype(np.float32)
    for mask in (None, causal_mask(5), np.zeros((5, 5), np.float64)):
        assert attention(q, k, v, mask, scale=0.3).dtype == np.float32


# ---------------------------------------------------------------- properties

finite = st.floats(-30, 30, allow_nan=False, allow_infinity=False, width=64)


def _arrays(shape):
    return hnp.arrays(np.float64, shape, elements=finite)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_property_rows_sum_to_one_and_weights_in_unit_interval(data):
    L_q, L_k, d = (data.draw(st.integers(1, 5)) for _ in range(3))
    q = data.draw(_arrays((L_q, d)))
    k = data.draw(_arrays((L_k, d)))
    v = data.draw(_arrays((L_k, 2)))
    out, w = attention(q, k, v, return_weights=True)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
    assert ((w >= 0) & (w <= 1)).all()
    # each output is a convex combination of the value rows
    assert (out <= v.max(axis=0) + 1e-9).all() and (out >= v.min(axis=0) - 1e-9).all()


@settings(max_examples=60, deadline=None)
@given(_arrays((3, 4)), st.floats(-50, 50, allow_nan=False))
def test_property_softmax_shift_invariance(s, c):
    np.testing.assert_allclose(softmax(s + c), softmax(s), rtol=1e-12, atol=1e-300)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_property_masked_keys_are_ignored(data):
    L_k = data.draw(st.integers(2, 6))
    q = data.draw(_arrays((3, 2)))
    k = data.draw(_arrays((L_k, 2)))
    v = data.draw(_arrays((L_k, 3)))
    keep = data.draw(hnp.arrays(np.bool_, L_k))
    if not keep.any():
        keep[0] = True
    masked = attention(q, k, v, np.broadcast_to(keep, (3, L_k)))
    deleted = attention(q, k[keep], v[keep])  # masking a key = deleting it
    np.testing.assert_allclose(masked, deleted, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_property_batch_broadcasting_equals_per_item(data):
    b = data.draw(st.integers(1, 3))
    q = data.draw(_arrays((b, 2, 3)))
    k = data.draw(_arrays((4, 3)))
    v = data.draw(_arrays((4, 2)))
    out = attention(q, k, v)
    for i in range(b):
        np.testing.assert_allclose(out[i], attention(q[i], k, v), rtol=1e-13, atol=1e-13)


@settings(max_examples=40, deadline=None)
@given(_arrays((3, 2)), _arrays((4, 2)), _arrays((4, 3)))
def test_property_float32_close_to_float64_and_stays_float32(q, k, v):
    out64 = attention(q, k, v)
    out32 = attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32))
    assert out32.dtype == np.float32
    scale = max(1.0, np.abs(v).max())
    # inputs are rounded to float32 first; scores up to 30·30·2/√2 amplify that rounding
    assert np.abs(out32 - out64).max() <= 5e-3 * scale


# ---------------------------------------------------------------- bad input


def _qkv():
    return np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 5))


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "words"),
    [
        (
            (np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 5))),
            {},
            ValueError,
            ["d_k", "(2, 3)", "(4, 2)"],
        ),
        (
            (np.ones((2, 3)), np.ones((4, 3)), np.ones((5, 5))),
            {},
            ValueError,
            ["L_k", "(4, 3)", "(5, 5)"],
        ),
        ((*_qkv(), np.ones((3, 4), bool)), {}, ValueError, ["mask", "(3, 4)", "(2, 4)"]),
        ((*_qkv(), np.ones((2, 4), np.int64)), {}, TypeError, ["mask", "int64"]),
        ((*_qkv(), np.full((2, 4), np.nan)), {}, ValueError, ["NaN"]),
        ((*_qkv(), np.full((2, 4), np.inf)), {}, ValueError, ["+inf"]),
        (
            (np.array([[1.0, np.nan, 0]]), np.ones((4, 3)), np.ones((4, 5))),
            {},
            ValueError,
            ["q", "NaN"],
        ),
        (
            (np.ones((2, 3)), np.array([[np.inf, 0, 0]]), np.ones((1, 5))),
            {},
            ValueError,
            ["k", "inf"],
        ),
        ((np.ones((2, 3)), np.ones((4, 3)), np.full((4, 5), -np.inf)), {}, ValueError, ["v"]),
        ((np.ones((2, 0)), np.ones((4, 0)), np.ones((4, 5))), {}, ValueError, ["empty"]),
        ((np.ones(3), np.ones((4, 3)), np.ones((4, 5))), {}, ValueError, ["q", "2 dimensions"]),
        ((np.array([["a", "b"]]), np.ones((4, 2)), np.ones((4, 5))), {}, TypeError, ["q", "dtype"]),
        (
            (np.ones((2, 3), complex), np.ones((4, 3)), np.ones((4, 5))),
            {},
            TypeError,
            ["q", "complex"],
        ),
        ((np.ones((2, 3), bool), np.ones((4, 3)), np.ones((4, 5))), {}, TypeError, ["q", "bool"]),
        ((np.ones((2, 2, 3)), np.ones((3, 4, 3)), np.ones((4, 5))), {}, ValueError, ["broadcast"]),
        (_qkv(), {"scale": -1.0}, ValueError, ["scale", "-1.0"]),
        (_qkv(), {"scale": float("nan")}, ValueError, ["scale"]),
        (_qkv(), {"scale": float("inf")}, ValueError, ["scale"]),
        (_qkv(), {"scale": "0.5"}, TypeError, ["scale", "str"]),
        (_qkv(), {"scale": True}, TypeError, ["scale"]),
        (_qkv(), {"scale": np.ones(2)}, TypeError, ["scale"]),
    ],
)
def test_bad_input_names_the_culprit(args, kwargs, exc, words):
    with pytest.raises(exc) as info:
        attention(*args, **kwargs)
    for word in words:
        assert word in str(info.value)


def test_overflowing_scores_raise_instead_of_nan():
    big = np.full((2, 4), 1e30, np.float32)  # q·k = 4e60 overflows float32
    with pytest.raises(ValueError, match="overflow"):
        attention(big, big, np.ones((2, 3), np.float32))


@pytest.mark.parametrize(
    ("x", "exc"),
    [
        ([np.nan, 1.0], ValueError),
        ([np.inf, 1.0], ValueError),
        (np.float64(1.0), ValueError),
        (["a"], TypeError),
        ([True, False], TypeError),
    ],
)
def test_softmax_bad_input(x, exc):
    with pytest.raises(exc):
        softmax(x)


@pytest.mark.parametrize(
    ("args", "exc"),
    [
        ((-1,), ValueError),
        ((3, -2), ValueError),
        ((2.5,), TypeError),
        ((True,), TypeError),
        (("3",), TypeError),
    ],
)
def test_causal_mask_bad_sizes(args, exc):
    # a negative size is a ValueError, a size that is no integer a TypeError: one wording
    with pytest.raises(exc, match=r"n_[qk] must be a non-negative integer, got"):
        causal_mask(*args)


@pytest.mark.parametrize(
    ("w_q", "words"),
    [(np.ones((3, 2)), ["w_q", "d_model = 2", "(3, 2)"]), (np.ones(2), ["w_q", "2 dimensions"])],
)
def test_compute_qkv_shape_errors(w_q, words):
    with pytest.raises(ValueError) as info:
        compute_qkv(np.ones((4, 2)), w_q, np.ones((2, 2)), np.ones((2, 2)))
    for word in words:
        assert word in str(info.value)


def test_compute_qkv_d_k_mismatch():
    with pytest.raises(ValueError, match="same d_k"):
        compute_qkv(np.ones((4, 2)), np.ones((2, 3)), np.ones((2, 2)), np.ones((2, 2)))
