"""Every ✓ mark of a cross-check (``display.badge``) links to the page that explains it.

A mark is a ✓ whose tooltip reads "NumPy float64 agrees with the exact value to 0.4 ε (bound
16 ε)."; what ε is and why the bound is what it is are written once, on
``reference/epsilon.md``. The badge is raw HTML printed by an executed
block, which does not know the page it lands on, and neither does a Markdown extension: the
link is absolute, made from the path of the site's address (``site_url``, given to the
extension in ``mkdocs.yml``, where a YAML anchor makes it the same as the site's own). The
``<span class="checked" title=…>`` becomes an ``<a class="checked" href=… title=… aria-label=…>``
(the tooltip is the link's name for a screen reader, which reads no ``title`` of a span).

In ``mkdocs.yml``::

    markdown_extensions:
      - attention_site.extensions.badges:
          site_url: *site_url
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from markdown import Extension, Markdown

from attention_site.extensions import PRIORITY, HtmlPass

__all__ = ["TARGET", "BadgesExtension", "linked", "makeExtension", "site_path"]

TARGET = "reference/epsilon/"
"""The page that explains the badges (``docs/reference/epsilon.md``), under the site's root."""
BADGE = re.compile(r'<span class="checked"( title=("[^"]*"))>(.*?)</span>', flags=re.S)


def site_path(site_url: str | None) -> str:
    """The path of the site's address, ending in ``/``: what an absolute link starts with.

    Examples:
        >>> site_path("https://attention-math.github.io/attention-math/")
        '/attention-math/'
        >>> site_path("http://127.0.0.1:8000/a/b"), site_path(None), site_path("")
        ('/a/b/', '/', '/')
    """
    path = urlsplit(site_url or "").path or "/"
    return path if path.endswith("/") else path + "/"


def linked(html: str, href: str) -> str:
    """Every badge in ``html`` as a link to ``href``; a second pass changes nothing.

    Examples:
        >>> linked('<span class="checked" title="t">✓</span>', "/e/")
        '<a class="checked" href="/e/" title="t" aria-label="t">✓</a>'
    """
    if 'class="checked" title=' not in html:
        return html
    return BADGE.sub(
        lambda m: f'<a class="checked" href="{href}"{m[1]} aria-label={m[2]}>{m[3]}</a>', html
    )


class BadgesExtension(Extension):  # type: ignore[misc]  # Python-Markdown ships no types
    """Registers ``linked`` as a postprocessor, to ``site_url``'s path + ``TARGET``."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = {"site_url": ["", "the site's address (its path starts every link)"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        href = site_path(self.getConfig("site_url")) + TARGET
        md.postprocessors.register(
            HtmlPass(md, lambda html: linked(html, href)), "am_badges", PRIORITY
        )


def makeExtension(**kwargs: Any) -> BadgesExtension:
    """The extension, as Python-Markdown loads it by its import path."""
    return BadgesExtension(**kwargs)
