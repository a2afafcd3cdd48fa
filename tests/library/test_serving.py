"""Decoding economics: model sizes, bytes and FLOPs per token, Flash-Decoding, PagedAttention."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import hardware, serving
from attention_math.derivations import serving as dserving
from attention_math.derivations.decoding import MODELS
from attention_math.numeric import attention

# published parameter counts (the models' releases and model cards)
PUBLISHED = {
    "GPT-2 small": 124_439_808,
    "GPT-2 XL": 1_557_611_200,
    "Llama 2 7B": 6_738_415_616,
    "Llama 2 70B": 68_976_648_192,
    "Mistral 7B v0.1": 7_241_732_096,
}


def test_sizes_agree_with_the_decoding_table_and_the_published_totals():
    assert [m.name for m in serving.MODEL_SIZES] == [m.name for m in MODELS]
    for size, shape in zip(serving.MODEL_SIZES, MODELS, strict=True):
        for f in ("n_layers", "n_heads", "n_kv_heads", "d_head", "window"):
            assert getattr(size, f) == getattr(shape, f)
        assert serving.total_params(size) == PUBLISHED[size.name]


def test_weights_read_leave_out_the_input_table_only():
    llama = serving.MODEL_SIZES[2]
    missing = serving.total_params(llama) - serving.weights_read_per_token(llama)
    assert missing == llama.vocab * llama.d_model - llama.d_model  # all rows but one
    gpt2 = serving.MODEL_SIZES[0]  # tied: the table is read as the head, positions are not
    missing = serving.total_params(gpt2) - serving.weights_read_per_token(gpt2)
    assert missing == 1024 * gpt2.d_model - gpt2.d_model


def test_kv_bytes_per_token():
    for m in serving.MODEL_SIZES:
        assert serving.kv_bytes_per_token(m, 2) == 4 * m.n_layers * m.n_kv_heads * m.d_head


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(serving.MODEL_SIZES),
    context=st.integers(1, 40_000),
    batch=st.integers(1, 256),
    n_bytes=st.sampled_from([1, 2, 4]),
)
def test_symbolic_counts_equal_numeric_counts(model, context, batch, n_bytes):
    assert dserving.check_against_serving(model, context, batch, n_bytes)


@settings(max_examples=30, deadline=None)
@given(model=st.sampled_from(serving.MODEL_SIZES), context=st.integers(1, 10_000))
def test_gqa_keeps_attention_flops_and_divides_cache_bytes(model, context):
    mha = dataclasses.replace(model, n_kv_heads=model.n_heads)
    a, b = serving.decode_cost(model, context), serving.decode_cost(mha, context)
    attn = lambda c, m: c.flops - 2 * serving.weights_read_per_token(m)  # noqa: E731
    assert attn(a, model) == attn(b, mha)
    assert b.kv_bytes * model.n_kv_heads == a.kv_bytes * model.n_heads


def test_a_sliding_window_caps_the_positions_a_decode_step_reads():
    mistral = next(m for m in serving.MODEL_SIZES if m.window is not None)
    full = dataclasses.replace(mistral, window=None)
    w = mistral.window
    assert w is not None
    at_window, past = serving.decode_cost(mistral, w), serving.decode_cost(mistral, 2 * w)
    assert past == at_window  # the rolling cache holds the window, no more
    assert past.kv_bytes == serving.kv_bytes_per_token(mistral) * w
    assert serving.decode_cost(full, 2 * w).kv_bytes == 2 * past.kv_bytes
    assert serving.decode_cost(mistral, w - 1) == serving.decode_cost(full, w - 1)
    # prefill: position t attends to min(t, w) keys; the cache keeps the last w positions
    p = serving.prefill_cost(mistral, w + 3)
    keys = sum(min(t, w) for t in range(1, w + 4))
    attn = 4 * mistral.n_layers * mistral.n_heads * mistral.d_head * keys
    assert p.flops == (w + 3) * 2 * serving.weights_read_per_token(mistral) + attn
    assert p.kv_bytes == serving.kv_bytes_per_token(mistral) * w


def test_decode_is_memory_bound_and_long_prefill_compute_bound():
    llama = serving.MODEL_SIZES[2]
    c = serving.decode_cost(llama, 4096)
    assert hardware.bound(c.flops, c.n_bytes) == "memory"
    assert 0.9 < c.intensity < 1.1
    p = serving.prefill_cost(llama, 2048)
    assert hardware.bound(p.flops, p.n_bytes) == "compute"


def test_symbolic_claims():
    assert dserving.gqa_bytes_ratio() == (dserving.h / dserving.h_kv, 0)
    assert dserving.attention_intensity() == 2 * dserving.h / (dserving.h_kv * dserving.n_bytes)
    assert (
        sp.limit(dserving.decode_intensity().subs(dserving.b, 1), dserving.t, 0)
        == 2 / dserving.n_bytes
    )


@pytest.mark.parametrize(("n", "cuts"), [(2, (1,)), (4, (2,)), (5, (1, 3)), (5, (1, 2, 3, 4))])
def test_flash_decoding_merge_is_exact(n, cuts):
    assert dserving.merge_is_online_softmax(n, cuts)


def test_flash_decoding_merge_refuses_bad_cuts():
    with pytest.raises(ValueError, match="cuts"):
        dserving.flash_decoding_merge([0, 1, 2], [1, 2, 3], [2, 1])


@pytest.mark.parametrize("n", range(1, 7))
def test_flash_decoding_numeric_crosscheck(n):
    _, num, check = dserving.flash_decoding_numeric(n)
    assert check.passed and num.shape == (1, 2)


@settings(max_examples=40, deadline=None)
@given(
    n_k=st.integers(1, 60),
    n_splits=st.integers(1, 60),
    lq=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    big=st.booleans(),
)
def test_split_kv_attention_equals_attention(n_k, n_splits, lq, seed, big):
    n_splits = min(n_splits, n_k)
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(2, lq, 8)) * (30 if big else 1)  # large scores: the shift matters
    k, v = rng.normal(size=(2, n_k, 8)), rng.normal(size=(2, n_k, 5))
    np.testing.assert_allclose(
        serving.split_kv_attention(q, k, v, n_splits), attention(q, k, v), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("n_splits", [0, 5, 2.0, True])
def test_split_kv_attention_refuses_bad_splits(n_splits):
    with pytest.raises(ValueError, match="n_splits"):
        serving.split_kv_attention(np.ones((1, 2)), np.ones((4, 2)), np.ones((4, 2)), n_splits)


@settings(max_examples=30, deadline=None)
@given(length=st.integers(1, 40), n_block=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_paged_attention_equals_contiguous(length, n_block, seed):
    rng = np.random.default_rng(seed)
    k, v = rng.normal(size=(length, 4)), rng.normal(size=(length, 3))
    n_used = -(-length // n_block)
    pool = n_used + 3
    table = rng.permutation(pool)[:n_used]  # any blocks of the pool, in any order
    pool_k, pool_v = rng.normal(size=(pool, n_block, 4)), rng.normal(size=(pool, n_block, 3))
    for i, blk in enumerate(table):
        part = slice(i * n_block, min((i + 1) * n_block, length))
        pool_k[blk, : part.stop - part.start] = k[part]
        pool_v[blk, : part.stop - part.start] = v[part]
    q = rng.normal(size=(2, 4))
    out = serving.paged_attention(q, pool_k, pool_v, table, length)
    np.testing.assert_array_equal(out, attention(q, k, v))


@pytest.mark.parametrize(
    ("table", "length", "match"),
    [([0, 9], 5, "indices"), ([0], 5, "too few"), ([[0, 1]], 5, "block indices")],
)
def test_paged_attention_refuses_bad_tables(table, length, match):
    with pytest.raises(ValueError, match=match):
        serving.paged_attention(
            np.ones((1, 2)), np.ones((3, 4, 2)), np.ones((3, 4, 2)), table, length
        )


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(0, 500), min_size=1, max_size=30), n_block=st.integers(1, 64))
def test_paged_waste_is_less_than_one_block_per_sequence(lengths, n_block):
    w = serving.paged_waste(lengths, n_block, reserve=500)
    assert 0 <= w["wasted"] < n_block * len(lengths)
    assert w["allocated"] % n_block == 0 and w["used"] == sum(lengths)
    assert w["reserved_wasted"] == 500 * len(lengths) - sum(lengths)


def test_paged_waste_refuses_bad_input():
    with pytest.raises(ValueError, match="lengths"):
        serving.paged_waste([-1], 4)
    with pytest.raises(ValueError, match="reserve"):
        serving.paged_waste([10], 4, reserve=5)
    with pytest.raises(ValueError, match="block_size"):
        serving.paged_waste([10], 0)


@pytest.mark.parametrize("n_block", [1, 2, 16, 33])
def test_mean_block_waste_matches_counting(n_block):
    lengths = np.arange(1, 5 * n_block + 1)  # whole multiples of the block size
    w = serving.paged_waste(lengths, n_block)
    assert sp.Rational(w["wasted"], lengths.size) == dserving.block_waste_mean().subs(
        dserving.n_block, n_block
    )


def test_roofline_helpers():
    assert hardware.ridge() == pytest.approx(312e12 / 2039e9)
    assert hardware.bound(1.0, 1.0) == "memory"
    with pytest.raises(ValueError, match="flops"):
        hardware.roofline_time(-1.0, 0.0)


@pytest.mark.oracle
def test_split_and_paged_match_pytorch_sdpa(torch):
    rng = np.random.default_rng(3)
    q, k, v = (
        rng.normal(size=(4, 1, 16)),
        rng.normal(size=(4, 300, 16)),
        rng.normal(size=(4, 300, 16)),
    )
    ref = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(x) for x in (q, k, v)))
    np.testing.assert_allclose(
        serving.split_kv_attention(q, k, v, 7), ref.numpy(), rtol=1e-12, atol=1e-13
    )
    table = rng.permutation(40)[:19]  # 300 positions in blocks of 16
    pool_k, pool_v = np.zeros((40, 16, 16)), np.zeros((40, 16, 16))
    for i, blk in enumerate(table):
        part = slice(16 * i, min(16 * i + 16, 300))
        pool_k[blk, : part.stop - part.start] = k[0, part]
        pool_v[blk, : part.stop - part.start] = v[0, part]
    out = serving.paged_attention(q[0], pool_k, pool_v, table, 300)
    np.testing.assert_allclose(out, ref[0].numpy(), rtol=1e-12, atol=1e-13)
