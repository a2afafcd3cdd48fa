"""The conventions a PyTorch, d2l or Hugging Face user expects (issue 19), without PyTorch.

The PyTorch comparisons are in ``test_oracle_api_conventions.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric
from attention_math.derivations import masks
from attention_math.numeric import (
    attention,
    attention_backward,
    causal_mask,
    log_softmax,
    multi_head_attention,
    padding_mask,
    softmax,
)

# ---- causal alignment ------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(n_q=st.integers(0, 9), n_k=st.integers(0, 9))
def test_causal_mask_alignments_by_definition(n_q, n_k):
    i, j = np.ogrid[:n_q, :n_k]
    np.testing.assert_array_equal(causal_mask(n_q, n_k), j <= i)
    np.testing.assert_array_equal(
        causal_mask(n_q, n_k, causal_alignment="bottom-right"), j <= i + (n_k - n_q)
    )
    # bottom-right is top-left seen from the end: flip both axes and transpose
    br = causal_mask(n_q, n_k, causal_alignment="bottom-right")
    np.testing.assert_array_equal(br[::-1, ::-1], causal_mask(n_k, n_q).T)
    if n_q == n_k:
        np.testing.assert_array_equal(br, causal_mask(n_q))


def test_causal_mask_bottom_right_last_query_sees_everything():
    m = causal_mask(2, 5, causal_alignment="bottom-right")
    assert m[-1].all() and m[0].sum() == 4


def test_causal_mask_rejects_unknown_alignment():
    with pytest.raises(ValueError, match=r'"top-left" or "bottom-right".*lower-right'):
        causal_mask(2, 3, causal_alignment="lower-right")


@pytest.mark.parametrize("block", [None, 1, 2, (3, 2), (2, 5)])
@pytest.mark.parametrize(("n_q", "n_k"), [(3, 7), (7, 3), (5, 5), (1, 6)])
def test_is_causal_bottom_right_equals_its_mask(block, n_q, n_k):
    rng = np.random.default_rng(n_q * 10 + n_k)
    q = rng.standard_normal((2, n_q, 4))
    k = rng.standard_normal((2, n_k, 4))
    v = rng.standard_normal((2, n_k, 3))
    want = attention(q, k, v, causal_mask(n_q, n_k, causal_alignment="bottom-right"))
    got = attention(q, k, v, is_causal=True, causal_alignment="bottom-right", block_size=block)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    if n_q > n_k:  # the first n_q − n_k queries see no key: zero rows
        assert (got[:, : n_q - n_k] == 0).all()


def test_attention_rejects_unknown_alignment_even_when_not_causal():
    with pytest.raises(ValueError, match='causal_alignment must be "top-left" or "bottom-right"'):
        attention(np.eye(2), np.eye(2), np.eye(2), causal_alignment="bottom")


# ---- log-sum-exp -------------------------------------------------------------------------


@pytest.mark.parametrize("block", [None, 2, (1, 3)])
def test_return_lse_is_the_log_of_the_softmax_denominator(block):
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((3, 2, 5, 4))
    mask = rng.random((2, 5, 5)) < 0.7
    mask[1, 2] = False  # a fully masked row
    out, lse = attention(q, k, v, mask, return_lse=True, block_size=block)
    assert lse.shape == (2, 5)
    s = np.where(mask, q @ np.swapaxes(k, -1, -2) / 2.0, -np.inf)
    with np.errstate(divide="ignore"):
        want = np.log(np.exp(s).sum(-1))
    np.testing.assert_allclose(lse, want, rtol=1e-13)
    assert lse[1, 2] == -np.inf
    np.testing.assert_array_equal(out, attention(q, k, v, mask, block_size=block))
    # what FlashAttention does with it: the weights from the scores and lse alone
    _, w = attention(q, k, v, mask, return_weights=True)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - lse[..., None])
    np.testing.assert_allclose(np.nan_to_num(p), w, atol=1e-15)


def test_lse_survives_scores_that_overflow_exp():
    q = np.array([[30.0]])
    k = np.array([[30.0], [-30.0]])
    _, lse = attention(q, k, np.ones((2, 1)), scale=1.0, return_lse=True)
    assert lse[0] == pytest.approx(900.0)  # exp(900) overflows float64; lse does not
    _, lse32 = attention(
        q.astype(np.float32),
        k.astype(np.float32),
        np.ones((2, 1), np.float32),
        scale=1.0,
        return_lse=True,
        block_size=1,
    )
    assert lse32.dtype == np.float32 and lse32[0] == pytest.approx(900.0)


def test_weights_and_lse_together_in_that_order():
    _out, w, lse = attention(np.eye(2), np.eye(2), np.eye(2), return_weights=True, return_lse=True)
    assert w.shape == (2, 2) and lse.shape == (2,)


# ---- zero-length sequences ---------------------------------------------------------------


@pytest.mark.parametrize("block", [None, 2])
def test_zero_length_sequences_give_the_empty_result(block):
    q, k, v = np.ones((2, 0, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 5))
    assert attention(q, k, v, block_size=block).shape == (2, 0, 5)
    out, lse = attention(
        np.ones((2, 3, 4)),
        np.ones((2, 0, 4)),
        np.ones((2, 0, 5)),
        return_lse=True,
        block_size=block,
        is_causal=True,
    )
    assert out.shape == (2, 3, 5) and (out == 0).all()  # queries with no keys: zeros
    assert (lse == -np.inf).all()
    assert attention(np.ones((0, 2, 4)), k[:1], v[:1], block_size=block).shape == (0, 2, 5)
    _, w = attention(np.ones((3, 4)), np.ones((0, 4)), np.ones((0, 5)), return_weights=True)
    assert w.shape == (3, 0)


def test_zero_length_backward():
    dq, dk, dv = attention_backward(
        np.ones((3, 2)), np.ones((0, 2)), np.ones((0, 4)), np.ones((3, 4))
    )
    assert dq.shape == (3, 2) and (dq == 0).all() and dk.shape == (0, 2) and dv.shape == (0, 4)


def test_d_k_zero_is_still_refused():
    with pytest.raises(ValueError, match="d_k = 0"):
        attention(np.ones((2, 0)), np.ones((2, 0)), np.ones((2, 3)))


# ---- dtypes ------------------------------------------------------------------------------


def test_mixed_float16_float32_promotes_as_numpy():
    rng = np.random.default_rng(2)
    q = rng.standard_normal((4, 3)).astype(np.float16)
    k, v = (rng.standard_normal((4, 3)).astype(np.float32) for _ in range(2))
    out = attention(q, k, v)
    assert out.dtype == np.result_type(np.float16, np.float32) == np.float32
    np.testing.assert_allclose(out, attention(q.astype(np.float32), k, v), rtol=1e-6)
    grads = attention_backward(q, k, v, np.ones((4, 3), np.float16))
    assert all(g.dtype == np.float32 for g in grads)


def test_bfloat16_is_computed_in_float32_and_returned_as_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 5, 4)).astype(bf16) for _ in range(3))
    out, lse = attention(q, k, v, is_causal=True, return_lse=True)
    assert out.dtype == bf16 and lse.dtype == bf16
    want = attention(*(a.astype(np.float32) for a in (q, k, v)), is_causal=True)
    np.testing.assert_array_equal(out, want.astype(bf16))  # float32 result, rounded once
    tiled = attention(q, k, v, is_causal=True, block_size=2)
    assert tiled.dtype == bf16
    np.testing.assert_allclose(tiled.astype(np.float32), want, atol=2e-2)
    assert attention(q, k.astype(np.float32), v).dtype == np.float32  # mixed: float32
    grads = attention_backward(q, k, v, np.ones((2, 5, 4), bf16))
    assert all(g.dtype == bf16 for g in grads)
    assert softmax(np.array([0, 1], bf16)).dtype == bf16
    with pytest.raises(ValueError, match="NaN"):
        attention(np.array([[np.nan]], bf16), k[0], v[0])


# ---- padding masks from valid_lens -------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    lens=st.lists(st.integers(0, 6), min_size=1, max_size=4),
    n_k=st.integers(6, 8),
    per_query=st.booleans(),
)
def test_padding_mask_is_arange_below_length(lens, n_k, per_query):
    valid = np.array(lens)
    if per_query:
        valid = np.stack([valid, valid[::-1]], axis=1)  # (B, L_q = 2)
    m = padding_mask(valid, n_k)
    assert m.dtype == np.bool_
    assert m.shape == ((len(lens), 2, n_k) if per_query else (len(lens), 1, n_k))
    np.testing.assert_array_equal(m.sum(-1), valid if per_query else valid[:, None])
    # True = may attend: a prefix of True, the rest padding
    assert (np.diff(m.astype(int), axis=-1) <= 0).all()


def test_padding_mask_matches_d2l_masked_softmax():
    # d2l: masked_softmax(X, valid_lens) sets X[j ≥ valid_len] = −1e6 before the softmax
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((3, 2, 4, 3))
    valid_lens = np.array([[1, 2, 3, 4], [4, 4, 2, 1]])  # (B, L_q)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(3)
    d2l = np.where(np.arange(4) < valid_lens[..., None], scores, -1e6)
    want = softmax(d2l) @ v
    got = attention(q, k, v, padding_mask(valid_lens, 4))
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_padding_mask_is_the_one_in_derivations_masks():
    assert masks.padding_mask is padding_mask


@pytest.mark.parametrize(
    ("lens", "n_k", "match"),
    [
        ([4], 3, r"valid_lens must lie in \[0, n_k = 3\]"),
        ([-1], 3, "valid_lens"),
        ([1.5], 3, "valid_lens must be integers"),
        ([[[1]]], 3, r"shape \(B,\) or \(B, L_q\)"),
        ([1], -1, "n_k must be a non-negative integer"),
    ],
)
def test_padding_mask_errors(lens, n_k, match):
    with pytest.raises(ValueError, match=match):
        padding_mask(lens, n_k)


# ---- softmax and log_softmax -------------------------------------------------------------


def test_log_softmax_keeps_what_softmax_underflows():
    np.testing.assert_array_equal(log_softmax([0.0, -1000.0]), [0.0, -1000.0])
    with np.errstate(divide="ignore"):
        assert np.log(softmax([0.0, -1000.0]))[1] == -np.inf  # the naive way loses it


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-50, 50), min_size=1, max_size=6),
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_log_softmax_is_log_of_softmax(xs, blocked):
    x = np.array(xs)
    x[np.array(blocked[: len(xs)])] = -np.inf
    got = log_softmax(x)
    with np.errstate(divide="ignore"):
        want = np.log(softmax(x))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_log_softmax_fully_masked_row_and_axis():
    np.testing.assert_array_equal(log_softmax([-np.inf, -np.inf]), [-np.inf, -np.inf])
    x = np.array([[0.0, 1.0], [2.0, 2.0]])
    np.testing.assert_allclose(np.exp(log_softmax(x, axis=0)), softmax(x, axis=0))


@pytest.mark.parametrize("f", [softmax, log_softmax])
def test_empty_softmax_has_the_package_message(f):
    with pytest.raises(ValueError, match=r"no entries along axis -1 \(shape \(0,\)\)"):
        f([])
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        f([[1.0]], axis=2)
    assert f(np.ones((0, 3))).shape == (0, 3)  # an empty batch of rows is fine


# ---- scale ---------------------------------------------------------------------------------


def test_negative_scale_is_refused_and_documented():
    with pytest.raises(ValueError, match="scale must be finite and ≥ 0"):
        attention(np.eye(2), np.eye(2), np.eye(2), scale=-1.0)
    assert "negative scale" in numeric.attention.__doc__


# ---- masks may not enlarge the output ------------------------------------------------------


def test_per_head_masks_and_the_annotated_transformer_mask_in_multi_head():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4))  # (B, L, d_model)
    w = [rng.standard_normal((4, 4)) for _ in range(4)]
    lens = np.array([3, 2])
    hf = padding_mask(lens, 3)[:, None]  # (B, 1, 1, L): The Annotated Transformer, HF
    out = multi_head_attention(x, x, *w, 2, mask=hf)
    assert out.shape == (2, 3, 4)  # not (2, 2, 3, 4)
    np.testing.assert_allclose(out, multi_head_attention(x, x, *w, 2, mask=padding_mask(lens, 3)))
    per_head = rng.random((2, 2, 3, 3)) < 0.7  # (B, h, L_q, L_k)
    per_head[..., 0] = True
    _, wts = multi_head_attention(
        x, x, *w, 2, mask=per_head, return_weights=True, average_attn_weights=False
    )
    assert wts.shape == (2, 2, 3, 3) and (wts[~per_head] == 0).all()
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 1, 1, 3\)"):
        multi_head_attention(x, x, *w, 2, mask=hf[:, None])  # one axis too many


# ---- attention_backward: is_causal and the gradient of a bias ------------------------------


@pytest.mark.parametrize("alignment", ["top-left", "bottom-right"])
def test_backward_is_causal_equals_the_causal_mask(alignment):
    rng = np.random.default_rng(12)
    q, k, v = rng.standard_normal((3, 5, 4))
    d_out = rng.standard_normal((3, 4))
    got = attention_backward(q[:3], k, v, d_out, is_causal=True, causal_alignment=alignment)
    want = attention_backward(q[:3], k, v, d_out, causal_mask(3, 5, causal_alignment=alignment))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_bias_gradient_matches_finite_differences():
    rng = np.random.default_rng(13)
    q, k, v = rng.standard_normal((3, 2, 4, 3))
    bias = rng.standard_normal((1, 4, 4))  # shared by the batch: its gradient is summed
    bias[0, 0, 3] = -np.inf  # a blocked entry gets gradient 0
    d_out = rng.standard_normal((2, 4, 3))
    *_, dbias = attention_backward(q, k, v, d_out, bias, return_dmask=True)
    assert dbias.shape == (1, 4, 4) and dbias[0, 0, 3] == 0
    eps = 1e-6
    for idx in [(0, 0, 0), (0, 1, 2), (0, 3, 3)]:
        bumped = [bias.copy(), bias.copy()]
        bumped[0][idx] += eps
        bumped[1][idx] -= eps
        loss = [np.sum(attention(q, k, v, b) * d_out) for b in bumped]
        assert dbias[idx] == pytest.approx((loss[0] - loss[1]) / (2 * eps), rel=1e-6, abs=1e-9)


def test_bias_gradient_needs_a_float_mask():
    with pytest.raises(TypeError, match=r"additive float mask.*boolean"):
        attention_backward(
            np.eye(2), np.eye(2), np.eye(2), np.eye(2), np.eye(2, dtype=bool), return_dmask=True
        )
    with pytest.raises(TypeError, match="no mask"):
        attention_backward(np.eye(2), np.eye(2), np.eye(2), np.eye(2), return_dmask=True)


# ---- multi_head_attention: PyTorch's arguments, checked without PyTorch --------------------


def _mh_case(seed, d_model=4, d_kv=3, d_vin=5):
    rng = np.random.default_rng(seed)
    x_q = rng.standard_normal((2, 3, d_model))
    x_k = rng.standard_normal((2, 4, d_kv))
    x_v = rng.standard_normal((2, 4, d_vin))
    w = (
        rng.standard_normal((d_model, 4)),
        rng.standard_normal((d_kv, 4)),
        rng.standard_normal((d_vin, 6)),
        rng.standard_normal((6, 2)),
    )
    b = dict(
        b_q=rng.standard_normal(4),
        b_k=rng.standard_normal(4),
        b_v=rng.standard_normal(6),
        b_o=rng.standard_normal(2),
    )
    return x_q, x_k, x_v, w, b


def test_multihead_biases_and_widths_by_hand():
    x_q, x_k, x_v, (w_q, w_k, w_v, w_o), b = _mh_case(14)
    out, w = multi_head_attention(
        x_q,
        x_k,
        w_q,
        w_k,
        w_v,
        w_o,
        2,
        x_v=x_v,
        return_weights=True,
        average_attn_weights=False,
        **b,
    )
    q, k, v = x_q @ w_q + b["b_q"], x_k @ w_k + b["b_k"], x_v @ w_v + b["b_v"]
    heads = [
        attention(
            q[..., 2 * i : 2 * i + 2],
            k[..., 2 * i : 2 * i + 2],
            v[..., 3 * i : 3 * i + 3],
            return_weights=True,
        )
        for i in range(2)
    ]
    want = np.concatenate([h[0] for h in heads], axis=-1) @ w_o + b["b_o"]
    np.testing.assert_allclose(out, want, rtol=1e-12)
    np.testing.assert_allclose(w, np.stack([h[1] for h in heads], axis=1), rtol=1e-12)
    _, avg = multi_head_attention(
        x_q, x_k, w_q, w_k, w_v, w_o, 2, x_v=x_v, return_weights=True, **b
    )
    np.testing.assert_allclose(avg, w.mean(axis=1))


def test_key_padding_mask_is_true_for_padding_and_combines_with_mask():
    x_q, x_k, x_v, w, b = _mh_case(15)
    pad = np.array([[False, False, False, True], [False, True, True, True]])
    blocked_first = np.ones((3, 4), bool)
    blocked_first[:, 0] = False
    got = multi_head_attention(
        x_q, x_k, *w, 2, mask=blocked_first, x_v=x_v, key_padding_mask=pad, **b
    )
    want = multi_head_attention(
        x_q, x_k, *w, 2, mask=blocked_first & ~pad[:, None, :], x_v=x_v, **b
    )
    np.testing.assert_array_equal(got, want)
    additive = np.where(pad, -np.inf, 0.0)
    got_float = multi_head_attention(
        x_q, x_k, *w, 2, mask=blocked_first, x_v=x_v, key_padding_mask=additive, **b
    )
    np.testing.assert_allclose(got_float, want, rtol=1e-14)
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(\.\.\., L_k\)"):
        multi_head_attention(x_q, x_k, *w, 2, x_v=x_v, key_padding_mask=pad[0], **b)


def test_multihead_is_causal_equals_its_mask():
    x_q, x_k, x_v, w, b = _mh_case(16)
    for alignment in ("top-left", "bottom-right"):
        got = multi_head_attention(
            x_q, x_k, *w, 2, x_v=x_v, is_causal=True, causal_alignment=alignment, **b
        )
        want = multi_head_attention(
            x_q, x_k, *w, 2, x_v=x_v, mask=causal_mask(3, 4, causal_alignment=alignment), **b
        )
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"b_q": np.ones(3)}, r"b_q must have shape \(4,\)"),
        ({"b_o": np.ones((1, 2))}, r"b_o must have shape \(2,\)"),
        ({"x_v": np.ones((2, 5, 5))}, "x_v and x_kv must share L_k"),
        (
            {"key_padding_mask": np.zeros((3, 4), bool)},
            r"key_padding_mask of shape \(3, 4\) does not fit the inputs' batch shape \(2,\)",
        ),
        ({"key_padding_mask": np.zeros((2, 5), bool)}, "has 5 keys on its last axis.*L_k = 4"),
        ({"mask": np.ones((2, 3, 3, 4), bool)}, "with 3 heads on axis -3; give n_heads = 2 or 1"),
    ],
)
def test_multihead_new_argument_errors(change, match):
    x_q, x_k, x_v, w, b = _mh_case(17)
    kw = {"x_v": x_v, **b, **change}
    with pytest.raises(ValueError, match=match):
        multi_head_attention(x_q, x_k, *w, 2, **kw)


# ---- hypothesis: the three ways of giving multi_head_attention a mask agree ---------------


@settings(max_examples=40, deadline=None)
@given(
    lens=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    n_q=st.integers(1, 4),
    n_heads=st.sampled_from([1, 2]),
    seed=st.integers(0, 2**16),
)
def test_key_padding_mask_per_head_mask_and_shared_mask_agree(lens, n_q, n_heads, seed):
    rng = np.random.default_rng(seed)
    B, n_k = len(lens), 5
    x_q, x_kv = rng.standard_normal((B, n_q, 4)), rng.standard_normal((B, n_k, 4))
    w = [rng.standard_normal((4, 4)) for _ in range(4)]
    attend = padding_mask(lens, n_k)  # (B, 1, L_k), True = may attend
    pad = ~attend[:, 0]  # (B, L_k): PyTorch's key_padding_mask, True = padding
    by_kpm = multi_head_attention(x_q, x_kv, *w, n_heads, key_padding_mask=pad)
    shared = multi_head_attention(x_q, x_kv, *w, n_heads, mask=attend)  # (B, 1, L_k)
    annotated = multi_head_attention(x_q, x_kv, *w, n_heads, mask=attend[:, None])  # (B,1,1,L_k)
    per_head = multi_head_attention(
        x_q, x_kv, *w, n_heads, mask=np.repeat(attend[:, None], n_heads, axis=1)
    )  # (B, h, 1, L_k)
    assert by_kpm.shape == (B, n_q, 4)
    for other in (shared, annotated, per_head):
        np.testing.assert_allclose(other, by_kpm, rtol=1e-12, atol=1e-14)
    # and each sequence equals itself cut to its valid keys, with no mask at all
    for b, n in enumerate(lens):
        alone = multi_head_attention(x_q[b], x_kv[b, :n], *w, n_heads)
        np.testing.assert_allclose(by_kpm[b], alone, rtol=1e-10, atol=1e-12)


def test_multihead_keeps_bfloat16_and_promotes_mixed_inputs():
    ml_dtypes = pytest.importorskip("ml_dtypes")  # in the test group
    bf16 = np.dtype(ml_dtypes.bfloat16)
    x_q, x_k, x_v, w, b = _mh_case(18)
    args = [a.astype(bf16) for a in (x_q, x_k, *w)]
    bias = {n: a.astype(bf16) for n, a in b.items()}
    out, wts = multi_head_attention(*args, 2, x_v=x_v.astype(bf16), return_weights=True, **bias)
    assert out.dtype == wts.dtype == bf16
    exact, exact_w = multi_head_attention(
        *(a.astype(np.float64) for a in args),
        2,
        x_v=x_v.astype(bf16).astype(np.float64),
        return_weights=True,
        **{n: a.astype(np.float64) for n, a in bias.items()},
    )
    eps = 2.0**-7  # bfloat16: 8 significant bits
    scale = np.abs(exact).max()
    assert np.abs(out.astype(np.float64) - exact).max() <= 2 * eps * scale
    assert np.abs(wts.astype(np.float64) - exact_w).max() <= eps
    # one float32 weight matrix promotes the whole product to float32, as NumPy would
    mixed = multi_head_attention(
        args[0], args[1], w[0].astype(np.float32), *args[3:], 2, x_v=x_v.astype(bf16)
    )
    assert mixed.dtype == np.float32
