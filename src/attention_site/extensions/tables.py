"""Every plain table of a page in the theme's scrolling box, with a tab stop.

The theme puts each plain table (``table:not([class])``) in a box that scrolls sideways on a
phone, from its script as the page starts: it takes the table out of the page and puts it
back, so the browser styles and lays out every table, and on the way all that follows it in
its block, a second time. The build writes that box around the page's tables instead, and
the table's class keeps the theme's script off it; extra.css gives ``table.am-table`` the
theme's rules for plain tables (tests/site/test_table_boxes.py holds the two to the installed
theme's stylesheet). A name alone in a table's code (`missing_transpose`) gets a class that
extra.css keeps whole: the theme breaks code anywhere, and a squeezed column broke such names
mid-word (a dotted name or a path still breaks where it must). A table with an empty header
cell fails the build: name the column.

In ``mkdocs.yml``: ``markdown_extensions: [attention_site.extensions.tables]``.
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension, Markdown

from attention_site.extensions import PRIORITY, HtmlPass

__all__ = ["NAME_CLASS", "TABLE_BOX", "TABLE_CLASS", "TablesExtension", "boxed", "makeExtension"]

EMPTY_TH = re.compile(r"<th(?: [^>]*)?>\s*</th>")
TABLE_TAG = re.compile(r"<table\b[^>]*>|</table>")
TABLE_CLASS = "am-table"
TABLE_BOX = '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
TABLE_NAME = re.compile(r"<code>([A-Za-z0-9_]{1,30})</code>")
NAME_CLASS = "am-name"


def _near(html: str, at: int) -> str:
    return repr(html[max(0, at - 60) : at + 60])


def boxed(html: str) -> str:
    """Every plain ``<table>`` in the theme's scrolling box, with the class that tells the
    theme it is done, and a tab stop: the keyboard reaches the box and scrolls it with the
    arrow keys. Tables with a class of their own (a code block's line numbers) are left as
    they are. In a plain table, a name alone in code gets ``NAME_CLASS``. A second pass
    changes nothing.

    Raises:
        ValueError: a table with an empty header cell, or tables that do not nest.

    Examples:
        >>> out = boxed("<table><tr><td>1</td></tr></table>")
        >>> out.startswith(TABLE_BOX + '<table class="am-table" tabindex="0"><tr>')
        True
        >>> out.endswith("</td></tr></table></div></div>")
        True
        >>> boxed(out) == out
        True
        >>> row = "<tr><td><code>is_causal</code> <code>a.b</code></td></tr>"
        >>> boxed(f"<table>{row}</table>").split("<tr>")[1]
        '<td><code class="am-name">is_causal</code> <code>a.b</code></td></tr></table></div></div>'
        >>> boxed("<table><tr><th></th></tr></table>")
        Traceback (most recent call last):
        ValueError: a table has an empty header cell; name the column: near ...
    """
    if "table" not in html:
        return html
    empty = EMPTY_TH.search(html)
    if empty is not None:
        raise ValueError(
            "a table has an empty header cell; name the column: near " + _near(html, empty.start())
        )
    parts: list[str] = []
    plain: list[bool] = []  # for each table open here: was it a plain one?
    at = 0
    for tag in TABLE_TAG.finditer(html):
        between = html[at : tag.start()]
        if plain and plain[-1]:
            between = TABLE_NAME.sub(rf'<code class="{NAME_CLASS}">\1</code>', between)
        parts.append(between)
        at = tag.end()
        if tag.group() != "</table>":
            plain.append(tag.group() == "<table>")
            parts.append(
                f'{TABLE_BOX}<table class="{TABLE_CLASS}" tabindex="0">'
                if plain[-1]
                else tag.group()
            )
        elif not plain:
            raise ValueError("a </table> closes no table: near " + _near(html, tag.start()))
        else:
            parts.append("</table></div></div>" if plain.pop() else "</table>")
    if plain:
        raise ValueError("a <table> is not closed")
    return "".join(parts) + html[at:]


class TablesExtension(Extension):  # type: ignore[misc]  # Python-Markdown ships no types
    """Registers ``boxed`` as a postprocessor."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.postprocessors.register(HtmlPass(md, boxed), "am_tables", PRIORITY)


def makeExtension(**kwargs: Any) -> TablesExtension:
    """The extension, as Python-Markdown loads it by its import path."""
    return TablesExtension(**kwargs)
