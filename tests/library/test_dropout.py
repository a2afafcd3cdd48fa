"""Dropout on the attention weights: PyTorch's dropout_p semantics, exact expectation."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from attention_math.derivations.dropout import check_expectation, dropout_expectation
from attention_math.numeric import attention, attention_weights


def _qkv(seed=0, lq=3, lk=5, d=4):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((lq, d)), rng.standard_normal((lk, d)), rng.standard_normal((lk, 2))


def test_kept_weights_are_the_undropped_ones_divided_by_one_minus_p():
    q, k, v = _qkv()
    w = attention_weights(q, k, v)
    wd = attention_weights(q, k, v, dropout_p=0.3, rng=7)
    out = attention(q, k, v, dropout_p=0.3, rng=7)  # the same seed: the same draw
    keep = np.random.default_rng(7).random(w.shape) >= 0.3  # the documented draw
    np.testing.assert_array_equal(wd != 0, keep)
    np.testing.assert_allclose(wd[keep], w[keep] / 0.7, rtol=1e-15)
    np.testing.assert_allclose(out, wd @ v, rtol=1e-14)


def test_same_seed_same_mask_and_generator_accepted():
    q, k, v = _qkv(1)
    a = attention(q, k, v, dropout_p=0.5, rng=3)
    b = attention(q, k, v, dropout_p=0.5, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, attention(q, k, v, dropout_p=0.5, rng=4))


def test_no_dropout_changes_nothing():
    q, k, v = _qkv(2)
    np.testing.assert_array_equal(attention(q, k, v, dropout_p=0.0, rng=1), attention(q, k, v))


def test_dropout_is_refused_where_it_cannot_work():
    q, k, v = _qkv(3)
    with pytest.raises(ValueError, match="tiled path never forms"):
        attention(q, k, v, dropout_p=0.1, block_size=2)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\)"):
        attention(q, k, v, dropout_p=1.0)
    with pytest.raises(TypeError, match="dropout_p must be a number"):
        attention(q, k, v, dropout_p="0.1")


def test_expectation_is_exact_over_all_masks():
    a, b, c = sp.symbols("a b c", positive=True)
    r = dropout_expectation([a, b, c], sp.Matrix([[1, 0], [0, 1], [2, 3]]))
    assert r["E[output]"] == r["undropped output"].applyfunc(sp.expand)
    assert sp.simplify(r["E[row sum]"] - (a + b + c)) == 0
    q, k, v = sp.Matrix([[1, 0], [0, 1]]), sp.Matrix([[1, 1], [0, 2], [1, 0]]), sp.eye(3)
    assert check_expectation(q, k, v, sp.Rational(1, 3)).error_eps <= 16


def test_sampled_mean_approaches_the_undropped_output():
    q, k, v = _qkv(4, lq=1, lk=3)
    want = attention(q, k, v)
    draws = np.stack([attention(q, k, v, dropout_p=0.2, rng=s) for s in range(1000)])
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert (np.abs(draws.mean(axis=0) - want) < 5 * se + 1e-12).all()


@pytest.mark.oracle
def test_same_mask_as_pytorch_gives_the_same_output(torch):
    # PyTorch draws its own mask; given the same mask (through an explicit additive dropout of
    # the weights), torch's formula equals ours
    q, k, v = _qkv(5)
    out = attention(q, k, v, dropout_p=0.25, rng=11)
    wd = attention_weights(q, k, v, dropout_p=0.25, rng=11)  # the weights that made out
    keep = torch.from_numpy(wd != 0)
    p = torch.softmax(torch.from_numpy(q @ k.T / 2.0), dim=-1)  # d_k = 4: scale 1/2
    want = ((p * keep) / 0.75 @ torch.from_numpy(v)).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-14, atol=1e-15)
