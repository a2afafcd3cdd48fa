"""The built site's pages visited in Chromium (Playwright), each once, with every probe run.

What the browser tests judge is one visit of each page:
``visit`` loads each page in a ``Tab`` (which records console errors, page errors, every
request, and aborts requests leaving the site), makes a reader's first interaction, runs
each registered probe at the desktop width, takes a screenshot, then the ``narrow:`` probes
at the phone width. Probes are registered with ``probe`` by the browser tests
(``tests/browser/probes.py``, ``tests/browser/test_layout.py``); Playwright is imported by
the caller, never here. Screenshots go to ``test-artifacts/screenshots/`` of the checkout.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from attention_site.checks.server import SUBPATH

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "DESKTOP",
    "PHONE",
    "PHONE_SHOT",
    "PROBES",
    "THEME_SCRIPT",
    "Tab",
    "open_tab",
    "probe",
    "sitemap_paths",
    "slug",
    "visit",
    "visit_in_a_browser_of_its_own",
]

ROOT = Path(__file__).resolve().parents[3]  # the checkout (the package is installed editable)
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = Path(os.environ.get("ATTENTION_MATH_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
TIMEOUT_MS = 60_000  # two shared cores, eight agents
# the theme's (mkdocs-material) script, as the theme writes it into every page
THEME_SCRIPT = "/assets/javascripts/bundle."
#: The one desktop size of the browser tests (the ``desktop`` tab and the visit's first look)
DESKTOP = {"width": 1280, "height": 900}
#: The one phone size of the browser tests (the ``phone`` tab, and the visit's narrow look)
PHONE = {"width": 375, "height": 812}
PHONE_SHOT = f"-{PHONE['width']}px"  # the suffix of the narrow screenshot of a page


def sitemap_paths(site: Path) -> list[str]:
    """Paths below the sub-path ("/", "/forward/notation/") of every page in ``sitemap.xml``.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = (Path(tmp) / "sitemap.xml").write_text(
        ...         '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        ...         "<url><loc>https://x.io/attention-math/</loc></url>"
        ...         "<url><loc>https://x.io/attention-math/why/</loc></url></urlset>")
        ...     sitemap_paths(Path(tmp))
        ['/', '/why/']
    """
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    tree = ET.parse(site / "sitemap.xml")
    paths = [urlsplit(loc.text or "").path for loc in tree.getroot().iterfind("s:url/s:loc", ns)]
    return ["/" + p.removeprefix(SUBPATH) for p in paths]


def slug(path: str) -> str:
    """A file name for the screenshot of the page at ``path``.

    Examples:
        >>> slug("/"), slug("/forward/notation/")
        ('home', 'forward__notation')
    """
    return path.strip("/").replace("/", "__") or "home"


def _local(url: str, base_url: str) -> bool:
    """Inside the served site: same origin and below the sub-path (data: and blob: too)."""
    if urlsplit(url).scheme in ("data", "blob", "about"):
        return True
    return url.startswith(base_url + "/") or url == base_url


@dataclass
class Tab:
    """One browser tab on the local site that records what went wrong since ``goto``.

    Requests leaving the site (another origin, or the same host outside the sub-path) are
    aborted and recorded; console errors, uncaught page errors and every request made are
    recorded; ``goto`` clears them so each page is judged on its own.

    Examples:
        >>> tab = Tab(page=None, base_url="http://127.0.0.1:8000/attention-math")
        >>> tab.errors, tab.external
        ([], [])
    """

    page: Any
    base_url: str
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (resource type, url)

    def goto(self, path: str, *, interact: bool = True) -> Any:
        """Load ``path``; then, unless ``interact`` is false, a first interaction (a key
        press), and wait until the theme's script runs."""
        self.errors.clear()
        self.external.clear()
        self.requests.clear()
        response = self.page.goto(self.base_url + path, wait_until="load")
        self.wait_for_math()
        if interact:
            self.start_theme()
        return response

    def start_theme(self) -> None:
        """A reader's first interaction (Shift pressed: no shortcut, no scroll), then wait until
        the theme's script has started (it swaps the page's ``no-js`` class for ``js``)."""
        self.page.keyboard.press("Shift")
        self.page.wait_for_function("document.documentElement.classList.contains('js')")

    def wait_for_math(self) -> None:
        """Wait until MathJax has typeset the page, if the page typesets in the browser."""
        self.page.evaluate(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise"
            " ? MathJax.startup.promise.then(() => true) : true"
        )

    def screenshot(self, name: str, *, full_page: bool = False) -> Path:
        """The tab's page as ``ARTIFACTS/<name>.png``: its first screen, or the whole page
        with ``full_page`` (which costs seconds a page)."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page, animations="disabled")
        return path


def open_tab(browser: Any, base_url: str, **context_options: Any) -> Tab:
    """A new ``Tab`` in a new context of ``browser`` (a Playwright browser) on ``base_url``;
    ``context_options`` go to ``browser.new_context`` (``viewport=DESKTOP``, ...)."""
    context = browser.new_context(**context_options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    tab = Tab(page=page, base_url=base_url)

    def route(route: Any) -> None:
        url = route.request.url
        tab.requests.append((route.request.resource_type, url))
        if _local(url, base_url):
            route.continue_()
        else:
            tab.external.append(url)
            route.abort()

    def console(message: Any) -> None:
        if message.type == "error":
            tab.errors.append(f"console: {message.text}")

    context.route("**/*", route)
    page.on("console", console)
    page.on("pageerror", lambda exc: tab.errors.append(f"page error: {exc}"))
    return tab


# What each page is asked, in the one visit: name -> function(tab) -> record. The browser
# tests register theirs before the first visit; a ``narrow:`` probe runs at PHONE's width.
PROBES: dict[str, Callable[[Tab], Any]] = {}


def probe(name: str) -> Callable[[Callable[[Tab], Any]], Callable[[Tab], Any]]:
    """Register ``fn(tab)`` to be run on every page during the single visit of each page.

    Examples:
        >>> @probe("doc:title")
        ... def _title(tab): return tab.page.title()
        >>> PROBES.pop("doc:title") is _title
        True
    """

    def register(fn: Callable[[Tab], Any]) -> Callable[[Tab], Any]:
        PROBES[name] = fn
        return fn

    return register


def visit(tab: Tab, pages: list[str]) -> dict[str, dict[str, Any]]:
    """Each page of ``pages`` loaded once in ``tab``, every probe run on it; their records."""
    records: dict[str, dict[str, Any]] = {}
    for path in pages:
        tab.page.set_viewport_size(DESKTOP)
        response = tab.goto(path)
        record: dict[str, Any] = {"status": response.status if response else None}
        for name, fn in PROBES.items():
            if not name.startswith("narrow:"):
                record[name] = fn(tab)
        tab.screenshot(slug(path))
        tab.page.set_viewport_size(PHONE)
        for name, fn in PROBES.items():
            if name.startswith("narrow:"):
                record[name] = fn(tab)
        tab.screenshot(slug(path) + PHONE_SHOT)
        record["errors"] = list(tab.errors)
        record["external"] = list(tab.external)
        record["requests"] = list(tab.requests)
        records[path] = record
    tab.page.set_viewport_size(DESKTOP)
    return records


def visit_in_a_browser_of_its_own(base_url: str, pages: list[str]) -> dict[str, dict[str, Any]]:
    """``visit`` in a second Chromium, driven from the calling thread (Playwright's sync API
    wants a Playwright per thread); none started for no pages."""
    if not pages:
        return {}
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab = open_tab(browser, base_url, viewport=DESKTOP)
            return visit(tab, pages)
        finally:
            browser.close()
