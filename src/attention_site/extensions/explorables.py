"""The explorables' script on the pages that hold an explorable, and on no other.

``docs/javascripts/explorables.js`` swaps in the stop a slider chose; a page without an
element ``data-explorable`` has no use for it. So it is not in ``extra_javascript`` (which the
theme writes into every page): this extension adds ``<script defer>`` to the pages that hold
one, after their content (``defer``: the first paint does not wait for it). Its address is
absolute, from the path of the site's address (``site_url``, given to the extension in
``mkdocs.yml``), as a Markdown extension does not know the page it converts.

In ``mkdocs.yml``::

    markdown_extensions:
      - attention_site.extensions.explorables:
          site_url: *site_url
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension, Markdown

from attention_site.extensions import PRIORITY, HtmlPass
from attention_site.extensions.badges import site_path

__all__ = ["ATTRIBUTE", "SCRIPT", "ExplorablesExtension", "holds_explorable", "makeExtension"]

SCRIPT = "javascripts/explorables.js"
"""The script, under the site's root (``docs/javascripts/explorables.js``)."""
ATTRIBUTE = "data-explorable"
"""The attribute of an element that holds an explorable."""
# such an element (a docstring that shows one, in code, is escaped)
USER = re.compile(rf'<[a-z]+[^<>]*\s{ATTRIBUTE}="')


def holds_explorable(html: str) -> bool:
    """Whether ``html`` holds an element with an explorable.

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


def with_script(html: str, src: str) -> str:
    """``html`` and, if it holds an explorable, the script ``src`` once, at its end (an inner
    conversion's copy, an executed block's, is moved there).

    Examples:
        >>> page = '<div data-explorable="mask"></div>'
        >>> with_script(page, "/e.js")
        '<div data-explorable="mask"></div>\\n<script src="/e.js" defer></script>'
        >>> with_script(with_script(page, "/e.js"), "/e.js") == with_script(page, "/e.js")
        True
        >>> with_script("<p>x</p>", "/e.js")
        '<p>x</p>'
    """
    tag = f'<script src="{src}" defer></script>'
    html = html.replace(f"\n{tag}", "").replace(tag, "")
    return f"{html}\n{tag}" if holds_explorable(html) else html


class ExplorablesExtension(Extension):  # type: ignore[misc]  # Python-Markdown ships no types
    """Registers ``with_script`` as a postprocessor, the script under ``site_url``'s path."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = {"site_url": ["", "the site's address (its path starts the script's)"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        src = site_path(self.getConfig("site_url")) + SCRIPT
        md.postprocessors.register(
            HtmlPass(md, lambda html: with_script(html, src)), "am_explorables", PRIORITY
        )


def makeExtension(**kwargs: Any) -> ExplorablesExtension:
    """The extension, as Python-Markdown loads it by its import path."""
    return ExplorablesExtension(**kwargs)
