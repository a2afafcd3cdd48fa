"""Masks: the −∞ limit, −1e9 in float32 vs float16, padding, the fully masked row."""

import numpy as np
import pytest
import sympy as sp

from attention_math import numeric, symbolic
from attention_math.derivations import masks


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
    _, w = numeric.attention(q, k, v, mask=m, return_weights=True)
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
