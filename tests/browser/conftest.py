"""Fixtures for the real-browser suite: the built site served on localhost and Debian's
Chromium driven by Playwright, one browser and one tab per screen width for the session.

Pages are discovered from the built site's ``sitemap.xml``, so chapters added later are
covered without editing the suite. Without Chromium or the ``playwright`` package the
suite skips with the reason, except under ``CI``: there it fails (``require_or_skip``).
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import require_or_skip

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = Path(os.environ.get("ATTENTION_MATH_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
TIMEOUT_MS = 60_000  # two shared cores: MathJax on a long page can take a while


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files; a missing path gets the site's 404.html with status 404, as on a host."""

    def log_message(self, format, *args) -> None:
        pass

    def send_error(self, code, message=None, explain=None) -> None:
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


@pytest.fixture(scope="session")
def base_url(built_site: Path) -> Iterator[str]:
    handler = functools.partial(_Handler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def sitemap_paths(site: Path) -> list[str]:
    """URL paths ("/", "/forward/notation/") of every page in the built ``sitemap.xml``."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    tree = ET.parse(site / "sitemap.xml")
    return [urlsplit(loc.text).path for loc in tree.getroot().iterfind("s:url/s:loc", ns)]


@pytest.fixture(scope="session")
def site_pages(built_site: Path) -> list[str]:
    pages = sitemap_paths(built_site)
    assert len(pages) > 10, pages
    return pages


def slug(path: str) -> str:
    """A file name for the screenshot of the page at ``path``."""
    return path.strip("/").replace("/", "__") or "home"


@pytest.fixture(scope="session")
def browser():
    require_or_skip("playwright.sync_api", "playwright is missing (uv sync --group test)")
    if not CHROMIUM.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"Chromium is required in CI, not found at {CHROMIUM}", pytrace=False)
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _local(url: str, base_url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return url.startswith(base_url + "/") or url == base_url


@dataclass
class Tab:
    """One browser tab on the local site that records what went wrong since ``goto``.

    Requests leaving localhost are aborted and recorded, console errors and uncaught page
    errors are recorded; ``goto`` clears both so each page is judged on its own.
    """

    page: object
    base_url: str
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)

    def goto(self, path: str):
        self.errors.clear()
        self.external.clear()
        response = self.page.goto(self.base_url + path, wait_until="load")
        self.wait_for_math()
        return response

    def wait_for_math(self) -> None:
        """Wait until MathJax has typeset the page (immediate on pages without maths)."""
        self.page.wait_for_function(
            "() => !document.querySelector('.arithmatex') ||"
            " (window.MathJax && MathJax.startup && MathJax.startup.promise)"
        )
        self.page.evaluate(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise"
            " ? MathJax.startup.promise.then(() => true) : true"
        )

    def screenshot(self, name: str, *, full_page: bool = True) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page, animations="disabled")
        return path


def _open_tab(browser, base_url: str, **context_options) -> Tab:
    context = browser.new_context(**context_options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    tab = Tab(page=page, base_url=base_url)

    def route(route) -> None:
        url = route.request.url
        if _local(url, base_url):
            route.continue_()
        else:
            tab.external.append(url)
            route.abort()

    context.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and tab.errors.append(f"console: {m.text}"))
    page.on("pageerror", lambda exc: tab.errors.append(f"page error: {exc}"))
    return tab


@pytest.fixture(scope="session")
def desktop(browser, base_url: str) -> Iterator[Tab]:
    """A 1280 px wide tab, reused by every desktop test."""
    tab = _open_tab(browser, base_url, viewport={"width": 1280, "height": 900})
    yield tab
    tab.page.context.close()


@pytest.fixture(scope="session")
def phone(browser, base_url: str) -> Iterator[Tab]:
    """A 390 px wide touch tab (a phone held upright)."""
    tab = _open_tab(
        browser,
        base_url,
        viewport={"width": 390, "height": 844},
        device_scale_factor=1,
        is_mobile=True,
        has_touch=True,
    )
    yield tab
    tab.page.context.close()
