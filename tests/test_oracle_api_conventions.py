"""PyTorch as an oracle for the conventions of issue 19: MultiheadAttention with biases,
``key_padding_mask``, ``kdim``/``vdim`` and ``need_weights``; SDPA with
``causal_lower_right``; ``log_softmax``; the (B, 1, 1, L) mask.

PyTorch is a test-time dependency only; without it these tests skip locally and fail in CI.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.numeric import (
    attention,
    attention_backward,
    causal_mask,
    log_softmax,
    multi_head_attention,
)

from .conftest import require_torch

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def torch():
    return require_torch()


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
        out, lse = attention(q, k, v, is_causal=True, return_lse=True, block_size=block)
        np.testing.assert_allclose(out, t_out.numpy(), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(lse, t_lse.numpy(), rtol=1e-12)


def test_log_softmax_matches_torch(torch):
    x = np.array([[0.0, -1000.0, 3.0], [-np.inf, 1.0, 2.0]])
    want = torch.log_softmax(torch.from_numpy(x), dim=-1).numpy()
    np.testing.assert_allclose(log_softmax(x), want, rtol=1e-15)


@pytest.mark.parametrize("alignment", ["top-left", "bottom-right"])
def test_backward_is_causal_and_bias_gradient_match_autograd(torch, alignment):
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    F = torch.nn.functional
    rng = np.random.default_rng(23)
    q = rng.standard_normal((2, 2, 3, 4))
    k = rng.standard_normal((2, 2, 5, 4))
    v = rng.standard_normal((2, 2, 5, 3))
    bias = rng.standard_normal((2, 1, 3, 5))  # a learned bias shared by the heads (ALiBi, T5)
    d_out = rng.standard_normal((2, 2, 3, 3))
    t = [torch.tensor(a, requires_grad=True) for a in (q, k, v, bias)]
    causal = (causal_upper_left if alignment == "top-left" else causal_lower_right)(3, 5)
    allowed = causal._materialize(device="cpu")
    t_mask = t[3].masked_fill(~allowed, float("-inf"))
    F.scaled_dot_product_attention(t[0], t[1], t[2], attn_mask=t_mask).backward(
        torch.from_numpy(d_out)
    )
    grads = attention_backward(
        q, k, v, d_out, bias, is_causal=True, causal_alignment=alignment, return_dmask=True
    )
    for ours, theirs in zip(grads, t, strict=True):
        np.testing.assert_allclose(ours, theirs.grad.numpy(), rtol=1e-11, atol=1e-12)


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


def test_page_rows_run_both_sides_and_agree(torch):
    from attention_site.pages.conventions import rows

    for r in rows(torch):
        assert "PyTorch is not installed" not in r.found, r
    found = {r.topic: r.found for r in rows(torch)}
    assert "SDPA raises for mixed dtypes and runs with `scale=-1`" in found["dtypes and `scale`"]
    assert "`MultiheadAttention`: weights [nan, nan, nan]" in found["fully masked row"]
    assert "SDPA: output row [0.0, 0.0, 0.0, 0.0]" in found["fully masked row"]
    topics = ("boolean mask", "`kdim`, `vdim`", "backward", "log-sum-exp", "sequence-first inputs")
    for topic in (*topics, "attention weights", "`(B, 1, 1, L)` masks"):
        assert "agree (max abs difference" in found[topic], topic
    assert (
        "SDPA raises for `attn_mask` with `is_causal=True` when the mask requires grad and for "
        "3-D inputs; its fused CPU kernel (4-D, a fixed mask) applies both" in found["backward"]
    )
    assert "`np.tile` instead would be off by up to" in found["`enable_gqa`"]
    assert found["`enable_gqa`"].startswith("agree (max abs difference")
    assert "`dropout_p=0.5` under `torch.no_grad()` differs by up to" in found["dropout"]
    assert "in `eval()` agree (max abs difference" in found["dropout"]
    assert "SDPA on `(B, L, d)` inputs raises too" in found["`(B, 1, 1, L)` masks"]
    assert "averaged agree" in found["attention weights"]
    assert "per head agree" in found["attention weights"]
    assert "on `x` as it is, another result" in found["sequence-first inputs"]


def test_the_rows_claims_about_torch_hold(torch):
    # what the "backward" and "sequence-first inputs" rows say of PyTorch, checked directly
    F = torch.nn.functional
    q = torch.zeros(1, 2, 3, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=torch.zeros(2, 2), is_causal=True)
    assert torch.nn.MultiheadAttention(4, 2).batch_first is False


def test_recorded_pytorch_side_matches_a_fresh_run(torch):
    """benchmarks/results/conventions_oracle.json is what a build without PyTorch shows as
    PyTorch's side: under CI (where PyTorch is installed) it must still be what PyTorch finds;
    rerun benchmarks/conventions_oracle.py when this fails."""
    import json
    import re
    from pathlib import Path

    from attention_site.pages.conventions import record

    path = Path(__file__).resolve().parents[1] / "benchmarks/results/conventions_oracle.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    fresh = record(torch)

    def shape(found: str) -> str:  # rounding-level numbers may move between machines
        return re.sub(r"\d\.\de[-+]\d\d", "N", found)

    assert [r["topic"] for r in saved["rows"]] == [r["topic"] for r in fresh["rows"]]
    for old, new in zip(saved["rows"], fresh["rows"], strict=True):
        assert shape(old["found"]) == shape(new["found"]), old["topic"]
