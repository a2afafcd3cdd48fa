"""`hf.layer` on Qwen3-Next's gated attention (output gate, QK-norm, partial RoPE, GQA)
against the module's own forward (transformers and PyTorch as test-time oracles).

``Qwen3NextRMSNorm`` computes in float32 whatever its input (``x.float()``, then
``type_as(x)``), so the stock module in float64 carries float32 roundings from its QK-norm:
it is compared within a float32 bound. For the 1e-9 comparison the two norms are swapped
for `_WideNorm`, the same formula and weights kept in the input's dtype; everything else is
the module's own forward.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_math import hf
from tests.conftest import require_or_skip

REL = 1e-9  # max |ours − theirs| / max |theirs|, float64
REL_F32_NORM = 64 * float(np.finfo(np.float32).eps)  # the stock float32 norms (measured ~1e-7)


def _wide_norm(torch, norm):
    """``x / √(mean(x²) + eps) · (1 + w)`` in ``x``'s dtype, the weights of ``norm``."""

    class _WideNorm(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = norm.weight
            self.eps = norm.eps

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight)

    return _WideNorm()


def _module(torch, seed: int, *, h: int = 4, g: int = 2, bias: bool = False, wide: bool = True):
    require_or_skip("transformers", "Hugging Face transformers, the optional oracle, is missing")
    from transformers import Qwen3NextConfig
    from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextAttention

    # head_dim 16, partial_rotary_factor 1/2: RoPE on the first 8 coordinates of each head;
    # rope_theta 2⁸: the frequencies 1, 1/4, 1/16, 1/64 are exact in float32 (checked below)
    config = Qwen3NextConfig(
        hidden_size=24,
        num_attention_heads=h,
        num_key_value_heads=g,
        head_dim=16,
        num_hidden_layers=4,
        rms_norm_eps=1e-6,
        attention_bias=bias,
        rope_parameters={"rope_type": "default", "rope_theta": 256.0, "partial_rotary_factor": 0.5},
    )
    config._attn_implementation = "sdpa"  # eager rounds the weights to float32
    torch.manual_seed(seed)
    module = Qwen3NextAttention(config, layer_idx=3).double().eval()
    with torch.no_grad():
        for p in module.parameters():  # the norms' weights start at 0 (gain 1): not here
            p.copy_(torch.randn_like(p) * 0.5)
    if wide:
        module.q_norm = _wide_norm(torch, module.q_norm)
        module.k_norm = _wide_norm(torch, module.k_norm)
    return config, module


def _theirs(torch, config, module, x: np.ndarray) -> np.ndarray:
    from transformers.masking_utils import causal_mask_function
    from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextRotaryEmbedding

    length = x.shape[0]
    rotary = Qwen3NextRotaryEmbedding(config)
    inv = rotary.inv_freq.double()  # (r/2,), r = 8
    assert torch.equal(inv, 1.0 / 256.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8))
    angle = torch.arange(length, dtype=torch.float64)[None, :, None] * inv  # (1, L, r/2)
    emb = torch.cat((angle, angle), dim=-1)  # (1, L, r): the class's own layout
    cos, sin = emb.cos() * rotary.attention_scaling, emb.sin() * rotary.attention_scaling
    i, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    zero = torch.zeros((), dtype=torch.float64)
    mask = torch.where(causal_mask_function(0, 0, i, j), zero, -torch.inf)[None, None]
    with torch.no_grad():
        out, _ = module(
            torch.from_numpy(x)[None], position_embeddings=(cos, sin), attention_mask=mask
        )
    return out[0].numpy()


@pytest.mark.oracle
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("length", [1, 3, 10])
def test_qwen3_next_attention_equals_the_module(torch, seed, length):
    config, module = _module(torch, seed)
    x = np.random.default_rng(seed).standard_normal((length, config.hidden_size))
    want = _theirs(torch, config, module, x)
    ours = hf.layer(module)(x)
    assert ours.shape == want.shape
    err = np.abs(ours - want).max() / np.abs(want).max()
    assert err <= REL, err


@pytest.mark.oracle
@pytest.mark.parametrize(("h", "g", "bias"), [(4, 4, False), (4, 1, True), (2, 2, True)])
def test_qwen3_next_heads_and_biases(torch, h, g, bias):
    config, module = _module(torch, 5, h=h, g=g, bias=bias)
    x = np.random.default_rng(5).standard_normal((7, config.hidden_size))
    want = _theirs(torch, config, module, x)
    err = np.abs(hf.layer(module)(x) - want).max() / np.abs(want).max()
    assert err <= REL, err


@pytest.mark.oracle
@pytest.mark.parametrize("seed", [0, 1])
def test_the_stock_module_within_float32_norms(torch, seed):
    config, module = _module(torch, seed, wide=False)
    x = np.random.default_rng(seed).standard_normal((9, config.hidden_size))
    want = _theirs(torch, config, module, x)
    err = np.abs(hf.layer(module)(x) - want).max() / np.abs(want).max()
    assert err <= REL_F32_NORM, err


@pytest.mark.oracle
def test_the_gate_and_the_norm_weights_matter(torch):
    # the comparison would pass by accident if the gate or the (1 + w) gain did nothing
    config, module = _module(torch, 8)
    x = np.random.default_rng(8).standard_normal((6, config.hidden_size))
    base = hf.layer(module)(x)
    with torch.no_grad():
        module.q_proj.weight.view(4, 32, 24)[:, 16:] *= 0  # every gate logit 0: σ = 1/2
        module.k_norm.weight.add_(1.0)
    changed = hf.layer(module)(x)
    want = _theirs(torch, config, module, x)
    assert np.abs(changed - want).max() <= REL * np.abs(want).max()
    assert np.abs(changed - base).max() > 1e-3


def test_bad_input_names_the_shape(torch):
    _, module = _module(torch, 0)
    with pytest.raises(ValueError, match=r"x must have shape \(L, hidden = 24\), got \(2, 3\)"):
        hf.layer(module)(np.zeros((2, 3)))
