"""The "Download notebook" link under a page's title: a Python-Markdown extension.

Python-Markdown gives an extension the page's text, never its path, and neither MkDocs nor
Zensical passes one on. So ``attention_site.prepare``, which writes each page's notebook,
also writes an index (``.prepare/notebooks.json``) from a `fingerprint` of each page's
source to its notebook's file name; this extension's preprocessor, the first to see the
page, takes the same fingerprint of the text it is given and adds the link under the first
``# `` title (the home page, at its end).

A page that runs code but is not in the index was edited after prepare ran. ``mkdocs serve``
and the build command run prepare first, so only ``zensical serve`` (which runs no hook)
meets one, at every edit. Such a page keeps its link when its title names one page of the
index (its notebook is then the page before the edit), and loses it otherwise; either way a
warning says to run prepare, and the server goes on serving. The warning is logged under
MkDocs' logger, so that ``mkdocs build --strict`` fails on it. Registered in ``mkdocs.yml``
under ``markdown_extensions`` (``attention_site.notebook_link``), so both generators run it.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

from attention_site.extensions import logger
from attention_site.notebooks import LINK_CLASS, runs_code

__all__ = [
    "INDEX",
    "NotebookLinkExtension",
    "fingerprint",
    "link_markdown",
    "makeExtension",
    "title",
]

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / ".prepare" / "notebooks.json"
"""Fingerprint of a page's source -> ``{"name": the notebook's file name, "link": its path
relative to the page's source, "home": whether the page is the home page, "title": its first
``# `` line}``."""

log = logger("notebook_link")

FRONT_MATTER = re.compile(r"\A-{3}[ \t]*\n.*?\n(?:-{3}|\.{3})[ \t]*(\n|\Z)", re.S)
TITLE = re.compile(r"^#\s+\S")


def _body(markdown: str) -> str:
    """The page as Markdown sees it: without a byte-order mark, carriage returns or YAML
    front matter (which generators take off first)."""
    return FRONT_MATTER.sub("", markdown.lstrip("\ufeff").replace("\r\n", "\n"), count=1)


def fingerprint(markdown: str) -> str:
    """What names a page's source whichever generator hands it over: its non-blank lines,
    right-stripped, without a byte-order mark, carriage returns or YAML front matter (which
    generators take off before Markdown sees the page).

    Examples:
        >>> fingerprint("# T\\n\\ntext  \\n") == fingerprint("---\\na: 1\\n---\\n# T\\r\\ntext")
        True
        >>> fingerprint("# T\\n\\ntext\\n") == fingerprint("# T\\n\\nother\\n")
        False
    """
    kept = [line.rstrip() for line in _body(markdown).split("\n") if line.strip()]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()[:20]


def title(markdown: str) -> str:
    """A page's first ``# `` line, as the index keeps it beside the fingerprint; ``""``
    if it has none.

    Examples:
        >>> title("---\\n# a: 1\\n---\\nText.\\n\\n# Softmax  \\n")
        '# Softmax'
    """
    return next((line.strip() for line in _body(markdown).split("\n") if TITLE.match(line)), "")


def link_markdown(link: str, name: str) -> list[str]:
    """The link as Markdown lines: a paragraph of class ``notebook-link`` (attr_list), its
    target relative to the page's source, as every link of the site, so that each generator
    turns it into the address relative to the page as it turns any other (MkDocs leaves raw
    HTML's links alone, Zensical rewrites them as if relative to the source).

    Examples:
        >>> first, attrs = link_markdown("softmax/forward-softmax.ipynb", "forward-softmax.ipynb")
        >>> first[:61], attrs
        ('[Download notebook](softmax/forward-softmax.ipynb){ download=', '{: .notebook-link }')
    """
    return [
        f'[Download notebook]({link}){{ download="{name}" }}'
        " (this page's code as cells, to run in Jupyter)",
        f"{{: .{LINK_CLASS} }}",
    ]


class _LinkPreprocessor(Preprocessor):  # type: ignore[misc]  # Python-Markdown is untyped
    def __init__(self, md: Markdown, index: Path) -> None:
        super().__init__(md)
        self.index = index

    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        known: dict[str, Any] = (
            json.loads(self.index.read_text(encoding="utf-8")) if self.index.is_file() else {}
        )
        entry = known.get(fingerprint(text))
        titles = [i for i, line in enumerate(lines) if TITLE.match(line)]
        # a fragment that markdown-exec renders has no title: only a page must be known
        if entry is None and titles and runs_code(text):
            page_title = title(text)
            named = [e for e in known.values() if e.get("title") == page_title]
            entry = named[0] if len(named) == 1 else None
            log.warning(
                "notebook link: the page %r changed after prepare wrote the notebooks, so its "
                "%s; run `python -m attention_site.prepare` (the build command and `mkdocs "
                "serve` run it first)",
                page_title,
                "notebook shows it as it was" if entry else "link is left out",
            )
        if entry is None:
            return lines
        link = link_markdown(entry["link"], entry["name"])
        if entry["home"] or not titles:  # the home page opens with its idea, not a download
            return [*lines, "", *link, ""]
        at = titles[0] + 1
        return [*lines[:at], "", *link, "", *lines[at:]]


class NotebookLinkExtension(Extension):  # type: ignore[misc]  # Python-Markdown is untyped
    """Adds the "Download notebook" link to each page whose notebook prepare wrote."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = {"index": [str(INDEX), "the index prepare writes"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        # before every other preprocessor (snippets at 32, whitespace at 30, HTML at 20):
        # the fingerprint is of the page as written
        index = Path(self.getConfig("index"))
        md.preprocessors.register(_LinkPreprocessor(md, index), "notebook_link", 200)


def makeExtension(**kwargs: Any) -> NotebookLinkExtension:
    return NotebookLinkExtension(**kwargs)
