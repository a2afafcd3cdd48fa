"""Grouped-query attention and the transformer block (its dtypes too), without PyTorch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attention_math.block import (
    BlockConfig,
    BlockParams,
    feed_forward,
    layer_norm,
    param_shapes,
    random_params,
    transformer_block,
)
from attention_math.multihead import AttentionParams, multi_head_attention
from attention_math.numeric import attention, causal_mask

GPT2 = BlockConfig(n_heads=2)


def _weights(rng, d_model, h, g, d_head, d_v):
    return (
        rng.standard_normal((d_model, h * d_head)),
        rng.standard_normal((d_model, g * d_head)),
        rng.standard_normal((d_model, g * d_v)),
        rng.standard_normal((h * d_v, d_model)),
    )


@pytest.mark.parametrize(("h", "g"), [(4, 4), (4, 2), (4, 1), (6, 3)])
def test_gqa_is_mha_with_keys_and_values_tied_within_groups(h, g):
    rng = np.random.default_rng(h * 10 + g)
    d_model, d_head, d_v = 6, 2, 3
    x_q, x_kv = rng.standard_normal((2, 5, d_model)), rng.standard_normal((2, 7, d_model))
    w_q, w_k, w_v, w_o = _weights(rng, d_model, h, g, d_head, d_v)
    group = h // g
    # head i gets the columns of key/value head i // group
    tied_k = np.hstack(
        [w_k[:, (i // group) * d_head : (i // group + 1) * d_head] for i in range(h)]
    )
    tied_v = np.hstack([w_v[:, (i // group) * d_v : (i // group + 1) * d_v] for i in range(h)])
    mask = rng.random((2, 5, 7)) < 0.7
    gqa = AttentionParams(w_q, w_k, w_v, w_o)
    ours = multi_head_attention(x_q, x_kv, gqa, h, n_kv_heads=g, mask=mask)
    mha = multi_head_attention(x_q, x_kv, AttentionParams(w_q, tied_k, tied_v, w_o), h, mask=mask)
    np.testing.assert_allclose(ours, mha, rtol=1e-13, atol=1e-13)


def test_gqa_hand_case_one_kv_head():
    # two query heads of width 1 read the same key/value head
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    w_q = np.array([[1.0, 0.0], [0.0, 1.0]])  # head 0 reads feature 0, head 1 feature 1
    w_k = np.array([[1.0], [0.0]])
    w_v = np.array([[1.0], [2.0]])
    w_o = np.eye(2)
    out = multi_head_attention(x, x, AttentionParams(w_q, w_k, w_v, w_o), 2, n_kv_heads=1)
    k, v = x @ w_k, x @ w_v
    want = np.hstack([attention((x @ w_q)[:, [i]], k, v) for i in range(2)])
    np.testing.assert_allclose(out, want, rtol=1e-15)


@pytest.mark.parametrize(
    ("shapes", "h", "g", "match"),
    [
        (((4, 4), (4, 4), (4, 4), (4, 4)), 4, 3, "n_kv_heads = 3 must divide n_heads = 4"),
        (((4, 4), (4, 4), (4, 4), (4, 4)), 0, 1, "n_heads must be a positive integer"),
        (((4, 4), (4, 4), (4, 4), (4, 4)), 4, -2, "n_kv_heads must be a positive integer"),
        (((4, 4), (4, 3), (4, 2), (4, 4)), 4, 2, r"w_k must have n_kv_heads·d_k = 2·1 = 2"),
        (((4, 6), (4, 2), (4, 2), (4, 4)), 4, 2, "w_q has 6 columns, not divisible by n_heads"),
        (((4, 4), (4, 2), (4, 3), (4, 4)), 4, 2, "w_v has 3 columns, not divisible"),
        (((4, 4), (4, 2), (4, 2), (5, 4)), 4, 2, r"w_o must have n_heads·d_v = 4·1 = 4 rows"),
        (((3, 4), (4, 2), (4, 2), (4, 4)), 4, 2, r"w_q must have 4 rows"),
    ],
)
def test_gqa_bad_input(shapes, h, g, match):
    x = np.ones((3, 4))
    p = AttentionParams(*(np.ones(s) for s in shapes))
    with pytest.raises(ValueError, match=match):
        multi_head_attention(x, x, p, n_heads=h, n_kv_heads=g)


def test_layer_norm_and_ffn_hand_cases():
    out = layer_norm(np.array([[1.0, 2.0, 3.0]]), [2.0, 2.0, 2.0], [1.0, 0.0, -1.0], eps=0.0)
    s = np.sqrt(1.5)  # (−1, 0, 1) / √(2/3)
    np.testing.assert_allclose(out, [[1 - 2 * s, 0.0, -1 + 2 * s]], rtol=1e-15)
    y = feed_forward(
        [[1.0, -1.0]], np.eye(2), [0.0, 0.0], np.ones((2, 1)), [0.5], activation="gelu"
    )
    # gelu(1) + gelu(-1) = 1·Φ(1) − Φ(−1) = Φ(1) − (1 − Φ(1)) = 2Φ(1) − 1 = erf(1/√2)
    from math import erf, sqrt

    np.testing.assert_allclose(y, [[erf(1 / sqrt(2)) + 0.5]], rtol=1e-15)


def test_block_with_zero_sublayers_is_the_identity_pre_ln():
    arrays = random_params(4, 8, GPT2).as_dict()
    for name in ("attn.w_o", "attn.b_o", "w_2", "b_2"):
        arrays[name] = np.zeros_like(arrays[name])  # both sub-layers add nothing to the stream
    p = BlockParams.from_dict(arrays)
    x = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_array_equal(transformer_block(x, p, GPT2), x)
    post_ln = dataclasses.replace(GPT2, norm_first=False)  # post-LN: two LayerNorms
    post = transformer_block(x, p, post_ln)
    twice = layer_norm(layer_norm(x, p.gamma_1, p.beta_1), p.gamma_2, p.beta_2)
    np.testing.assert_allclose(post, twice, rtol=1e-14, atol=1e-15)


def test_block_is_causal_under_a_causal_mask_and_keeps_float32():
    p = random_params(8, 16, GPT2, seed=3)
    x = np.random.default_rng(2).standard_normal((6, 8))
    full = transformer_block(x, p, GPT2, mask=causal_mask(6))
    part = transformer_block(x[:4], p, GPT2, mask=causal_mask(4))
    np.testing.assert_allclose(full[:4], part, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(transformer_block(x, p, GPT2, is_causal=True), full)
    x32 = x.astype(np.float32)
    assert transformer_block(x32, p, GPT2).dtype == np.float32


def test_block_attention_is_multi_head_attention_with_the_same_params():
    """The block's attention sub-layer is ``multi_head_attention`` on ``params.attn``: with
    the feed-forward network zeroed and unit norms, the block adds exactly that."""
    arrays = random_params(8, 16, GPT2, seed=4).as_dict()
    for name in ("w_2", "b_2", "beta_1"):
        arrays[name] = np.zeros_like(arrays[name])
    arrays["gamma_1"] = np.ones(8)
    p = BlockParams.from_dict(arrays)
    x = np.random.default_rng(5).standard_normal((2, 5, 8))
    ln = layer_norm(x, p.gamma_1, p.beta_1)
    want = x + multi_head_attention(ln, ln, p.attn, 2, is_causal=True)
    np.testing.assert_allclose(transformer_block(x, p, GPT2, is_causal=True), want, rtol=1e-13)


def test_block_trace_lists_every_shape():
    trace: list = []
    config = BlockConfig(n_heads=4)
    transformer_block(np.ones((2, 5, 8)), random_params(8, 32, config), config, trace=trace)
    shapes = dict(trace)
    assert shapes["scores per head"] == (2, 4, 5, 5)
    assert shapes["feed-forward hidden"] == (2, 5, 32)
    assert shapes["block output (residual stream)"] == (2, 5, 8)


def test_block_bad_input():
    p = random_params(4, 8, GPT2)
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match="n_heads = 3 must divide d_model = 4"):
        transformer_block(x, p, BlockConfig(n_heads=3))
    no_bias = BlockParams.from_dict({k: v for k, v in p.as_dict().items() if k != "attn.b_q"})
    with pytest.raises(ValueError, match=r"missing \['attn.b_q'\]"):
        transformer_block(x, no_bias, GPT2)
    with pytest.raises(ValueError, match=r"not used \['beta_1', 'beta_2'\]"):
        transformer_block(x, p, dataclasses.replace(GPT2, norm="rms", bias=True))
    bad = dataclasses.replace(p, b_1=np.ones(7))
    with pytest.raises(ValueError, match=r"params.b_1 must have shape \('d_ff',\) = \(8,\)"):
        transformer_block(x, bad, GPT2)
    with pytest.raises(ValueError, match="activation must be one of 'relu', 'gelu'"):
        BlockConfig(n_heads=2, activation="swish")
    with pytest.raises(TypeError, match="params must be a BlockParams"):
        transformer_block(x, p.as_dict(), GPT2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be a BlockConfig"):
        transformer_block(x, p, {"n_heads": 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="attn must be an AttentionParams"):
        BlockParams(attn=p.attn.as_dict(), gamma_1=p.gamma_1, gamma_2=p.gamma_2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rope_base must be finite and > 1"):
        BlockConfig(n_heads=2, rope_base=1.0)


def test_param_shapes_are_the_arrays_random_params_makes():
    for config in (
        GPT2,
        BlockConfig(n_heads=2, norm="rms"),
        BlockConfig(n_heads=4, n_kv_heads=2, norm="rms", ffn="swiglu", qk_norm=True),
    ):
        p = random_params(8, 12, config)
        sizes = {"d_model": 8, "d_ff": 12, "d_kv": config.kv_heads * 8 // config.n_heads}
        sizes["d_head"] = 8 // config.n_heads
        want = {n: tuple(sizes[d] for d in dims) for n, dims in param_shapes(config).items()}
        assert {n: a.shape for n, a in p.as_dict().items()} == want
        assert list(BlockParams.from_dict(p.as_dict()).as_dict()) == list(want)


def test_head_counts_that_do_not_divide_are_refused_by_name():
    """The derivation helpers refuse what the library refuses, instead of cutting heads short."""
    import sympy as sp

    from attention_math.derivations import gqa
    from attention_math.derivations.multihead import multi_head_loop

    with pytest.raises(ValueError, match="n_kv_heads = 2 must divide n_heads = 3"):
        gqa.tied_columns(sp.Matrix([[1, 2]]), 3, 2)
    with pytest.raises(ValueError, match="must divide"):
        gqa.tying_holds(3, 2)
    with pytest.raises(ValueError, match="do not split into 2"):
        gqa.tied_columns(sp.Matrix([[1, 2, 3]]), 4, 2)
    z = np.zeros
    p = AttentionParams(z((4, 5)), z((4, 5)), z((4, 6)), z((6, 5)))
    with pytest.raises(ValueError, match="w_q has 5 columns, not divisible by n_heads = 2"):
        multi_head_loop(z((3, 4)), z((2, 4)), p, 2)


def test_transformer_block_returns_the_floating_dtype_of_x() -> None:
    p = random_params(4, 6, GPT2)
    x = np.arange(12).reshape(3, 4) % 3
    assert transformer_block(x, p, GPT2).dtype == np.float64
    assert transformer_block(x.astype(np.float32), p, GPT2).dtype == np.float32
    ml_dtypes = pytest.importorskip("ml_dtypes")
    y = transformer_block(x.astype(ml_dtypes.bfloat16), p, GPT2)
    assert y.dtype == ml_dtypes.bfloat16
