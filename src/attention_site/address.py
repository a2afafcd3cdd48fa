"""The site's address, and a page's absolute address under it: links that blocks print.

A relative link in what a markdown-exec block prints is resolved differently by the two
generators: MkDocs leaves it relative to the page's *address*, Zensical resolves it from the
page's *source* file (CONTRIBUTING, "What Zensical cannot do yet"). An absolute link, from the
path of ``site_url``, is left alone by both, as the badges extension writes its links. So
blocks print `page_url`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from attention_site.extensions.badges import site_path

__all__ = ["KEPT", "ROOT", "page_url", "site_url"]

ROOT = Path(__file__).resolve().parents[2]  # the clone (the package is installed editable)
KEPT = ROOT / ".prepare"
"""The clone's one folder of kept build and test state (git-ignored; CONTRIBUTING, "Disk
caches"): prepare's keys and downloads, axe-core, the browser visit's records."""


def site_url(root: Path = ROOT) -> str:
    """The site's address as ``mkdocs.yml`` sets it (``SITE_URL`` overrides it there)."""
    text = (root / "mkdocs.yml").read_text(encoding="utf-8")
    # an anchor (&site_url, which the extensions' options refer to) may stand before the tag
    env = r'^site_url:\s*(?:&\w+\s+)?!ENV\s*\[\s*SITE_URL\s*,\s*"([^"]+)"\s*\]'
    m = re.search(env, text, re.M)
    if m:
        return os.environ.get("SITE_URL") or m[1]
    m = re.search(r"^site_url:\s*(?:&\w+\s+)?(\S+)", text, re.M)
    return m[1].strip("\"'") if m else "/"


def page_url(page: str, root: Path = ROOT) -> str:
    """The absolute address (a path, under ``site_url``'s) of the built page of ``page``, a
    Markdown file under ``docs/`` with an optional ``#anchor``.

    Examples:
        >>> from unittest import mock
        >>> from attention_site.address import page_url
        >>> with mock.patch.dict(os.environ, {"SITE_URL": "https://x.org/am/"}):
        ...     page_url("forward/softmax.md#the-jacobian"), page_url("long/index.md")
        ('/am/forward/softmax/#the-jacobian', '/am/long/')
        >>> with mock.patch.dict(os.environ, {"SITE_URL": "http://127.0.0.1:8000/"}):
        ...     page_url("index.md"), page_url("exercises/index.md#checking-an-answer")
        ('/', '/exercises/#checking-an-answer')
    """
    path, hash_, anchor = page.partition("#")
    if not path.endswith(".md"):
        raise ValueError(f"page must be a Markdown file under docs/, got {page!r}")
    url = path.removesuffix(".md")
    url = url.removesuffix("index") if url == "index" or url.endswith("/index") else url + "/"
    return site_path(site_url(root)) + url + hash_ + anchor
