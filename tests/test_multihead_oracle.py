"""PyTorch as an oracle for ``multi_head_attention``: ``torch.nn.MultiheadAttention`` with
biases, ``key_padding_mask`` (boolean and float), ``kdim``/``vdim``, ``need_weights``, per-head
masks and the (B, 1, 1, L) mask of The Annotated Transformer.

PyTorch is a test-time dependency only; without it these tests skip locally and fail in CI.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_math import numeric
from attention_math.multihead import multi_head_attention

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_matches_torch(torch, causal):
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


def _mha(torch, rng, embed, heads, kdim=None, vdim=None, bias=True):
    """A torch MultiheadAttention with random weights and ours, transposed to (in, out)."""
    torch.manual_seed(int(rng.integers(2**31)))
    mha = torch.nn.MultiheadAttention(
        embed, heads, bias=bias, batch_first=True, kdim=kdim, vdim=vdim, dtype=torch.float64
    )
    if mha._qkv_same_embed_dim:
        w_q, w_k, w_v = (w.detach().numpy().T for w in mha.in_proj_weight.chunk(3))
    else:
        w_q, w_k, w_v = (
            getattr(mha, f"{n}_proj_weight").detach().numpy().T for n in ("q", "k", "v")
        )
    w_o = mha.out_proj.weight.detach().numpy().T
    biases = {}
    if bias:
        with torch.no_grad():  # torch starts the biases at 0: make them matter
            mha.in_proj_bias.normal_()
            mha.out_proj.bias.normal_()
        b_q, b_k, b_v = (b.detach().numpy() for b in mha.in_proj_bias.chunk(3))
        biases = dict(b_q=b_q, b_k=b_k, b_v=b_v, b_o=mha.out_proj.bias.detach().numpy())
    return mha, (w_q, w_k, w_v, w_o), biases


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("average", [True, False])
def test_multihead_matches_torch_with_biases_padding_and_weights(torch, seed, average):
    rng = np.random.default_rng(seed)
    B, L_q, L_k, embed, heads = 2, int(rng.integers(1, 6)), int(rng.integers(2, 7)), 6, 3
    kdim, vdim = (None, None) if seed % 2 else (4, 5)
    mha, w, biases = _mha(torch, rng, embed, heads, kdim, vdim)
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
    out, weights = multi_head_attention(
        x_q,
        x_k,
        *w,
        heads,
        mask=mask,
        x_v=x_v,
        key_padding_mask=pad,
        return_weights=True,
        average_attn_weights=average,
        **biases,
    )
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(weights, t_w.detach().numpy(), rtol=1e-11, atol=1e-13)
    assert weights.shape == ((B, L_q, L_k) if average else (B, heads, L_q, L_k))


def test_multihead_is_causal_and_float_key_padding_match_torch(torch):
    rng = np.random.default_rng(20)
    mha, w, biases = _mha(torch, rng, 4, 2)
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
    out = multi_head_attention(x, x, *w, 2, key_padding_mask=pad, is_causal=True, **biases)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-12)


def test_annotated_transformer_mask_matches_torch_padding(torch):
    # The (B, 1, 1, L) mask (True = attend) on (B, L, d) inputs is torch's key_padding_mask
    rng = np.random.default_rng(21)
    mha, w, biases = _mha(torch, rng, 4, 2)
    x = rng.standard_normal((2, 4, 4))
    attend = np.ones((2, 1, 1, 4), bool)
    attend[0, ..., 2:] = False
    tx = torch.from_numpy(x)
    t_out, _ = mha(tx, tx, tx, key_padding_mask=torch.from_numpy(~attend[:, 0, 0]))
    out = multi_head_attention(x, x, *w, 2, mask=attend, **biases)
    assert out.shape == (2, 4, 4)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-12)


def test_per_head_masks_match_torch_3d_attn_mask(torch):
    # MultiheadAttention takes per-head masks as (B·h, L_q, L_k), True = blocked; ours are
    # (B, h, L_q, L_k), True = may attend
    rng = np.random.default_rng(24)
    B, h, L_q, L_k = 2, 3, 4, 5
    mha, w, biases = _mha(torch, rng, 6, h)
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
    out, weights = multi_head_attention(
        x_q, x_kv, *w, h, mask=allowed, return_weights=True, average_attn_weights=False, **biases
    )
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(weights, t_w.detach().numpy(), rtol=1e-11, atol=1e-13)
    assert (weights[~allowed] == 0).all()
