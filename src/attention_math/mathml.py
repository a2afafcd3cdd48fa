"""Maths for the reader's browser as MathML, which browsers draw natively.

The site's pages are typeset when the site is built; what the live parts compute in the
reader's browser (the echo of an answer, the steps of "Your own example") is printed here,
in the worker, as presentation MathML: the page draws it without MathJax or any download.
The output is well-formed XML (no HTML entities), so the page can parse it strictly.

A matrix's brackets are ``<mo>[</mo>`` and ``<mo>]</mo>`` around its ``<mtable>``, in an
``<mrow class="am-matrix">``: a browser stretches such a bracket to the matrix's height only
with a maths font (one with an OpenType MATH table), which many phones and Linux desktops
lack. So the site's style sheet draws the brackets as the table's borders, as tall as the
matrix, and hides the two characters; without the style sheet they show as typed. Minus signs
are ``−`` (U+2212), as in the decimals and the typeset pages, not the hyphen SymPy writes.
"""

from __future__ import annotations

import html
import math
import re

import sympy as sp
from sympy.printing.mathml import mathml as _sympy_mathml

__all__ = ["decimals", "mathml"]

MATH = '<math xmlns="http://www.w3.org/1998/Math/MathML" display="{}">{}</math>'

_ENTITY = re.compile(r"&([A-Za-z][A-Za-z0-9]*);")
_MINUS_MN = re.compile(r"<mn>-([^<]*)</mn>")  # SymPy's <mn>-1</mn>
_OPEN = '<mrow class="am-matrix"><mo>[</mo><mtable>'
_CLOSE = "</mtable><mo>]</mo></mrow>"
_XML = {"lt", "gt", "amp", "quot", "apos"}  # the entities XML itself knows


def _character(m: re.Match[str]) -> str:
    name = m.group(1)
    if name in _XML:
        return m.group(0)
    if name == "ExponentialE":  # SymPy's double-struck e; the site writes e
        return "e"
    char = html.unescape(m.group(0))
    if char == m.group(0):
        raise ValueError(f"MathML: unknown entity {m.group(0)!r}")
    return char


def mathml(expr: object, lhs: str = "", display: bool = True) -> str:
    """``expr`` (a SymPy expression or matrix) as one ``<math>`` element, after ``lhs =``.

    ``lhs`` is MathML for the name on the left of the equals sign (none when empty).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.mathml import mathml
        >>> mathml(sp.Rational(1, 8)).removeprefix('<math xmlns="http://www.w3.org/1998/Math/MathML"')
        ' display="block"><mfrac><mn>1</mn><mn>8</mn></mfrac></math>'
        >>> "<mi>a</mi><mo>=</mo><mi>e</mi>" in mathml(sp.exp(1), "<mi>a</mi>", display=False)
        True
        >>> m = mathml(sp.Matrix([[-1, -sp.oo]]))  # a matrix: brackets the style sheet draws
        >>> '<mrow class="am-matrix"><mo>[</mo><mtable>' in m, "<mn>-" in m, m.count("<mo>−</mo>")
        (True, False, 2)
    """
    body = _ENTITY.sub(_character, _sympy_mathml(sp.sympify(expr), printer="presentation"))
    body = _MINUS_MN.sub(r"<mo>−</mo><mn>\1</mn>", body.replace("<mo>-</mo>", "<mo>−</mo>"))
    body = body.replace("<mrow><mo>[</mo><mtable>", _OPEN).replace(
        "</mtable><mo>]</mo></mrow>", _CLOSE
    )
    if lhs:
        body = f"{lhs}<mo>=</mo>{body}"
    return MATH.format("block" if display else "inline", body)


def _number(x: float, digits: int) -> str:
    if math.isinf(x):
        return f"<mrow>{'<mo>−</mo>' if x < 0 else ''}<mi>∞</mi></mrow>"
    text = f"{x:.{digits}g}"
    sign = "<mo>−</mo>" if text.startswith("-") else ""
    mantissa, _, exponent = text.lstrip("-").partition("e")
    if not exponent:
        return f"<mrow>{sign}<mn>{mantissa}</mn></mrow>"
    power = f"<msup><mn>10</mn><mn>{int(exponent)}</mn></msup>"
    return f"<mrow>{sign}<mn>{mantissa}</mn><mo>×</mo>{power}</mrow>"


def decimals(values: list[list[float]], lhs: str = "", digits: int = 4) -> str:
    """A matrix of floats, each to ``digits`` significant digits, as ``<math>``, after
    ``lhs ≈``.

    Examples:
        >>> from attention_math.mathml import decimals
        >>> m = decimals([[1 / 3, float("-inf")]], "<mi>P</mi>")
        >>> "<mi>P</mi><mo>≈</mo>" in m, "<mn>0.3333</mn>" in m, "<mo>−</mo><mi>∞</mi>" in m
        (True, True, True)
    """
    rows = "".join(
        "<mtr>" + "".join(f"<mtd>{_number(x, digits)}</mtd>" for x in row) + "</mtr>"
        for row in values
    )
    body = f"{_OPEN}{rows}{_CLOSE}"
    return MATH.format("block", f"{lhs}<mo>≈</mo>{body}")
