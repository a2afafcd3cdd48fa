"""A rounded number keeps its trailing zeros; an exact one is printed short.

``0.50004`` printed as ``0.5`` reads as an exact half: the slip this site exists to avoid.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal

import mpmath
import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from attention_math.derivations.softmax_stability import FORMATS
from attention_math.display import decimal_text, exact_digits, fmt
from attention_math.numeric import softmax

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30)


def _significant(text: str) -> int:
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


@given(finite, st.integers(1, 9))
def test_the_text_is_the_value_rounded_and_a_rounded_value_shows_every_digit(x, digits) -> None:
    text = decimal_text(x, digits)
    assert float(text) == float(f"{x:.{digits - 1}e}")  # the value, rounded to `digits` digits
    if not math.isclose(float(text), x, rel_tol=1e-12) and x != 0:
        assert _significant(text) == digits, text


@given(st.integers(-999, 999), st.integers(0, 3))
def test_a_decimal_that_is_the_value_is_printed_short(n, places) -> None:
    x = n / 10**places
    assert decimal_text(x, 6) == f"{x:g}"


def test_a_weight_just_below_one_is_not_printed_as_one() -> None:
    w = softmax(np.array([[10.0, 0.0]]))[0, 0]  # 0.99995…
    assert decimal_text(w, 4) == "1.000" and fmt(-w, 4) == "-1.000"
    assert decimal_text(0.6602 + 1, 6) == "1.6602"  # float noise is not rounding


def _ln_r_max(p: int, e_max: int, digits: int) -> str:
    """ln r_max by mpmath at 60 digits, rounded half-even by Decimal: independent of SymPy."""
    mpmath.mp.dps = 60
    value = mpmath.log(2 - mpmath.mpf(2) ** (1 - p)) + e_max * mpmath.log(2)
    d = Decimal(mpmath.nstr(value, 50))
    return f"{d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), ROUND_HALF_EVEN):f}"


def test_ln_r_max_is_printed_correctly_rounded():
    """why/softmax printed bfloat16's ln r_max as 88.7189252123 (SymPy's N); it is …124."""
    for f in FORMATS:
        assert exact_digits(f.log_r_max, 12) == _ln_r_max(f.p, f.e_max, 12), f.name


def test_exact_digits_rounds_where_sympy_truncates():
    x = sp.log(2 - sp.Integer(2) ** -7) + 127 * sp.log(2)
    assert exact_digits(x, 12) == _ln_r_max(8, 127, 12)
    assert exact_digits(sp.Rational(19995, 2000), 3) == "10.0"  # 9.9975: the carry drops a digit
