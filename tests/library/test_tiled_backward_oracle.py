"""The tiled backward against PyTorch autograd (the test-time oracle)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.backward import attention_backward

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("mask_kind", ["none", "bool", "additive"])
@pytest.mark.parametrize("block", [1, (3, 5), (16, 16)])
def test_tiled_backward_matches_torch_autograd(torch, mask_kind, block):
    F = torch.nn.functional
    rng = np.random.default_rng(11)
    q, k = rng.normal(size=(2, 3, 9, 4)), rng.normal(size=(2, 3, 7, 4))
    v, d_out = rng.normal(size=(2, 3, 7, 5)), rng.normal(size=(2, 3, 9, 5))
    mask = None
    if mask_kind != "none":
        allowed = rng.random((9, 7)) < 0.6
        allowed[0] = False  # a fully masked row: zero gradient in both
        bias = rng.normal(size=(9, 7))
        mask = allowed if mask_kind == "bool" else np.where(allowed, bias, -np.inf)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    out = F.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=None if mask is None else torch.tensor(mask)
    )
    out.backward(torch.tensor(d_out))
    ours = attention_backward(q, k, v, d_out, mask, block_size=block)
    for name, g, t in zip("qkv", ours, (tq, tk, tv), strict=True):
        want = t.grad.numpy()
        err = np.max(np.abs(g - want)) / np.max(np.abs(want))
        assert err < 1e-12, (name, err)
