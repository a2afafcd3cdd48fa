"""PyTorch as an oracle for multi-head attention and for the float16 mask fill claim."""

import numpy as np
import pytest

from attention_math import numeric
from attention_math.multihead import multi_head_attention

from .conftest import require_torch

torch = require_torch()

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_matches_torch(causal):
    rng = np.random.default_rng(12)
    d_model, h, l_q, l_k = 8, 2, 3, 5
    x_q, x_kv = rng.standard_normal((l_q, d_model)), rng.standard_normal((l_k, d_model))
    w_q, w_k, w_v, w_o = (rng.standard_normal((d_model, d_model)) for _ in range(4))
    mask = numeric.causal_mask(l_q, l_k) if causal else None
    ours = multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, h, mask=mask)

    mha = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        # torch computes x Wᵀ: its weights are the transposes of ours
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([w_q.T, w_k.T, w_v.T])))
        mha.out_proj.weight.copy_(torch.from_numpy(w_o.T))
        # torch's attn_mask: True = NOT allowed
        attn_mask = None if mask is None else torch.from_numpy(~mask)
        theirs, _ = mha(
            torch.from_numpy(x_q)[None],
            torch.from_numpy(x_kv)[None],
            torch.from_numpy(x_kv)[None],
            attn_mask=attn_mask,
            need_weights=False,
        )
    np.testing.assert_allclose(ours, theirs[0].numpy(), rtol=1e-10, atol=1e-12)


def test_torch_refuses_minus_1e9_in_float16_but_not_float32():
    blocked = torch.tensor([[False, True]])
    with pytest.raises(RuntimeError, match="overflow"):
        torch.zeros(1, 2, dtype=torch.float16).masked_fill(blocked, -1e9)
    filled = torch.zeros(1, 2, dtype=torch.float32).masked_fill(blocked, -1e9)
    assert torch.softmax(filled, -1)[0, 1].item() == 0.0
