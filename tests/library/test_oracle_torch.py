"""PyTorch as an oracle: ``numeric.attention`` against ``scaled_dot_product_attention``
(masks, ``causal_lower_right``, the log-sum-exp of its CPU flash kernel, zero lengths,
bfloat16) and ``log_softmax`` against ``torch.log_softmax``.

PyTorch is a test-time dependency only (installed as ``conftest.TORCH_MISSING`` says);
without it these tests skip locally and fail in CI.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.numeric import (
    attention,
    attention_with_lse,
    causal_mask,
    log_softmax,
)

pytestmark = pytest.mark.oracle


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


@pytest.mark.parametrize(
    ("q_shape", "mask_shape"),
    [((4, 2), (2, 4, 4)), ((2, 4, 2), (2, 1, 1, 4))],  # a stack of masks; HF's 4-D mask
)
def test_torch_raises_where_we_raise_for_an_enlarging_mask(torch, q_shape, mask_shape):
    F = torch.nn.functional
    q = np.random.default_rng(0).standard_normal(q_shape)
    mask = np.ones(mask_shape, bool)
    t = torch.from_numpy(q)
    with pytest.raises(RuntimeError, match="broadcast shape"):
        F.scaled_dot_product_attention(t, t, t, attn_mask=torch.from_numpy(mask))
    with pytest.raises(ValueError, match="enlarge"):
        attention(q, q, q, mask)


@pytest.mark.parametrize(("L_q", "L_k"), [(1, 6), (3, 7), (5, 5), (6, 6)])
@pytest.mark.parametrize("block", [None, 2])
def test_bottom_right_matches_causal_lower_right(torch, L_q, L_k, block):
    from torch.nn.attention.bias import causal_lower_right

    F = torch.nn.functional
    rng = np.random.default_rng(L_q * 7 + L_k)
    q = rng.standard_normal((2, 3, L_q, 8))  # (B, H, L, d): SDPA's 4-D layout
    k = rng.standard_normal((2, 3, L_k, 8))
    v = rng.standard_normal((2, 3, L_k, 4))
    t = [torch.from_numpy(a) for a in (q, k, v)]
    theirs = F.scaled_dot_product_attention(*t, attn_mask=causal_lower_right(L_q, L_k)).numpy()
    ours = attention(q, k, v, is_causal=True, causal_alignment="bottom-right", block_size=block)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)
    mask = causal_mask(L_q, L_k, causal_alignment="bottom-right")
    np.testing.assert_array_equal(
        mask, causal_lower_right(L_q, L_k)._materialize(device="cpu").numpy()
    )


def test_lse_matches_torch_flash_attention_cpu(torch):
    rng = np.random.default_rng(22)
    q, k, v = (rng.standard_normal((2, 3, 5, 8)) for _ in range(3))
    t = [torch.from_numpy(a) for a in (q, k, v)]
    t_out, t_lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(*t, is_causal=True)[
        :2
    ]
    for block in (None, 2):
        out, lse = attention_with_lse(q, k, v, is_causal=True, block_size=block)
        np.testing.assert_allclose(out, t_out.numpy(), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(lse, t_lse.numpy(), rtol=1e-12)


def test_log_softmax_matches_torch(torch):
    x = np.array([[0.0, -1000.0, 3.0], [-np.inf, 1.0, 2.0]])
    want = torch.log_softmax(torch.from_numpy(x), dim=-1).numpy()
    np.testing.assert_allclose(log_softmax(x), want, rtol=1e-15)


@pytest.mark.parametrize(("L_q", "L_k"), [(0, 3), (3, 0), (0, 0)])
def test_zero_length_matches_torch(torch, L_q, L_k):
    F = torch.nn.functional
    q, k, v = np.ones((2, 1, L_q, 4)), np.ones((2, 1, L_k, 4)), np.ones((2, 1, L_k, 5))
    theirs = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()
    ours = attention(q, k, v)
    assert ours.shape == theirs.shape == (2, 1, L_q, 5)
    np.testing.assert_array_equal(ours, theirs)


def test_bfloat16_is_as_close_as_torch_bfloat16(torch):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    rng = np.random.default_rng(25)
    q, k, v = (rng.standard_normal((2, 3, 6, 8)).astype(bf16) for _ in range(3))
    exact = attention(*(a.astype(np.float64) for a in (q, k, v)))
    t = [torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16) for a in (q, k, v)]
    theirs = torch.nn.functional.scaled_dot_product_attention(*t).float().numpy()
    ours = attention(q, k, v)
    assert ours.dtype == bf16
    ours_err = np.abs(ours.astype(np.float64) - exact).max()
    theirs_err = np.abs(theirs.astype(np.float64) - exact).max()
    # computed in float32 and rounded once: within half a bfloat16 ulp of the largest |out|
    assert ours_err <= 0.5 * float(ml_dtypes.finfo(bf16).eps) * np.abs(exact).max() + 1e-6
    assert ours_err <= theirs_err
