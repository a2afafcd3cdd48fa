"""What the pages print: exact LaTeX beside NumPy decimals, tables, badges, as Markdown.

Every result here is Markdown text, a ``str``, so that a page's block prints it (markdown-exec
turns a block's printed Markdown into the page) and the site shows maths and tables. The results
that are Markdown documents ([`Markdown`][attention_math.display.Markdown], one formula:
[`Formula`][attention_math.display.Formula]) also carry ``_repr_markdown_`` (and
``_repr_latex_``), so that Jupyter shows them typeset when a cell ends with one, and
[`show`][attention_math.display.show] prints them typeset in a notebook
(``print = show`` in a notebook's first cell makes a page's ``print`` calls do the same).
Every exact/numeric pair goes through [`crosscheck`][attention_math.crosscheck.crosscheck]
(a disagreement raises).

Examples:
    >>> import numpy as np, sympy as sp
    >>> from attention_math.display import exact_beside_decimal
    >>> shown = exact_beside_decimal("s", 1 / sp.sqrt(2), np.float64(2**-0.5))
    >>> isinstance(shown, str), "$$" in shown, "s = " in shown._repr_markdown_()
    (True, True, True)
"""

from __future__ import annotations

import builtins
import importlib
import math
import re
import sys
from collections.abc import Iterable, Sequence
from typing import IO, Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

from attention_math.crosscheck import CrossCheck, crosscheck
from attention_math.symbolic import latex

__all__ = [
    "COLUMN_CHARS",
    "Formula",
    "Markdown",
    "Svg",
    "badge",
    "bmatrix",
    "decimal_latex",
    "decimal_relation",
    "decimal_text",
    "display",
    "display_row",
    "exact_beside_decimal",
    "exact_digits",
    "fmt",
    "folded",
    "jupyter_markdown",
    "number_tex",
    "sci_text",
    "shape_str",
    "show",
    "shows_exactly",
    "table",
    "teaches",
    "tex_width",
]

COLUMN_CHARS = 54
"""How many characters of typeset maths fit the content column at 1280 px, with a margin
(the browser suite's layout test measures the real widths)."""


class Markdown(str):
    """Markdown text: printed, it is the page's Markdown; in Jupyter, it is shown typeset.

    A ``str`` (every string operation works); joined with ``+`` to other text it stays
    ``Markdown``. Jupyter calls ``_repr_markdown_``, which turns the site's collapsed blocks
    (``??? info "title"``) into HTML ``<details>`` that a notebook knows.

    Examples:
        >>> from attention_math.display import Markdown
        >>> text = Markdown("| a |\\n|---|\\n| 1 |") + "\\n"
        >>> type(text).__name__, text._repr_markdown_()
        ('Markdown', '| a |\\n|---|\\n| 1 |\\n')
    """

    __slots__ = ()

    def __add__(self, other: str) -> Markdown:
        return Markdown(str.__add__(self, other))

    def __radd__(self, other: str) -> Markdown:
        return Markdown(str.__add__(other, self))

    def _repr_markdown_(self) -> str:
        return jupyter_markdown(self)


class Formula(Markdown):
    """One display formula: ``$$ tex $$`` as Markdown, and its LaTeX for Jupyter.

    Examples:
        >>> from attention_math.display import Formula
        >>> f = Formula("a = 1")
        >>> f, f.tex, f._repr_latex_()
        ('\\n$$\\na = 1\\n$$\\n\\n', 'a = 1', '$$a = 1$$')
    """

    tex: str

    def __new__(cls, tex: str) -> Formula:
        self = super().__new__(cls, f"\n$$\n{tex}\n$$\n\n")  # the blank line ends the block
        self.tex = tex
        return self

    def _repr_latex_(self) -> str:
        return f"$${self.tex}$$"


class Svg(str):
    """An SVG figure: printed, it is the page's inline ``<svg>``; in Jupyter, a picture.

    Examples:
        >>> from attention_math.display import Svg
        >>> Svg("<svg/>")._repr_svg_()
        '<svg/>'
    """

    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)


_DETAILS = re.compile(
    r'^(?P<indent> *)(?:\?\?\?\+?|!!!) *(?P<kind>[\w-]+)(?: +"(?P<title>[^"]*)")? *$'
)


def jupyter_markdown(text: str) -> str:
    """The site's Markdown as a notebook shows it: the extensions Jupyter does not know turned
    into plain Markdown and HTML.

    A collapsed block (``??? info "Title"`` over an indented body) becomes ``<details>``; an
    admonition (``!!! note "Title"``) a bold title over its body; the ``compact-table``
    wrapper is dropped (the table stays).

    Examples:
        >>> from attention_math.display import folded, jupyter_markdown
        >>> print(jupyter_markdown(folded("All rows", "| a |\\n|---|\\n| 1 |")))
        <BLANKLINE>
        <details><summary>All rows</summary>
        <BLANKLINE>
        | a |
        |---|
        | 1 |
        <BLANKLINE>
        </details>
        <BLANKLINE>
    """
    lines = [
        ln
        for ln in text.split("\n")
        if not re.fullmatch(r'<div class="compact-table" markdown>', ln)
    ]
    if len(lines) != len(text.split("\n")):
        closing = max(i for i, ln in enumerate(lines) if ln == "</div>")
        del lines[closing]
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _DETAILS.match(lines[i])
        if m is None:
            out.append(lines[i])
            i += 1
            continue
        indent = len(m["indent"]) + 4
        title = m["title"] if m["title"] is not None else m["kind"].capitalize()
        block: list[str] = []
        i += 1
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" " * indent)):
            block.append(lines[i][indent:])
            i += 1
        while block and not block[-1].strip():
            block.pop()
        inner = jupyter_markdown("\n".join(block)).split("\n")
        if m[0].lstrip().startswith("!!!"):
            out += [f"**{title}**", *inner, ""]
        else:
            out += [f"<details><summary>{title}</summary>", *inner, "", "</details>", ""]
    return "\n".join(out)


def _kernel() -> bool:
    """Whether this code runs in a Jupyter (IPython) kernel; IPython is never imported here."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and hasattr(shell, "kernel")


_RICH = ("_repr_markdown_", "_repr_latex_", "_repr_svg_", "_repr_png_", "_repr_html_")


def show(
    *objects: object,
    sep: str = " ",
    end: str = "\n",
    file: IO[str] | None = None,
    flush: bool = False,
) -> None:
    """``print``, but in a Jupyter kernel text is shown as Markdown (maths typeset, tables
    drawn) and figures as pictures.

    In a kernel: text (any ``str``: what the pages print is Markdown) is shown through
    IPython's ``Markdown`` after [`jupyter_markdown`][attention_math.display.jupyter_markdown],
    an object with a rich ``_repr_*_`` (a figure, a formula) as itself, anything else printed.
    Elsewhere, or with ``file=``, it is ``print``. A notebook made from a page starts with
    ``print = show``, so that the page's own ``print`` calls show maths.

    See Also:
        - [`exact_beside_decimal`][attention_math.display.exact_beside_decimal]: a result to show.
        - [`table`][attention_math.display.table]: a Markdown table to show.

    Examples:
        >>> from attention_math.display import display, show
        >>> show(display("a = 1"), "and", 2)
        <BLANKLINE>
        $$
        a = 1
        $$
        <BLANKLINE>
         and 2
    """
    if file is not None or not _kernel():
        builtins.print(*objects, sep=sep, end=end, file=file, flush=flush)
        return
    # only inside a kernel, where IPython is loaded: it is no dependency of the library
    ipython_module: Any = importlib.import_module("IPython.display")
    ipython_markdown: Any = ipython_module.Markdown
    ipython_display: Any = ipython_module.display

    text: list[str] = []

    def flush_text() -> None:
        if text:
            ipython_display(ipython_markdown(jupyter_markdown(sep.join(text))))
            text.clear()

    for obj in objects:
        if isinstance(obj, str) and not isinstance(obj, Svg):
            text.append(obj)
        elif any(hasattr(obj, name) for name in _RICH):
            flush_text()
            ipython_display(obj)
        else:
            text.append(str(obj))  # as print writes it, and as the page shows it
    flush_text()


def decimal_text(x: float, digits: int = 4) -> str:
    """A float with ``digits`` significant digits, as plain text.

    A value that the short form states exactly, or to within float rounding (relative
    1e-12), is printed short (``-2``, ``0.5``, ``1.6602`` for ``0.6602 + 1``); a rounded one
    keeps its trailing zeros, so that ``0.50004`` reads ``0.5000`` and never looks like an
    exact half.

    Examples:
        >>> from attention_math.display import decimal_text
        >>> decimal_text(0.5), decimal_text(0.6602 + 1, 6), decimal_text(-0.99996)
        ('0.5', '1.6602', '-1.000')
        >>> decimal_text(0.50004), decimal_text(1.99999, 3), decimal_text(1e-7 * (1 + 1e-9))
        ('0.5000', '2.00', '1.000e-07')
    """
    x = float(x)
    text = f"{x:.{digits}g}"
    if not shows_exactly(text, x):  # rounded: keep the zeros that say how far
        text = f"{x:#.{digits}g}".replace(".e", "e").rstrip(".")
    return text


def exact_digits(x: sp.Expr, digits: int) -> str:
    """An exact real number to ``digits`` significant digits, correctly rounded (half to even).

    SymPy's ``N(x, digits)`` evaluates to ``digits`` digits and can be one unit off in the last
    one (``N(log(2 - 2**-7) + 127*log(2), 12)`` gives ``88.7189252123``; the value is
    ``88.71892521235…``). This evaluates with 30 guard digits, then rounds the decimal.

    Raises:
        ValueError: if ``digits`` is not positive, or ``x`` is not a finite real number.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.display import exact_digits
        >>> exact_digits(sp.log(2 - sp.Integer(2) ** -7) + 127 * sp.log(2), 12)
        '88.7189252124'
        >>> exact_digits(sp.Rational(1, 3), 4), exact_digits(sp.Integer(2), 3)
        ('0.3333', '2.00')
    """
    from decimal import ROUND_HALF_EVEN, Decimal

    if digits < 1:
        raise ValueError(f"digits must be positive, got {digits}")
    value = sp.N(x, digits + 30)
    if not (value.is_real and value.is_finite):
        raise ValueError(f"x must be a finite real number, got {x}")
    d = Decimal(str(value))
    if d == 0:
        return "0"
    quantum = Decimal(1).scaleb(d.adjusted() - digits + 1)
    r = d.quantize(quantum, rounding=ROUND_HALF_EVEN)
    if r.adjusted() != d.adjusted():  # 9.99… rounded up to 10.0…: one digit fewer after the point
        r = d.quantize(quantum.scaleb(1), rounding=ROUND_HALF_EVEN)
    return f"{r:f}"


def shows_exactly(text: str, x: float) -> bool:
    """Whether the decimal ``text`` is ``x``, up to the float noise of a few operations
    (relative 1e-12): the one rule for dropping trailing zeros and for writing ``=``.

    Examples:
        >>> from attention_math.display import shows_exactly
        >>> shows_exactly("1.6602", 0.6602 + 1), shows_exactly("0.5", 0.50004)
        (True, False)
    """
    return not math.isfinite(x) or math.isclose(float(text), x, rel_tol=1e-12)


def decimal_relation(x: float, digits: int = 4) -> str:
    """``"="`` when ``decimal_text(x, digits)`` states ``x`` (up to float noise), else
    ``"\\approx"``: the sign to write between a name and the printed number.

    Examples:
        >>> from attention_math.display import decimal_relation
        >>> decimal_relation(0.0362, 3), decimal_relation(3.4884, 3)
        ('=', '\\\\approx')
    """
    x = float(x)
    return "=" if shows_exactly(f"{x:.{digits}g}", x) else r"\approx"


def sci_text(x: float, digits: int = 4) -> str:
    """``decimal_text`` with a power of ten written as ``×10⁻⁷`` (figure labels, plain text).

    Examples:
        >>> from attention_math.display import sci_text
        >>> sci_text(8.5e-10, 2), sci_text(0.99999987, 4), sci_text(-3e21, 1)
        ('8.5×10⁻¹⁰', '1.000', '−3×10²¹')
    """
    mantissa, _, exponent = decimal_text(x, digits).partition("e")
    power = f"×10{str(int(exponent)).translate(_SUPERSCRIPT)}" if exponent else ""
    return mantissa.replace("-", "−") + power


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt(x: float, digits: int = 4) -> str:
    """A float with ``digits`` significant digits in LaTeX, with a true minus sign.

    Trailing zeros are kept as ``decimal_text`` keeps them: only for a rounded value.

    Examples:
        >>> from attention_math.display import fmt
        >>> fmt(0.66976154932, 4), fmt(-2.0), fmt(0.50004), fmt(float("-inf"))
        ('0.6698', '-2', '0.5000', '-\\\\infty')
        >>> fmt(1.348e-7)
        '1.348 \\\\times 10^{-7}'
    """
    return number_tex(decimal_text(x, digits))


def number_tex(text: str) -> str:
    """A number as Python writes it (``"1.348e-07"``, ``"-inf"``) in LaTeX.

    Examples:
        >>> from attention_math.display import number_tex
        >>> number_tex("1.348e-07"), number_tex("-inf"), number_tex("0.9950")
        ('1.348 \\\\times 10^{-7}', '-\\\\infty', '0.9950')
    """
    if text.lstrip("-") == "inf":
        return text.replace("inf", r"\infty")
    if "e" in text:  # 1.348e-07 → 1.348 \times 10^{-7}, which MathJax typesets properly
        mantissa, exponent = text.split("e")
        return rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return text


def bmatrix(rows: Iterable[Iterable[str]]) -> str:
    """LaTeX entries, row by row, as a ``bmatrix``.

    Examples:
        >>> from attention_math.display import bmatrix
        >>> bmatrix([["1", "0"], ["0", "1"]])
        '\\\\begin{bmatrix}1 & 0 \\\\\\\\ 0 & 1\\\\end{bmatrix}'
    """
    return r"\begin{bmatrix}" + r" \\ ".join(" & ".join(row) for row in rows) + r"\end{bmatrix}"


def decimal_latex(a: ArrayLike, digits: int = 4) -> str:
    """LaTeX for a NumPy scalar, vector (as a row) or matrix, rounded to ``digits`` digits.

    Examples:
        >>> import numpy as np
        >>> from attention_math.display import decimal_latex
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
    return bmatrix((fmt(x, digits) for x in row) for row in arr)


def display(tex: str) -> Formula:
    """A display-math block for arithmatex.

    Examples:
        >>> from attention_math.display import display
        >>> display("a = 1")
        '\\n$$\\na = 1\\n$$\\n\\n'
    """
    return Formula(tex)


def tex_width(tex: str) -> int:
    """A rough upper estimate of the typeset width of ``tex``, in characters.

    A matrix is as wide as the sum of its widest entry per column, plus 2 per column (the
    space between columns); a fraction as its wider part; a command (``\\sqrt``,
    ``\\infty``) counts as one character, braces and scripts' markers as none.

    Examples:
        >>> from attention_math.display import tex_width
        >>> tex_width(r"\\begin{bmatrix}0.5 & 0.333\\\\1 & 2\\end{bmatrix}")  # 3 + 5 + 2·2
        12
        >>> tex_width(r"\\frac{e^{2}}{2 + e}")
        3
    """

    def matrix(m: re.Match[str]) -> str:
        rows = [r.split("&") for r in m.group(1).split(r"\\")]
        cols = max(len(r) for r in rows)
        widest = [max(tex_width(r[c]) if c < len(r) else 0 for r in rows) for c in range(cols)]
        return "x" * (sum(widest) + 2 * cols)

    t = re.sub(r"\\begin\{[bp]matrix\}(.*?)\\end\{[bp]matrix\}", matrix, tex, flags=re.S)
    frac = re.compile(r"\\[dt]?frac\{((?:[^{}]|\{[^{}]*\})*)\}\{((?:[^{}]|\{[^{}]*\})*)\}")
    while (m := frac.search(t)) is not None:
        t = t[: m.start()] + "x" * max(tex_width(m.group(1)), tex_width(m.group(2))) + t[m.end() :]
    t = re.sub(r"\\(?:left|right|[,;!: ]|quad|qquad)", "", t)
    t = re.sub(r"\\[A-Za-z]+", "x", t)
    return len(re.sub(r"[{}^_\s]", "", t))


def display_row(*parts: str, sep: str = r",\qquad ") -> Markdown:
    """``parts`` side by side in one display when they fit the column, else one per line.

    Examples:
        >>> from attention_math.display import display_row
        >>> display_row("a = 1", "b = 2").count("$$")
        2
        >>> display_row("a = " + "1 + " * 30 + "1", "b = 2").count("$$")
        4
    """
    if sum(tex_width(p) for p in parts) + 2 * (len(parts) - 1) <= COLUMN_CHARS:
        return display(sep.join(parts))
    return Markdown("".join(display(p) for p in parts))


def _integers(exact: object) -> bool:
    """Whether every entry of ``exact`` (a SymPy expression or matrix) is an integer."""
    e = sp.sympify(exact)
    entries = list(e) if isinstance(e, sp.MatrixBase) else [e]
    return all(getattr(x, "is_Integer", False) for x in entries)


def teaches(exact: object, max_digits: int = 6) -> bool:
    """Whether an exact form is worth reading: no rational in it has a numerator or
    denominator longer than ``max_digits`` digits (``6714893/1000000`` is a decimal in
    disguise, ``e/(2 + e)`` teaches).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.display import teaches
        >>> teaches(sp.E / (2 + sp.E)), teaches(sp.exp(sp.Rational(6714893, 10**6)))
        (True, False)
    """
    return not any(
        len(str(abs(r.p))) > max_digits or len(str(r.q)) > max_digits
        for r in sp.sympify(exact).atoms(sp.Rational)
    )


def exact_beside_decimal(
    name: str,
    exact: object,
    numeric: ArrayLike,
    *,
    digits: int = 4,
    bound_eps: float = 16.0,
    show_exact: bool = True,
    fold: bool = False,
) -> Markdown:
    """``name = exact ≈ decimal`` as display math, after cross-checking the two.

    ``name`` is LaTeX. Raises [`CrossCheckError`][attention_math.crosscheck.CrossCheckError]
    when the NumPy value disagrees with the exact one by more than ``bound_eps`` machine
    epsilons. Too wide for one line ([`COLUMN_CHARS`][attention_math.display.COLUMN_CHARS]), the
    decimal goes on a second line; an exact form too wide even for its own line is shown folded, a
    click away, below ``name ≈ decimal``. Integers that NumPy reproduces exactly are shown once,
    ``name = exact`` (the decimal would repeat them). An exact form that does not teach
    ([`teaches`][attention_math.display.teaches]: long rationals) is folded even when it
    fits, and so is any exact form but such integers when ``fold`` is set.

    Examples:
        >>> import numpy as np, sympy as sp
        >>> from attention_math.display import exact_beside_decimal
        >>> print(exact_beside_decimal("s", 1 / sp.sqrt(2), np.float64(2**-0.5)))
        <BLANKLINE>
        $$
        s = \\frac{\\sqrt{2}}{2} \\approx 0.7071
        $$
        <BLANKLINE>
        <span class="checked" title="NumPy float64 agrees with the exact value to ...">✓</span>
        <BLANKLINE>
        >>> wide = sp.Matrix([[sp.exp(sp.Rational(i, 7)) / (2 + sp.E**2) for i in range(20)]])
        >>> text = exact_beside_decimal("P", wide, np.array(wide.evalf(), dtype=float))
        >>> print(text.split("$$")[1].strip())
        P \\approx \\begin{bmatrix}0.1065 & ...\\end{bmatrix}
        >>> '??? info "Exact form of $P$"' in text
        True
        >>> w = sp.Rational(6714893, 10**6)
        >>> folded = exact_beside_decimal("w", w, np.float64(6.714893), fold=True)
        >>> print(folded.split("$$")[1].strip())
        w \\approx 6.715
        >>> text = exact_beside_decimal("Q", sp.Matrix([[1, -2]]), np.array([[1.0, -2.0]]))
        >>> print(text.split("$$")[1].strip())
        Q = \\begin{bmatrix}1 & -2\\end{bmatrix}
    """
    check = crosscheck(exact, numeric, bound_eps=bound_eps, label=name)
    fold = fold or not teaches(exact)
    decimal = decimal_latex(numeric, digits)
    exact_tex = latex(exact) if show_exact else ""
    name_w, exact_w, dec_w = tex_width(name), tex_width(exact_tex), tex_width(decimal)
    if not show_exact:
        body = f"{name} \\approx {decimal}"
        if name_w + dec_w > COLUMN_CHARS:
            body = rf"\begin{{aligned}} {name} \\ &\approx {decimal} \end{{aligned}}"
        return display(body) + badge(check)
    if check.error_eps == 0 and _integers(exact):
        return display(f"{name} = {exact_tex}") + badge(check)
    if not fold and name_w + exact_w + dec_w <= COLUMN_CHARS:
        return display(f"{name} = {exact_tex} \\approx {decimal}") + badge(check)
    if not fold and name_w + exact_w <= COLUMN_CHARS:
        body = rf"\begin{{aligned}} {name} &= {exact_tex} \\ &\approx {decimal} \end{{aligned}}"
        return display(body) + badge(check)
    short = display(f"{name} \\approx {decimal}") + badge(check)
    symbol = name.split("=")[0].strip()
    folded = display(f"{name} = {exact_tex}").strip("\n")
    indented = "\n".join("    " + line if line else "" for line in folded.splitlines())
    return short + f'\n??? info "Exact form of ${symbol}$"\n\n{indented}\n\n'


def badge(check: CrossCheck) -> Markdown:
    """A cross-check as a mark: a ✓ whose tooltip (``title``) gives the measured error and
    the bound, in ε.

    Examples:
        >>> import numpy as np, sympy as sp
        >>> from attention_math.crosscheck import crosscheck
        >>> from attention_math.display import badge
        >>> text = badge(crosscheck(sp.Rational(1, 2), np.float64(0.5), bound_eps=2))
        >>> text.split(">", 1)[1]
        '✓</span>\\n'
        >>> 'title="NumPy float64 agrees with the exact value to 0 ε (bound 2 ε)."' in text
        True
    """
    err, bound = f"{check.error_eps:.2g}", f"{check.bound_eps:g}"
    sentence = f"NumPy {check.dtype} agrees with the exact value to {err} ε (bound {bound} ε)."
    return Markdown(f'<span class="checked" title="{sentence}">✓</span>\n')


def table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, compact: bool = False
) -> Markdown:
    """A Markdown table; ``compact`` narrows its cells' padding (many numeric columns).

    Examples:
        >>> from attention_math.display import table
        >>> print(table(["a", "b"], [[1, 2]]))
        | a | b |
        |---|---|
        | 1 | 2 |
        >>> print(table(["a"], [[1]], compact=True).splitlines()[0])
        <div class="compact-table" markdown>
    """
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    if compact:  # md_in_html: the blank lines keep the table Markdown inside the div
        lines = ['<div class="compact-table" markdown>', "", *lines, "", "</div>"]
    return Markdown("\n".join(lines))


def folded(title: str, markdown: str, *, kind: str = "info") -> Markdown:
    """``markdown`` in a collapsed block titled ``title``, a click away.

    Examples:
        >>> from attention_math.display import folded
        >>> print(folded("All rows", "| a |\\n|---|\\n| 1 |"))
        <BLANKLINE>
        ??? info "All rows"
        <BLANKLINE>
            | a |
            |---|
            | 1 |
        <BLANKLINE>
    """
    body = "\n".join("    " + line if line else "" for line in markdown.splitlines())
    return Markdown(f'\n??? {kind} "{title}"\n\n{body}\n')


def shape_str(a: ArrayLike | sp.MatrixBase) -> str:
    """The shape of ``a`` for LaTeX: ``(2, 3)`` → ``2 \\times 3``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.display import shape_str
        >>> print(shape_str(np.zeros((2, 3))))
        2 \\times 3
    """
    shape = a.shape if hasattr(a, "shape") else np.shape(a)
    return r" \times ".join(str(n) for n in shape)
