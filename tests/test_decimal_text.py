"""A rounded number keeps its trailing zeros; an exact one is printed short.

``0.50004`` printed as ``0.5`` reads as an exact half: the slip this site exists to avoid.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from attention_math.numeric import softmax
from attention_site.render import decimal_text, fmt

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
