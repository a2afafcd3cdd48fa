"""Permutation equivariance, exact and numeric, and what breaks it."""

import itertools

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric, symbolic
from attention_math.derivations import equivariance as eq


def test_softmax_commutes_with_simultaneous_permutation():
    assert eq.softmax_commutes(3)


@pytest.mark.parametrize("n, d_k, d_v", [(2, 2, 2), (3, 2, 1)])
def test_attention_is_equivariant_exactly(n, d_k, d_v):
    assert eq.equivariant_exactly(n, d_k, d_v)


def test_permuting_values_alone_is_not_equivariant_exactly():
    # The check can fail: permute Q and K but not V.
    Q, K, V = (symbolic.generic_matrix(s, 2, 1) for s in "qkv")
    P = eq.permutation_matrix((1, 0))
    lhs = symbolic.attention(P * Q, P * K, V)
    assert (lhs - P * symbolic.attention(Q, K, V)).applyfunc(sp.expand) != sp.zeros(2, 1)


def test_causal_mask_breaks_equivariance_exactly():
    Q, K, V = (symbolic.generic_matrix(s, 2, 1) for s in "qkv")
    P = eq.permutation_matrix((1, 0))
    mask = [[True, False], [True, True]]
    lhs = symbolic.attention(P * Q, P * K, P * V, mask=mask)
    rhs = P * symbolic.attention(Q, K, V, mask=mask)
    assert lhs[0, 0] == V[1, 0] and rhs[0, 0] != V[1, 0]


def test_permutation_matrix_rejects_non_permutations():
    with pytest.raises(ValueError, match="permutation"):
        eq.permutation_matrix((0, 0, 1))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.permutations(range(4)))
def test_equivariance_numeric(seed, perm):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((4, 3)) for _ in range(3))
    P = np.eye(4)[list(perm)]
    np.testing.assert_allclose(
        numeric.attention(P @ q, P @ k, P @ v), P @ numeric.attention(q, k, v), atol=1e-12
    )


def test_causal_and_positional_break_for_every_nontrivial_permutation():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 2))
    pe = rng.standard_normal((3, 2))
    w = [rng.standard_normal((2, 2)) for _ in range(3)]
    for perm in itertools.permutations(range(3)):
        a, b = eq.causal_breaks(x, x, x, perm)
        c, d = eq.positional_breaks(x, pe, *w, perm)
        same = perm == (0, 1, 2)
        assert np.allclose(a, b) == same
        assert np.allclose(c, d) == same
