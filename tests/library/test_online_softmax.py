"""The online-softmax derivation: exact identities and the measured error of both finishes."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.derivations import online_softmax as osm
from attention_math.derivations import online_softmax_error as err
from attention_math.symbolic import is_zero


def test_merge_is_associative_for_symbolic_tiles():
    s, v = osm.symbols(6)
    a = osm.tile_state(s[:2], v[:2])
    b = osm.tile_state(s[2:3], v[2:3])
    c = osm.tile_state(s[3:], v[3:])
    assert osm.merge_is_associative(a, b, c)
    assert osm.merge_is_associative(c, a, b)


@pytest.mark.parametrize("cuts", [[1], [2], [1, 2], [1, 3], [2, 3]])
def test_merged_state_is_exactly_softmax_times_v(cuts):
    s, v = osm.symbols(4)
    assert osm.merged_equals_softmax(s, v, cuts)


def test_merge_is_not_plain_addition():
    # the check can fail: forgetting the rescaling gives a different expression
    s, v = osm.symbols(2)
    a, b = osm.tile_state(s[:1], v[:1]), osm.tile_state(s[1:], v[1:])
    wrong = (a.o + b.o) / (a.ell + b.ell)
    z = sp.exp(s[0]) + sp.exp(s[1])
    assert not is_zero(wrong - (sp.exp(s[0]) * v[0] + sp.exp(s[1]) * v[1]) / z)


def test_fa1_and_fa2_forms_agree_exactly():
    s, v = osm.symbols(5)
    first = osm.tile_state(s[:2], v[:2])
    one = osm.fa1_update(first._replace(o=osm.finish(first)), s[2:], v[2:])
    two = osm.fa2_update(first, s[2:], v[2:])
    assert is_zero(one.o - osm.finish(two))
    assert is_zero(one.ell - two.ell)


def test_logsumexp_recomputes_the_weights():
    s, v = osm.symbols(3)
    state = osm.tile_state(s, v)
    lse = osm.logsumexp(state)
    z = sp.Add(*(sp.exp(x) for x in s))
    assert is_zero(sp.exp(s[1] - lse) - sp.exp(s[1]) / z)


def test_bad_cuts_and_lengths_raise():
    s, v = osm.symbols(3)
    with pytest.raises(ValueError, match="cuts"):
        osm.merged_equals_softmax(s, v, [2, 1])
    with pytest.raises(ValueError, match="as many scores as values"):
        osm.tile_state(s, v[:2])


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(-6, 6), min_size=1, max_size=7),
    st.integers(1, 4),
)
def test_numeric_trace_ends_at_the_exact_value(scores, block):
    values = list(range(1, len(scores) + 1))
    exact = sp.Add(*(sp.exp(x) * y for x, y in zip(scores, values, strict=True))) / sp.Add(
        *(sp.exp(x) for x in scores)
    )
    m, ell, o = osm.numeric_trace(scores, [[x] for x in values], block)[-1]
    assert m == max(scores)
    assert abs(o[0] / ell - float(exact)) <= 8 * np.finfo(np.float64).eps * max(values)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shifted_error_stays_small_and_division_free_grows(dtype):
    rng = np.random.default_rng(7)
    v = rng.standard_normal((128, 3)).astype(dtype)
    base = rng.standard_normal((6, 128)) * 3
    errors = {}
    for offset in (0.0, 1e4):
        s = (base + offset).astype(dtype)
        ref = err.reference_softmax(s, v)
        errors[offset] = (
            err.row_error_eps(err.online(s, v, block_size=32), ref),
            err.row_error_eps(err.division_free(s, v), ref),
        )
    assert errors[0.0][0] <= 32 and errors[1e4][0] <= 32  # shifted: bounded for any offset
    assert errors[1e4][1] > 100 * max(errors[0.0][1], 1)  # division-free: ∝ |lse|


def test_reference_agrees_with_float64_on_an_easy_case():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 5, 4))
    s = q @ k.T / 2
    w = np.exp(s - s.max(1, keepdims=True))
    expected = (w / w.sum(1, keepdims=True)) @ v
    assert err.row_error_eps(expected, err.reference(q, k, v, scale=0.5)) < 16
    assert err.reference(q, k, v, scale=0.5, rows=2).shape == (2, 4)


def test_the_reference_is_not_rounded_to_float64_before_measuring():
    ref = err.reference_softmax([[0.0, 0.0, 0.0]], [[0.0], [0.0], [1.0]])  # 1/3
    third = np.float64([[1 / 3]])  # the float64 nearest to 1/3
    assert np.asarray(ref)[0, 0] == third[0, 0]  # rounded, the two would be equal
    measured = err.row_error_eps(third, ref)  # but 1/3 is not a float64: |1/3 − fl(1/3)| > 0
    assert 0.1 < measured <= 0.5  # at most half a unit in the last place, relative to 1/3


def test_merge_is_commutative_and_a_noncommutative_merge_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from attention_math.derivations import online_softmax as osm

    s, v = osm.symbols(3)
    a, b = osm.tile_state(s[:1], v[:1]), osm.tile_state(s[1:], v[1:])
    assert osm.merge_is_commutative(a, b)

    def keeps_first_shift(x: osm.State, y: osm.State) -> osm.State:  # wrong: y's shift ignored
        return osm.State(x.m, x.ell + y.ell, x.o + y.o)

    monkeypatch.setattr(osm, "merge", keeps_first_shift)
    assert not osm.merge_is_commutative(a, b)
    assert {r[1] for r in osm.REFERENCES.values()} >= {"Online normalizer calculation for softmax"}
