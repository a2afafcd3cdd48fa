"""The site's page transforms, as Python-Markdown extensions.

Both generators run them: MkDocs and Zensical read ``markdown_extensions`` in ``mkdocs.yml``
and load each entry by its import path (``attention_site.extensions.typeset``), whereas
Zensical runs no MkDocs ``hooks:``. Each module is one transform of the page's HTML, a
postprocessor that runs after the raw HTML (executed blocks' output, the API docs) is back in
the page, so it sees the page as the reader gets it:

- ``typeset``: the maths typeset at build time (MathJax 3 in Node: SVG with MathML beside it);
- ``tables``: every plain table in a scrolling box with a tab stop, names in it kept whole;
- ``keyboard``: code blocks and wide figures reachable from the keyboard;
- ``names``: a dotted API name may wrap after its dots only;
- ``badges``: each ✓ badge links to the page that explains ε and the bounds;
- ``explorables``: the explorables' script on the pages that hold one.

markdown-exec and mkdocstrings convert the Markdown of an executed block's output or of a
docstring with a Markdown of their own, with the same extensions: each transform is
idempotent, so the page's own pass leaves what an inner pass did as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from markdown import Markdown
from markdown.postprocessors import Postprocessor

__all__ = ["PRIORITY", "HtmlPass", "logger"]

PRIORITY = 5
"""Below Python-Markdown's raw-HTML postprocessor (30), which puts the stashed HTML back."""


def logger(name: str) -> logging.Logger:
    """The logger of the transform ``name``: a child of MkDocs' logger, so that ``mkdocs build
    --strict`` fails on its warnings and errors (``attention_site.strict`` does the same for
    Zensical, which prints them and goes on).

    Examples:
        >>> logger("typeset").name
        'mkdocs.extensions.attention_site.typeset'
    """
    return logging.getLogger(f"mkdocs.extensions.attention_site.{name}")


class HtmlPass(Postprocessor):  # type: ignore[misc]  # Python-Markdown ships no types
    """A postprocessor that hands the converted HTML to ``transform``.

    A ``ValueError`` the page causes (a table with an empty header cell, say) is logged as an
    error, which fails a strict build, and the HTML is left as it was: a server goes on
    serving (``zensical serve`` stops at an exception).

    Examples:
        >>> def strict(text: str) -> str:
        ...     raise ValueError("a table has an empty header cell")
        >>> HtmlPass(Markdown(), strict).run("<table></table>")
        '<table></table>'
    """

    def __init__(self, md: Markdown, transform: Callable[[str], str]) -> None:
        super().__init__(md)
        self.transform = transform

    def run(self, text: str) -> str:
        try:
            return self.transform(text)
        except ValueError as exc:
            name = self.transform.__module__.rsplit(".", 1)[-1]
            logger(name).error("%s (%s)", exc, self.transform.__name__)
            return text
