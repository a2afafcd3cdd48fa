"""The Home page maps every section of the site: a section added to the nav needs a line there."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import mkdocs_config, nav_pages

ROOT = Path(__file__).resolve().parents[1]


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
