"""Positions past the training length: ALiBi's far weight, RoPE's unseen angles."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from attention_math.derivations.positions_compared import (
    alibi_far_weight_exact,
    check_alibi_far_weight,
    unseen_pairs_exact,
)
from attention_math.numeric import softmax
from attention_math.positional import alibi_bias, alibi_far_weight, unseen_angle_pairs


def test_alibi_far_weight_is_the_softmax_of_the_bias():
    # the last query's ALiBi row, equal content scores: its weights beyond train_len
    h, train, test = 4, 10, 30
    w = softmax(alibi_bias(h, test)[:, -1, :])  # (h, test)
    far = w[:, : test - train].sum(axis=-1)  # keys 0 … test − 1 − train: distance ≥ train
    np.testing.assert_allclose(alibi_far_weight(h, train, test), far, rtol=1e-12)


def test_alibi_far_weight_is_exact():
    assert check_alibi_far_weight(12, 64, 256).error_eps <= 64
    slope = sp.log(2)
    assert alibi_far_weight_exact(slope, 1, 3) == sp.Rational(3, 7)  # (1/2 + 1/4)/(7/4)


def test_alibi_far_weight_errors():
    with pytest.raises(ValueError, match="test_len = 4 must exceed train_len = 8"):
        alibi_far_weight(2, 8, 4)


@pytest.mark.parametrize(("d", "base", "train"), [(64, 10000, 2048), (128, 500000, 8192)])
def test_unseen_pairs_count_is_exact(d, base, train):
    got = unseen_angle_pairs(d, base=float(base), train_len=train, test_len=4 * train)
    assert got.sum() == unseen_pairs_exact(d, base=base, train_len=train)
    # the unseen pairs are the slowest ones: a suffix of the pair indices
    assert not got[: d // 2 - got.sum()].any() and got[d // 2 - got.sum() :].all()


def test_scalings_bring_every_pair_back_into_the_trained_angles():
    for scaling in (
        {"rope_type": "linear", "factor": 4.0},
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048},
    ):
        got = unseen_angle_pairs(64, train_len=2048, test_len=8192, scaling=scaling)
        assert not got.any()
    # a factor too small leaves the slowest pairs outside
    short = {"rope_type": "linear", "factor": 2.0}
    assert unseen_angle_pairs(64, train_len=2048, test_len=8192, scaling=short).any()
