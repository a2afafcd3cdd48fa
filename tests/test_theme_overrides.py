"""The theme's markup changed through its supported ways (overrides/, extra_css), not rewritten.

Two of the theme's partials are copied into overrides/partials/ with one change each, for
axe-core: the search dialog gets a name (aria-dialog-name) and a navigation section with an
index page is named by its title (landmark-unique). The copies are held to the installed
theme's partials here: when the theme changes one, copy it again and make the change again.
mkdocstrings' stylesheet is linked from the API pages only (hooks/assets.py, overrides/main.html).
The browser tests (tests/browser/test_pages.py, axe-core on every page) see the result.
"""

from __future__ import annotations

import difflib
import importlib.metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import material
import pytest
from mkdocs.config import load_config
from mkdocs.theme import Theme

from attention_site.checks.hooks import load_hook

ROOT = Path(__file__).resolve().parents[1]
OVERRIDES = ROOT / "overrides"
THEME = Path(material.__file__).parent / "templates"

# each copied partial: the theme's lines it changes (the lines added carry a marker)
CHANGED = {
    "partials/search.html": (
        ['<div class="md-search" data-md-component="search" role="dialog">'],
        "aria-label=",
    ),
    "partials/nav-item.html": (
        [
            '        <nav class="md-nav" data-md-level="{{ level }}" '
            'aria-labelledby="{{ path }}_label" aria-expanded="{{ nav_item.active | tojson }}">',
            '          <label class="md-nav__title" for="{{ path }}">',
        ],
        "named_by",
    ),
}


def _body(template: str) -> list[str]:
    """The template's lines after its opening comment (the theme's says it is generated)."""
    return template.split("-#}\n", 1)[1].splitlines()


@pytest.mark.parametrize("partial", sorted(CHANGED))
def test_each_copied_partial_is_the_theme_s_but_for_its_change(partial: str) -> None:
    theirs = _body((THEME / partial).read_text(encoding="utf-8"))
    ours = _body((OVERRIDES / partial).read_text(encoding="utf-8"))
    diff = [d for d in difflib.ndiff(theirs, ours) if d[:2] in ("- ", "+ ")]
    removed = [d[2:] for d in diff if d.startswith("- ")]
    added = [d[2:] for d in diff if d.startswith("+ ")]
    lines, marker = CHANGED[partial]
    assert removed == lines, (
        f"mkdocs-material's {partial} changed: copy it again into overrides/ and make the "
        f"change again (mkdocs-material {importlib.metadata.version('mkdocs-material')})"
    )
    # what is added: the changed lines again, and comments saying why
    assert all(marker in a or a.lstrip().startswith(("{#", "by its", "with")) for a in added)


def _env_and_context(**extra: Any) -> tuple[Any, dict[str, Any]]:
    theme = Theme(name="material", custom_dir=str(OVERRIDES))
    env = theme.get_env()
    context = {"page": None, "config": {"extra": {}, "theme": theme}, "base_url": "."} | extra
    return env, context


def _item(title: str, url: str | None = None, **kw: Any) -> SimpleNamespace:
    fields = {"is_index": False, "active": False, "children": None, "meta": None}
    return SimpleNamespace(title=title, url=url, typeset=None, pages=None, **(fields | kw))


def test_a_section_with_an_index_page_is_named_by_its_title() -> None:
    """With an index page the section's toggle label holds only an icon: the landmark it
    named would have no name. The section's title names it instead."""
    env, context = _env_and_context(features=["navigation.indexes", "navigation.sections"])
    nav = env.get_template("partials/nav-item.html").make_module(context)
    index = _item("The forward pass", "forward/", is_index=True)
    section = _item("The forward pass", children=[index, _item("Scores", "forward/scores/")])
    html = str(nav.render(section, "__nav_3", 1, None))
    assert '<label class="md-nav__link " for="__nav_3" id="__nav_3_label"' in html
    assert 'aria-labelledby="__nav_3_label_title"' in html
    title = '<label class="md-nav__title" for="__nav_3" id="__nav_3_label_title">'
    assert title in html and "The forward pass" in html.split(title, 1)[1].split("</label>")[0]
    # a section without an index page keeps the theme's name: its label, which has its title
    plain = _item("Worked examples", children=[_item("Audit", "audit/")])
    html = str(nav.render(plain, "__nav_4", 1, None))
    assert 'aria-labelledby="__nav_4_label"' in html and "_label_title" not in html


def test_the_search_dialog_has_a_name() -> None:
    env, context = _env_and_context(features=[])
    lang = env.get_template("partials/language.html").make_module(context)
    html = env.get_template("partials/search.html").render(context | {"lang": lang})
    assert html.startswith(
        '<div class="md-search" data-md-component="search" role="dialog" aria-label="Search">'
    )


def test_mkdocstrings_stylesheet_is_kept_for_the_pages_that_use_it() -> None:
    """Taken off ``extra_css`` (every page links that list), kept for overrides/main.html."""
    config = load_config(str(ROOT / "mkdocs.yml"))
    css = config.plugins["mkdocstrings"].css_filename
    config.plugins["mkdocstrings"].on_config(config)
    assert css in config.extra_css  # mkdocstrings still adds it: the hook has work to do
    load_hook("assets", "assets_for_css").on_config(config)
    assert css not in config.extra_css and config.extra["mkdocstrings_css"] == css
    assert "stylesheets/extra.css" in config.extra_css
    main = (OVERRIDES / "main.html").read_text(encoding="utf-8")
    assert "config.extra.mkdocstrings_css" in main and "'class=\"doc ' in page.content" in main
