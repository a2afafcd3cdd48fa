"""Everything the site takes from mkdocs-material's internals, in one place.

Two users, one library:

- ``hooks/memo.py`` memoises the search plugin's HTML parser (``plugins.search.plugin.Parser``,
  which the plugin instantiates by that module-level name for every page: it has no public
  hook). It reaches it only through the functions below.
- ``overrides/main.html`` depends on texts of the theme that no setting covers: its ``scripts``
  block is a copy of the theme's (the bundle's name included), its search hold-back patches the
  one ``XMLHttpRequest`` the bundle makes for the search index, its loader replays the
  ``DOMContentLoaded`` the bundle starts on, and its colour toggle takes over the theme's
  palette form and storage. ``THEME_TEXTS`` lists each such text exactly as the theme has it.

``PINNED`` is the version all of this was read from; ``tests/test_hook_adapters.py`` fails,
naming both versions, when the installed one differs, and fails naming the file and what
relies on it when a text of ``THEME_TEXTS`` is gone.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version
from pathlib import Path
from typing import Any

import adapter_memo  # hooks/adapter_memo.py
import material
from material.plugins.search import plugin as _search

__all__ = [
    "BUNDLE",
    "PINNED",
    "THEME_TEXTS",
    "installed",
    "original_parser",
    "private_names",
    "set_parser",
    "shared_memo",
    "theme_file",
]

PINNED = "9.8.1"
"""The mkdocs-material whose internals this adapter and ``overrides/main.html`` were read from."""

BUNDLE = "assets/javascripts/bundle.a5f9d56c.min.js"
"""The theme's script, as its ``base.html`` names it (``overrides/main.html`` names it too)."""

_MAIN = "overrides/main.html"

#: (file of the theme, under ``material/templates``; its exact text; what relies on it)
THEME_TEXTS: tuple[tuple[str, str, str], ...] = (
    (
        "base.html",
        "{% block scripts %}\n"
        f"      <script src=\"{{{{ '{BUNDLE}' | url }}}}\"></script>\n"
        "      {% for script in config.extra_javascript %}\n"
        "        {{ script | script_tag }}\n"
        "      {% endfor %}\n"
        "    {% endblock %}",
        f"{_MAIN}'s `scripts` block, a copy of this one whose tags load at the reader's first "
        "interaction and whose extra_javascript is kept to the pages using it",
    ),
    (
        BUNDLE,
        'ze(new URL("search/search_index.json",Or.base))',
        f"{_MAIN}'s search hold-back: the bundle requests the index by this name, through ze()",
    ),
    (
        BUNDLE,
        "function ze(e,t){return to(e,t)",
        f"{_MAIN}'s search hold-back: ze() requests through to()",
    ),
    (
        BUNDLE,
        'let o=new XMLHttpRequest;return o.open("GET",`${e}`),o.responseType="blob"',
        f"{_MAIN}'s search hold-back: to() is one XMLHttpRequest, the one the hold-back delays",
    ),
    (
        BUNDLE,
        'h(document,"DOMContentLoaded",{once:!0})',
        f"{_MAIN}'s loader: the bundle starts on DOMContentLoaded, which the loader dispatches "
        "again once the bundle has loaded",
    ),
    (
        "partials/header.html",
        '<label class="md-header__button md-icon" for="__search">',
        f"{_MAIN}: the header's search button (it releases the search index and, before the "
        "bundle runs, focuses the search box)",
    ),
    (
        "partials/palette.html",
        '<form class="md-header__option" data-md-component="palette">',
        f"{_MAIN}'s colour toggle, which takes this form over from the bundle",
    ),
    (
        "partials/javascripts/base.html",
        '__md_get=(e,_=localStorage,t=__md_scope)=>JSON.parse(_.getItem(t.pathname+"."+e))',
        f"{_MAIN}'s colour toggle, which reads the reader's choice where the theme keeps it",
    ),
)

# the original parser, kept on its module so that loading the memo twice never wraps a wrapper
if not hasattr(_search, "_attention_math_parser"):
    _search._attention_math_parser = _search.Parser


def installed() -> str:
    """The installed mkdocs-material's version."""
    return version("mkdocs-material")


def theme_file(name: str) -> Path:
    """The installed theme's file ``name`` (relative to its ``templates`` directory)."""
    return Path(material.__file__).parent / "templates" / name


def original_parser() -> type[Any]:
    """The search plugin's own parser class (an ``HTMLParser`` whose ``data`` are sections)."""
    parser: type[Any] = _search._attention_math_parser
    return parser


def set_parser(parser: type[Any]) -> None:
    """Make the search plugin cut every page into sections with ``parser``."""
    _search.Parser = parser


def shared_memo(name: str, fresh: dict[str, Any]) -> dict[str, Any]:
    """A memo kept on the search plugin's module (``fresh`` the first time), so that it
    survives a hook's reloading, as the original parser does."""
    return adapter_memo.kept_on(_search, name, fresh)


def private_names() -> dict[str, Any]:
    """The private objects used above, by name: what the adapter's test checks exist."""
    parser = original_parser()
    indexer = getattr(getattr(_search, "SearchIndex", None), "add_entry_from_context", None)
    return {
        "plugins.search.plugin.Parser": getattr(_search, "Parser", None),
        "plugins.search.plugin.Parser().data": parser if hasattr(parser(), "data") else None,
        # the plugin makes its parser by the module's name, where set_parser puts ours
        "plugins.search.plugin.SearchIndex.add_entry_from_context: Parser()": (
            indexer if indexer and "Parser()" in inspect.getsource(indexer) else None
        ),
    }
