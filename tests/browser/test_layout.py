"""Layout: at 1280 px every equation, table and figure fits the content column; on a
375 px phone the page never scrolls sideways, and whatever is wider than the screen
scrolls inside its own box.
"""

from __future__ import annotations

import pytest

from .conftest import PHONE

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def desktop_layout(seen: dict[str, dict]) -> dict[str, dict]:
    return {path: record["layout"] for path, record in seen.items()}


@pytest.fixture(scope="session")
def phone_layout(seen: dict[str, dict]) -> dict[str, dict]:
    """Every page at PHONE's width, from ``seen``'s visit (a second round of visits in the
    phone tab cost a quarter of the browser suite and saw the same layout)."""
    return {path: record["narrow:layout"] for path, record in seen.items()}


def test_nothing_is_wider_than_the_column_at_1280px(desktop_layout: dict[str, dict]) -> None:
    assert all(r["column"] > 600 for r in desktop_layout.values()), "no content column?"
    wide = {p: r["wide"] for p, r in desktop_layout.items() if r["wide"]}
    assert wide == {}, "at 1280 px these blocks are wider than the content column:\n" + "\n".join(
        f"{p}: {b['what']} {b['content']} px in {b['box']} px: {b['text']}"
        for p, blocks in wide.items()
        for b in blocks
    )


def test_the_page_never_scrolls_sideways_on_a_375px_phone(phone_layout: dict[str, dict]) -> None:
    width = PHONE["width"]
    assert width == 375
    bad = {p: r for p, r in phone_layout.items() if r["viewport"] != width or r["page"] > width}
    assert bad == {}


def test_wide_content_scrolls_in_its_own_box_on_a_phone(phone_layout: dict[str, dict]) -> None:
    wide = [(p, b) for p, r in phone_layout.items() for b in r["wide"]]
    assert wide, "nothing is wider than a phone: the test would not see a wrong overflow"
    bad = [(p, b) for p, b in wide if b["overflow"] not in ("auto", "scroll")]
    assert bad == []


def test_a_formula_broken_for_phones_shows_its_narrow_drawing_there(
    desktop_layout: dict[str, dict], phone_layout: dict[str, dict]
) -> None:
    """A displayed formula too wide for a phone that could be broken at its relations has a
    second drawing (attention_site.extensions.linebreak): on the phone that one shows, and
    only it; at 1280 px the formula as written."""
    phone = [(p, b) for p, r in phone_layout.items() for b in r["wide"] if "am-below-" in b["what"]]
    wrong = [
        (p, b["drawing"], b["text"])
        for p, b in phone
        if b["drawing"].split().count("MathJax") != 1 or "am-narrow" not in b["drawing"]
    ]
    assert wrong == [], f"on a phone these formulas show their wide drawing: {wrong}"
    desktop = [
        (p, b["text"])
        for p, r in desktop_layout.items()
        for b in r["wide"]
        if "am-narrow" in b.get("drawing", "")
    ]
    assert desktop == []


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_no_name_in_code_breaks_mid_word(
    width: str, desktop_layout: dict[str, dict], phone_layout: dict[str, dict]
) -> None:
    """A name such as `causal_alignment` is read whole: in a squeezed table column the theme
    broke it anywhere (`causal_ali` / `gnment`). Only names too long for any line may break."""
    layout = desktop_layout if width == "desktop" else phone_layout
    split = {p: r["split"] for p, r in layout.items() if r["split"]}
    assert split == {}, f"names in code broken across two lines at the {width} width: {split}"
