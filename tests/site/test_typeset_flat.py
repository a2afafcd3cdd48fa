"""The maths drawn in fewer elements is the same drawing.

``src/attention_site/extensions/typeset.cjs`` replaces each of MathJax's groups that only moves
what it holds by what it holds, each piece moved by the group's transform and then its own.
These tests typeset formulas with and without that step and compare what is drawn: the same
pieces in the same order, with the same attributes, each placed by the same matrix; and the
groups left are exactly those that carry anything besides a move, or that MathJax's stylesheet
reads.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attention_site.extensions import typeset

pytestmark = pytest.mark.docs  # MathJax and Node come with the docs group

# every kind of node the pages' maths uses, and the ones MathJax's stylesheet reads
CORPUS = [
    (r"\operatorname{softmax}\left(\frac{QK^\top}{\sqrt{d_k}} + M\right)V", True),
    (r"q_i^\top k_j", False),
    (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} \begin{bmatrix} a \\ b \end{bmatrix}", True),
    (r"\begin{aligned} a &= b + c \\ &= \sum_{i=1}^{n} x_i \end{aligned} \tag{3}", True),
    (r"f(x) = \begin{cases} 0 & x < 0 \\ x & \text{otherwise} \end{cases}", True),
    (r"\underbrace{e^{s_1} + \dots + e^{s_n}}_{Z} \overset{!}{=} \hat{y} \tilde{z}", True),
    (r"x + \phantom{y} z + \boldsymbol{\theta} + \mathbb{R}^{d} + \boxed{w}", False),
    (r"\Big( \sqrt[3]{\tfrac{a}{b}} \Big) \left\| x \right\|_2 \text{très}", False),
    (r"\frac{\partial \ell}{\partial s_{ij}} = P_{ij}\,(dP_{ij} - D_i)", True),
    (r"\mathrm{ALiBi}(i, j) = -m_h \cdot |i - j| \quad \text{for } j \le i", True),
    (r"\lim_{x \to \infty} \int_0^1 \prod_k \max_j \log(1 + e^{x})\, dx", True),
]
ONLY_MOVES = {"data-mml-node", "data-mjx-texclass", "transform"}
STYLED = {"merror", "maction", "mtable"}
SVG = "{http://www.w3.org/2000/svg}"


def _matrix(transform: str) -> tuple[float, ...]:
    """The 2-D affine matrix ``(a, b, c, d, e, f)`` of an SVG transform list."""
    m = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    for name, args in re.findall(r"(\w+)\(([^)]*)\)", transform):
        v = [float(x) for x in re.split(r"[\s,]+", args.strip())]
        if name == "translate":
            step = (1.0, 0.0, 0.0, 1.0, v[0], v[1] if len(v) > 1 else 0.0)
        elif name == "scale":
            step = (v[0], 0.0, 0.0, v[1] if len(v) > 1 else v[0], 0.0, 0.0)
        elif name == "rotate" and len(v) == 1:
            c, s = math.cos(math.radians(v[0])), math.sin(math.radians(v[0]))
            step = (c, s, -s, c, 0.0, 0.0)
        elif name == "matrix":
            step = (v[0], v[1], v[2], v[3], v[4], v[5])
        else:
            raise AssertionError(f"a transform the test does not read: {name}({args})")
        a, b, c, d, e, f = m
        a2, b2, c2, d2, e2, f2 = step
        m = (
            a * a2 + c * b2,
            b * a2 + d * b2,
            a * c2 + c * d2,
            b * c2 + d * d2,
            a * e2 + c * f2 + e,
            b * e2 + d * f2 + f,
        )
    return m


def _drawn(svg: ET.Element) -> Iterator[tuple[str, dict[str, str], tuple[float, ...]]]:
    """Each element under ``svg`` that is not a group, in document order: its tag, its
    attributes but its transform and its text, and the matrix that places it (its groups'
    and its own)."""

    def walk(node: ET.Element, outer: str) -> Iterator[tuple[str, dict[str, str], tuple]]:
        for child in node:
            moves = f"{outer} {child.get('transform', '')}"
            if child.tag != f"{SVG}g":
                rest = {k: v for k, v in child.attrib.items() if k != "transform"}
                rest["text"] = child.text or ""
                yield child.tag, rest, _matrix(moves)
            yield from walk(child, moves)  # a kept group, or what a piece holds

    yield from walk(svg, "")


def _svg(markup: str) -> ET.Element:
    svg = ET.fromstring(markup).find(f"{SVG}svg")
    assert svg is not None, markup[:200]
    return svg


def _described(g: ET.Element) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(g.attrib.items()) if k != "transform")


def _kept(node: ET.Element) -> Iterator[str]:
    """The groups the flattening must keep: a description of each, in document order."""
    for child in node:
        if child.tag == f"{SVG}g":
            mml = child.get("data-mml-node")
            keep = (
                mml is None
                or set(child.attrib) - ONLY_MOVES
                or mml in STYLED
                or node.get("data-mml-node") == "mtable"  # a table's row
                or any(c.tag == f"{SVG}svg" for c in child)
            )
            if keep:
                yield _described(child)
        yield from _kept(child)


def _compare(kept: str, flat: str) -> None:
    before, after = _svg(kept), _svg(flat)
    drawn_before, drawn_after = list(_drawn(before)), list(_drawn(after))
    assert [d[:2] for d in drawn_before] == [d[:2] for d in drawn_after]
    for (tag, _, m1), (_, _, m2) in zip(drawn_before, drawn_after, strict=True):
        close = [
            math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-9) for x, y in zip(m1, m2, strict=True)
        ]
        assert all(close), (tag, m1, m2)
    assert Counter(map(_described, after.iter(f"{SVG}g"))) == Counter(_kept(before))
    # the MathML beside the drawing, for screen readers, is untouched
    assert kept.split("<mjx-assistive-mml", 1)[1] == flat.split("<mjx-assistive-mml", 1)[1]


@pytest.fixture(scope="module")
def hook() -> Any:
    return typeset


def _both(hook: Any, items: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    typesetter = hook.Typesetter()
    try:
        kept = typesetter.typeset(items, flat=False)
        flat = typesetter.typeset(items, flat=True)
    finally:
        typesetter.close()
    assert kept["errors"] == flat["errors"] == []
    assert kept["cache"] == flat["cache"]  # the glyphs drawn are the same
    return kept["html"], flat["html"]


def _compare_each(hook: Any, items: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Typeset ``items`` both ways and compare each formula (named in the failure)."""
    kept, flat = _both(hook, items)
    for before, after, item in zip(kept, flat, items, strict=True):
        try:
            _compare(before, after)
        except AssertionError as error:
            raise AssertionError(f"{item['tex']}: {error}") from error
    return kept, flat


def test_the_flattened_maths_is_the_same_drawing(hook: Any) -> None:
    kept, flat = _compare_each(hook, [{"tex": tex, "display": d} for tex, d in CORPUS])
    elements = [sum(1 for _ in _svg(h).iter()) for h in (*kept, *flat)]
    # the point of it: fewer elements (about 30 % fewer on these formulas)
    assert sum(elements[len(kept) :]) < 0.8 * sum(elements[: len(kept)])


def test_the_comparison_sees_a_piece_moved(hook: Any) -> None:
    """The check above can fail: a glyph moved by a hundredth of a unit is caught."""
    kept, flat = _both(hook, [{"tex": r"\frac{a}{b}", "display": False}])
    moved = re.sub(r"translate\((\d+)", lambda m: f"translate({int(m[1]) + 0.01}", flat[0], count=1)
    assert moved != flat[0]
    with pytest.raises(AssertionError):
        _compare(kept[0], moved)


def test_every_formula_of_the_built_site_is_the_same_drawing(hook: Any, built_site: Path) -> None:
    """The site's own maths, each distinct formula once, both ways."""
    import html

    found: dict[tuple[str, bool], None] = {}
    for page in sorted(built_site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        for tag, tex in re.findall(r'<(span|div) class="arithmatex" data-tex="([^"]*)"', text):
            found[(html.unescape(tex), tag == "div")] = None
    assert len(found) > 500
    # macros defined on a page would leak into the formulas after them: none are used
    assert not any(hook.DEFINES.search(tex) for tex, _ in found)
    _compare_each(hook, [{"tex": tex, "display": display} for tex, display in found])
