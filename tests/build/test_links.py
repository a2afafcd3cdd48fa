"""Every ``href`` and ``src`` in the built site resolves, anchors included.

``mkdocs build --strict`` checks the links it sees in Markdown, not those inside Markdown that
an executed block prints (the audit table's links to the example pages were dead for that
reason), nor those in templates. This test reads the built HTML instead: each relative link is
resolved against the page that holds it, as a browser does, so it holds whatever path the site
is served under; a root-relative link (the 404 page's) is resolved under the site's own root.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Links(HTMLParser):
    """The ``href``/``src`` values of one page and the ids (anchors) it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (name == "name" and tag == "a"):
                self.ids.add(value)
            elif name in ("href", "src"):
                self.links.append(value)


def _site_root(site: Path) -> str:
    """The URL path the site is served under ("/" or "/attention-math/"), from its sitemap."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    first = ET.parse(site / "sitemap.xml").getroot().find("s:url/s:loc", ns)
    assert first is not None and first.text, "sitemap.xml lists no page"
    return urlsplit(first.text).path


def dead_links(site: Path) -> list[str]:
    """``page: link (reason)`` for each local link of the built ``site`` that leads nowhere."""
    pages: dict[Path, _Links] = {}
    for page in sorted(site.rglob("*.html")):
        parsed = _Links()
        parsed.feed(page.read_text(encoding="utf-8"))
        pages[page.resolve()] = parsed
    root = _site_root(site)
    dead = []
    for page, parsed in pages.items():
        for link in parsed.links:
            url = urlsplit(link)
            if url.scheme or url.netloc:  # external (no network at test time) or data:/mailto:
                continue
            path = unquote(url.path)
            if path.startswith("/"):
                if not path.startswith(root):
                    dead.append(f"{page.relative_to(site.resolve())}: {link} (outside {root})")
                    continue
                target = (site / path[len(root) :]).resolve()
            else:
                target = (page.parent / path).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(site.resolve())}: {link}"
            if not target.is_file():
                dead.append(f"{where} (no such file)")
            elif url.fragment and target.suffix == ".html":
                if unquote(url.fragment) not in pages[target].ids:
                    dead.append(f"{where} (no such anchor)")
    return dead


def test_the_checker_finds_dead_files_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "sitemap.xml").write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>http://h/sub/</loc></url></urlset>"
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text(
        '<h2 id="top">t</h2><a href="a/">ok</a><a href="a/#here">ok</a><a href="#top">ok</a>'
        '<a href="b.md">dead</a><a href="a/#nowhere">dead</a><img src="/sub/a/">'
        '<a href="/other/">dead</a><a href="https://example.org/x">skipped</a>'
    )
    (tmp_path / "a" / "index.html").write_text(
        '<p id="here">x</p><a href="../index.html#top">ok</a>'
    )
    assert dead_links(tmp_path) == [
        "index.html: b.md (no such file)",
        "index.html: a/#nowhere (no such anchor)",
        "index.html: /other/ (outside /sub/)",
    ]


def test_every_link_of_the_built_site_resolves(built_site: Path) -> None:
    dead = dead_links(built_site)
    assert not dead, f"{len(dead)} dead links:\n" + "\n".join(dead[:60])
