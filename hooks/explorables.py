"""MkDocs hook: the explorables' script only on the pages that hold an explorable.

``docs/javascripts/explorables.js`` is listed in ``extra_javascript`` (``defer``), so the
theme writes it into every page (``overrides/main.html`` loads it, after the theme's own
script, at the reader's first interaction); a page without an element ``data-explorable``
would load a script it does not use. This drops it there (and from the 404 page).
"""

from __future__ import annotations

import re
from typing import Any

# as the theme writes it, or as overrides/main.html rewrites it to load at the first interaction
SCRIPT = re.compile(
    r'<script (?:type="text/x-later" data-src|src)="[^"]*javascripts/explorables\.js"[^>]*>'
    r"</script>\s*"
)
# the attribute of an element that holds an explorable
ATTRIBUTE = "data-explorable"
# such an element (a docstring that shows one, in code, is escaped)
USER = re.compile(rf'<[a-z]+[^<>]*\s{ATTRIBUTE}="')


def without_unused_script(output: str) -> str:
    """``output`` without the explorables' script tag unless it holds an explorable.

    Examples:
        >>> tag = '<script src="../js/javascripts/explorables.js" defer></script>'
        >>> without_unused_script(f"<p>x</p>{tag}")
        '<p>x</p>'
        >>> later = '<script type="text/x-later" data-src="../javascripts/explorables.js"></script>'
        >>> without_unused_script(f"<p>x</p>{later}")
        '<p>x</p>'
        >>> page = f'<div data-explorable="mask"></div>{tag}'
        >>> without_unused_script(page) == page
        True
    """
    # the plain substring first: USER alone scanned every tag of a page, a second a build
    if f'{ATTRIBUTE}="' in output and USER.search(output):
        return output
    return SCRIPT.sub("", output)


def on_post_page(output: str, page: Any, config: Any) -> str:
    return without_unused_script(output)


def on_post_template(output_content: str, template_name: str, config: Any) -> str:
    if template_name != "404.html":
        return output_content
    return without_unused_script(output_content)
