"""State-space duality: the scan, the masked attention and the chunks, exactly and in NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_math as am
from attention_math import ssd
from attention_math.derivations import ssd as exact
from attention_math.linear import elu_feature_map, linear_attention


def _random(rng, lead, length, n, p, low=0.3):
    a = rng.uniform(low, 1.0, (*lead, length))  # (..., L)
    b = rng.standard_normal((*lead, length, n))  # (..., L, N)
    c = rng.standard_normal((*lead, length, n))  # (..., L, N)
    x = rng.standard_normal((*lead, length, p))  # (..., L, P)
    return a, b, c, x


def _rel(got, want):
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-300))


# --- exact ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("length", "n", "p"), [(1, 1, 1), (3, 2, 2), (4, 2, 1)])
def test_the_scan_is_the_masked_attention_exactly(length, n, p):
    assert exact.recurrence_equals_masked_attention(length, n, p)


@pytest.mark.parametrize(("length", "q"), [(4, 1), (5, 2), (5, 3), (4, 4), (3, 5)])
def test_the_chunked_algorithm_is_the_masked_attention_exactly(length, q):
    assert exact.chunked_equals_masked_attention(length, q, 2)


def test_a_wrong_mask_is_caught_by_the_exact_check():
    # the identity is not vacuous: with the decays off by one index it fails
    a, b, c, x = exact.symbolic_inputs(3)
    y, _ = exact.recurrence(a, b, c, x)
    shifted = sp.Matrix(3, 3, lambda i, j: sp.Mul(*a[j:i]) if i >= j else 0)
    wrong = shifted.multiply_elementwise(c * b.T) * x
    assert any(sp.expand(e) != 0 for e in y - wrong)


def test_unit_decays_give_causal_linear_attention_exactly():
    assert exact.unit_decay_is_causal_linear_attention(3, 2, 1)
    assert exact.unit_decay_is_causal_linear_attention(2, 1, 2)


def test_the_mask_is_one_semiseparable_and_off_diagonal_blocks_have_rank_n():
    a = sp.symbols("a_1:6")
    m = exact.symbolic_mask(list(a))
    # every submatrix on or below the diagonal has rank ≤ 1
    for r0 in range(5):
        for c1 in range(r0 + 1):
            assert m[r0:, : c1 + 1].rank() <= 1
    assert exact.off_diagonal_rank(4, 2, 1) == 1
    assert exact.off_diagonal_rank(6, 3, 2) == 2


def test_the_exact_mask_at_rational_decays_equals_the_numeric_one():
    decays = [sp.Rational(1, 2), sp.Rational(2, 3), sp.Rational(3, 4), sp.Rational(1, 5)]
    want = np.array(exact.symbolic_mask(decays).evalf(20), dtype=float)
    got = ssd.semiseparable_mask(np.array([float(d) for d in decays]))
    assert _rel(got, want) <= 4 * np.finfo(float).eps


def test_the_exact_scan_at_rational_inputs_equals_the_numeric_forms():
    rng = np.random.default_rng(7)
    length, n, p = 5, 2, 2
    ints = rng.integers(-4, 5, size=(length, 2 * n + p))
    a = [sp.Rational(int(v), 8) for v in rng.integers(1, 9, size=length)]
    b, c = sp.Matrix(ints[:, :n]), sp.Matrix(ints[:, n : 2 * n])
    x = sp.Matrix(ints[:, 2 * n :])
    want = np.array(exact.recurrence(a, b, c, x)[0], dtype=float)
    args = (np.array([float(v) for v in a]), ints[:, :n], ints[:, n : 2 * n], ints[:, 2 * n :])
    for method in ("recurrence", "attention", "chunked"):
        got = am.state_space_dual(*args, method=method, chunk_size=2)
        assert _rel(got, want) <= 16 * np.finfo(float).eps, method


def test_flop_counts_meet_at_the_two_ends_of_the_chunk_size():
    rec, att, chk = exact.recurrence_flops(), exact.attention_flops(), exact.chunked_flops()
    length, n, p, q = exact.L, exact.N, exact.P, exact.Q
    # the chunked count grows like L·Q inside chunks and like L·N·P between them
    assert sp.simplify(sp.limit(chk / (length * q), q, sp.oo) - (2 * n + 2 * p + 1)) == 0
    assert sp.expand(chk.subs(q, length) - att) == sp.expand(
        5 * length * n * p + 2 * n * p + 2 * length * p
    )
    assert sp.expand(chk.subs(q, 1) - rec) == sp.expand(2 * length * n * p + 2 * length * n
                                                        + 4 * length * p + length)  # fmt: skip


# --- numeric --------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 12),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(1, 13),
    st.sampled_from([(), (3,), (2, 2)]),
    st.integers(0, 2**32 - 1),
)
def test_the_three_forms_agree(length, n, p, q, lead, seed):
    a, b, c, x = _random(np.random.default_rng(seed), lead, length, n, p)
    ref = ssd.ssd_recurrence(a, b, c, x)
    assert ref.shape == (*lead, length, p)
    assert _rel(ssd.ssd_attention(a, b, c, x), ref) <= 1e-12
    assert _rel(ssd.ssd_chunked(a, b, c, x, q), ref) <= 1e-12
    devs = ssd.ssd_check(a, b, c, x, chunk_size=q)
    assert set(devs) == {"attention", "chunked"}


def test_states_carry_across_calls_and_chunk_boundaries():
    a, b, c, x = _random(np.random.default_rng(2), (2,), 11, 3, 2)
    y, h = ssd.ssd_recurrence(a, b, c, x, return_state=True)
    y1, h1 = ssd.ssd_recurrence(a[:, :4], b[:, :4], c[:, :4], x[:, :4], return_state=True)
    y2, h2 = ssd.ssd_chunked(a[:, 4:], b[:, 4:], c[:, 4:], x[:, 4:], 3, state=h1,
                             return_state=True)  # fmt: skip
    assert _rel(np.concatenate([y1, y2], axis=-2), y) <= 1e-12
    assert _rel(h2, h) <= 1e-12
    # the state is Σ_j 𝐋_{L−1,j} b_j x_jᵀ: the last row of the mask
    last = ssd.semiseparable_mask(a)[..., -1, :]  # (2, L)
    assert _rel(np.einsum("...l,...ln,...lp->...np", last, b, x), h) <= 1e-12


def test_causality_later_inputs_do_not_change_earlier_outputs():
    a, b, c, x = _random(np.random.default_rng(4), (), 8, 2, 2)
    base = ssd.ssd_chunked(a, b, c, x, 3)
    a2, b2, x2 = a.copy(), b.copy(), x.copy()
    a2[5:], b2[5:], x2[5:] = 0.1, 7.0, -3.0
    assert np.array_equal(ssd.ssd_chunked(a2, b2, c, x2, 3)[:5], base[:5])


def test_zero_and_negative_decays_are_computed_without_logarithms():
    a = np.array([0.5, 0.0, -2.0, 1.0])
    m = ssd.semiseparable_mask(a)
    assert m[2, 0] == 0.0 and m[3, 1] == -2.0 and m[3, 2] == 1.0
    _, b, c, x = _random(np.random.default_rng(5), (), 4, 2, 1)
    assert _rel(ssd.ssd_attention(a, b, c, x), ssd.ssd_recurrence(a, b, c, x)) <= 1e-14


def test_unit_decays_are_causal_linear_attention_numerically():
    rng = np.random.default_rng(6)
    q, k, v = rng.standard_normal((3, 9, 4))
    fq, fk = elu_feature_map(q), elu_feature_map(k)  # (L, m)
    ones = np.ones(9)
    with_norm = np.concatenate([v, np.ones((9, 1))], axis=-1)  # (L, d_v + 1): V and 1
    for method in ("recurrence", "attention", "chunked"):
        out = am.state_space_dual(ones, fk, fq, with_norm, method=method, chunk_size=4)
        got = out[:, :4] / out[:, 4:]
        assert _rel(got, linear_attention(q, k, v, is_causal=True)) <= 1e-13, method
    assert np.array_equal(ssd.semiseparable_mask(ones), np.tril(np.ones((9, 9))))


def test_float32_inputs_stay_float32():
    a, b, c, x = (t.astype(np.float32) for t in _random(np.random.default_rng(0), (), 6, 2, 2))
    for method in ("recurrence", "attention", "chunked"):
        assert am.state_space_dual(a, b, c, x, method=method, chunk_size=4).dtype == np.float32


def test_the_check_raises_when_a_form_is_wrong(monkeypatch):
    a, b, c, x = _random(np.random.default_rng(1), (), 6, 2, 2)
    monkeypatch.setattr(ssd, "ssd_chunked", lambda *args, **kw: ssd.ssd_attention(*args[:4]) * 1.01)
    with pytest.raises(ArithmeticError, match="chunked differs from the recurrence"):
        ssd.ssd_check(a, b, c, x, chunk_size=2)


# --- bad input ------------------------------------------------------------------------------


def test_bad_shapes_are_named():
    a, b, c, x = _random(np.random.default_rng(0), (), 4, 2, 3)
    with pytest.raises(ValueError, match=r"one length L, got a \(3,\)"):
        ssd.ssd_recurrence(a[:3], b, c, x)
    with pytest.raises(ValueError, match=r"same state size N, got b \(4, 2\) and c \(4, 3\)"):
        ssd.ssd_attention(a, b, np.ones((4, 3)), x)
    with pytest.raises(ValueError, match="do not broadcast"):
        ssd.ssd_chunked(np.ones((2, 4)), np.ones((3, 4, 2)), c, x, 2)
    with pytest.raises(ValueError, match=r"state must have shape \(..., N, P\) = \(2, 3\)"):
        ssd.ssd_recurrence(a, b, c, x, state=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="chunk_size"):
        ssd.ssd_chunked(a, b, c, x, 0)
    with pytest.raises(TypeError, match="chunk_size"):
        ssd.ssd_chunked(a, b, c, x, 2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="method must be"):
        am.state_space_dual(a, b, c, x, method="scan")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ssd.semiseparable_mask(np.array(["a", "b"]))
