"""The terminal: the site's inline LaTeX as Unicode maths, tables that fit 100 columns, and
the error a command raises when it was called wrongly.

The exercise statements are written for the site (``$d_k = 64$``, ``\\operatorname{softmax}``);
the command line prints them through `plain`, which reads the small subset of LaTeX they
use and writes ``dₖ = 64``, ``softmax``. `table` lays out rows in columns no wider than a
terminal, wrapping long cells instead of running past the edge.
"""

from __future__ import annotations

import difflib
import re
import textwrap
from collections.abc import Sequence

__all__ = ["WIDTH", "UsageError", "did_you_mean", "plain", "table", "wrap"]

WIDTH = 100
"""Terminal output never runs wider than this many columns."""


class UsageError(Exception):
    """A command was called wrongly (an unknown id, an answer that cannot be read): the command
    line prints the message on stderr with the usage and exits with status 2."""


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """A hint naming the choice closest to a mistyped ``word``, or ``""`` when none is close.

    Examples:
        >>> from attention_math.terminal import did_you_mean
        >>> did_you_mean("scaling-factr", ["scaling-factor", "softmax-logs"])
        "; did you mean 'scaling-factor'?"
        >>> did_you_mean("zzz", ["audit"])
        ''
    """
    close = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


_SUB = dict(
    zip("0123456789aehijklmnoprstuvx+-=()", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋₌₍₎", strict=True)
)
_SUP = dict(zip("0123456789in()+-=", "⁰¹²³⁴⁵⁶⁷⁸⁹ⁱⁿ⁽⁾⁺⁻⁼", strict=True))
_SYMBOLS = {
    r"\top": "ᵀ",
    r"\cdot": "·",
    r"\times": "×",
    r"\to": "→",
    r"\mapsto": "↦",
    r"\infty": "∞",
    r"\partial": "∂",
    r"\sigma": "σ",
    r"\ell": "ℓ",
    r"\alpha": "α",
    r"\beta": "β",
    r"\gamma": "γ",
    r"\delta": "δ",
    r"\varepsilon": "ε",
    r"\epsilon": "ε",
    r"\theta": "θ",
    r"\vartheta": "ϑ",
    r"\lambda": "λ",
    r"\mu": "μ",
    r"\pi": "π",
    r"\tau": "τ",
    r"\phi": "φ",
    r"\varphi": "φ",
    r"\sin": "sin",
    r"\ln": "ln",
    r"\propto": "∝",
    r"\pm": "±",
    r"\cup": "∪",
    r"\mid": "|",
    r"\left": "",
    r"\right": "",
    r"\lfloor": "⌊",
    r"\rfloor": "⌋",
    r"\lceil": "⌈",
    r"\rceil": "⌉",
    r"\cos": "cos",
    r"\langle": "⟨",
    r"\rangle": "⟩",
    r"\lVert": "‖",
    r"\rVert": "‖",
    r"\|": "‖",  # the norm's bars as matplotlib's mathtext writes them
    r"\circ": "∘",
    r"\sim": "~",
    r"\mathcal ": "",
    r"\mathbb ": "",
    r"\omega": "ω",
    r"\rho": "ρ",
    r"\eta": "η",
    r"\nu": "ν",
    r"\xi": "ξ",
    r"\chi": "χ",
    r"\psi": "ψ",
    r"\Delta": "Δ",
    r"\Lambda": "Λ",
    r"\Pi": "Π",
    r"\Sigma": "Σ",
    r"\Theta": "Θ",
    r"\Phi": "Φ",
    r"\Omega": "Ω",
    r"\odot": "⊙",
    r"\max": "max",
    r"\min": "min",
    r"\in": "∈",
    r"\ldots": "…",
    r"\cdots": "⋯",
    r"\dots": "…",
    r"\leq": "≤",
    r"\geq": "≥",
    r"\le": "≤",
    r"\ge": "≥",
    r"\ne": "≠",
    r"\approx": "≈",
    r"\sum": "Σ",
    r"\lim": "lim",
    r"\exp": "exp",
    r"\log": "log",
    r"\,": " ",
    r"\;": " ",
    r"\!": "",
}
_GROUP = r"\{([^{}]*)\}"  # one brace group with no braces inside


def _script(text: str, table: dict[str, str], mark: str) -> str:
    """``text`` in sub/superscript letters when every character has one; else ``d_model``,
    ``^x``, or with parentheses (``^(1/√2)``, ``lim_(c→∞)``) when it is more than a word."""
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    if re.fullmatch(r"\w+", text) and (mark == "_" or len(text) == 1):
        return mark + text
    return f"{mark}({text})"


def _root(arg: str) -> str:
    return "√" + (arg if re.fullmatch(r"\w+", arg) else f"({arg})")


def _math(tex: str) -> str:
    """One inline formula (the text between ``$ … $``) as Unicode."""
    s = tex.replace(r"\mathbf{1}", "𝟏")  # the all-ones vector: c𝟏, not c1
    s = re.sub(r"\\(?:operatorname|mathrm|text|mathit|mathbf|mathcal|mathbb)" + _GROUP, r"\1", s)
    s = re.sub(r"\^(?:\\top|\{\\top\})", "ᵀ", s)
    s = re.sub(r"\\hat\s*(?:\{(\w)\}|(\w))", lambda m: (m[1] or m[2]) + "\u0302", s)  # q̂
    s = re.sub(r"\\mathbf\s*(?:\{(\w)\}|(\w))", lambda m: m[1] or m[2], s)  # bold: the letter
    s = re.sub(r"\\tilde\s*(?:\{(\w)\}|(\w))", lambda m: (m[1] or m[2]) + "\u0303", s)  # q̃
    s = re.sub(r"\\bar\s*(?:\{(\w)\}|(\w))", lambda m: (m[1] or m[2]) + "\u0304", s)  # x̄
    for name, char in sorted(_SYMBOLS.items(), key=lambda kv: -len(kv[0])):
        after = r"(?![A-Za-z])" if name[-1].isalpha() else ""
        s = re.sub(re.escape(name) + after, char, s)  # no backslash in char
    s = s.replace("∂ ", "∂")
    one = r"(?:" + _GROUP + r"|([0-9A-Za-z]))"  # x^{…} or x^2
    s = re.sub(r"\^" + one, lambda m: _script(m[1] or m[2], _SUP, "^"), s)
    s = re.sub(r"_" + one, lambda m: _script(m[1] or m[2], _SUB, "_"), s)
    for _ in range(3):  # nested \frac / \sqrt: innermost first
        s = re.sub(r"\\frac" + _GROUP + _GROUP, r"(\1)/(\2)", s)
        s = re.sub(r"\\sqrt" + _GROUP, lambda m: _root(m[1]), s)
    s = re.sub(r"\\sqrt\s*(\w)", r"√\1", s)
    s = s.replace("{", "").replace("}", "")
    return re.sub(r"\(([^()\s]+)\)/\(([^()\s]+)\)", r"\1/\2", s)  # (a)/(b) → a/b


def plain(text: str) -> str:
    """``text`` with each ``$…$`` formula written in Unicode and code spans unquoted.

    Examples:
        >>> from attention_math.terminal import plain
        >>> plain("By what number are the scores multiplied when $d_k = 64$?")
        'By what number are the scores multiplied when dₖ = 64?'
        >>> plain(r"$P = \\operatorname{softmax}(QK^\\top/\\sqrt{d_k})$ with $d_{model} = 6$")
        'P = softmax(QKᵀ/√dₖ) with d_model = 6'
        >>> plain(r"$\\sigma = e^{1/\\sqrt2}/(1 + e^{1/\\sqrt2})$; type it as `sigma`.")
        "σ = e^(1/√2)/(1 + e^(1/√2)); type it as 'sigma'."
        >>> plain(r"truncation $C \\Delta^2$, optimum $\\Delta^*$")
        'truncation C Δ², optimum Δ^*'
        >>> plain(r"bound $p_{\\bar S} \\max\\|v_i - v_j\\|$")
        'bound p_(S̄) max‖vᵢ - vⱼ‖'
    """
    out = re.sub(r"\$([^$]+)\$", lambda m: _math(m[1]), text)
    return re.sub(r"`([^`]+)`", r"'\1'", out)


def table(head: Sequence[str], rows: Sequence[Sequence[object]], width: int = WIDTH) -> str:
    """Rows in columns separated by two spaces, no line longer than ``width``: when the
    natural widths do not fit, the widest columns are narrowed and their cells wrapped.

    Examples:
        >>> from attention_math.terminal import table
        >>> print(table(["claim", "note"], [["P[1,1]", "last digit off by one"]], width=20))
        claim   note
        P[1,1]  last digit
                off by one
    """
    cells = [[str(c) for c in r] for r in [list(head), *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    room = width - 2 * (len(head) - 1)
    while sum(widths) > room:
        i = widths.index(max(widths))
        if widths[i] <= 8:
            raise ValueError(f"{len(head)} columns cannot fit in {width} characters")
        widths[i] -= 1
    lines = []
    for r in cells:
        wrapped = [
            textwrap.wrap(c, w, break_on_hyphens=False) or [""]
            for c, w in zip(r, widths, strict=True)
        ]
        for k in range(max(len(w) for w in wrapped)):
            parts = [
                (w[k] if k < len(w) else "").ljust(n) for w, n in zip(wrapped, widths, strict=True)
            ]
            lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def wrap(text: str, width: int = WIDTH, indent: str = "") -> str:
    """``text`` wrapped to ``width`` columns, each paragraph (split at blank lines) on its own;
    a relation such as ``τ = 1`` is never split across lines.

    Examples:
        >>> from attention_math.terminal import wrap
        >>> print(wrap("one two three four", 9, indent="  "))
          one two
          three
          four
        >>> print(wrap("a kernel of width τ = 1", 20))  # not "… width τ" then "= 1"
        a kernel of width
        τ = 1
    """
    paragraphs = _RELATION.sub("\xa0\\1\xa0", text).split("\n\n")  # held by no-break spaces
    return "\n\n".join(
        textwrap.fill(
            p, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
        ).replace("\xa0", " ")
        for p in paragraphs
    )


_RELATION = re.compile(r" ([=≤≥≈<>]) ")
