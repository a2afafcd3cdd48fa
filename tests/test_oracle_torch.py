"""PyTorch as an oracle: ``numeric.attention`` against ``scaled_dot_product_attention``.

PyTorch is a test-time dependency only (installed as ``conftest.TORCH_MISSING`` says);
without it these tests skip locally and fail in CI.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.numeric import attention, causal_mask

from .conftest import require_torch

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def torch():
    return require_torch()


def _case(rng, batch, heads, L_q, L_k, d_k, d_v):
    q = rng.standard_normal((batch, heads, L_q, d_k))
    k = rng.standard_normal((batch, heads, L_k, d_k)) * rng.uniform(0.5, 3)
    v = rng.standard_normal((batch, heads, L_k, d_v))
    return q, k, v


@pytest.mark.parametrize("seed", range(12))
def test_matches_torch_on_random_batched_masked_cross_attention(torch, seed):
    F = torch.nn.functional
    rng = np.random.default_rng(seed)
    batch, heads = rng.integers(1, 4, size=2)
    L_q, L_k = rng.integers(1, 9, size=2)
    d_k, d_v = rng.integers(1, 17, size=2)
    q, k, v = _case(rng, batch, heads, L_q, L_k, d_k, d_v)
    kind = ("none", "bool", "additive", "broadcast")[seed % 4]
    if kind == "none":
        mask = None
    elif kind == "bool":
        mask = rng.random((batch, heads, L_q, L_k)) < 0.6  # fully masked rows included
    elif kind == "additive":
        mask = rng.standard_normal((L_q, L_k))
        mask[rng.random((L_q, L_k)) < 0.3] = -np.inf
        mask[:, 0] = 0.0
    else:
        mask = rng.random((1, heads, 1, L_k)) < 0.8
        mask[..., 0] = True
    scale = None if seed % 3 else float(rng.uniform(0.1, 2))
    ours = attention(q, k, v, mask, scale=scale)
    t = [torch.from_numpy(a) for a in (q, k, v)]
    t_mask = None if mask is None else torch.from_numpy(np.ascontiguousarray(mask))
    theirs = F.scaled_dot_product_attention(*t, attn_mask=t_mask, scale=scale).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)


def test_causal_mask_matches_is_causal(torch):
    F = torch.nn.functional
    rng = np.random.default_rng(99)
    for L_q, L_k in ((5, 5), (3, 6), (6, 3)):
        q, k, v = _case(rng, 2, 2, L_q, L_k, 4, 3)
        ours = attention(q, k, v, causal_mask(L_q, L_k))
        theirs = F.scaled_dot_product_attention(
            *(torch.from_numpy(a) for a in (q, k, v)), is_causal=True
        ).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)


def test_fully_masked_row_is_zero_like_torch(torch):
    # older PyTorch returned NaN for a row with nothing to attend to; 2.13 returns zeros,
    # which is this project's convention too
    F = torch.nn.functional
    q = k = v = np.eye(2)
    mask = np.array([[True, True], [False, False]])
    ours = attention(q, k, v, mask)
    theirs = F.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(mask)
    ).numpy()
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14)
    assert (theirs[1] == 0).all()
    assert (ours[1] == 0).all()


def test_float32_matches_torch_in_float32(torch):
    F = torch.nn.functional
    rng = np.random.default_rng(7)
    q, k, v = (a.astype(np.float32) for a in _case(rng, 2, 3, 7, 9, 8, 5))
    ours = attention(q, k, v)
    theirs = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-6)
