"""Cross-checks on the site read as a ✓ mark (``display.badge``), never as a sentence.

The long form is ``str(CrossCheck)``: "label: largest error 0.5 ε (float64), bound 16 ε:
agrees". The mark is a ✓ and keeps the figures in its tooltip. A page that prints the sentence again fails
here: in the built site (what the reader sees) and, without a build, in the pages' sources.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math.crosscheck import crosscheck
from attention_math.display import badge
from attention_site.extensions import badges
from tests.conftest import mkdocs_config, nav_pages

ROOT = Path(__file__).resolve().parents[2]

#: str(CrossCheck), and the badge's own sentence outside its title attribute
LONG = re.compile(
    r"largest error \S+ ε \(\w+\), bound \S+ ε: (?:agrees|DISAGREES)"
    r"|agrees with the exact value to \S+ ε"
    r"|= exact ± \S+ ε"  # the figures in the line, where the tooltip should hold them
)
#: an f-string that interpolates a CrossCheck itself: {check}, {crosscheck(...)}
PRINTED = re.compile(r"\{(?:check|crosscheck\([^{}]*\))(?:![rs])?\}")


def _text(html: str) -> str:
    """The prose a reader reads: code (the API page's doctest of ``badge`` quotes the
    tooltip) and tags (and so the badges' title attributes) removed."""
    prose = re.sub(r"<(pre|code)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", prose))


def test_the_pattern_matches_the_long_form_and_not_the_badge() -> None:
    check = crosscheck(sp.Rational(1, 3), np.float64(1 / 3), label="P")
    assert LONG.search(str(check))
    assert not LONG.search(_text(badge(check)))
    assert _text(badge(check)).strip() == "✓"  # a mark in the line
    assert re.search(r'title="[^"]*to \S+ ε \(bound 16 ε\)', badge(check))  # figures: tooltip


def test_no_page_source_prints_a_crosscheck_as_a_sentence() -> None:
    found = [
        f"{md.relative_to(ROOT)}:{n}"
        for md in sorted((ROOT / "docs").rglob("*.md"))
        for n, line in enumerate(md.read_text("utf-8").splitlines(), 1)
        if PRINTED.search(line)
    ]
    assert not found, f"print render.badge(check) instead of the CrossCheck itself: {found}"


@pytest.mark.docs
def test_no_built_page_shows_the_long_crosscheck_sentence(built_site: Path) -> None:
    found = {}
    for html in sorted(built_site.rglob("*.html")):
        hits = LONG.findall(_text(html.read_text("utf-8")))
        if hits:
            found[str(html.relative_to(built_site))] = hits[0]
    assert not found, f"long cross-check sentences (use render.badge): {found}"


def test_badges_link_to_the_epsilon_page_under_the_sites_path() -> None:
    span = '<span class="checked" title="NumPy agrees">✓</span>'
    html = f"<p>before</p>{span}<p>after {span}</p>"
    href = badges.site_path("https://example.org/attention-math/") + badges.TARGET
    out = badges.linked(html, href)
    assert out.count('<a class="checked" href="/attention-math/reference/epsilon/" title=') == 2
    assert "<span" not in out and out.count('aria-label="NumPy agrees">✓</a>') == 2
    assert badges.linked(out, href) == out
    # the page they link to is built
    assert badges.TARGET.rstrip("/") + ".md" in nav_pages(mkdocs_config()["nav"])
