"""The NumPy reference: hand-derived cases, properties, and every kind of bad input.

Also the conventions a PyTorch, d2l or Hugging Face user expects of ``attention`` and the
softmax, checked without PyTorch (``test_oracle_torch.py`` compares with it): causal masks
aligned top-left or bottom-right, the log-sum-exp, zero-length sequences, float16/bfloat16
inputs, ``log_softmax`` and the sign of ``scale``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_math import numeric
from attention_math.backward import attention_backward
from attention_math.numeric import (
    AttentionLSE,
    attention,
    attention_weights,
    attention_with_lse,
    causal_mask,
    compute_qkv,
    log_softmax,
    softmax,
)


def both(*args, **kwargs):
    """The output and the weights of one call: two functions, one argument list."""
    return attention(*args, **kwargs), attention_weights(*args, **kwargs)


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
    out, w = both(np.eye(2), np.eye(2), v)
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
    out, w = both(np.ones((1, 2)), np.arange(6.0).reshape(3, 2), v, scale=0.0)
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
    out, w = both(np.eye(2), np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]), mask)
    np.testing.assert_array_equal(w[1], [0.0, 0.0])
    np.testing.assert_array_equal(out[1], [0.0, 0.0])
    assert np.isfinite(out).all()


def test_cross_attention_shapes():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((3, 4))
    k = rng.standard_normal((7, 4))
    v = rng.standard_normal((7, 5))
    out, w = both(q, k, v)
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
    out, w = both(q, q, q)
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
    out, w = both(q, k, v)
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


@settings(max_examples=60, deadline=None)
@given(n_q=st.integers(0, 9), n_k=st.integers(0, 9))
def test_causal_mask_alignments_by_definition(n_q, n_k):
    i, j = np.ogrid[:n_q, :n_k]
    np.testing.assert_array_equal(causal_mask(n_q, n_k), j <= i)
    np.testing.assert_array_equal(
        causal_mask(n_q, n_k, causal_alignment="bottom-right"), j <= i + (n_k - n_q)
    )
    # bottom-right is top-left seen from the end: flip both axes and transpose
    br = causal_mask(n_q, n_k, causal_alignment="bottom-right")
    np.testing.assert_array_equal(br[::-1, ::-1], causal_mask(n_k, n_q).T)
    if n_q == n_k:
        np.testing.assert_array_equal(br, causal_mask(n_q))


def test_causal_mask_bottom_right_last_query_sees_everything():
    m = causal_mask(2, 5, causal_alignment="bottom-right")
    assert m[-1].all() and m[0].sum() == 4


def test_causal_mask_rejects_unknown_alignment():
    with pytest.raises(ValueError, match=r'"top-left" or "bottom-right".*lower-right'):
        causal_mask(2, 3, causal_alignment="lower-right")


@pytest.mark.parametrize("block", [None, 1, 2, (3, 2), (2, 5)])
@pytest.mark.parametrize(("n_q", "n_k"), [(3, 7), (7, 3), (5, 5), (1, 6)])
def test_is_causal_bottom_right_equals_its_mask(block, n_q, n_k):
    rng = np.random.default_rng(n_q * 10 + n_k)
    q = rng.standard_normal((2, n_q, 4))
    k = rng.standard_normal((2, n_k, 4))
    v = rng.standard_normal((2, n_k, 3))
    want = attention(q, k, v, causal_mask(n_q, n_k, causal_alignment="bottom-right"))
    got = attention(q, k, v, is_causal=True, causal_alignment="bottom-right", block_size=block)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    if n_q > n_k:  # the first n_q − n_k queries see no key: zero rows
        assert (got[:, : n_q - n_k] == 0).all()


def test_attention_rejects_unknown_alignment_even_when_not_causal():
    with pytest.raises(ValueError, match='causal_alignment must be "top-left" or "bottom-right"'):
        attention(np.eye(2), np.eye(2), np.eye(2), causal_alignment="bottom")


@pytest.mark.parametrize("block", [None, 2, (1, 3)])
def test_lse_is_the_log_of_the_softmax_denominator(block):
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((3, 2, 5, 4))
    mask = rng.random((2, 5, 5)) < 0.7
    mask[1, 2] = False  # a fully masked row
    out, lse = attention_with_lse(q, k, v, mask, block_size=block)
    assert lse.shape == (2, 5)
    s = np.where(mask, q @ np.swapaxes(k, -1, -2) / 2.0, -np.inf)
    with np.errstate(divide="ignore"):
        want = np.log(np.exp(s).sum(-1))
    np.testing.assert_allclose(lse, want, rtol=1e-13)
    assert lse[1, 2] == -np.inf
    np.testing.assert_array_equal(out, attention(q, k, v, mask, block_size=block))
    # what FlashAttention does with it: the weights from the scores and lse alone
    w = attention_weights(q, k, v, mask)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - lse[..., None])
    np.testing.assert_allclose(np.nan_to_num(p), w, atol=1e-15)


def test_lse_survives_scores_that_overflow_exp():
    q = np.array([[30.0]])
    k = np.array([[30.0], [-30.0]])
    _, lse = attention_with_lse(q, k, np.ones((2, 1)), scale=1.0)
    assert lse[0] == pytest.approx(900.0)  # exp(900) overflows float64; lse does not
    _, lse32 = attention_with_lse(
        q.astype(np.float32),
        k.astype(np.float32),
        np.ones((2, 1), np.float32),
        scale=1.0,
        block_size=1,
    )
    assert lse32.dtype == np.float32 and lse32[0] == pytest.approx(900.0)


def test_each_function_returns_one_shape():
    q = k = v = np.eye(2)
    assert isinstance(attention(q, k, v), np.ndarray)
    assert attention_weights(q, k, v).shape == (2, 2)
    result = attention_with_lse(q, k, v)
    assert isinstance(result, AttentionLSE) and result.lse.shape == (2,)
    np.testing.assert_array_equal(result.out, attention(q, k, v))
    assert result == (result.out, result.lse)  # a tuple: unpacks as (out, lse)


def test_lse_has_the_output_batch_shape_in_both_paths():
    # v alone carries the batch: lse is (B, L_q), like out[..., 0], tiled or not
    rng = np.random.default_rng(8)
    q, k = rng.standard_normal((2, 5, 4))
    v = rng.standard_normal((3, 5, 2))
    for block in (None, 2):
        out, lse = attention_with_lse(q, k, v, block_size=block)
        assert out.shape == (3, 5, 2) and lse.shape == (3, 5)


@pytest.mark.parametrize("block", [None, 2])
def test_zero_length_sequences_give_the_empty_result(block):
    q, k, v = np.ones((2, 0, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 5))
    assert attention(q, k, v, block_size=block).shape == (2, 0, 5)
    out, lse = attention_with_lse(
        np.ones((2, 3, 4)),
        np.ones((2, 0, 4)),
        np.ones((2, 0, 5)),
        block_size=block,
        is_causal=True,
    )
    assert out.shape == (2, 3, 5) and (out == 0).all()  # queries with no keys: zeros
    assert (lse == -np.inf).all()
    assert attention(np.ones((0, 2, 4)), k[:1], v[:1], block_size=block).shape == (0, 2, 5)
    w = attention_weights(np.ones((3, 4)), np.ones((0, 4)), np.ones((0, 5)))
    assert w.shape == (3, 0)


def test_d_k_zero_is_still_refused():
    with pytest.raises(ValueError, match="d_k = 0"):
        attention(np.ones((2, 0)), np.ones((2, 0)), np.ones((2, 3)))


def test_mixed_float16_float32_promotes_as_numpy():
    rng = np.random.default_rng(2)
    q = rng.standard_normal((4, 3)).astype(np.float16)
    k, v = (rng.standard_normal((4, 3)).astype(np.float32) for _ in range(2))
    out = attention(q, k, v)
    assert out.dtype == np.result_type(np.float16, np.float32) == np.float32
    np.testing.assert_allclose(out, attention(q.astype(np.float32), k, v), rtol=1e-6)
    grads = attention_backward(q, k, v, np.ones((4, 3), np.float16))
    assert all(g.dtype == np.float32 for g in grads)


def test_bfloat16_is_computed_in_float32_and_returned_as_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 5, 4)).astype(bf16) for _ in range(3))
    out, lse = attention_with_lse(q, k, v, is_causal=True)
    assert out.dtype == bf16 and lse.dtype == bf16
    want = attention(*(a.astype(np.float32) for a in (q, k, v)), is_causal=True)
    np.testing.assert_array_equal(out, want.astype(bf16))  # float32 result, rounded once
    tiled = attention(q, k, v, is_causal=True, block_size=2)
    assert tiled.dtype == bf16
    np.testing.assert_allclose(tiled.astype(np.float32), want, atol=2e-2)
    assert attention(q, k.astype(np.float32), v).dtype == np.float32  # mixed: float32
    grads = attention_backward(q, k, v, np.ones((2, 5, 4), bf16))
    assert all(g.dtype == bf16 for g in grads)
    assert softmax(np.array([0, 1], bf16)).dtype == bf16
    with pytest.raises(ValueError, match="NaN"):
        attention(np.array([[np.nan]], bf16), k[0], v[0])


def test_log_softmax_keeps_what_softmax_underflows():
    np.testing.assert_array_equal(log_softmax([0.0, -1000.0]), [0.0, -1000.0])
    with np.errstate(divide="ignore"):
        assert np.log(softmax([0.0, -1000.0]))[1] == -np.inf  # the naive way loses it


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-50, 50), min_size=1, max_size=6),
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_log_softmax_is_log_of_softmax(xs, blocked):
    x = np.array(xs)
    x[np.array(blocked[: len(xs)])] = -np.inf
    got = log_softmax(x)
    with np.errstate(divide="ignore"):
        want = np.log(softmax(x))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_log_softmax_fully_masked_row_and_axis():
    np.testing.assert_array_equal(log_softmax([-np.inf, -np.inf]), [-np.inf, -np.inf])
    x = np.array([[0.0, 1.0], [2.0, 2.0]])
    np.testing.assert_allclose(np.exp(log_softmax(x, axis=0)), softmax(x, axis=0))


@pytest.mark.parametrize("f", [softmax, log_softmax])
def test_empty_softmax_has_the_package_message(f):
    with pytest.raises(ValueError, match=r"no entries along axis -1 \(shape \(0,\)\)"):
        f([])
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        f([[1.0]], axis=2)
    assert f(np.ones((0, 3))).shape == (0, 3)  # an empty batch of rows is fine


def test_negative_scale_is_refused_and_documented():
    with pytest.raises(ValueError, match="scale must be finite and ≥ 0"):
        attention(np.eye(2), np.eye(2), np.eye(2), scale=-1.0)
    assert "negative scale" in numeric.attention.__doc__
