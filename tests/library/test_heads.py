"""Why several heads: the two-pattern example, exact and in NumPy; the cost of h heads."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.crosscheck import crosscheck
from attention_math.derivations import cost
from attention_math.derivations.heads import (
    cost_difference,
    d,
    matmul_flops,
    one_head_columns_equal,
    parameter_difference,
    two_patterns,
    two_patterns_numeric,
)
from attention_math.multihead import AttentionParams, multi_head_attention


@pytest.fixture(scope="module")
def ex():
    return two_patterns()


def test_weights_are_rows_of_a_softmax_that_respect_the_mask(ex):
    for p in (ex.p_a, ex.p_b, ex.p_one):
        for i in range(p.rows):
            assert sp.simplify(sum(p.row(i)) - 1) == 0
            assert all(p[i, j] == 0 for j in range(i + 1, p.cols))


def test_head_a_reads_the_previous_token_and_head_b_the_first(ex):
    for i in range(1, ex.p_a.rows):
        assert max(range(i + 1), key=lambda j: ex.p_a[i, j]) == i - 1
        assert max(range(i + 1), key=lambda j: ex.p_b[i, j]) == 0


def test_two_heads_give_different_columns_and_one_head_equal_ones(ex):
    assert any(ex.two_heads[i, 0] != ex.two_heads[i, 1] for i in range(ex.v.rows))
    assert all(ex.one_head[i, 0] == ex.one_head[i, 1] for i in range(ex.v.rows))
    assert ex.one_head[3, 0] == sp.Rational(5, 2)  # token 4: keys 3 and 1 cancel, uniform


def test_wide_head_scores_are_the_sum_of_the_heads_scores_over_root_two(ex):
    half = 1 / sp.sqrt(2)
    s_a = ex.q_a * ex.k.T * half
    s_b = ex.q_b * ex.k.T * half
    s_one = sp.Matrix.hstack(ex.q_a, ex.q_b) * sp.Matrix.hstack(ex.k, ex.k).T / 2
    assert (s_one - (s_a + s_b) * half).applyfunc(sp.simplify) == sp.zeros(4, 4)


def test_numeric_matches_exact(ex):
    w = two_patterns_numeric()
    for name in ("p_a", "p_b", "p_one", "two_heads", "one_head"):
        crosscheck(getattr(ex, name), w[name], label=name)


def test_numeric_matches_the_library_multi_head_attention():
    ex, w = two_patterns(), two_patterns_numeric()
    f = lambda m: np.array(m.evalf(30).tolist(), dtype=float)  # noqa: E731
    # x = [Q_A | Q_B | K | v]; selection matrices route each part to its head
    x = np.hstack([f(ex.q_a), f(ex.q_b), f(ex.k), f(ex.v)])  # (4, 7)
    sel = np.eye(7)
    w_q = sel[:, 0:4]  # head A: columns 0-1, head B: 2-3
    w_k = sel[:, [4, 5, 4, 5]]  # both heads share K
    w_v = sel[:, [6, 6]]  # both heads read v
    p = AttentionParams(w_q, w_k, w_v, np.eye(2))
    out = multi_head_attention(x, x, p, 2, mask=np.tri(4, dtype=bool))
    np.testing.assert_allclose(out, w["two_heads"], rtol=1e-13)


@pytest.mark.parametrize("length", [0, 1, 5, 2.0, True])
def test_bad_length_is_refused(length):
    with pytest.raises(ValueError, match="length"):
        two_patterns(length)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_one_head_columns_equal(n):
    assert one_head_columns_equal(n)


def test_cost_of_h_heads():
    h = cost.h
    assert sp.simplify(matmul_flops(h) - matmul_flops(1)) == 0
    assert parameter_difference() == 0
    assert cost_difference().subs(h, 1) == 0
    assert sp.factor(cost_difference()) == 7 * cost.L_q * cost.L_k * (h - 1)


@settings(max_examples=30, deadline=None)
@given(
    n_heads=st.sampled_from([1, 2, 4, 8]),
    d_head=st.integers(1, 16),
    lq=st.integers(1, 64),
    lk=st.integers(1, 64),
)
def test_cost_difference_is_the_softmax_work_on_more_score_matrices(n_heads, d_head, lq, lk):
    width = n_heads * d_head
    point = {cost.L_q: lq, cost.L_k: lk, d: width}
    many = cost.total_flops().subs(
        {cost.d_k: d_head, cost.d_v: d_head, cost.h: n_heads, cost.d_model: width, **point}
    )
    one = cost.total_flops().subs(
        {cost.d_k: width, cost.d_v: width, cost.h: 1, cost.d_model: width, **point}
    )
    assert many - one == cost_difference().subs({cost.h: n_heads, **point})
    assert many - one == 7 * (n_heads - 1) * lq * lk


@pytest.mark.oracle
def test_two_heads_match_pytorch_sdpa(torch):
    ex, w = two_patterns(), two_patterns_numeric()
    f = lambda m: torch.tensor(np.array(m.evalf(30).tolist(), dtype=float))  # noqa: E731
    q = torch.stack([f(ex.q_a), f(ex.q_b)])  # (2, 4, 2)
    k = torch.stack([f(ex.k), f(ex.k)])
    v = torch.stack([f(ex.v), f(ex.v)])
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(
        np.hstack([out[0].numpy(), out[1].numpy()]), w["two_heads"], rtol=1e-12
    )
