"""A dotted object name in an API heading may wrap after its dots only.

``attention_math.derivations.flash_backward`` is one word to the browser: on a phone it
overflows the column or, with the theme's ``overflow-wrap``, breaks mid-word. A ``<wbr>``
after each dot of mkdocstrings' heading for an object gives the line the places a reader
would break it.

In ``mkdocs.yml``: ``markdown_extensions: [attention_site.extensions.names]``.
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension, Markdown

from attention_site.extensions import PRIORITY, HtmlPass

__all__ = ["NamesExtension", "breakable_names", "makeExtension"]

# mkdocstrings' heading for an object: its full dotted name, one word to the browser
OBJECT_NAME = re.compile(r'(<span class="doc doc-object-name[^"]*">)([^<]*)(</span>)')


def breakable_names(html: str) -> str:
    """``html`` with a ``<wbr>`` after each dot of an object's name; a second pass changes
    nothing.

    Examples:
        >>> name = '<span class="doc doc-object-name doc-module-name">attention_math.tiled</span>'
        >>> breakable_names(name)
        '<span class="doc doc-object-name doc-module-name">attention_math.<wbr>tiled</span>'
        >>> breakable_names(breakable_names(name)) == breakable_names(name)
        True
    """
    return OBJECT_NAME.sub(
        lambda m: m.group(1) + m.group(2).replace(".", ".<wbr>") + m.group(3), html
    )


class NamesExtension(Extension):  # type: ignore[misc]  # Python-Markdown ships no types
    """Registers ``breakable_names`` as a postprocessor."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.postprocessors.register(HtmlPass(md, breakable_names), "am_names", PRIORITY)


def makeExtension(**kwargs: Any) -> NamesExtension:
    """The extension, as Python-Markdown loads it by its import path."""
    return NamesExtension(**kwargs)
