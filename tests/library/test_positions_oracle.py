"""PyTorch as an oracle for chapter "Positions and decoding": GQA against
``scaled_dot_product_attention(enable_gqa=True)``, the block against
``torch.nn.TransformerEncoderLayer``, incremental decoding against SDPA with ``is_causal``."""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.block import BlockConfig, params_from_torch, transformer_block
from attention_math.decoding import incremental_attention
from attention_math.multihead import AttentionParams, multi_head_attention, split_heads
from attention_math.numeric import causal_mask

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize(("h", "g"), [(8, 8), (8, 4), (8, 2), (8, 1), (6, 2)])
def test_gqa_matches_sdpa_enable_gqa(torch, h, g):
    F = torch.nn.functional
    rng = np.random.default_rng(h + 100 * g)
    B, L_q, L_k, d_model, d_head = 2, 5, 7, 12, 4
    x_q = rng.standard_normal((B, L_q, d_model))
    x_kv = rng.standard_normal((B, L_k, d_model))
    w_q = rng.standard_normal((d_model, h * d_head))
    w_k = rng.standard_normal((d_model, g * d_head))
    w_v = rng.standard_normal((d_model, g * d_head))
    w_o = np.eye(h * d_head)  # the heads' concatenation itself
    mask = rng.random((L_q, L_k)) < 0.7
    mask[:, 0] = True
    p = AttentionParams(w_q, w_k, w_v, w_o)
    ours = multi_head_attention(x_q, x_kv, p, h, n_kv_heads=g, mask=mask)
    q, k, v = (
        torch.from_numpy(np.ascontiguousarray(split_heads(x @ w, n)))  # (B, heads, L, d)
        for x, w, n in ((x_q, w_q, h), (x_kv, w_k, g), (x_kv, w_v, g))
    )
    heads = F.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.from_numpy(mask), enable_gqa=True
    )  # (B, h, L_q, d_head)
    theirs = heads.transpose(1, 2).reshape(B, L_q, h * d_head).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("masked", [False, True])
def test_block_matches_transformer_encoder_layer(torch, norm_first, activation, masked):
    torch.manual_seed(int(norm_first) + 2 * (activation == "gelu") + 4 * masked)
    d_model, n_heads, d_ff, B, L = 16, 4, 40, 3, 6
    layer = torch.nn.TransformerEncoderLayer(
        d_model,
        n_heads,
        dim_feedforward=d_ff,
        dropout=0.0,
        activation=activation,
        batch_first=True,
        norm_first=norm_first,
    )
    layer = layer.double().eval()
    with torch.no_grad():  # LayerNorm gains and biases away from their 1 and 0 defaults
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    x = torch.randn(B, L, d_model, dtype=torch.float64)
    ours_mask = causal_mask(L) if masked else None
    torch_mask = torch.from_numpy(~causal_mask(L)) if masked else None  # torch: True = blocked
    with torch.no_grad():
        theirs = layer(x, src_mask=torch_mask).numpy()
    params = params_from_torch({k: t.detach().numpy() for k, t in layer.state_dict().items()})
    config = BlockConfig(n_heads=n_heads, norm_first=norm_first, activation=activation)
    ours = transformer_block(x.numpy(), params, config, mask=ours_mask)
    err_eps = np.abs(ours - theirs).max() / np.abs(theirs).max() / np.finfo(np.float64).eps
    assert err_eps < 64, err_eps


def test_block_float32_matches_torch_float32(torch):
    torch.manual_seed(7)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).eval()
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        theirs = layer(x).numpy()
    params = params_from_torch({k: t.detach().numpy() for k, t in layer.state_dict().items()})
    ours = transformer_block(x.numpy(), params, BlockConfig(n_heads=2, norm_first=False))
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=64 * np.finfo(np.float32).eps)


def test_incremental_matches_sdpa_is_causal(torch):
    F = torch.nn.functional
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal((2, 3, 9, 4)) for _ in range(3))
    ours = incremental_attention(q, k, v)
    theirs = F.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), is_causal=True
    ).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)


def _hf_rope_float32(torch, x, positions, base=10000.0):
    """Hugging Face's LLaMA rotary embedding as its code runs it: every step in float32."""
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))  # (d/2,)
    freqs = (inv_freq[:, None] @ positions[None, :].float()).T  # (L, d/2), float32
    emb = torch.cat((freqs, freqs), dim=-1)  # (L, d)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


def test_rope_float32_path_is_hugging_faces(torch):
    """The NumPy float32 path the RoPE page compares with is Hugging Face's: same θ, same
    float32 angles, outputs within a few float32 ε (the cosines are libm's vs NumPy's)."""
    from attention_math.derivations.positional import rope_float32_path

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 128, 64)).astype(np.float32)  # (h, L, d)
    pos = np.sort(rng.integers(0, 8192, size=128))  # (L,)
    theirs = _hf_rope_float32(torch, torch.from_numpy(x), torch.from_numpy(pos)).numpy()
    ours = rope_float32_path(x, pos)
    assert ours.dtype == np.float32
    eps = np.finfo(np.float32).eps
    assert np.abs(ours - theirs).max() / np.abs(theirs).max() < 8 * eps


def test_rope_is_not_bit_for_bit_hugging_faces_float32_path(torch):
    """The RoPE page once said `rope` and Hugging Face agree bit for bit in float32, having
    compared with float64 angles; with Hugging Face's own float32 angles they differ by
    hundreds of ε at positions in the thousands, and `rope` is the one near the exact rotation."""
    from attention_math.derivations.positional import float32_path_gap
    from attention_math.positional import rope

    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 256, 64)).astype(np.float32)  # (h, L, d)
    pos = np.sort(rng.integers(4096, 8192, size=256))  # (L,)
    theirs = _hf_rope_float32(torch, torch.from_numpy(x), torch.from_numpy(pos)).numpy()
    eps = np.finfo(np.float32).eps
    gap = np.abs(rope(x, pos) - theirs).max() / np.abs(theirs).max() / eps
    assert gap > 100
    g = float32_path_gap(64, 8192)
    assert g["ours_exact"] <= 0.5 and g["float32_exact"] > 1000
