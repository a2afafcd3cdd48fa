"""MkDocs hook: the explorables' script only on the pages that hold an explorable.

``docs/javascripts/explorables.js`` is listed in ``extra_javascript`` (``defer``), which the
theme writes into every page; a page without an element ``data-explorable`` would load a
script it does not use. ``overrides/main.html``'s ``scripts`` block writes a script of
``extra_javascript`` that a hook keeps to its users only on the pages that use it: this hook
says that it keeps this one (``config.extra.kept_scripts``) and which pages use it (their
``uses_scripts`` meta), from each page's own content. The theme's output is not rewritten.
The 404 page, which has no page, does not get it.
"""

from __future__ import annotations

import re
from typing import Any

# the script, as extra_javascript (mkdocs.yml) lists it
SCRIPT = "javascripts/explorables.js"
# the attribute of an element that holds an explorable
ATTRIBUTE = "data-explorable"
# such an element (a docstring that shows one, in code, is escaped)
USER = re.compile(rf'<[a-z]+[^<>]*\s{ATTRIBUTE}="')


def holds_explorable(html: str) -> bool:
    """Whether the page content ``html`` holds an element with an explorable.

    Examples:
        >>> holds_explorable('<div class="am-explorable" data-explorable="mask"></div>')
        True
        >>> holds_explorable("<p>x</p>")
        False
        >>> holds_explorable('<code>&lt;div data-explorable="mask"&gt;</code>')  # shown, not held
        False
    """
    # the plain substring first: USER alone scans every tag of a page
    return f'{ATTRIBUTE}="' in html and USER.search(html) is not None


def on_config(config: Any) -> Any:
    kept = list(config.extra.get("kept_scripts") or [])
    if SCRIPT not in kept:
        kept.append(SCRIPT)
    config.extra["kept_scripts"] = kept  # written only where a page's uses_scripts names it
    return config


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    if holds_explorable(html):
        page.meta["uses_scripts"] = [*page.meta.get("uses_scripts", []), SCRIPT]
    return html
