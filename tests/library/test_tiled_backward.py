"""The tiled (FlashAttention-2) backward against the untiled one: hand cases, properties
over shapes, block sizes and masks (fully masked rows included), dtypes, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.backward import (
    AttentionGrads,
    attention_backward,
    attention_backward_with_dmask,
)
from attention_math.numeric import attention_with_lse
from attention_math.tiled import _Head
from attention_math.tiled_backward import _forward

EPS64 = np.finfo(np.float64).eps


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def test_lse_and_output_match_the_softmax():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 7, 4))
    head = _Head(q=q, k=k, v=v, scale=np.float64(0.5), mask=None, causal=None, bq=3, bk=2)
    out, lse = _forward(head)  # the backward's own forward
    s = q @ k.T * 0.5
    assert np.allclose(lse, np.log(np.exp(s).sum(axis=1)), rtol=1e-14)
    p = np.exp(s - lse[:, None])
    assert np.allclose(out, p @ v, rtol=1e-13)
    # the public spelling, attention_with_lse, gives the same pair
    public = attention_with_lse(q, k, v, scale=0.5, block_size=(3, 2))
    assert np.allclose(public.out, out, rtol=1e-13) and np.allclose(public.lse, lse, rtol=1e-14)


@settings(max_examples=60, deadline=None)
@given(
    l_q=st.integers(1, 9),
    l_k=st.integers(1, 9),
    d=st.integers(1, 4),
    bq=st.integers(1, 10),
    bk=st.integers(1, 10),
    mask_kind=st.sampled_from(["none", "bool", "additive", "bool-lead"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_tiled_equals_untiled(l_q, l_k, d, bq, bk, mask_kind, seed):
    rng = np.random.default_rng(seed)
    q, d_out = rng.normal(size=(2, l_q, d)), rng.normal(size=(2, l_q, d + 1))
    k, v = rng.normal(size=(2, l_k, d)), rng.normal(size=(2, l_k, d + 1))
    mask = None
    if mask_kind != "none":
        allowed = rng.random((2, l_q, l_k) if mask_kind == "bool-lead" else (l_q, l_k)) < 0.6
        allowed[..., rng.integers(l_q), :] = False  # at least one fully masked row
        mask = allowed if mask_kind != "additive" else np.where(allowed, rng.normal(), -np.inf)
    full = attention_backward(q, k, v, d_out, mask)
    tiled = attention_backward(q, k, v, d_out, mask, block_size=(bq, bk))
    for a, b in zip(tiled, full, strict=True):
        assert a.shape == b.shape
        assert np.allclose(a, b, rtol=0, atol=64 * EPS64 * max(1.0, np.max(np.abs(b))))


def test_fully_masked_row_has_zero_gradient():
    rng = np.random.default_rng(1)
    q, k, v, d_out = rng.normal(size=(4, 6, 3))
    mask = np.ones((6, 6), dtype=bool)
    mask[2] = False
    dq, dk, dv = attention_backward(q, k, v, d_out, mask, block_size=2)
    assert np.array_equal(dq[2], np.zeros(3))
    assert np.isfinite(dk).all() and np.isfinite(dv).all()


def test_broadcast_inputs_are_summed_back():
    rng = np.random.default_rng(2)
    q = rng.normal(size=(3, 5, 2))  # 3 heads share k and v
    k, v = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    d_out = rng.normal(size=(3, 5, 2))
    full = attention_backward(q, k, v, d_out)
    tiled = attention_backward(q, k, v, d_out, block_size=(2, 3))
    for a, b in zip(tiled, full, strict=True):
        assert a.shape == b.shape
        assert _rel(a, b) < 32 * EPS64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_kept_and_error_in_eps(dtype):
    rng = np.random.default_rng(3)
    q, k, v, d_out = (rng.normal(size=(64, 16)).astype(dtype) for _ in range(4))
    eps = np.finfo(dtype).eps
    exact = attention_backward(*(a.astype(np.float64) for a in (q, k, v, d_out)))
    for a, b in zip(attention_backward(q, k, v, d_out, block_size=(16, 8)), exact, strict=True):
        assert a.dtype == dtype
        assert _rel(a.astype(np.float64), b) < 32 * eps


def test_large_scores_match():
    rng = np.random.default_rng(4)
    q, k = 6 * rng.normal(size=(2, 10, 4))
    v, d_out = rng.normal(size=(2, 10, 4))
    full = attention_backward(q, k, v, d_out)
    tiled = attention_backward(q, k, v, d_out, block_size=3)
    for a, b in zip(tiled, full, strict=True):
        assert _rel(a, b) < 1e-12


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        (0, ValueError),
        (-2, ValueError),
        ((4, 0), ValueError),
        ((1, 2, 3), TypeError),
        (1.5, TypeError),
        (True, TypeError),
    ],
)
def test_block_size_rejected(bad, exc):
    x = np.ones((2, 2))
    with pytest.raises(exc, match=r"block_size(\[\d\])? must be a positive integer"):
        attention_backward(x, x, x, x, block_size=bad)


def test_overflowing_scores_raise():
    x = np.full((2, 2), 1e200)
    with pytest.raises(ValueError, match="overflow"):
        attention_backward(x, x, x, np.ones((2, 2)), block_size=1)


@settings(max_examples=40, deadline=None)
@given(
    l_q=st.integers(1, 8),
    l_k=st.integers(1, 8),
    bq=st.integers(1, 9),
    bk=st.integers(1, 9),
    alignment=st.sampled_from(["top-left", "bottom-right"]),
    with_mask=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_tiled_causal_equals_untiled(l_q, l_k, bq, bk, alignment, with_mask, seed):
    rng = np.random.default_rng(seed)
    q, d_out = rng.normal(size=(l_q, 3)), rng.normal(size=(l_q, 2))
    k, v = rng.normal(size=(l_k, 3)), rng.normal(size=(l_k, 2))
    mask = rng.random((l_q, l_k)) < 0.7 if with_mask else None
    kw = {"is_causal": True, "causal_alignment": alignment}
    full = attention_backward(q, k, v, d_out, mask, **kw)
    tiled = attention_backward(q, k, v, d_out, mask, block_size=(bq, bk), **kw)
    for a, b in zip(tiled, full, strict=True):
        assert np.allclose(a, b, rtol=0, atol=64 * EPS64 * max(1.0, np.max(np.abs(b))))


def test_the_mask_gradient_has_no_tiled_path():
    # dmask *is* L_q × L_k, which the tiled backward never forms: no block_size to ask for it
    x = np.ones((2, 2))
    with pytest.raises(TypeError, match="block_size"):
        attention_backward_with_dmask(x, x, x, x, np.zeros((2, 2)), block_size=1)
    tiled = attention_backward(x, x, x, x, np.zeros((2, 2)), block_size=1)
    assert type(tiled) is AttentionGrads
