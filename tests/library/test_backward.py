"""attention_backward against finite differences, exact identities, broadcasting and masks
(``is_causal`` in both alignments), and zero-length keys."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.backward import attention_backward
from attention_math.gradcheck import central_difference, relative_error
from attention_math.numeric import attention, causal_mask

EPS = np.finfo(np.float64).eps


def _case(seed: int, lead=(2,), l_q=3, l_k=4, d_k=3, d_v=2):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(*lead, l_q, d_k))
    k = rng.normal(size=(*lead, l_k, d_k))
    v = rng.normal(size=(*lead, l_k, d_v))
    d_out = rng.normal(size=(*lead, l_q, d_v))
    return q, k, v, d_out


def _loss_of(which: int, args: list, d_out, mask=None, scale=None):
    """ℓ = Σ d_out ∘ attention(...) as a function of argument ``which`` (0 = q, 1 = k, 2 = v)."""

    def loss(x):
        a = list(args)
        a[which] = x
        return float(np.sum(d_out * attention(*a, mask=mask, scale=scale)))

    return loss


CASES = {
    "batched self-attention": (_case(1), None),
    "cross-attention L_q ≠ L_k": (_case(2, lead=(), l_q=2, l_k=5), None),
    "boolean mask": (_case(3), np.random.default_rng(3).random((3, 4)) < 0.7),
    "additive mask": (_case(4), np.random.default_rng(4).normal(size=(2, 3, 4))),
}


@pytest.mark.parametrize("name", CASES)
def test_finite_differences_within_measured_truncation_bound(name):
    (q, k, v, d_out), mask = CASES[name]
    args = [q, k, v]
    grads = attention_backward(q, k, v, d_out, mask)
    h0, h = 1e-2, 1e-5
    rounding = 64 * EPS * np.sum(np.abs(d_out * attention(q, k, v, mask)))  # ε-level error of ℓ
    for which, g in enumerate(grads):
        loss = _loss_of(which, args, d_out, mask)
        if which == 2:  # ℓ is linear in v: no truncation error, only rounding, at any step
            for step in (h0, h):
                err = relative_error(central_difference(loss, v, step), g)
                assert err <= rounding / step / np.max(np.abs(g)), (step, err)
            continue
        err0 = relative_error(central_difference(loss, args[which], h0), g)
        err_half = relative_error(central_difference(loss, args[which], h0 / 2), g)
        # Truncation error is c·h² + O(h⁴): halving h divides it by 4. A wrong gradient would
        # leave a floor that does not shrink.
        assert 3.5 < err0 / err_half < 4.5, (which, err0, err_half)
        # The bound measured at h0, carried to h by h², plus the rounding term ε·Σ|dO∘O|/h.
        bound = 1.5 * err0 * (h / h0) ** 2 + rounding / h / np.max(np.abs(g))
        err = relative_error(central_difference(loss, args[which], h), g)
        assert err <= bound, (which, err, bound)
        assert err < 1e-8


def test_fully_masked_row_gives_zero_gradients_and_no_nan():
    q, k, v, d_out = _case(5, lead=())
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False  # query 1 sees nothing
    dq, dk, dv = attention_backward(q, k, v, d_out, mask)
    assert np.all(dq[1] == 0)
    assert np.isfinite(dq).all() and np.isfinite(dk).all() and np.isfinite(dv).all()
    # Query 1 contributes nothing: the gradients equal those with its d_out row zeroed.
    d_out0 = d_out.copy()
    d_out0[1] = 0
    for a, b in zip(attention_backward(q, k, v, d_out0, mask), (dq, dk, dv), strict=True):
        np.testing.assert_array_equal(a, b)


def test_masked_key_gets_zero_gradient():
    q, k, v, d_out = _case(6, lead=())
    mask = np.ones((3, 4), dtype=bool)
    mask[:, 2] = False  # no query sees key 2
    _, dk, dv = attention_backward(q, k, v, d_out, mask)
    assert np.all(dk[2] == 0) and np.all(dv[2] == 0)
    assert np.all(dk[[0, 1, 3]] != 0)


def test_boolean_and_additive_masks_agree():
    q, k, v, d_out = _case(7)
    mask = np.random.default_rng(7).random((3, 4)) < 0.5
    additive = np.where(mask, 0.0, -np.inf)
    for a, b in zip(
        attention_backward(q, k, v, d_out, mask),
        attention_backward(q, k, v, d_out, additive),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)


def test_broadcast_inputs_get_summed_gradients():
    rng = np.random.default_rng(8)
    q = rng.normal(size=(2, 3, 4, 5))
    k = rng.normal(size=(1, 3, 6, 5))  # shared across the first batch axis
    v = rng.normal(size=(6, 2))  # no batch axes at all
    mask = rng.random((2, 1, 4, 6)) < 0.8
    d_out = rng.normal(size=(2, 3, 4, 2))
    dq, dk, dv = attention_backward(q, k, v, d_out, mask)
    assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)
    # Same computation with every input tiled to the full batch shape, then summed back.
    kt, vt = np.broadcast_to(k, (2, 3, 6, 5)), np.broadcast_to(v, (2, 3, 6, 2))
    dq_t, dk_t, dv_t = attention_backward(q, kt, vt, d_out, mask)
    np.testing.assert_allclose(dq, dq_t, rtol=0, atol=1e-15)
    np.testing.assert_allclose(dk, dk_t.sum(axis=0, keepdims=True), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(dv, dv_t.sum(axis=(0, 1)), rtol=1e-14, atol=1e-15)


def test_batched_mask_over_shared_keys():
    rng = np.random.default_rng(9)
    q, k, v = rng.normal(size=(5, 3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    mask = rng.random((5, 3, 4)) < 0.8  # five masks, five query sets, one k and v
    d_out = rng.normal(size=(5, 3, 2))
    dq, dk, dv = attention_backward(q, k, v, d_out, mask)
    parts = [attention_backward(q[b], k, v, d_out[b], mask[b]) for b in range(5)]
    np.testing.assert_allclose(dq, np.stack([p[0] for p in parts]), rtol=1e-13, atol=1e-15)
    for g, i in ((dk, 1), (dv, 2)):  # shared k, v: their gradients sum over the batch
        np.testing.assert_allclose(g, sum(p[i] for p in parts), rtol=1e-13, atol=1e-15)


def test_mask_may_not_add_batch_dimensions():
    q = k = v = np.eye(3)
    with pytest.raises(ValueError, match=r"\(5, 3, 3\).*\(3, 3\)"):
        attention_backward(q, k, v, np.ones((5, 3, 3)), np.ones((5, 3, 3), bool))


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [(np.float16, np.float16), (np.float32, np.float32), (np.float64, np.float64)],
)
def test_dtype_rules(dtype, expected):
    q, k, v, d_out = (a.astype(dtype) for a in _case(10))
    grads = attention_backward(q, k, v, d_out)
    assert all(g.dtype == expected for g in grads)
    ref = attention_backward(*(a.astype(np.float64) for a in (q, k, v, d_out)))
    tol = {np.float16: 5e-3, np.float32: 1e-5, np.float64: 1e-15}[dtype]
    for g, r in zip(grads, ref, strict=True):
        assert relative_error(g, r) < tol


def test_integers_become_float64():
    grads = attention_backward([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]], np.eye(2))
    assert all(g.dtype == np.float64 for g in grads)


def test_scale_zero_gives_uniform_weights_and_no_q_k_gradient():
    q, k, v, d_out = _case(11)
    dq, dk, dv = attention_backward(q, k, v, d_out, scale=0)
    assert np.all(dq == 0) and np.all(dk == 0)
    uniform = d_out.sum(axis=-2, keepdims=True) / k.shape[-2]  # every weight is 1/L_k
    np.testing.assert_allclose(dv, np.broadcast_to(uniform, dv.shape), rtol=1e-14)


# --- properties ---------------------------------------------------------------------------

shapes = st.tuples(
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(0, 2**31),
)


def _inputs(l_q, l_k, d_k, d_v, seed, spread=2.0):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(l_q, d_k)) * spread,
        rng.normal(size=(l_k, d_k)) * spread,
        rng.normal(size=(l_k, d_v)),
        rng.normal(size=(l_q, d_v)),
    )


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_key_gradients_sum_to_zero(shape):
    """Σ_j dk_j = s·Σ_i (Σ_j dS_ij) q_i = 0: moving every key by one vector c adds q_i·c to a
    whole row of scores, which the softmax ignores."""
    q, k, v, d_out = _inputs(*shape)
    _, dk, _ = attention_backward(q, k, v, d_out)
    scale = np.abs(dk).sum() + np.abs(q).max() * np.abs(d_out).sum() * np.abs(v).max()
    assert np.all(np.abs(dk.sum(axis=0)) <= 64 * EPS * scale)


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_value_gradients_sum_to_output_gradients(shape):
    """Σ_j dv_j = Σ_j Σ_i P_ij dO_i = Σ_i dO_i, because each row of P sums to one."""
    q, k, v, d_out = _inputs(*shape)
    _, _, dv = attention_backward(q, k, v, d_out)
    np.testing.assert_allclose(dv.sum(axis=0), d_out.sum(axis=0), rtol=0, atol=1e-13 * 16)


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_euler_identities(shape):
    """ℓ is linear in v, so Σ dv∘v = ℓ; the scores are bilinear in (q, k), so Σ dq∘q = Σ dk∘k."""
    q, k, v, d_out = _inputs(*shape)
    dq, dk, dv = attention_backward(q, k, v, d_out)
    loss = np.sum(d_out * attention(q, k, v))
    np.testing.assert_allclose(np.sum(dv * v), loss, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.sum(dq * q), np.sum(dk * k), rtol=1e-10, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(shapes, st.floats(-3, 3, allow_nan=False))
def test_linear_in_d_out(shape, a):
    q, k, v, d1 = _inputs(*shape)
    d2 = np.random.default_rng(shape[-1] + 1).normal(size=d1.shape)
    combined = attention_backward(q, k, v, a * d1 + d2)
    parts = zip(attention_backward(q, k, v, d1), attention_backward(q, k, v, d2), strict=True)
    for g, (g1, g2) in zip(combined, parts, strict=True):
        np.testing.assert_allclose(g, a * g1 + g2, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(shapes, st.floats(-50, 50, allow_nan=False))
def test_row_shift_of_scores_changes_nothing(shape, c):
    """A mask constant along each row leaves P, hence every gradient, unchanged."""
    q, k, v, d_out = _inputs(*shape)
    shift = np.full((q.shape[0], k.shape[0]), c) + np.arange(q.shape[0])[:, None]
    for a, b in zip(
        attention_backward(q, k, v, d_out), attention_backward(q, k, v, d_out, shift), strict=True
    ):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


# --- bad input ------------------------------------------------------------------------------


def test_d_out_of_wrong_shape():
    q, k, v, d_out = _case(12)
    with pytest.raises(ValueError, match=r"d_out must have the forward output's shape"):
        attention_backward(q, k, v, d_out[..., :1])
    with pytest.raises(ValueError, match=r"\(2, 3, 2\)"):
        attention_backward(q, k, v, d_out[0])  # would broadcast, but a gradient must not


def _ones(*shapes):
    return tuple(np.ones(s) for s in shapes)


SQUARE = _ones((2, 2), (2, 2), (2, 2), (2, 2))
NAN_D_OUT = (*SQUARE[:3], np.array([[np.nan, 0], [0, 0]]))
BOOL_D_OUT = (*SQUARE[:3], np.ones((2, 2), bool))


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (_ones((2, 3), (2, 2), (2, 2), (2, 2)), {}, ValueError, "q and k must share d_k"),
        (_ones((2, 2), (2, 2), (3, 2), (2, 2)), {}, ValueError, "k and v must share L_k"),
        (NAN_D_OUT, {}, ValueError, "d_out contains NaN"),
        (BOOL_D_OUT, {}, TypeError, "d_out must hold real"),
        (_ones(2, (2, 2), (2, 2), (2, 2)), {}, ValueError, "q must have at least 2"),
        (SQUARE, {"scale": "1"}, TypeError, "scale must be a real number"),
        (SQUARE, {"scale": -1.0}, ValueError, "scale must be finite"),
        (SQUARE, {"mask": np.ones((3, 3), bool)}, ValueError, "mask of shape"),
        (SQUARE, {"mask": np.ones((2, 2), int)}, TypeError, "mask must be boolean"),
        (_ones((2, 2, 2), (3, 2, 2), (3, 2, 2), (3, 2, 2)), {}, ValueError, "batch"),
    ],
)
def test_bad_input_is_named(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        attention_backward(*args, **kwargs)


def test_float16_result_out_of_range_is_an_error():
    q, k, v = np.ones((4, 2), np.float16), np.eye(2, dtype=np.float16), np.eye(2, dtype=np.float16)
    # Each key gets weight 1/2 from four queries: dv = 2 · 60000, beyond float16's 65504.
    with pytest.raises(ValueError, match="dv overflows the float16 range"):
        attention_backward(q, k, v, np.full((4, 2), 60000, dtype=np.float16))


def test_overflow_is_an_error_not_nan():
    q = k = np.eye(2, dtype=np.float32)
    v = np.full((2, 2), 3e38, dtype=np.float32)
    with pytest.raises(ValueError, match="overflows the float32 range"):
        attention_backward(q, k, v, np.full((2, 2), 1e5, dtype=np.float32))


def test_zero_length_backward():
    dq, dk, dv = attention_backward(
        np.ones((3, 2)), np.ones((0, 2)), np.ones((0, 4)), np.ones((3, 4))
    )
    assert dq.shape == (3, 2) and (dq == 0).all() and dk.shape == (0, 2) and dv.shape == (0, 4)


@pytest.mark.parametrize("alignment", ["top-left", "bottom-right"])
def test_backward_is_causal_equals_the_causal_mask(alignment):
    rng = np.random.default_rng(12)
    q, k, v = rng.standard_normal((3, 5, 4))
    d_out = rng.standard_normal((3, 4))
    got = attention_backward(q[:3], k, v, d_out, is_causal=True, causal_alignment=alignment)
    want = attention_backward(q[:3], k, v, d_out, causal_mask(3, 5, causal_alignment=alignment))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
