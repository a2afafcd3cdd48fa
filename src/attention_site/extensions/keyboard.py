"""Code blocks and wide figures reachable from the keyboard.

A code block scrolls sideways when a line is longer than the column. The theme makes it
focusable only once it comes into view (``content.lazy``), so until the reader scrolls to it
the keyboard could not reach it: the markup carries the focus from the start (no script at
load). Once shown, the theme drops it where the block does not scroll, and on devices
without hover. A figure too wide for a phone scrolls in its box (extra.css): reachable the
same way.

In ``mkdocs.yml``: ``markdown_extensions: [attention_site.extensions.keyboard]``.
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension, Markdown

from attention_site.extensions import PRIORITY, HtmlPass

__all__ = ["KeyboardExtension", "focusable", "makeExtension"]

# a highlighted code block: <pre><span></span><code> (pymdownx.highlight), the code scrolls
CODE_BLOCK = re.compile(r"(<pre(?: [^>]*)?>(?:<span></span>)?)<code(?![^>]*tabindex)(?=[ >])")
WIDE_FIGURE = '<div class="wide-figure">'
# a figure in a paragraph of its own, drawn no narrower than its text stays legible
# (attention_math.plot.style `legible`): wider than a phone's column, its paragraph scrolls
LEGIBLE = re.compile(r"<p>(?=<svg [^>]*?--min-width: (\d+)px)")
PHONE_COLUMN_PX = 343
"""The content column's width on a 375 px phone."""


def focusable(html: str) -> str:
    """``html`` with its code blocks and wide figures given a tab stop; a second pass changes
    nothing.

    Examples:
        >>> out = focusable('<pre><span></span><code>x</code></pre>')
        >>> out
        '<pre><span></span><code tabindex="0">x</code></pre>'
        >>> focusable(out) == out
        True
        >>> focusable('<div class="wide-figure"><svg></svg></div>')
        '<div class="wide-figure" tabindex="0" role="group"><svg></svg></div>'
        >>> focusable('<p><svg style="--min-width: 500px" width="100%"></svg></p>')[:56]
        '<p class="legible-figure" tabindex="0" role="group"><svg'
        >>> focusable('<p><svg style="--min-width: 300px" width="100%"></svg></p>')[:8]
        '<p><svg '
    """
    html = CODE_BLOCK.sub(r'\1<code tabindex="0"', html)
    html = LEGIBLE.sub(_scrolling, html)
    return html.replace(WIDE_FIGURE, '<div class="wide-figure" tabindex="0" role="group">')


def _scrolling(m: re.Match[str]) -> str:
    if int(m.group(1)) <= PHONE_COLUMN_PX:
        return m.group()
    return '<p class="legible-figure" tabindex="0" role="group">'


class KeyboardExtension(Extension):  # type: ignore[misc]  # Python-Markdown ships no types
    """Registers ``focusable`` as a postprocessor."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.postprocessors.register(HtmlPass(md, focusable), "am_keyboard", PRIORITY)


def makeExtension(**kwargs: Any) -> KeyboardExtension:
    """The extension, as Python-Markdown loads it by its import path."""
    return KeyboardExtension(**kwargs)
