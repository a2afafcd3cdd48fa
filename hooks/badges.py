"""MkDocs hook: every ✓ badge (``render.badge``) links to the page that explains it.

A badge reads "✓ float64 = exact ± 0.4 ε (bound 16 ε)"; what ε is and why the bound is what it
is are written once, on ``reference/epsilon.md``. The badge is raw HTML printed by an executed
block, which does not know the page it lands on, so the link is made here, relative to each
page: the ``<span class="checked" title=…>`` becomes an ``<a class="checked" href=… title=…>``.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

TARGET = "reference/epsilon.md"
BADGE = re.compile(r'<span class="checked"( title="[^"]*")>(.*?)</span>', flags=re.S)


def _href(page_url: str, target_url: str) -> str:
    """``target_url`` relative to the directory of ``page_url`` (both site-relative)."""
    here = posixpath.dirname(page_url.rstrip("/")) if not page_url.endswith("/") else page_url
    rel = posixpath.relpath(target_url or ".", here or ".")
    return rel + ("/" if target_url.endswith("/") and not rel.endswith("/") else "")


def linked(html: str, href: str) -> str:
    """Every badge in ``html`` as a link to ``href``.

    >>> linked('<span class="checked" title="t">✓ <small>(bound 2 ε)</small></span>', "../e/")
    '<a class="checked" href="../e/" title="t">✓ <small>(bound 2 ε)</small></a>'
    """
    return BADGE.sub(lambda m: f'<a class="checked" href="{href}"{m[1]}>{m[2]}</a>', html)


def on_page_content(html: str, page: Any, config: Any, files: Any, **_: Any) -> str:
    target = files.get_file_from_path(TARGET)
    if target is None or 'class="checked" title=' not in html:
        return html
    return linked(html, _href(page.url, target.url))
