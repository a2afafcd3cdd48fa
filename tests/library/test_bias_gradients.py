"""Gradients of an additive bias (dM = dS) and of a learned relative bias (diagonal sums)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.backward import (
    AttentionGrads,
    AttentionGradsDMask,
    attention_backward,
    attention_backward_with_dmask,
    relative_bias,
    relative_bias_grad,
)
from attention_math.derivations.bias_gradients import (
    bias_case,
    dmask_is_ds,
    relative_bias_is_diagonal_sum,
)
from attention_math.gradcheck import central_difference, relative_error
from attention_math.numeric import attention


def test_symbolic_rules():
    assert dmask_is_ds(2, 2)
    assert relative_bias_is_diagonal_sum(2, 3)


def test_exact_case_crosschecks():
    assert all(c.passed for c in bias_case().checks())


@settings(max_examples=25, deadline=None)
@given(n_q=st.integers(1, 6), n_k=st.integers(1, 6), seed=st.integers(0, 999))
def test_relative_bias_grad_is_the_adjoint_of_relative_bias(n_q, n_k, seed):
    # <relative_bias(t), G> = <t, relative_bias_grad(G)> for every table t and matrix G
    rng = np.random.default_rng(seed)
    t, g = rng.normal(size=(2, n_q + n_k - 1)), rng.normal(size=(2, n_q, n_k))
    lhs = np.sum(relative_bias(t, n_q, n_k) * g)
    rhs = np.sum(t * relative_bias_grad(g))
    assert abs(lhs - rhs) < 1e-12 * max(1.0, abs(lhs))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_table_gradient_against_finite_differences(seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    d_out = rng.normal(size=(4, 2))
    causal = np.where(np.tri(4, 5, dtype=bool), 0.0, -np.inf)  # a fixed mask on top

    def loss(table):
        return float(np.sum(d_out * attention(q, k, v, mask=relative_bias(table, 4, 5) + causal)))

    table = rng.normal(size=8)
    *_, d_bias = attention_backward_with_dmask(q, k, v, d_out, relative_bias(table, 4, 5) + causal)
    assert np.all(d_bias[~np.tri(4, 5, dtype=bool)] == 0)  # blocked entries: no gradient
    fd = central_difference(loss, table, 1e-5)
    assert relative_error(relative_bias_grad(d_bias), fd) < 1e-8


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="n_q \\+ n_k - 1"):
        relative_bias(np.zeros(4), 3, 3)
    with pytest.raises(ValueError, match="n_q"):
        relative_bias(np.zeros(4), 0, 3)
    with pytest.raises(ValueError):
        relative_bias_grad(np.zeros(3))


@pytest.mark.oracle
def test_against_pytorch_autograd(torch):
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(2, 6, 4)), rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 3))
    d_out = rng.normal(size=(2, 6, 3))
    table = rng.normal(size=(2, 12))  # one table per head, offsets -6 … 5
    t = torch.tensor(table, requires_grad=True)
    idx = torch.tensor(np.arange(6)[:, None] - np.arange(7)[None, :] + 6)
    bias = t[:, idx]  # (2, 6, 7)
    out = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(x) for x in (q, k, v)), attn_mask=bias
    )
    out.backward(torch.tensor(d_out))
    *_, d_bias = attention_backward_with_dmask(q, k, v, d_out, relative_bias(table, 6, 7))
    np.testing.assert_allclose(relative_bias_grad(d_bias), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_bias_gradient_matches_finite_differences():
    rng = np.random.default_rng(13)
    q, k, v = rng.standard_normal((3, 2, 4, 3))
    bias = rng.standard_normal((1, 4, 4))  # shared by the batch: its gradient is summed
    bias[0, 0, 3] = -np.inf  # a blocked entry gets gradient 0
    d_out = rng.standard_normal((2, 4, 3))
    dbias = attention_backward_with_dmask(q, k, v, d_out, bias).dmask
    assert dbias.shape == (1, 4, 4) and dbias[0, 0, 3] == 0
    eps = 1e-6
    for idx in [(0, 0, 0), (0, 1, 2), (0, 3, 3)]:
        bumped = [bias.copy(), bias.copy()]
        bumped[0][idx] += eps
        bumped[1][idx] -= eps
        loss = [np.sum(attention(q, k, v, b) * d_out) for b in bumped]
        assert dbias[idx] == pytest.approx((loss[0] - loss[1]) / (2 * eps), rel=1e-6, abs=1e-9)


def test_with_dmask_adds_the_mask_gradient_to_attention_backward_s():
    rng = np.random.default_rng(21)
    q, k, v, d_out = rng.standard_normal((4, 2, 3, 3))
    bias = rng.standard_normal((3, 3))  # shared by the batch: dmask is summed back to (3, 3)
    grads = attention_backward_with_dmask(q, k, v, d_out, bias, is_causal=True, scale=0.7)
    assert type(grads) is AttentionGradsDMask and grads._fields == ("dq", "dk", "dv", "dmask")
    plain = attention_backward(q, k, v, d_out, bias, is_causal=True, scale=0.7)
    assert type(plain) is AttentionGrads and plain._fields == ("dq", "dk", "dv")
    for a, b in zip(grads[:3], plain, strict=True):
        np.testing.assert_array_equal(a, b)
    assert grads.dmask.shape == (3, 3) and np.all(grads.dmask[~np.tri(3, dtype=bool)] == 0)


def test_bias_gradient_needs_a_float_mask():
    with pytest.raises(TypeError, match=r"additive float mask.*boolean"):
        attention_backward_with_dmask(
            np.eye(2), np.eye(2), np.eye(2), np.eye(2), np.eye(2, dtype=bool)
        )
    with pytest.raises(TypeError, match="no mask"):
        attention_backward_with_dmask(np.eye(2), np.eye(2), np.eye(2), np.eye(2), None)
