"""PyTorch as an oracle for ``multi_head_attention`` and ``multi_head_weights``:
``torch.nn.MultiheadAttention`` with biases, ``key_padding_mask`` (boolean and float, through
``from_key_padding_mask``), ``kdim``/``vdim``, ``need_weights``, per-head masks and the
(B, 1, 1, L) mask of The Annotated Transformer; ``scaled_dot_product_attention(...,
enable_gqa=True)`` for grouped-query and multi-query heads, with ``scale``.

PyTorch is a test-time dependency only; without it these tests skip locally and fail in CI.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_math import numeric
from attention_math.multihead import (
    AttentionParams,
    from_key_padding_mask,
    multi_head_attention,
    multi_head_weights,
    split_heads,
)

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_matches_torch(torch, causal):
    rng = np.random.default_rng(12)
    d_model, h, l_q, l_k = 8, 2, 3, 5
    x_q, x_kv = rng.standard_normal((l_q, d_model)), rng.standard_normal((l_k, d_model))
    w_q, w_k, w_v, w_o = (rng.standard_normal((d_model, d_model)) for _ in range(4))
    mask = numeric.causal_mask(l_q, l_k) if causal else None
    ours = multi_head_attention(x_q, x_kv, AttentionParams(w_q, w_k, w_v, w_o), h, mask=mask)

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


def _mha(torch, rng, embed, heads, kdim=None, vdim=None, bias=True):
    """A torch MultiheadAttention with random weights, and ours read from its state_dict."""
    torch.manual_seed(int(rng.integers(2**31)))
    mha = torch.nn.MultiheadAttention(
        embed, heads, bias=bias, batch_first=True, kdim=kdim, vdim=vdim, dtype=torch.float64
    )
    if bias:
        with torch.no_grad():  # torch starts the biases at 0: make them matter
            mha.in_proj_bias.normal_()
            mha.out_proj.bias.normal_()
    params = AttentionParams.from_torch({k: t.numpy() for k, t in mha.state_dict().items()})
    return mha, params


def test_from_torch_reads_the_transposed_blocks(torch):
    rng = np.random.default_rng(3)
    mha, p = _mha(torch, rng, 6, 3)
    w_q, w_k, w_v = (w.detach().numpy().T for w in mha.in_proj_weight.chunk(3))
    b_q, b_k, b_v = (b.detach().numpy() for b in mha.in_proj_bias.chunk(3))
    for ours, theirs in zip(
        (p.w_q, p.w_k, p.w_v, p.w_o, p.b_q, p.b_k, p.b_v, p.b_o),
        (
            w_q,
            w_k,
            w_v,
            mha.out_proj.weight.detach().numpy().T,
            b_q,
            b_k,
            b_v,
            mha.out_proj.bias.detach().numpy(),
        ),
        strict=True,
    ):
        np.testing.assert_array_equal(ours, theirs)
    _, separate = _mha(torch, rng, 6, 3, kdim=4, vdim=5, bias=False)
    assert (separate.w_k.shape, separate.w_v.shape, separate.b_q) == ((4, 6), (5, 6), None)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("average", [True, False])
def test_multihead_matches_torch_with_biases_padding_and_weights(torch, seed, average):
    rng = np.random.default_rng(seed)
    B, L_q, L_k, embed, heads = 2, int(rng.integers(1, 6)), int(rng.integers(2, 7)), 6, 3
    kdim, vdim = (None, None) if seed % 2 else (4, 5)
    mha, p = _mha(torch, rng, embed, heads, kdim, vdim)
    x_q = rng.standard_normal((B, L_q, embed))
    x_k = rng.standard_normal((B, L_k, kdim or embed))
    x_v = rng.standard_normal((B, L_k, vdim or embed))
    pad = np.zeros((B, L_k), bool)  # PyTorch: True = padding
    pad[1, int(rng.integers(1, L_k)) :] = True
    mask = rng.random((L_q, L_k)) < 0.8
    mask[:, 0] = True  # no fully masked rows: PyTorch gives NaN there, we give 0
    t = [torch.from_numpy(a) for a in (x_q, x_k, x_v)]
    t_out, t_w = mha(
        *t,
        key_padding_mask=torch.from_numpy(pad),
        attn_mask=torch.from_numpy(~mask),  # MultiheadAttention's bool attn_mask: True = block
        need_weights=True,
        average_attn_weights=average,
    )
    both = mask & from_key_padding_mask(pad)  # (B, L_q, L_k): True = may attend
    out = multi_head_attention(x_q, x_k, p, heads, mask=both, x_v=x_v)
    weights = multi_head_weights(x_q, x_k, p, heads, mask=both)  # (B, h, L_q, L_k)
    if average:
        weights = weights.mean(axis=-3)  # PyTorch's default: the mean over the heads
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(weights, t_w.detach().numpy(), rtol=1e-11, atol=1e-13)
    assert weights.shape == ((B, L_q, L_k) if average else (B, heads, L_q, L_k))


def test_multihead_is_causal_and_float_key_padding_match_torch(torch):
    rng = np.random.default_rng(20)
    mha, p = _mha(torch, rng, 4, 2)
    x = rng.standard_normal((3, 5, 4))
    pad = np.zeros((3, 5))
    pad[2, 3:] = -np.inf  # a float key_padding_mask is added to the scores
    tx = torch.from_numpy(x)
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    t_out, _ = mha(
        tx,
        tx,
        tx,
        key_padding_mask=torch.from_numpy(pad),
        attn_mask=t_mask,
        is_causal=True,
        need_weights=False,
    )
    out = multi_head_attention(x, x, p, 2, mask=from_key_padding_mask(pad), is_causal=True)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-12)


def test_annotated_transformer_mask_matches_torch_padding(torch):
    # The (B, 1, 1, L) mask (True = attend) on (B, L, d) inputs is torch's key_padding_mask
    rng = np.random.default_rng(21)
    mha, p = _mha(torch, rng, 4, 2)
    x = rng.standard_normal((2, 4, 4))
    attend = np.ones((2, 1, 1, 4), bool)
    attend[0, ..., 2:] = False
    tx = torch.from_numpy(x)
    t_out, _ = mha(tx, tx, tx, key_padding_mask=torch.from_numpy(~attend[:, 0, 0]))
    out = multi_head_attention(x, x, p, 2, mask=attend)
    assert out.shape == (2, 4, 4)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-12)


def test_per_head_masks_match_torch_3d_attn_mask(torch):
    # MultiheadAttention takes per-head masks as (B·h, L_q, L_k), True = blocked; ours are
    # (B, h, L_q, L_k), True = may attend
    rng = np.random.default_rng(24)
    B, h, L_q, L_k = 2, 3, 4, 5
    mha, p = _mha(torch, rng, 6, h)
    x_q = rng.standard_normal((B, L_q, 6))
    x_kv = rng.standard_normal((B, L_k, 6))
    allowed = rng.random((B, h, L_q, L_k)) < 0.6
    allowed[..., 0] = True  # no fully masked rows: PyTorch gives NaN there
    t_kv = torch.from_numpy(x_kv)
    t_out, t_w = mha(
        torch.from_numpy(x_q),
        t_kv,
        t_kv,
        attn_mask=torch.from_numpy(~allowed.reshape(B * h, L_q, L_k)),
        average_attn_weights=False,
    )
    out = multi_head_attention(x_q, x_kv, p, h, mask=allowed)
    weights = multi_head_weights(x_q, x_kv, p, h, mask=allowed)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(weights, t_w.detach().numpy(), rtol=1e-11, atol=1e-13)
    assert (weights[~allowed] == 0).all()


@pytest.mark.parametrize(("h", "g"), [(4, 2), (4, 1), (6, 3), (4, 4)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_grouped_query_heads_match_torch_enable_gqa(torch, h, g, causal, scale):
    """n_kv_heads < n_heads against ``scaled_dot_product_attention(..., enable_gqa=True)``
    on our own projections; n_kv_heads = 1 is multi-query attention."""
    import torch.nn.functional as F

    rng = np.random.default_rng(100 * h + 10 * g + causal)
    B, L_q, L_k, d_model, d_k, d_v = 2, 3, 5, 8, 2, 3
    p = AttentionParams(
        rng.standard_normal((d_model, h * d_k)),
        rng.standard_normal((d_model, g * d_k)),
        rng.standard_normal((d_model, g * d_v)),
        rng.standard_normal((h * d_v, 4)),
        rng.standard_normal(h * d_k),
        rng.standard_normal(g * d_k),
        rng.standard_normal(g * d_v),
        rng.standard_normal(4),
    )
    x_q, x_kv = rng.standard_normal((B, L_q, d_model)), rng.standard_normal((B, L_k, d_model))
    pad = np.zeros((B, L_k), bool)
    pad[1, 3:] = True  # the second sequence has 3 keys
    mask = from_key_padding_mask(pad)  # (B, 1, L_k)
    kw = dict(n_kv_heads=g, mask=mask, is_causal=causal, scale=scale)
    ours = multi_head_attention(x_q, x_kv, p, h, **kw)
    our_w = multi_head_weights(x_q, x_kv, p, h, **kw)

    def heads(x, w, b, n):  # (B, n, L, d), contiguous, as SDPA's fused kernels want
        return torch.from_numpy(np.ascontiguousarray(split_heads(x @ w + b, n)))

    q, k, v = (
        heads(x_q, p.w_q, p.b_q, h),
        heads(x_kv, p.w_k, p.b_k, g),
        heads(x_kv, p.w_v, p.b_v, g),
    )
    allowed = torch.from_numpy(mask[:, None])  # (B, 1, 1, L_k): True = may attend
    if causal:
        allowed = allowed & torch.ones(L_q, L_k, dtype=torch.bool).tril()
    t_heads = F.scaled_dot_product_attention(
        q, k, v, attn_mask=allowed, scale=scale, enable_gqa=g < h
    )  # (B, h, L_q, d_v)
    theirs = t_heads.transpose(1, 2).reshape(B, L_q, h * d_v).numpy() @ p.w_o + p.b_o
    np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-12)
    # the weights: SDPA with identity values returns them; the kv heads repeated by hand
    eye = torch.eye(L_k, dtype=torch.float64).expand(B, g, L_k, L_k)
    t_w = F.scaled_dot_product_attention(
        q, k, eye, attn_mask=allowed, scale=scale, enable_gqa=g < h
    )
    np.testing.assert_allclose(our_w, t_w.numpy(), rtol=1e-11, atol=1e-13)
