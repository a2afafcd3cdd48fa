"""Sinks and gates: the exact derivations, the NumPy functions, and how they agree."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import gates
from attention_math.crosscheck import CrossCheckError
from attention_math.derivations import gates as exact
from attention_math.numeric import attention, causal_mask, softmax

finite = st.floats(-30, 30, allow_nan=False)
rows = st.lists(finite, min_size=1, max_size=8)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_the_sink_is_one_more_column_exactly(n):
    assert exact.sink_is_padded_softmax(n)
    assert exact.sink_zero_is_softmax_one(n)
    assert exact.sink_is_gated_softmax(n)
    assert exact.sink_is_zero_value_key(n, 2)
    assert exact.sink_weight_slope(n) == 0


def test_exact_values():
    assert exact.sink_softmax([0, sp.log(2)], sp.log(5)) == [sp.Rational(1, 8), sp.Rational(1, 4)]
    assert exact.sink_weight([0, sp.log(3)], 0) == sp.Rational(1, 5)
    assert exact.sink_weight([sp.log(2)], sp.log(2)) == sp.Rational(1, 2)


def test_the_crosscheck_agrees_and_can_fail():
    assert exact.crosscheck_sink([0, sp.log(2), 1], -1).error_eps < 4
    with pytest.raises(CrossCheckError):
        from attention_math.crosscheck import crosscheck

        crosscheck(
            sp.Matrix([exact.sink_softmax([0, 1], 0)]), gates.sink_softmax([[0.0, 1.0]], 0.1)
        )


@settings(max_examples=60, deadline=None)
@given(rows, finite)
def test_sink_softmax_is_the_padded_softmax(z, s):
    ours = gates.sink_softmax(z, s)
    padded = softmax([*z, s])[:-1]
    np.testing.assert_allclose(ours, padded, rtol=1e-12, atol=1e-300)
    assert ours.sum() < 1 or np.isclose(ours.sum(), 1.0)  # ≤ 1: the sink takes the rest


@settings(max_examples=60, deadline=None)
@given(rows, finite)
def test_the_sink_is_a_scalar_gate_on_softmax(z, s):
    gate = gates.sink_gate(z, s)
    np.testing.assert_allclose(gates.sink_softmax(z, s), gate * softmax(z), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(gate, gates.sink_softmax(z, s).sum(), rtol=1e-12, atol=1e-300)


def test_limits_of_the_sink():
    z = np.array([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(gates.sink_softmax(z, -np.inf), softmax(z))  # no sink
    assert gates.sink_softmax(z, 800.0).max() < 1e-300  # a huge sink takes everything
    assert float(gates.sink_gate(z, -np.inf)) == 1.0
    # a fully masked row: everything to the sink, no NaN
    np.testing.assert_array_equal(gates.sink_softmax([-np.inf, -np.inf], 0.0), [0.0, 0.0])
    assert float(gates.sink_gate([-np.inf], 0.0)) == 0.0
    assert float(gates.sink_gate([-np.inf], -np.inf)) == 0.0
    # no overflow for large scores
    np.testing.assert_allclose(gates.sink_softmax([1000.0, 1000.0], 1000.0), [1 / 3, 1 / 3])


def test_per_head_sinks_broadcast_over_rows():
    z = np.random.default_rng(0).standard_normal((2, 3, 4))  # (H, L_q, L_k)
    s = np.array([0.0, 1.0])
    w = gates.sink_softmax(z, s[:, None])
    for h in range(2):
        np.testing.assert_allclose(w[h], softmax(np.c_[z[h], np.full(3, s[h])])[:, :-1])


def test_sink_attention_is_attention_with_a_zero_value_key():
    rng = np.random.default_rng(1)
    h, g, n, d = 4, 2, 5, 3
    q = rng.standard_normal((h, n, d))
    k, v = rng.standard_normal((2, g, n, d))
    sinks = rng.standard_normal(h)
    ours = gates.sink_attention(q, k, v, sinks, causal_mask(n))
    # one more key per head: score s_h for every query, value 0, by the ordinary softmax
    kr, vr = np.repeat(k, h // g, axis=0), np.repeat(v, h // g, axis=0)
    for i in range(h):
        scores = q[i] @ kr[i].T / np.sqrt(d)  # (n, n)
        scores[~causal_mask(n)] = -np.inf
        full = softmax(np.c_[scores, np.full(n, sinks[i])])  # (n, n + 1)
        want = full @ np.r_[vr[i], np.zeros((1, d))]
        np.testing.assert_allclose(ours[i], want, rtol=1e-12)
    # and a sink at −∞ in effect (very negative) is plain attention
    plain = gates.sink_attention(q, k, v, np.full(h, -800.0), causal_mask(n))
    np.testing.assert_allclose(plain, attention(q, kr, vr, is_causal=True), rtol=1e-12)


def test_sigmoid_gate_and_sigmoid():
    y = np.array([[1.0, -2.0], [3.0, 4.0]])
    g = np.array([[0.0, 2.0], [-2.0, 100.0]])
    np.testing.assert_allclose(gates.sigmoid_gate(y, g), y / (1 + np.exp(-g)), rtol=1e-15)
    assert gates.sigmoid(np.array([-800.0, 800.0])).tolist() == [0.0, 1.0]
    assert gates.sigmoid(np.float32(0.3)).dtype == np.float32


def test_zero_centred_rms_norm():
    x = np.random.default_rng(2).standard_normal((3, 4))
    w = np.array([0.5, -0.5, 0.0, 1.0])
    want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * (1 + w)
    np.testing.assert_allclose(gates.zero_centred_rms_norm(x, w), want, rtol=1e-14)
    np.testing.assert_allclose(
        gates.zero_centred_rms_norm(x, np.zeros(4), eps=0.0).__pow__(2).mean(-1), 1.0
    )


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: gates.sink_softmax([0.0, np.nan], 0.0), ValueError, "NaN or \\+inf"),
        (lambda: gates.sink_softmax([0.0, np.inf], 0.0), ValueError, "NaN or \\+inf"),
        (lambda: gates.sink_softmax([], 0.0), ValueError, "last axis of keys"),
        (lambda: gates.sink_softmax(["a"], 0.0), TypeError, "real numbers"),
        (lambda: gates.sink_softmax([0.0], np.nan), ValueError, "sink contains NaN"),
        (
            lambda: gates.sink_softmax(np.zeros((2, 3)), np.zeros(3)),
            ValueError,
            r"sink of shape \(3,\)",
        ),
        (
            lambda: gates.sink_attention(
                np.zeros((2, 3, 4)), np.zeros((2, 3, 4)), np.zeros((2, 3, 4)), [0.0]
            ),
            ValueError,
            r"sinks must have shape \(H,\) = \(2,\)",
        ),
        (
            lambda: gates.sink_attention(
                np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)), [0.0]
            ),
            ValueError,
            "at least 3 dimensions",
        ),
        (
            lambda: gates.sink_attention(
                np.zeros((2, 3, 4)), np.zeros((2, 3, 4)), np.zeros((1, 3, 4)), [0.0, 0.0]
            ),
            ValueError,
            "same heads",
        ),
        (lambda: gates.sigmoid_gate(np.zeros(3), np.zeros(2)), ValueError, r"shape of y \(3,\)"),
        (lambda: gates.sigmoid(np.array([np.nan])), ValueError, "NaN"),
        (lambda: gates.zero_centred_rms_norm(np.zeros((2, 3)), np.zeros(2)), ValueError, r"\(3,\)"),
    ],
)
def test_bad_input_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("kind", ["softmax", "sink", "gate"])
@pytest.mark.parametrize("bos", [True, False])
def test_the_toys_gradients_are_the_finite_differences(kind, bos):
    from attention_math.toy import gated

    toy = gated.init(kind, vocab=4, d_head=3, seed=5)
    if kind == "gate":
        toy.weights["b_g"][:] = np.random.default_rng(6).normal(0, 0.5, 4)
    x, target, _ = gated.ask_rest_batch(np.random.default_rng(7), 3, 6, 4, bos=bos)
    _, grads = gated.loss_and_grads(toy, x, target)
    assert sorted(grads) == sorted(toy.weights)
    h = 1e-6
    for name, w in toy.weights.items():
        flat = w.reshape(-1)  # a view: a change here changes the toy
        for i in range(flat.size):
            keep = flat[i]
            flat[i] = keep + h
            up, _ = gated.loss_and_grads(toy, x, target)
            flat[i] = keep - h
            down, _ = gated.loss_and_grads(toy, x, target)
            flat[i] = keep
            want = (up - down) / (2 * h)
            got = grads[name].reshape(-1)[i]
            assert abs(got - want) <= 1e-7 + 1e-6 * abs(want), (name, i, got, want)


def test_the_toys_tasks():
    from attention_math.toy import gated

    x, target, rest = gated.ask_rest_batch(np.random.default_rng(0), 4, 7, 5, bos=False)
    tokens = x[..., :6].argmax(-1)  # (B, L): no BOS, every token is content
    assert (tokens >= 1).all()
    for b in range(4):
        for i in range(1, 7):
            want = (
                np.zeros(5)
                if rest[b, i]
                else np.bincount(tokens[b, : i + 1] - 1, minlength=5) / (i + 1)
            )
            np.testing.assert_allclose(target[b, i], want)
    toy = gated.train("sink", steps=3, batch=4, length=7, vocab=5, bos=False)
    mass = gated.attention_mass(toy, bos=False, batch=8, length=7)
    assert 0 <= mass["first_rest"] <= 1 and 0 <= mass["sink_rest"] <= 1
    assert mass["gate_rest"] == 1.0  # no gate in the sink variant


def test_a_sink_may_not_add_rows():
    with pytest.raises(ValueError, match=r"sink of shape \(2, 3\) does not broadcast to"):
        gates.sink_softmax(np.zeros((3, 4)), np.zeros((2, 3)))
