r"""A displayed formula too wide for a phone, broken over lines at its relations.

MathJax draws a formula once, at build time, as SVG: it cannot break the line where the
reader's screen ends. So `typeset` draws a formula wider than a phone's column twice: as
written, and as ``narrow_tex`` rewrites it, one relation per line in an ``aligned``
environment (``a = b = c`` becomes ``a &= b \\ &= c``), or, with one relation only, with its
right-hand side broken before a ``+`` or ``-`` near its middle. The style sheet shows the
narrow drawing below the screen width at which the wide one no longer fits.

Only the top level of the formula is read: a relation inside braces, ``\left … \right`` or an
environment (a matrix) stays where it is. A formula that is already on several lines (a top
level ``\\`` or ``&``) or tagged is left as it is.

Examples:
    >>> print(narrow_tex(r"\frac{a}{b} = c + d \approx 0.5"))
    \begin{aligned}\frac{a}{b} &= c + d \\ &\approx 0.5\end{aligned}
    >>> print(narrow_tex(r"x = 1, \quad y = 2"))
    \begin{aligned}x &= 1, \\ y &= 2\end{aligned}
    >>> narrow_tex(r"\begin{bmatrix}a = b\end{bmatrix}") is None
    True
"""

from __future__ import annotations

import re

__all__ = ["RELATIONS", "narrow_tex", "top_level"]

RELATIONS = frozenset(
    {
        "=", "<", ">", ":=",
        r"\le", r"\leq", r"\ge", r"\geq", r"\lt", r"\gt", r"\leqslant", r"\geqslant",
        r"\ne", r"\neq", r"\approx", r"\equiv", r"\sim", r"\simeq", r"\propto",
        r"\to", r"\rightarrow", r"\Rightarrow", r"\implies", r"\iff", r"\mapsto",
        r"\coloneqq", r"\triangleq",
    }
)  # fmt: skip
"""The relations a line may begin with."""

SEPARATORS = frozenset({r"\quad", r"\qquad"})
"""Spacing that separates two statements on one line (``x = 1, \\quad y = 2``)."""

TOKEN = re.compile(r"\\[a-zA-Z]+\*?|\\.|:=|\s+|.", re.S)


def top_level(tex: str) -> list[tuple[str, bool]]:
    """``tex`` as tokens, each with whether it stands at the top level (an environment's
    name, ``{bmatrix}`` after ``\\begin``, is one token).

    Examples:
        >>> [t for t, top in top_level(r"a^{b=c} = d") if top and t.strip()]
        ['a', '^', '{', '}', '=', 'd']
    """
    out: list[tuple[str, bool]] = []
    depth = 0
    for token in _fold_names(tex):
        if token in ("{", r"\left", r"\begin"):
            out.append((token, depth == 0))
            depth += 1
        elif token in ("}", r"\right", r"\end"):
            depth -= 1
            out.append((token, depth == 0))
        else:
            out.append((token, depth == 0))
    if depth != 0:
        raise ValueError(f"unbalanced braces, \\left/\\right or environments in {tex!r}")
    return out


def _fold_names(tex: str) -> list[str]:
    r"""Tokens, with an environment's name group (``{bmatrix}`` after ``\begin``) as one token."""
    raw = [m.group() for m in TOKEN.finditer(tex)]
    out: list[str] = []
    i = 0
    while i < len(raw):
        out.append(raw[i])
        if raw[i] in (r"\begin", r"\end") and raw[i + 1 : i + 2] == ["{"]:
            j = raw.index("}", i + 1) if "}" in raw[i + 1 :] else len(raw) - 1
            out.append("".join(raw[i + 1 : j + 1]))
            i = j
        i += 1
    return out


def _lines(tokens: list[tuple[str, bool]]) -> list[tuple[str, str]] | None:
    """The formula cut before each top-level relation and after each separator: a list of
    ``(relation, the rest of its line)``, the first with relation ``""`` (its left side).
    None where the formula is on several lines already."""
    lines: list[list[str]] = [["", ""]]
    previous_top = ""
    for token, top in tokens:
        if top and token in (r"\\", "&", r"\tag", r"\label", r"\notag", r"\nonumber"):
            return None
        if top and token in RELATIONS and lines[-1][1].strip() and previous_top != token:
            lines.append([token, ""])
        elif top and token in SEPARATORS:
            lines.append(["\n", ""])  # a new statement: a line of its own
        else:
            lines[-1][1] += token
        if top and token.strip():
            previous_top = token
    return [(rel, rest.strip()) for rel, rest in lines]


def _halves(rhs: str) -> tuple[str, str] | None:
    """``rhs`` cut before the top-level ``+`` or ``-`` nearest its middle (not a sign)."""
    tokens = top_level(rhs)
    cuts: list[int] = []
    at, seen_operand = 0, False
    for token, top in tokens:
        if top and token in ("+", "-") and seen_operand:
            cuts.append(at)
            seen_operand = False
        elif token.strip():
            seen_operand = (top and token not in RELATIONS) or seen_operand
        at += len(token)
    if not cuts:
        return None
    middle = len(rhs) / 2
    cut = min(cuts, key=lambda c: abs(c - middle))
    return rhs[:cut].strip(), rhs[cut:].strip()


def narrow_tex(tex: str) -> str | None:
    r"""``tex`` rewritten over several lines (``aligned``), or None when it cannot be broken
    at its top level.

    Examples:
        >>> print(narrow_tex(r"E = a + b + c + d"))
        \begin{aligned}E &= a + b \\ &\quad + c + d\end{aligned}
        >>> narrow_tex(r"y = \sum_{j} p_j v_j") is None
        True
    """
    try:
        tokens = top_level(tex)
    except ValueError:
        return None
    cut = _lines(tokens)
    if cut is None:
        return None
    statements: list[list[tuple[str, str]]] = [[]]
    for rel, rest in cut:
        if rel == "\n":
            statements.append([("", rest)])
        else:
            statements[-1].append((rel, rest))
    rows: list[str] = []
    for statement in statements:
        if not statement:
            continue
        (_, left), *relations = statement
        if not relations:
            rows.append(left)
            continue
        if len(relations) == 1 and len(statements) == 1:
            rel, rhs = relations[0]
            halves = _halves(rhs)
            if halves is None:
                return None
            rows.append(f"{left} &{rel} {halves[0]}")
            rows.append(f"&\\quad {halves[1]}")
            continue
        rows.append(f"{left} &{relations[0][0]} {relations[0][1]}")
        rows.extend(f"&{rel} {rest}" for rel, rest in relations[1:])
    if len(rows) < 2:
        return None
    return "\\begin{aligned}" + " \\\\ ".join(rows) + "\\end{aligned}"
