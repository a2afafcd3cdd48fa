"""The modern block: RMSNorm, SwiGLU, QK-norm, rotary positions and GQA, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.block import (
    BlockConfig,
    BlockParams,
    layer_norm,
    param_shapes,
    random_params,
    rms_norm,
    swiglu,
    transformer_block,
)
from attention_math.numeric import causal_mask
from tests.conftest import require_or_skip

LLAMA = {"norm": "rms", "ffn": "swiglu"}


def _cast(p: BlockParams, dtype) -> BlockParams:
    return BlockParams.from_dict({k: v.astype(dtype) for k, v in p.as_dict().items()})


#: the largest difference from the PyTorch reference, relative to the largest output, in
#: units of the format's ε (measured: under 2 ε in float64 and float32)
BOUND_EPS = 16


def test_rms_norm_is_layer_norm_of_a_centred_vector():
    x = np.random.default_rng(0).standard_normal((4, 6))
    centred = x - x.mean(axis=-1, keepdims=True)
    ln = layer_norm(x, np.ones(6), np.zeros(6), eps=0.0)
    np.testing.assert_allclose(rms_norm(centred, eps=0.0), ln, rtol=1e-14, atol=1e-14)
    # and without centring it is not: a shift survives RMSNorm
    assert not np.allclose(rms_norm(x + 3.0, eps=0.0), rms_norm(x, eps=0.0))


def test_rms_norm_keeps_the_dtype_and_checks_the_weight():
    x = np.ones((2, 3), dtype=np.float32)
    assert rms_norm(x).dtype == np.float32
    with pytest.raises(ValueError, match=r"weight must have shape \(d,\) = \(3,\)"):
        rms_norm(x, np.ones(4))
    with pytest.raises(ValueError, match="eps must be finite"):
        rms_norm(x, eps=-1.0)


def test_swiglu_shapes_are_checked():
    with pytest.raises(ValueError, match="w_down"):
        swiglu(np.ones((1, 2)), np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)))


def test_gqa_block_equals_the_block_with_key_value_heads_copied():
    # h_kv = 2 key/value heads read by 4 query heads = 4 heads whose W_K, W_V columns repeat
    x = np.random.default_rng(1).standard_normal((2, 5, 8))
    config = BlockConfig(n_heads=4, n_kv_heads=2, qk_norm=True, rope_base=100.0, **LLAMA)
    p = random_params(8, 12, config)
    d_head = 2
    tied = p.as_dict()
    for name in ("attn.w_k", "attn.w_v"):
        blocks = [tied[name][:, (i // 2) * d_head : (i // 2 + 1) * d_head] for i in range(4)]
        tied[name] = np.hstack(blocks)
    gqa = transformer_block(x, p, config, mask=causal_mask(5))
    mha_config = BlockConfig(n_heads=4, qk_norm=True, rope_base=100.0, **LLAMA)
    mha = transformer_block(x, BlockParams.from_dict(tied), mha_config, mask=causal_mask(5))
    np.testing.assert_allclose(gqa, mha, rtol=1e-13, atol=1e-13)


def test_qk_norm_makes_the_block_blind_to_the_scale_of_its_query_and_key_weights():
    x = np.random.default_rng(2).standard_normal((5, 8))

    def scaled(p: BlockParams) -> BlockParams:
        a = p.as_dict()
        return BlockParams.from_dict(
            {**a, "attn.w_q": 1e3 * a["attn.w_q"], "attn.w_k": 1e3 * a["attn.w_k"]}
        )

    config = BlockConfig(n_heads=2, qk_norm=True, eps=0.0, **LLAMA)
    p = random_params(8, 12, config)
    np.testing.assert_allclose(
        transformer_block(x, scaled(p), config),
        transformer_block(x, p, config),
        rtol=1e-10,
        atol=1e-12,
    )
    # without QK-norm the same scaling saturates the softmax and changes the output
    plain = BlockConfig(n_heads=2, **LLAMA)
    q = random_params(8, 12, plain)
    assert not np.allclose(transformer_block(x, scaled(q), plain), transformer_block(x, q, plain))


def test_params_are_named_in_the_error():
    p = random_params(8, 12, BlockConfig(n_heads=2, **LLAMA))
    with pytest.raises(ValueError, match=r"missing \['gamma_q', 'gamma_k'\]"):
        transformer_block(np.ones((3, 8)), p, BlockConfig(n_heads=2, qk_norm=True, **LLAMA))
    with pytest.raises(ValueError, match="n_kv_heads = 3 must divide n_heads = 4"):
        BlockConfig(n_heads=4, n_kv_heads=3, **LLAMA)
    with pytest.raises(ValueError, match="norm must be one of 'layer', 'rms'"):
        BlockConfig(n_heads=2, norm="batch")
    with pytest.raises(TypeError, match="config must be a BlockConfig"):
        param_shapes(LLAMA)  # type: ignore[arg-type]


def test_the_classic_block_has_the_arrays_of_torchs_encoder_layer():
    # the defaults: LayerNorm, an MLP, biases everywhere, no QK-norm
    names = list(param_shapes(BlockConfig(n_heads=2)))
    attn = ["attn.w_q", "attn.w_k", "attn.w_v", "attn.w_o", "attn.b_q", "attn.b_k", "attn.b_v"]
    assert names[:8] == [*attn, "attn.b_o"]
    assert names[8:] == ["w_1", "b_1", "w_2", "b_2", "gamma_1", "beta_1", "gamma_2", "beta_2"]


# --- PyTorch ------------------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rms_norm_equals_torch_nn_rmsnorm(torch, dtype):
    rng = np.random.default_rng(3)
    x = (10 * rng.standard_normal((3, 7, 16))).astype(dtype)
    g = (1 + 0.1 * rng.standard_normal(16)).astype(dtype)
    for eps in (None, 1e-6):
        layer = torch.nn.RMSNorm(16, eps=eps, dtype=getattr(torch, np.dtype(dtype).name))
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(g))
            want = layer(torch.from_numpy(x)).numpy()
        got = rms_norm(x, g, eps=eps)
        assert got.dtype == dtype
        err = np.abs(got - want).max() / (np.finfo(dtype).eps * np.abs(want).max())
        assert err <= 4, err


def _rotate_half(torch, t):
    half = t.shape[-1] // 2
    return torch.cat((-t[..., half:], t[..., :half]), dim=-1)


def _llama_layer_torch(torch, x, p, *, n_heads, n_kv_heads, base, eps, qk_norm):
    """A Llama-style decoder layer written from the papers in PyTorch: pre-norm RMSNorm,
    rotary positions (rotate_half), GQA, causal attention, SwiGLU; no biases."""
    f = torch.nn.functional
    t = {k.removeprefix("attn."): torch.from_numpy(v) for k, v in p.as_dict().items()}
    xt = torch.from_numpy(x)
    batch, length, d_model = xt.shape
    d_head = d_model // n_heads
    dtype = xt.dtype

    def rms(z, g):
        norm = torch.nn.RMSNorm(z.shape[-1], eps=eps, dtype=dtype)
        with torch.no_grad():
            norm.weight.copy_(g)
        return norm(z)

    h = rms(xt, t["gamma_1"])
    q = (h @ t["w_q"]).view(batch, length, n_heads, d_head).transpose(1, 2)
    k = (h @ t["w_k"]).view(batch, length, n_kv_heads, d_head).transpose(1, 2)
    v = (h @ t["w_v"]).view(batch, length, n_kv_heads, d_head).transpose(1, 2)
    if qk_norm:
        q, k = rms(q, t["gamma_q"]), rms(k, t["gamma_k"])
    inv_freq = 1.0 / base ** (torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    angle = torch.arange(length, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((angle, angle), dim=-1)
    cos, sin = emb.cos().to(dtype), emb.sin().to(dtype)
    q = q * cos + _rotate_half(torch, q) * sin
    k = k * cos + _rotate_half(torch, k) * sin
    att = f.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    xt = xt + att.transpose(1, 2).reshape(batch, length, d_model) @ t["w_o"]
    h = rms(xt, t["gamma_2"])
    return (xt + (f.silu(h @ t["w_gate"]) * (h @ t["w_up"])) @ t["w_down"]).detach().numpy()


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("h", "g", "qk_norm"), [(4, 2, False), (4, 1, True), (2, 2, True)])
def test_llama_style_block_equals_a_pytorch_reference(torch, dtype, h, g, qk_norm):
    rng = np.random.default_rng(10 * h + g)
    x = rng.standard_normal((2, 9, 16)).astype(dtype)
    config = BlockConfig(
        n_heads=h, n_kv_heads=g, eps=1e-6, qk_norm=qk_norm, rope_base=500.0, **LLAMA
    )
    p = _cast(random_params(16, 40, config, seed=h + g), dtype)
    ours = transformer_block(x, p, config, mask=causal_mask(9))
    want = _llama_layer_torch(
        torch, x, p, base=500.0, n_kv_heads=g, n_heads=h, eps=1e-6, qk_norm=qk_norm
    )
    assert ours.dtype == dtype
    err = np.abs(ours - want).max() / (np.finfo(dtype).eps * np.abs(want).max())
    assert err <= BOUND_EPS, err


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
@pytest.mark.oracle
def test_block_with_qk_norm_equals_hugging_face_qwen3_decoder_layer(torch):
    # Qwen3: pre-norm RMSNorm, QK-norm per head, rotary positions, GQA, SwiGLU, no biases.
    # Hugging Face's RMSNorm computes in float32 whatever the input, so compare in float32.
    require_or_skip("transformers", "Hugging Face transformers, the optional oracle, is missing")
    from transformers import Qwen3Config
    from transformers.models.qwen3.modeling_qwen3 import Qwen3DecoderLayer, Qwen3RotaryEmbedding

    d, f, h, g, length = 16, 40, 4, 2, 9
    config = Qwen3Config(
        hidden_size=d,
        intermediate_size=f,
        num_attention_heads=h,
        num_key_value_heads=g,
        head_dim=d // h,
        rms_norm_eps=1e-6,
        rope_theta=500.0,
        attention_bias=False,
    )
    config._attn_implementation = "eager"
    layer = Qwen3DecoderLayer(config, layer_idx=0).float()
    ours_config = BlockConfig(
        n_heads=h, n_kv_heads=g, qk_norm=True, rope_base=500.0, eps=1e-6, **LLAMA
    )
    params = _cast(random_params(d, f, ours_config, seed=5), np.float32)
    p = {k.removeprefix("attn."): v for k, v in params.as_dict().items()}
    hf_names = {
        "self_attn.q_proj.weight": p["w_q"].T,
        "self_attn.k_proj.weight": p["w_k"].T,
        "self_attn.v_proj.weight": p["w_v"].T,
        "self_attn.o_proj.weight": p["w_o"].T,
        "self_attn.q_norm.weight": p["gamma_q"],
        "self_attn.k_norm.weight": p["gamma_k"],
        "mlp.gate_proj.weight": p["w_gate"].T,
        "mlp.up_proj.weight": p["w_up"].T,
        "mlp.down_proj.weight": p["w_down"].T,
        "input_layernorm.weight": p["gamma_1"],
        "post_attention_layernorm.weight": p["gamma_2"],
    }
    layer.load_state_dict(
        {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in hf_names.items()}
    )
    x = np.random.default_rng(6).standard_normal((2, length, d)).astype(np.float32)
    xt = torch.from_numpy(x)
    pos = torch.arange(length)[None].expand(2, length)
    blocked = torch.full((length, length), float("-inf")).triu(1)[None, None]
    with torch.no_grad():
        out = layer(
            xt,
            attention_mask=blocked.expand(2, 1, length, length),
            position_ids=pos,
            position_embeddings=Qwen3RotaryEmbedding(config)(xt, pos),
        )
    want = (out[0] if isinstance(out, tuple) else out).numpy()
    ours = transformer_block(x, params, ours_config, mask=causal_mask(length))
    err = np.abs(ours - want).max() / (np.finfo(np.float32).eps * np.abs(want).max())
    assert err <= BOUND_EPS, err
