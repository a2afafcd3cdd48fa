"""Softmax stability: shift invariance, overflow thresholds, the naive formula, accuracy."""

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_math import numeric
from attention_math.derivations import softmax_stability as ss


@pytest.mark.parametrize("n", [2, 3, 5])
def test_shift_invariance_symbolic(n):
    assert ss.shift_invariance(n)


@given(
    arrays(np.float64, st.integers(1, 8), elements=st.floats(-50, 50)),
    st.floats(-600, 600),
)
def test_shift_invariance_numeric(z, c):
    np.testing.assert_allclose(numeric.softmax(z + c), numeric.softmax(z), rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("n", [2, 7])
def test_shifted_denominator_between_1_and_n(n):
    assert ss.shifted_bounds(n) == (1, n)


@pytest.mark.parametrize("fmt", ss.FORMATS, ids=lambda f: f.name)
def test_r_max_matches_numpy(fmt):
    assert sp.simplify(sp.exp(fmt.log_r_max) - fmt.r_max) == 0
    if fmt.name == "bfloat16":  # not a NumPy dtype: the value the issue states
        assert fmt.r_max == (2 - sp.Rational(1, 2**7)) * sp.Integer(2) ** 127
        return
    assert fmt.r_max == sp.Integer(int(np.finfo(fmt.name).max))
    assert sp.simplify(sp.exp(fmt.log_r_max) - fmt.r_max) == 0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_exp_overflows_just_past_threshold(dtype):
    fmt = next(f for f in ss.FORMATS if f.name == np.dtype(dtype).name)
    x = float(sp.N(fmt.log_r_max, 30))
    below = np.nextafter(dtype(x), dtype(0))  # the float just under ln r_max
    with np.errstate(over="ignore"):
        assert np.isfinite(np.exp(below))
        assert np.isinf(np.exp(dtype(x) * dtype(1.01)))


def test_naive_formula_gives_nan_and_numeric_does_not():
    s = np.array([[800.0, 790.0, 0.0]])
    with np.errstate(over="ignore", invalid="ignore"):
        bad = ss.naive_softmax(s)
    assert np.isnan(bad).any()
    good = numeric.softmax(s)
    assert np.isfinite(good).all() and abs(good.sum() - 1) < 1e-15


def test_naive_formula_float16_overflows_on_modest_scores():
    s = np.array([[12.0, 0.0]], dtype=np.float16)  # 12 > ln(65504)
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(ss.naive_softmax(s)).any()
    assert np.isfinite(numeric.softmax(s)).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_measured_error_of_numeric_softmax_is_small(dtype):
    errs = ss.measured_errors(64, dtype, np.random.default_rng(5), rows=10, spread=10.0)
    # rounding s_i − m costs at most |s_i − m|·u ≤ 20u in the exponent; a few u more elsewhere
    assert errs["numeric.softmax"] < 40
    assert errs["division-free"] > 0


def test_reference_is_many_digit():
    ref = ss._reference(np.array([0.0, np.log(3.0)]))
    with mpmath.workdps(50):
        assert abs(ref[0] - mpmath.mpf(1) / 4) < mpmath.mpf(10) ** -15


def test_the_quoted_source_is_the_bibliographys_entry() -> None:
    """The library's record of the paper (it is not in the wheel's reach to read the site's
    bibliography) names the same work as ``docs/references.bib``, and is the one record."""
    from attention_math.derivations import online_softmax_error
    from attention_site.pages.references import load

    c = ss.BLANCHARD_HIGHAM_HIGHAM
    (entry,) = (r for r in load() if r.url.endswith(c["doi"]))
    assert (entry.title.lower(), entry.year) == (c["title"].lower(), c["year"])  # title case aside
    assert online_softmax_error.REFERENCE is c


def test_large_scores_error_is_the_input_rounding() -> None:
    from attention_math.crosscheck import crosscheck
    from attention_math.derivations.softmax_stability import input_rounding
    from attention_math.exercises import get

    ex = get("softmax-shift")
    r = input_rounding(ex.inputs["s"])
    measured = crosscheck(ex.answer, ex.numeric(), bound_eps=ex.bound_eps).error_eps
    assert abs(r.delta_eps[1]) <= 256  # half the spacing near 1000
    assert abs(measured - r.normwise_eps) < 2  # the cause explains the measured error
