"""A Markdown extension: an inline ``<svg>`` (a figure printed by a page's code) is raw HTML.

Python-Markdown treats ``<svg>`` as an inline tag, so the text between its tags goes through
the inline processors: the site's abbreviations (``includes/abbreviations.md``) wrapped the
"softmax" of a legend in ``<abbr>``, which SVG ``<text>`` does not draw ("P = (S)"), and
emphasis or links could do the same. Declared a block-level element, an ``<svg>`` that starts
a line is stashed whole, as a ``<div>`` is. Registered in ``mkdocs.yml``
(``markdown_extensions``); markdown-exec's inner renderer registers the same extensions.

Examples:
    >>> import markdown
    >>> md = markdown.Markdown(extensions=["abbr", "attention_site.svg_block"])
    >>> md.convert('<svg viewBox="0 0 1 1"><text>P = softmax(S)</text></svg>\\n\\n*[softmax]: s')
    '<svg viewBox="0 0 1 1"><text>P = softmax(S)</text></svg>'
"""

from __future__ import annotations

from markdown import Markdown
from markdown.extensions import Extension

__all__ = ["SvgBlockExtension", "makeExtension"]


class SvgBlockExtension(Extension):  # type: ignore[misc]  # Markdown has no type stubs
    """Adds ``svg`` to the block-level elements, whose content Markdown leaves alone."""

    def extendMarkdown(self, md: Markdown) -> None:
        """Register ``svg`` as block-level on ``md``."""
        if "svg" not in md.block_level_elements:
            md.block_level_elements.append("svg")


def makeExtension(**kwargs: object) -> SvgBlockExtension:
    """The extension, as ``markdown_extensions: [attention_site.svg_block]`` loads it."""
    return SvgBlockExtension(**kwargs)
