"""The site's map: the Home page has a line for every section of the nav, each chapter's index
lists the pages of its chapter only, and a page comes after the pages it builds on."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from tests.conftest import mkdocs_config, nav_pages

ROOT = Path(__file__).resolve().parents[2]


def sections() -> dict[str, list[str]]:
    """The top-level sections of the nav (Home excluded) and their pages."""
    nav = mkdocs_config()["nav"]
    out: dict[str, list[str]] = {}
    for item in nav:
        ((title, value),) = item.items()
        if value != "index.md":
            out[title] = nav_pages(value)
    return out


def test_the_nav_is_read() -> None:
    found = sections()
    assert "The forward pass" in found and "forward/qkv.md" in found["The forward pass"]


def test_home_links_to_every_section() -> None:
    home = (ROOT / "docs" / "index.md").read_text("utf-8")
    linked = {m.split("#")[0] for m in re.findall(r"\]\(([^)\s]+)\)", home)}
    missing = [title for title, pages in sections().items() if not linked & set(pages)]
    assert not missing, (
        f"docs/index.md (Home, 'Map of the site') links to no page of the section(s) {missing}: "
        "add a line for each, linking to its first page"
    )


def test_a_chapter_index_lists_only_the_pages_of_its_chapter():
    """An item of the list on a chapter's index page (forward/index.md, …) names a page the nav
    puts in that chapter: why/multi-head.md sits in the forward pass, and Why it works does not
    list it among its own pages."""
    checked = 0
    for pages in sections().values():
        for index in [p for p in pages if p.endswith("/index.md")]:
            folder = posixpath.dirname(index)
            text = (ROOT / "docs" / index).read_text(encoding="utf-8")
            bullets = re.findall(r"^(?:-|\d+\.) \[[^\]]+\]\(([^)#]+\.md)", text, re.M)
            listed = {posixpath.normpath(posixpath.join(folder, b)) for b in bullets}
            assert listed <= set(pages), (index, sorted(listed - set(pages)))
            checked += bool(listed)
    assert checked >= 4
