"""Masks: the −∞ limit, −1e9 in float32 vs float16 (exactly, per format, and as PyTorch
does it), the underflow threshold, padding masks from ``valid_lens``, the fully masked row."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric, symbolic
from attention_math.derivations import masks
from attention_math.numeric import (
    attention,
    padding_mask,
    softmax,
)


def test_minus_infinity_is_the_limit_of_large_negative_scores():
    lim = symbolic.masked_softmax_limit([0, 1, 2], masked=[1])
    assert lim[1] == 0
    assert sp.simplify(lim[0] - 1 / (1 + sp.exp(2))) == 0
    assert symbolic.softmax([[0, -sp.oo, 2]]) == sp.Matrix([lim])


def test_boolean_and_additive_masks_agree():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((4, 3)) for _ in range(3))
    allowed = numeric.causal_mask(4)
    out_b = numeric.attention(q, k, v, mask=allowed)
    out_a = numeric.attention(q, k, v, mask=masks.additive_from_boolean(allowed))
    np.testing.assert_array_equal(out_b, out_a)


def test_additive_from_boolean_rejects_floats():
    with pytest.raises(TypeError, match="boolean"):
        masks.additive_from_boolean(np.zeros((2, 2)))


def test_minus_1e9_works_in_float32():
    r = masks.fill_report(-1e9, np.float32)
    assert not r.overflows and r.stored == -1e9 and r.weight == 0.0
    # 1e9 swallows scores: the spacing of float32 there is 64
    assert r.spacing == 64.0
    assert len(set(r.masked_row)) == 1  # fully masked row: uniform


def test_minus_1e9_overflows_float16():
    r = masks.fill_report(-1e9, np.float16)
    assert r.overflows and r.stored == -np.inf
    assert np.isnan(r.masked_row_textbook).all()
    assert r.masked_row == (0.0, 0.0, 0.0)  # the project's softmax survives it
    assert not masks.fill_report(-1e4, np.float16).overflows


def test_padding_mask_blocks_padding_keys():
    m = masks.padding_mask([2, 3], 3)
    assert m.shape == (2, 1, 3)
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 3, 2)) for _ in range(3))
    w = numeric.attention_weights(q, k, v, mask=m)
    assert np.all(w[0, :, 2] == 0) and np.all(w[1] > 0)
    np.testing.assert_allclose(w.sum(-1), 1)


@pytest.mark.parametrize("lengths", [[4], [1, 5], np.array([1.5])])
def test_padding_mask_rejects_bad_lengths(lengths):
    with pytest.raises(ValueError, match="valid_lens"):
        masks.padding_mask(lengths, 3)


def test_fully_masked_row_three_conventions():
    rows = masks.fully_masked_row()
    assert rows["zero"] == (0.0, 0.0, 0.0)
    assert np.isnan(rows["nan"]).all()
    assert np.allclose(rows["uniform"], 1 / 3)


@settings(max_examples=60, deadline=None)
@given(
    lens=st.lists(st.integers(0, 6), min_size=1, max_size=4),
    n_k=st.integers(6, 8),
    per_query=st.booleans(),
)
def test_padding_mask_is_arange_below_length(lens, n_k, per_query):
    valid = np.array(lens)
    if per_query:
        valid = np.stack([valid, valid[::-1]], axis=1)  # (B, L_q = 2)
    m = padding_mask(valid, n_k)
    assert m.dtype == np.bool_
    assert m.shape == ((len(lens), 2, n_k) if per_query else (len(lens), 1, n_k))
    np.testing.assert_array_equal(m.sum(-1), valid if per_query else valid[:, None])
    # True = may attend: a prefix of True, the rest padding
    assert (np.diff(m.astype(int), axis=-1) <= 0).all()


def test_padding_mask_matches_d2l_masked_softmax():
    # d2l: masked_softmax(X, valid_lens) sets X[j ≥ valid_len] = −1e6 before the softmax
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((3, 2, 4, 3))
    valid_lens = np.array([[1, 2, 3, 4], [4, 4, 2, 1]])  # (B, L_q)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(3)
    d2l = np.where(np.arange(4) < valid_lens[..., None], scores, -1e6)
    want = softmax(d2l) @ v
    got = attention(q, k, v, padding_mask(valid_lens, 4))
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_padding_mask_is_the_one_in_derivations_masks():
    assert masks.padding_mask is padding_mask


@pytest.mark.parametrize(
    ("lens", "n_k", "match"),
    [
        ([4], 3, r"valid_lens must lie in \[0, n_k = 3\]"),
        ([-1], 3, "valid_lens"),
        ([1.5], 3, "valid_lens must be integers"),
        ([[[1]]], 3, r"shape \(B,\) or \(B, L_q\)"),
        ([1], -1, "n_k must be a non-negative integer"),
    ],
)
def test_padding_mask_errors(lens, n_k, match):
    with pytest.raises(ValueError, match=match):
        padding_mask(lens, n_k)


@pytest.mark.oracle
def test_torch_refuses_minus_1e9_in_float16_but_not_float32(torch):
    blocked = torch.tensor([[False, True]])
    with pytest.raises(RuntimeError, match="overflow"):
        torch.zeros(1, 2, dtype=torch.float16).masked_fill(blocked, -1e9)
    filled = torch.zeros(1, 2, dtype=torch.float32).masked_fill(blocked, -1e9)
    assert torch.softmax(filled, -1)[0, 1].item() == 0.0


def test_minus_1e9_per_format_exactly() -> None:
    from attention_math.derivations.masks import fill_report

    outcome = {t: fill_report(-1e9, t) for t in (np.float16, np.float32, np.float64)}
    assert all(r.weight == 0.0 for r in outcome.values())  # beside an allowed key: always 0
    assert [r.fully_masked for r in outcome.values()] == ["NaN", "uniform", "as if unmasked"]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_underflow_threshold_is_exact_and_ln_tiny_only_sufficient(dtype: type) -> None:
    from attention_math.derivations.masks import underflow

    u = underflow(dtype)
    assert float(u.ln_tiny) < float(u.exact)  # ln τ is below the threshold: sufficient only
    tau = sp.Rational(float(np.finfo(dtype).smallest_subnormal))
    t = sp.Symbol("t")
    w = sp.exp(t) / (1 + sp.exp(t) + sp.exp(2))
    assert sp.simplify(w.subs(t, u.exact) - tau / 2) == 0  # the weight is τ/2 exactly at t*
    weight = lambda x: numeric.softmax(np.array([0.0, x, 2.0], dtype=dtype))[1]  # noqa: E731
    assert weight(u.computed) == 0 and weight(np.nextafter(u.computed, 0)) >= 0
    assert abs(u.computed - float(u.exact)) < 1
