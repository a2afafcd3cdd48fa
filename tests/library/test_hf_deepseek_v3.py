"""`hf.layer` on transformers' ``DeepseekV3Attention``: multi-head latent attention equal to the
module's forward, in float64, across configurations, seeds and lengths.

Three things around the module compute in float32 whatever the input: ``DeepseekV3RMSNorm``
(it casts to float32 to normalise), ``DeepseekV3RotaryEmbedding`` (its angles) and the eager
attention (its softmax, ``dtype=torch.float32``). To compare at 1e-9 the test runs the
module's SDPA attention (float64 throughout), gives the forward cos and sin computed in
float64 (checked against the rotary module to float32 accuracy), and swaps the two norms for
``torch.nn.RMSNorm`` in float64 with the same gains and eps; the module as published, with
its own norms and angles, agrees to float32 accuracy.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_math import hf
from attention_math.positional import rope_frequencies
from tests.conftest import require_or_skip

pytestmark = pytest.mark.oracle

REL = 1e-9


def _config(q_lora_rank, *, yarn=False, interleave=True, bias=False):
    require_or_skip("transformers", "Hugging Face transformers, the optional oracle, is missing")
    from transformers import DeepseekV3Config

    rope = {"rope_type": "default", "rope_theta": 50.0}
    if yarn:
        rope = {
            "rope_type": "yarn",
            "rope_theta": 50.0,
            "factor": 4.0,
            "original_max_position_embeddings": 8,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 0.707,
            "mscale_all_dim": 0.707,
        }
    config = DeepseekV3Config(
        hidden_size=24,
        num_attention_heads=3,
        num_key_value_heads=3,
        q_lora_rank=q_lora_rank,
        kv_lora_rank=10,
        qk_nope_head_dim=6,
        qk_rope_head_dim=4,
        v_head_dim=5,
        max_position_embeddings=32,
        rope_parameters=rope,
        rope_interleave=interleave,
        attention_bias=bias,
    )
    config._attn_implementation = "sdpa"  # eager takes its softmax in float32
    return config


def _module(torch, config, seed):
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention

    torch.manual_seed(seed)
    module = DeepseekV3Attention(config, layer_idx=0).double().eval()
    with torch.no_grad():  # nothing zero or one by default: every weight, gain and bias random
        for p in module.parameters():
            p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5 + (1.0 if p.ndim == 1 else 0.0))
    return module


def _cos_sin(torch, config, length):
    """cos and sin as DeepseekV3RotaryEmbedding lays them out, ``cat(freqs, freqs)``, in float64."""
    rope = config.rope_parameters
    theta, factor = rope_frequencies(
        config.qk_rope_head_dim,
        base=rope["rope_theta"],
        scaling=rope,
        max_position_embeddings=config.max_position_embeddings,
        seq_len=length,
    )  # (r/2,)
    angle = np.arange(length)[:, None] * theta[None, :]  # (L, r/2)
    emb = np.concatenate([angle, angle], -1)  # (L, r)
    cos = torch.from_numpy(np.cos(emb) * factor)[None]  # (1, L, r)
    sin = torch.from_numpy(np.sin(emb) * factor)[None]  # (1, L, r)
    return cos, sin


def _float64_norms(torch, module):
    """The module with its two RMSNorms computed in float64 (same gains, same eps)."""
    for name in ("q_a_layernorm", "kv_a_layernorm"):
        old = getattr(module, name)
        if old is None:
            continue
        new = torch.nn.RMSNorm(old.weight.shape[0], eps=old.variance_epsilon, dtype=torch.float64)
        with torch.no_grad():
            new.weight.copy_(old.weight)
        setattr(module, name, new)
    return module


def _forward(torch, module, x, length):
    xt = torch.from_numpy(x)[None]  # (1, L, hidden)
    mask = torch.full((length, length), float("-inf"), dtype=torch.float64).triu(1)[None, None]
    with torch.no_grad():
        out, _ = module(xt, _cos_sin(torch, module.config, length), mask)
    return out[0].numpy()  # (L, hidden)


CASES = [
    pytest.param(dict(q_lora_rank=7), id="q_lora"),
    pytest.param(dict(q_lora_rank=None), id="plain_q"),
    pytest.param(dict(q_lora_rank=7, yarn=True), id="q_lora_yarn"),
    pytest.param(dict(q_lora_rank=None, interleave=False, bias=True), id="halves_bias"),
]


@pytest.mark.parametrize("kw", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("length", [1, 3, 11])
def test_layer_equals_deepseek_v3_attention(torch, kw, seed, length):
    module = _module(torch, _config(**kw), seed)
    ours = hf.layer(module)
    x = np.random.default_rng(100 + seed).standard_normal((length, 24))
    want = _forward(torch, _float64_norms(torch, module), x, length)
    got = ours(x)
    assert got.shape == want.shape == (length, 24)
    rel = np.abs(got - want).max() / np.abs(want).max()
    assert rel <= REL, rel


@pytest.mark.parametrize("kw", CASES[:1] + CASES[2:3])
def test_the_float64_stand_ins_are_the_modules_own_to_float32(torch, kw):
    """The two stand-ins change rounding only: the module as published (float32 norms and
    angles) agrees with our layer to float32 accuracy."""
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3RotaryEmbedding

    config, length = _config(**kw), 9
    module = _module(torch, config, 5)
    x = np.random.default_rng(5).standard_normal((length, 24))
    xt = torch.from_numpy(x)[None]
    pos = torch.arange(length)[None]
    cos32, sin32 = DeepseekV3RotaryEmbedding(config)(xt, pos)
    cos, sin = _cos_sin(torch, config, length)
    assert np.abs(cos32.numpy() - cos.numpy()).max() < 1e-5
    assert np.abs(sin32.numpy() - sin.numpy()).max() < 1e-5
    mask = torch.full((length, length), float("-inf"), dtype=torch.float64).triu(1)[None, None]
    with torch.no_grad():
        published, _ = module(xt, (cos32, sin32), mask)
    want = published[0].numpy()
    rel = np.abs(hf.layer(module)(x) - want).max() / np.abs(want).max()
    assert rel < 1e-5, rel


def test_grouped_kv_heads_are_refused(torch):
    config = _config(7)
    config.num_key_value_heads = 1
    module = _module(torch, _config(7), 0)
    module.config = config
    with pytest.raises(ValueError, match="num_key_value_heads = 1 differs"):
        hf.layer(module)


def test_a_rope_type_it_does_not_read_is_refused(torch):
    module = _module(torch, _config(None), 0)
    module.config.rope_parameters = {"rope_type": "dynamic", "rope_theta": 50.0, "factor": 2.0}
    with pytest.raises(ValueError, match="rope type 'dynamic'"):
        hf.layer(module)
