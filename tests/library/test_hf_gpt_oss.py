"""`hf.layer` on gpt-oss's attention: learned sinks, full and sliding-window layers, against
the module's own forward (transformers and PyTorch as test-time oracles)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_math import hf
from tests.conftest import require_or_skip

REL = 1e-9  # max |ours − theirs| / max |theirs|, float64
WINDOW = 4


def _module(torch, seed: int, layer_idx: int, *, h: int = 4, g: int = 2):
    require_or_skip("transformers", "Hugging Face transformers, the optional oracle, is missing")
    from transformers import GptOssConfig
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssAttention

    # rope_theta 2⁸ with head_dim 8: the frequencies 1, 1/4, 1/16, 1/64 are exact in the
    # float32 the rotary class computes them in (checked below), so the float64 angles agree
    config = GptOssConfig(
        hidden_size=24,
        num_attention_heads=h,
        num_key_value_heads=g,
        head_dim=8,
        sliding_window=WINDOW,
        num_hidden_layers=2,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={"rope_type": "default", "rope_theta": 256.0},
        attention_bias=True,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    module = GptOssAttention(config, layer_idx=layer_idx).double().eval()
    with torch.no_grad():
        for p in module.parameters():  # biases and sinks too: nothing zero by default
            p.copy_(torch.randn_like(p) * 0.5)
    return config, module


def _position_embeddings(torch, config, length: int):
    """The rotary class's cos and sin, its own formula evaluated in float64."""
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssRotaryEmbedding

    rotary = GptOssRotaryEmbedding(config)
    inv = rotary.inv_freq.double()  # (d/2,)
    want = 1.0 / 256.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8)
    assert torch.equal(inv, want)  # exact in float32: nothing is lost by reading them
    angle = torch.arange(length, dtype=torch.float64)[None, :, None] * inv  # (1, L, d/2)
    return (angle.cos() * rotary.attention_scaling, angle.sin() * rotary.attention_scaling)


def _mask(torch, config, module, length: int):
    """The additive mask the model builds for this layer, from its own mask functions."""
    from transformers.masking_utils import (
        causal_mask_function,
        sliding_window_causal_mask_function,
    )

    if module.layer_type == "sliding_attention":
        allowed_at = sliding_window_causal_mask_function(config.sliding_window)
    else:
        allowed_at = causal_mask_function
    i = torch.arange(length)[:, None]  # (L, 1)
    j = torch.arange(length)[None, :]  # (1, L)
    allowed = allowed_at(0, 0, i, j)  # (L, L)
    zero = torch.zeros((), dtype=torch.float64)
    return torch.where(allowed, zero, -torch.inf)[None, None]  # (1, 1, L, L)


def _theirs(torch, config, module, x: np.ndarray) -> np.ndarray:
    xt = torch.from_numpy(x)[None]  # (1, L, hidden)
    with torch.no_grad():
        out, _ = module(
            xt,
            position_embeddings=_position_embeddings(torch, config, x.shape[0]),
            attention_mask=_mask(torch, config, module, x.shape[0]),
        )
    return out[0].numpy()


@pytest.mark.oracle
@pytest.mark.parametrize("layer_idx", [0, 1], ids=["sliding", "full"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("length", [1, 3, 11])
def test_gpt_oss_attention_equals_the_module(torch, layer_idx, seed, length):
    config, module = _module(torch, seed, layer_idx)
    x = np.random.default_rng(seed).standard_normal((length, config.hidden_size))
    want = _theirs(torch, config, module, x)
    ours = hf.layer(module)(x)
    assert ours.shape == want.shape
    err = np.abs(ours - want).max() / np.abs(want).max()
    assert err <= REL, err


@pytest.mark.oracle
@pytest.mark.parametrize("h,g", [(4, 4), (4, 1)])
def test_gpt_oss_grouped_heads(torch, h, g):
    config, module = _module(torch, 7, 1, h=h, g=g)
    x = np.random.default_rng(7).standard_normal((6, config.hidden_size))
    want = _theirs(torch, config, module, x)
    err = np.abs(hf.layer(module)(x) - want).max() / np.abs(want).max()
    assert err <= REL, err


@pytest.mark.oracle
def test_the_sink_changes_the_output(torch):
    # the comparison would pass by accident if the sinks did nothing: they do
    config, module = _module(torch, 3, 1)
    x = np.random.default_rng(3).standard_normal((5, config.hidden_size))
    before = hf.layer(module)(x)
    with torch.no_grad():
        module.sinks.add_(3.0)
    after = hf.layer(module)(x)
    assert np.abs(after - _theirs(torch, config, module, x)).max() <= REL * np.abs(after).max()
    assert np.abs(after - before).max() > 1e-3


@pytest.mark.oracle
def test_the_window_matters_beyond_it(torch):
    # on the sliding layer, L > window: the band and the full causal mask differ
    config, module = _module(torch, 4, 0)
    x = np.random.default_rng(4).standard_normal((2 * WINDOW + 1, config.hidden_size))
    ours = hf.layer(module)(x)
    module.layer_type = "full_attention"  # the reader reads the layer type it is given
    full = hf.layer(module)(x)
    assert np.abs(ours[:WINDOW] - full[:WINDOW]).max() <= 1e-12 * np.abs(full).max()
    assert np.abs(ours[WINDOW:] - full[WINDOW:]).max() > 1e-3


def test_bad_input_names_the_shape(torch):
    _, module = _module(torch, 0, 1)
    with pytest.raises(ValueError, match=r"x must have shape \(L, hidden = 24\), got \(3, 5\)"):
        hf.layer(module)(np.zeros((3, 5)))


@pytest.mark.oracle
def test_the_released_yarn_rope_is_read_as_the_rotary_class_computes_it(torch):
    # gpt-oss's released config: YaRN, factor 32, truncate False. The rotary class computes
    # in float32, so its frequencies agree with ours to float32 rounding, the factor exactly.
    require_or_skip("transformers", "Hugging Face transformers, the optional oracle, is missing")
    from transformers import GptOssConfig
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssRotaryEmbedding

    from attention_math.positional import rope_frequencies

    config = GptOssConfig(hidden_size=24, num_attention_heads=4, num_key_value_heads=2, head_dim=64)
    assert config.rope_parameters["rope_type"] == "yarn"
    rotary = GptOssRotaryEmbedding(config)
    ours, factor = rope_frequencies(
        64,
        base=config.rope_parameters["rope_theta"],
        scaling=config.rope_parameters,
        max_position_embeddings=config.max_position_embeddings,
    )
    theirs = rotary.inv_freq.double().numpy()
    assert np.abs(ours - theirs).max() <= 4 * np.finfo(np.float32).eps * np.abs(theirs).max()
    assert factor == pytest.approx(rotary.attention_scaling, rel=1e-15)
    # and the truncated variant would differ: the field is read
    other, _ = rope_frequencies(
        64,
        base=config.rope_parameters["rope_theta"],
        scaling={**config.rope_parameters, "truncate": True},
    )
    assert np.abs(other - ours).max() > 1e-6
