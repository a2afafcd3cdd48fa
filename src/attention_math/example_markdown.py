"""Markdown for the worked-example pages: inputs, steps, verdicts, heatmap (the audit shown).

Each function returns text that a markdown-exec block prints; every exact/numeric pair
goes through [`exact_beside_decimal`][attention_math.display.exact_beside_decimal], so a
disagreement fails the build.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from attention_math.audit import Finding, audit, format_computed, steps
from attention_math.display import (
    decimal_latex,
    decimal_text,
    display,
    exact_beside_decimal,
    folded,
    table,
    teaches,
)
from attention_math.examples import AGREES, EXAMPLES, SLIP, WRONG
from attention_math.plot.heatmap import heatmap
from attention_math.symbolic import latex

__all__ = ["heatmap_svg", "inputs_md", "steps_md", "summary_md", "verdicts_md"]

_TEX = {
    "x": "X",
    "w_q": "W_Q",
    "w_k": "W_K",
    "w_v": "W_V",
    "q": "Q = XW_Q",
    "k": "K = XW_K",
    "v": "V = XW_V",
    "scores": "QK^\\top",
    "scaled": "S = QK^\\top/\\sqrt{d_k}",
    "weights": "P = \\operatorname{softmax}(S)",
    "output": "O = PV",
}


def _entry_tex(name: str) -> str:
    """LaTeX for the first entry of step ``name``: ``S_{11}``, ``(QK^\\top)_{11}``."""
    symbol = _TEX.get(name, name).split("=")[0].strip()
    return f"{symbol}_{{11}}" if len(symbol) == 1 else f"({symbol})_{{11}}"


def _entry_form(
    name: str,
    e: sp.Expr,
    pairs: dict[str, tuple[sp.Matrix, np.ndarray]],
    key_order: bool = False,
) -> str:
    """LaTeX of the first entry of step ``name`` as a reader would write it by hand.

    An unmasked weight is written as the softmax it is, $e^{S_{11}} / \\sum_j e^{S_{1j}}$, with
    the exact scores in it (SymPy would cancel a common factor and hide them); with
    ``key_order``, an unmasked output as its weighted sum, terms in key order (SymPy would sort
    them its own way); any other entry (a masked weight, an output) as one fraction. Each
    rewrite is checked against the exact entry to 30 digits (a mismatch raises).
    """
    unmasked = "scaled" in pairs and "mask" not in pairs
    if unmasked:  # the first row's softmax denominator, its terms in key order
        s = pairs["scaled"][0]
        bottom = " + ".join(f"e^{{{latex(s[0, j])}}}" for j in range(s.cols))
        total = sum(sp.exp(s[0, j]) for j in range(s.cols))
    if unmasked and name == "weights":
        softmax = "\\frac{e^{S_{11}}}{\\sum_j e^{S_{1j}}}"
        value = sp.exp(s[0, 0]) / total
        form = f"{softmax} = \\frac{{e^{{{latex(s[0, 0])}}}}}{{{bottom}}}"
    elif unmasked and key_order and name == "output" and "v" in pairs:
        v = pairs["v"][0]  # terms in key order, j = 1, 2, ...
        top = " + ".join(f"{latex(v[j, 0])}\\, e^{{{latex(s[0, j])}}}" for j in range(s.cols))
        value = sum(v[j, 0] * sp.exp(s[0, j]) for j in range(s.cols)) / total
        weighted = "\\sum_j P_{1j} V_{j1} = \\frac{\\sum_j e^{S_{1j}} V_{j1}}{\\sum_j e^{S_{1j}}}"
        form = f"{weighted} = \\frac{{{top}}}{{{bottom}}}"
    else:
        value = sp.together(e)
        form = latex(value)
    if abs(sp.N(value - e, 30)) > sp.Float(10) ** -25 * (1 + abs(sp.N(e, 30))):
        raise ValueError(f"the {name} entry's rewritten form differs from its exact value")
    return form


def inputs_md(example_id: str, digits: int = 7) -> str:
    """The published inputs, exact when short, as decimals otherwise.

    Examples:
        >>> from attention_math.example_markdown import inputs_md
        >>> inputs_md("identity-2x2").split(",")[0].strip()
        '$$\\nX = \\\\begin{bmatrix}1 & 0\\\\\\\\0 & 1\\\\end{bmatrix}'

    """
    ex = EXAMPLES[example_id]
    parts = []
    for name in ("x", "w_q", "w_k", "w_v", "scaled", "v"):
        if not ex.has(name):
            continue
        tex = "S" if name == "scaled" else "V" if name == "v" else _TEX[name]
        exact = ex.exact(name)
        shown = latex(exact)
        if len(shown) > 400 or "frac" in shown:
            shown = decimal_latex(ex.numeric(name), digits)
        parts.append(f"{tex} = {shown}")
    if sum(EXAMPLES[example_id].exact(n).cols for n in ("x", "w_q") if ex.has(n)) > 4:
        return "".join(display(p) for p in parts)  # wide matrices: one per line
    return display(", \\qquad ".join(parts))


def steps_md(
    example_id: str,
    names: tuple[str, ...] | None = None,
    *,
    max_exact: int = 400,
    digits: int = 4,
    key_order: bool = False,
) -> str:
    """Every computed step, exact beside decimal (exact shown when its LaTeX is short).

    With ``key_order``, the exact first output entry is written as its weighted sum with the
    keys' terms in order, $j = 1, 2, \\dots$, so a reader can match it against $P$ and $V$.

    Examples:
        >>> from attention_math.example_markdown import steps_md
        >>> "agrees with the exact value" in steps_md("identity-2x2", ("weights",))
        True
    """
    pairs = steps(example_id)
    out = []
    for name in names or tuple(pairs):
        if name not in pairs or name == "mask":
            continue
        exact, num = pairs[name]
        show = len(latex(exact)) <= max_exact
        out.append(
            exact_beside_decimal(_TEX.get(name, name), exact, num, digits=digits, show_exact=show)
        )
        if not show and exact.shape != (1, 1):  # the exact form of one entry, for the reader
            entry = _entry_tex(name)
            shown = display(f"{entry} = {_entry_form(name, exact[0, 0], pairs, key_order)}")
            # a long rational (a decimal in disguise) is a click away, not in the reading line
            out.append(shown if teaches(exact[0, 0]) else folded(f"Exact form of ${entry}$", shown))
    return "\n".join(out)


def _fmt(values: tuple[float, ...]) -> str:
    if not values:
        return "—"
    shown = [decimal_text(v, 6) for v in values]
    return ", ".join(shown) if len(shown) <= 3 else ", ".join(shown[:3]) + f", … ({len(shown)})"


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())


def verdicts_md(example_id: str) -> str:
    """The example's claims: the ones that teach in a table, the agreeing ones folded.

    Claims the audit finds wrong or slipped are shown with their verdict, diagnosis and
    what the diagnosis computes; the claims that agree follow in a collapsed block
    (pymdownx.details), published beside exact, one click away.

    Examples:
        >>> from attention_math.example_markdown import verdicts_md
        >>> text = verdicts_md("the-cat-sleeps")
        >>> print(text.splitlines()[2])
        | claim | published | verdict: diagnosis |
        >>> print(text.split("???", 1)[1].splitlines()[0])
         success "The other 23 claims agree with the exact values"
    """
    taught, agreeing = [], []
    for f in audit([example_id]):
        c = f.claim
        published = ", ".join(c.published)
        if len(c.published) > 3:
            published = ", ".join(c.published[:3]) + f", … ({len(c.published)})"
        claim = f"{c.id}<br><small>{c.where}</small>"
        exact = format_computed(f.computed, c)
        if f.verdict == AGREES:
            agreeing.append([claim, published, exact])
            continue
        verdict = f"**{f.verdict}**: {f.diagnosis or 'no diagnosis'}"
        if f.hypothesis_values:
            verdict += f" (it computes {_fmt(f.hypothesis_values)})"
        # three columns, the exact value under the published one: a phone keeps the verdict
        taught.append([claim, f"{published}<br><small>exact: {exact}</small>", verdict])
    out: list[str] = []
    if taught:
        out.append(table(["claim", "published", "verdict: diagnosis"], taught, compact=True))
    if agreeing:
        label = "The other" if taught else "All"
        title = f"{label} {len(agreeing)} claims agree with the exact values"
        out.append(
            f'??? success "{title}"\n\n' + _indent(table(["claim", "published", "exact"], agreeing))
        )
    return "\n\n".join(out) + "\n"


def summary_md(findings: list[Finding]) -> str:
    """One sentence counting the verdicts.

    Examples:
        >>> from attention_math.audit import audit
        >>> from attention_math.example_markdown import summary_md
        >>> summary_md(audit(["the-cat-sleeps"]))
        '27 claims: 23 agree, 0 rounding slips, 4 wrong.'
    """
    n = {v: sum(f.verdict == v for f in findings) for v in (AGREES, SLIP, WRONG)}
    return f"{len(findings)} claims: {n[AGREES]} agree, {n[SLIP]} rounding slips, {n[WRONG]} wrong."


def heatmap_svg(example_id: str, title: str | None = None) -> str:
    """The example's attention weights as an SVG heatmap: the float64 NumPy weights of
    [`steps`][attention_math.audit.steps], cross-checked against the exact ones.

    Examples:
        >>> from attention_math.example_markdown import heatmap_svg
        >>> heatmap_svg("lets-go").startswith("<svg")
        True
    """
    ex = EXAMPLES[example_id]
    _, w = steps(example_id)["weights"]
    labels = list(ex.tokens) if ex.tokens else None
    return heatmap(
        w,
        title=title or f"Attention weights: {ex.title}",
        row_labels=labels,
        col_labels=labels,
    )
