"""Every page in the nav, as a reader's browser shows it: desktop and phone width.

Pages are discovered from mkdocs.yml's nav (and checked against the built sitemap.xml),
so chapters added later are covered without editing this file.
"""

from __future__ import annotations

import pytest
from conftest import nav_paths, slug

pytestmark = pytest.mark.browser

PAGES = nav_paths()

# Text a reader must never see: TeX that MathJax did not typeset.
RAW_TEX = ("\\(", "\\)", "\\[", "\\]", "$$", "\\frac", "\\begin{", "\\operatorname")

# The article's visible text outside code, where TeX source may legitimately appear.
PROSE_TEXT = """() => {
  const article = document.querySelector('article') || document.body;
  const copy = article.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, mjx-container').forEach(e => e.remove());
  return copy.textContent;
}"""

MATH_STATE = """() => {
  const blocks = [...document.querySelectorAll('.arithmatex')];
  return {
    total: blocks.length,
    unrendered: blocks.filter(b => !b.querySelector('mjx-container'))
                      .map(b => b.textContent.slice(0, 80)),
    tex_errors: [...document.querySelectorAll('mjx-merror, [data-mjx-error]')]
                  .map(e => e.getAttribute('data-mjx-error') || e.textContent.slice(0, 80)),
  };
}"""


def test_every_nav_page_is_in_the_sitemap(sitemap_paths: list[str]) -> None:
    assert len(PAGES) > 1
    assert sorted(set(PAGES)) == sorted(set(sitemap_paths))


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_with_math_rendered_and_nothing_external(visit, path: str) -> None:
    response = visit.goto(path)
    assert response is not None and response.status == 200, path
    math = visit.page.evaluate(MATH_STATE)
    visit.screenshot(slug(path))
    assert visit.errors == [], f"{path}: console errors"
    assert visit.external == [], f"{path}: requests leaving localhost"
    assert math["unrendered"] == [], f"{path}: math MathJax did not typeset"
    assert math["tex_errors"] == [], f"{path}: TeX errors"
    text = visit.page.evaluate(PROSE_TEXT)
    raw = [t for t in RAW_TEX if t in text]
    assert raw == [], f"{path}: raw TeX visible in the prose"
    assert visit.page.title(), path


@pytest.mark.parametrize("path", PAGES)
def test_page_fits_a_phone_screen(phone, path: str) -> None:
    """390 px wide: nothing pushes the page sideways (wide maths scrolls in its own box)."""
    phone.goto(path)
    phone.screenshot(slug(path) + "-390px")
    widths = phone.page.evaluate(
        "() => ({viewport: window.innerWidth,"
        " page: document.documentElement.scrollWidth, body: document.body.scrollWidth})"
    )
    assert widths["viewport"] == 390
    assert widths["page"] <= widths["viewport"], (path, widths)
    assert widths["body"] <= widths["viewport"], (path, widths)
    assert phone.errors == [], f"{path}: console errors"
