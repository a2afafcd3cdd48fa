"""overrides/: the theme as it ships, changed only where Material documents a way to change it.

Material's customization guide ("Extending the theme") documents two ways: a template or
partial of the same name in ``custom_dir`` replaces the theme's, and ``main.html`` may
override the blocks its table lists. overrides/ holds the 404 page and two partials copied from the
theme with one accessibility change each (axe-core: the search dialog gets a name,
aria-dialog-name; a navigation section with an index page is named by its title,
landmark-unique). No script: the theme's own scripts run as it ships them.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import material
import pytest
from mkdocs.theme import Theme

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = ROOT / "overrides"
THEME = Path(material.__file__).parent / "templates"
OURS = sorted(p.relative_to(OVERRIDES).as_posix() for p in OVERRIDES.rglob("*") if p.is_file())

# The blocks Material's customization guide lists as overridable ("Overriding blocks",
# https://squidfunk.github.io/mkdocs-material/customization/#overriding-blocks).
DOCUMENTED_BLOCKS = {
    *("analytics", "announce", "config", "container", "content", "extrahead", "fonts"),
    *("footer", "header", "hero", "htmltitle", "libs", "outdated", "scripts", "site_meta"),
    *("site_nav", "styles", "tabs"),
}


@pytest.mark.parametrize("name", OURS)
def test_no_script_in_overrides(name: str) -> None:
    assert not re.search(r"<script\b", (OVERRIDES / name).read_text(encoding="utf-8"), re.I)


@pytest.mark.parametrize("name", OURS)
def test_each_override_replaces_a_template_of_the_theme(name: str) -> None:
    """A file of overrides/ stands in for one the theme has (a new name would be a template
    of the project's own, which nothing documents)."""
    assert (THEME / name).is_file(), f"overrides/{name}: the installed theme has no {name}"


@pytest.mark.parametrize("name", OURS)
def test_only_documented_blocks_are_overridden(name: str) -> None:
    text = (OVERRIDES / name).read_text(encoding="utf-8")
    blocks = set(re.findall(r"{%-?\s*block\s+(\w+)", text))
    if name == "main.html":
        assert blocks <= DOCUMENTED_BLOCKS, blocks - DOCUMENTED_BLOCKS
        base = (THEME / "base.html").read_text(encoding="utf-8")
        assert all(re.search(rf"{{%-?\s*block\s+{b}\b", base) for b in blocks)
    elif name == "404.html":
        assert blocks == {"content"}  # the theme's 404 page is main.html with its own content
    else:
        assert blocks == set(), f"{name} replaces a partial: it holds no block"


def _env(**extra: Any) -> tuple[Any, Any, dict[str, Any]]:
    """Jinja environments of the theme with overrides/ and of the theme alone, and a context."""
    ours = Theme(name="material", custom_dir=str(OVERRIDES)).get_env()
    theirs = Theme(name="material").get_env()
    theme = Theme(name="material")
    context = {"page": None, "config": {"extra": {}, "theme": theme}, "base_url": "."} | extra
    return ours, theirs, context


def _item(title: str, url: str | None = None, **kw: Any) -> SimpleNamespace:
    fields = {"is_index": False, "active": False, "children": None, "meta": None}
    return SimpleNamespace(title=title, url=url, typeset=None, pages=None, **(fields | kw))


def _tidy(html: str) -> str:
    return re.sub(r"\s+", " ", html).strip()


def test_a_section_with_an_index_page_is_named_by_its_title() -> None:
    """With an index page the section's toggle label holds only an icon: the landmark it
    named would have no name. The section's title names it instead; the rest is the
    theme's markup (a partial copied from an older theme would differ here)."""
    ours, theirs, context = _env(features=["navigation.indexes", "navigation.sections"])
    index = _item("The forward pass", "forward/", is_index=True)
    section = _item("The forward pass", children=[index, _item("Scores", "forward/scores/")])
    plain = _item("Worked examples", children=[_item("Audit", "audit/")])
    render = {
        who: lambda item, path, env=env: _tidy(
            str(
                env.get_template("partials/nav-item.html")
                .make_module(context)
                .render(item, path, 1, None)
            )
        )
        for who, env in (("ours", ours), ("theirs", theirs))
    }
    html = render["ours"](section, "__nav_3")
    assert 'aria-labelledby="__nav_3_label_title"' in html
    title = '<label class="md-nav__title" for="__nav_3" id="__nav_3_label_title">'
    assert title in html and "The forward pass" in html.split(title, 1)[1].split("</label>")[0]
    undone = html.replace(' id="__nav_3_label_title"', "").replace("_label_title", "_label")
    assert undone == render["theirs"](section, "__nav_3")
    # a section without an index page keeps the theme's name: its label, which has its title
    assert render["ours"](plain, "__nav_4") == render["theirs"](plain, "__nav_4")


def test_the_search_dialog_has_a_name() -> None:
    """The theme's search partial, its dialog named (the theme gives it none)."""
    ours, theirs, context = _env(features=[])
    lang = ours.get_template("partials/language.html").make_module(context)
    html = {
        who: _tidy(env.get_template("partials/search.html").render(context | {"lang": lang}))
        for who, env in (("ours", ours), ("theirs", theirs))
    }
    named = 'role="dialog" aria-label="Search">'
    assert named in html["ours"]
    assert html["ours"].replace(named, 'role="dialog">') == html["theirs"]
