"""Markdown for the site: exact LaTeX beside NumPy decimals, each pair cross-checked.

The docs pages print what these functions return from inside markdown-exec blocks, so
every number on the site is computed at build time and every exact/numeric pair goes
through [`crosscheck`][attention_math.crosscheck.crosscheck] (a disagreement fails the build).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

from attention_math.crosscheck import CrossCheck, crosscheck
from attention_math.symbolic import latex

__all__ = ["badge", "decimal_latex", "display", "exact_beside_decimal", "fmt", "table"]


def fmt(x: float, digits: int = 4) -> str:
    """A float with ``digits`` significant digits, with a true minus sign for LaTeX.

    Examples:
        >>> from attention_math.render import fmt
        >>> fmt(0.66976154932, 4), fmt(-2.0), fmt(float("-inf"))
        ('0.6698', '-2', '-\\\\infty')
        >>> fmt(1.348e-7)
        '1.348 \\\\times 10^{-7}'
    """
    x = float(x)
    if np.isneginf(x):
        return r"-\infty"
    if np.isposinf(x):
        return r"\infty"
    text = f"{x:.{digits}g}"
    if "e" in text:  # 1.348e-07 → 1.348 \times 10^{-7}, which MathJax typesets properly
        mantissa, exponent = text.split("e")
        text = rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return text


def decimal_latex(a: ArrayLike, digits: int = 4) -> str:
    """LaTeX for a NumPy scalar, vector (as a row) or matrix, rounded to ``digits`` digits.

    Examples:
        >>> import numpy as np
        >>> from attention_math.render import decimal_latex
        >>> decimal_latex(np.array([[0.5, 1 / 3]]), 3)
        '\\\\begin{bmatrix}0.5 & 0.333\\\\end{bmatrix}'
    """
    arr = np.asarray(a)
    if arr.ndim == 0:
        return fmt(float(arr), digits)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"only scalars, vectors and matrices can be shown, got shape {arr.shape}")
    rows = [" & ".join(fmt(x, digits) for x in row) for row in arr]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def display(tex: str) -> str:
    """A display-math block for arithmatex."""
    return f"\n$$\n{tex}\n$$\n\n"  # the blank line ends the block for arithmatex


def exact_beside_decimal(
    name: str,
    exact: object,
    numeric: ArrayLike,
    *,
    digits: int = 4,
    bound_eps: float = 16.0,
    show_exact: bool = True,
) -> str:
    """``name = exact ≈ decimal`` as display math, after cross-checking the two.

    ``name`` is LaTeX. Raises [`CrossCheckError`][attention_math.crosscheck.CrossCheckError]
    when the NumPy value disagrees with the exact one by more than ``bound_eps`` machine epsilons.

    Examples:
        >>> import numpy as np, sympy as sp
        >>> from attention_math.render import exact_beside_decimal
        >>> print(exact_beside_decimal("s", 1 / sp.sqrt(2), np.float64(2**-0.5)))
        <BLANKLINE>
        $$
        s = \\frac{\\sqrt{2}}{2} \\approx 0.7071
        $$
        <BLANKLINE>
        <span class="checked" title="NumPy float64 agrees with the exact value to ...">✓ ...</span>
        <BLANKLINE>
    """
    check = crosscheck(exact, numeric, bound_eps=bound_eps, label=name)
    parts = [name]
    if show_exact:
        parts.append(latex(exact))
    body = " = ".join(parts) + r" \approx " + decimal_latex(numeric, digits)
    return display(body) + badge(check)


def badge(check: CrossCheck) -> str:
    """A cross-check as a compact badge: the measured error and the bound, in ε.

    The full sentence is the badge's tooltip (``title``).

    Examples:
        >>> import numpy as np, sympy as sp
        >>> from attention_math.crosscheck import crosscheck
        >>> from attention_math.render import badge
        >>> text = badge(crosscheck(sp.Rational(1, 2), np.float64(0.5), bound_eps=2))
        >>> print(text.split(">", 1)[1])
        ✓ float64 = exact ± 0 ε <small>(bound 2 ε)</small></span>
        <BLANKLINE>
        >>> 'title="NumPy float64 agrees with the exact value to 0 ε (bound 2 ε)."' in text
        True
    """
    err, bound = f"{check.error_eps:.2g}", f"{check.bound_eps:g}"
    sentence = f"NumPy {check.dtype} agrees with the exact value to {err} ε (bound {bound} ε)."
    return (
        f'<span class="checked" title="{sentence}">✓ {check.dtype} = exact ± {err} ε '
        f"<small>(bound {bound} ε)</small></span>\n"
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table.

    Examples:
        >>> from attention_math.render import table
        >>> print(table(["a", "b"], [[1, 2]]))
        | a | b |
        |---|---|
        | 1 | 2 |
    """
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def shape_str(a: ArrayLike | sp.MatrixBase) -> str:
    """``(2, 3)`` → ``2 \\times 3`` for LaTeX."""
    shape = a.shape if hasattr(a, "shape") else np.shape(a)
    return r" \times ".join(str(n) for n in shape)
