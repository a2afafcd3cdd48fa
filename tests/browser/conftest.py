"""Fixtures for the real-browser suite: the built site served on localhost under the
sub-path it is hosted at (``/attention-math/``), Debian's Chromium driven by Playwright,
one browser for the session.

Pages are discovered from the built site's ``sitemap.xml``, so chapters added later are
covered without editing the suite. ``seen`` visits every page once and records all that
the per-page tests judge. Without Chromium or the ``playwright`` package the suite skips
with the reason, except under ``CI``: there it fails (``require_or_skip``).

Fixture names are stable (other suites build on them): ``base_url``, ``site_pages``,
``browser``, ``desktop``, ``phone``, ``seen``, ``desktop_seen``, ``phone_seen``.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conftest import require_or_skip

from .server import SUBPATH, SiteServer

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
TIMEOUT_MS = 60_000  # two shared cores, eight agents
# full-page screenshots cost seconds a page; by default the first screen of each page
FULL_PAGE = bool(os.environ.get("ATTENTION_MATH_FULL_SCREENSHOTS"))
# the theme's (mkdocs-material) script, loaded at the first interaction (overrides/main.html)
THEME_SCRIPT = "/assets/javascripts/bundle."


@pytest.fixture(scope="session")
def base_url(site_server: SiteServer, built_site: Path) -> str:
    """``http://127.0.0.1:PORT/attention-math``: the served site; page paths start with "/"."""
    return site_server.start(built_site).rstrip("/")


def sitemap_paths(site: Path) -> list[str]:
    """Paths below the sub-path ("/", "/forward/notation/") of every page in ``sitemap.xml``."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    tree = ET.parse(site / "sitemap.xml")
    paths = [urlsplit(loc.text or "").path for loc in tree.getroot().iterfind("s:url/s:loc", ns)]
    return ["/" + p.removeprefix(SUBPATH) for p in paths]


@pytest.fixture(scope="session")
def site_pages(built_site: Path) -> list[str]:
    pages = sitemap_paths(built_site)
    assert len(pages) > 10, pages
    return pages


def slug(path: str) -> str:
    """A file name for the screenshot of the page at ``path``."""
    return path.strip("/").replace("/", "__") or "home"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
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
    """

    page: Any
    base_url: str
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (resource type, url)

    theme_at_load: bool = False  # the theme's script requested before any interaction

    def goto(self, path: str, *, interact: bool = True) -> Any:
        """Load ``path``; then, unless ``interact`` is false, a first interaction (a key
        press), which starts the theme's script (overrides/main.html), and wait until it runs."""
        self.errors.clear()
        self.external.clear()
        self.requests.clear()
        response = self.page.goto(self.base_url + path, wait_until="load")
        self.wait_for_math()
        self.theme_at_load = any(THEME_SCRIPT in url for _, url in self.requests)
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

    def screenshot(self, name: str, *, full_page: bool = FULL_PAGE) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page, animations="disabled")
        return path


def _open_tab(browser: Any, base_url: str, **context_options: Any) -> Tab:
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

    context.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and tab.errors.append(f"console: {m.text}"))
    page.on("pageerror", lambda exc: tab.errors.append(f"page error: {exc}"))
    return tab


#: The one desktop size of the browser tests (the ``desktop`` tab and ``seen``'s first look)
DESKTOP = {"width": 1280, "height": 900}


@pytest.fixture(scope="session")
def desktop(browser: Any, base_url: str) -> Iterator[Tab]:
    """A 1280 px wide tab, reused by every desktop test."""
    tab = _open_tab(browser, base_url, viewport=DESKTOP)
    yield tab
    tab.page.context.close()


#: The one phone size of the browser tests (the ``phone`` tab, and the narrow look in ``seen``)
PHONE = {"width": 375, "height": 812}
PHONE_SHOT = f"-{PHONE['width']}px"  # the suffix of the narrow screenshot of a page


@pytest.fixture(scope="session")
def phone(browser: Any, base_url: str) -> Iterator[Tab]:
    """A PHONE-wide touch tab (the narrowest common phone held upright)."""
    tab = _open_tab(
        browser,
        base_url,
        viewport=PHONE,
        device_scale_factor=1,
        is_mobile=True,
        has_touch=True,
    )
    yield tab
    tab.page.context.close()


# What each page is asked, in the one visit ``seen`` makes: name -> function(tab) -> record.
# Other suites may add to it before the session's first use of ``seen``.
PROBES: dict[str, Callable[[Tab], Any]] = {}


def probe(name: str) -> Callable[[Callable[[Tab], Any]], Callable[[Tab], Any]]:
    """Register ``fn(tab)`` to be run on every page during the single visit of ``seen``."""

    def register(fn: Callable[[Tab], Any]) -> Callable[[Tab], Any]:
        PROBES[name] = fn
        return fn

    return register


def _visit(tab: Tab, pages: list[str]) -> dict[str, dict[str, Any]]:
    """Each page of ``pages`` loaded once in ``tab``, every probe run on it; their records."""
    records: dict[str, dict[str, Any]] = {}
    for path in pages:
        tab.page.set_viewport_size(DESKTOP)
        response = tab.goto(path)
        record: dict[str, Any] = {"status": response.status if response else None}
        record["theme_at_load"] = tab.theme_at_load
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


def _visit_in_a_browser_of_its_own(base_url: str, pages: list[str]) -> dict[str, dict[str, Any]]:
    """``_visit`` in a second Chromium, driven from the calling thread (Playwright's sync API
    wants a Playwright per thread)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab = _open_tab(browser, base_url, viewport=DESKTOP)
            return _visit(tab, pages)
        finally:
            browser.close()


@pytest.fixture(scope="session")
def seen(desktop: Tab, site_pages: list[str]) -> dict[str, dict[str, Any]]:
    """Every page visited once at 1280 px, every probe run on it, then looked at PHONE's width.

    One visit per page keeps the suite fast; the probes need nothing but the loaded page.
    Half the pages are visited in a second browser at the same time (axe-core, the slowest
    probe, keeps a core busy for seconds a page, and the machine has two).
    """
    import concurrent.futures

    import tests.browser.probes  # noqa: F401  (registers the probes)

    # every other page, so that both halves hold long and short pages alike
    mine, theirs = site_pages[0::2], site_pages[1::2]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        other = pool.submit(_visit_in_a_browser_of_its_own, desktop.base_url, theirs)
        records = _visit(desktop, mine) | other.result()
    return {path: records[path] for path in site_pages}  # in reading order
