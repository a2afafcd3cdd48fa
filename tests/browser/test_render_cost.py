"""What keeps a page cheap to start on a phone, without changing what the reader sees.

- Formulas off screen are skipped (``content-visibility: auto``, extra.css) in a box of
  exactly their drawing's size and baseline (``attention_site.extensions.typeset.sized``):
  drawing them moves nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

# Formulas three screens down are skipped (nearer ones the browser may draw ahead); every
# inline formula's box while skipped, then drawn.
BOXES = """async () => {
  const boxes = () => [...document.querySelectorAll('article mjx-container:not([display="true"])')]
    .map((el) => {
      const r = el.getBoundingClientRect(), p = el.parentElement.getBoundingClientRect();
      return [r.width, r.height, r.top - p.top];
    });
  const offscreen = [...document.querySelectorAll('article mjx-container')]
    .filter((el) => el.getBoundingClientRect().top > 3 * innerHeight);
  // a skipped element's contents report themselves hidden
  const skipped = offscreen.filter(
    (el) => !el.querySelector('svg').checkVisibility({contentVisibilityAuto: true}));
  const before = boxes();
  const force = document.createElement('style');
  force.textContent = 'mjx-container { content-visibility: visible !important; }';
  document.head.append(force);
  const after = boxes();
  force.remove();
  return {offscreen: offscreen.length, skipped: skipped.length, before, after};
}"""


@pytest.mark.parametrize(
    ("size", "path"),
    [("desktop", "/gradients/"), ("desktop", "/glossary/"), ("phone", "/glossary/")],
)
def test_offscreen_formulas_are_skipped_in_boxes_of_their_own_size(
    request: pytest.FixtureRequest, size: str, path: str
) -> None:
    """/glossary/ holds its formulas in table cells, which on a phone are squeezed: there
    too a drawing keeps its size, so its skipped box is right."""
    tab = request.getfixturevalue(size)
    tab.goto(path)
    found = tab.page.evaluate(BOXES)
    assert found["offscreen"] > 20
    assert found["skipped"] == found["offscreen"]  # not drawn until the reader nears them
    assert len(found["before"]) == len(found["after"]) > 20
    for skipped, drawn in zip(found["before"], found["after"], strict=True):
        # width, height and place in the line as drawn, to a pixel
        assert all(abs(a - b) <= 1.0 for a, b in zip(skipped, drawn, strict=True)), (skipped, drawn)


# Where a link to each heading of the page lands, formulas above it skipped or not.
LANDINGS = """async (id) => {
  const heading = document.getElementById(id);
  return heading.getBoundingClientRect().top;
}"""


@pytest.mark.parametrize("path", ["/gradients/", "/glossary/"])
def test_a_link_to_a_heading_lands_on_it(phone: Any, path: str) -> None:
    """The skipped formulas' boxes are their drawings' size: a link far down the page lands
    where it would if every formula were drawn (to a few pixels: a displayed formula's line
    may be a little taller than its drawing)."""
    page = phone.page
    phone.goto(path)
    ids = page.evaluate("() => [...document.querySelectorAll('article h2[id]')].map((h) => h.id)")
    assert len(ids) >= 3
    tops = []
    for heading in ids[1:]:
        page.goto("about:blank")
        phone.goto(f"{path}#{heading}")
        tops.append(page.evaluate(LANDINGS, heading))
    # the header's height plus the theme's scroll margin: where the first one lands
    assert max(tops) - min(tops) <= 8, list(zip(ids[1:], tops, strict=True))
