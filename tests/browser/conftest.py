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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attention_site.checks import visits

# the visit itself lives in attention_site.checks.browser
from attention_site.checks.browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    DESKTOP,
    PHONE,
    PHONE_SHOT,
    THEME_SCRIPT,
    Tab,
    probe,
    sitemap_paths,
    slug,
    visit_in_a_browser_of_its_own,
)
from attention_site.checks.browser import open_tab as _open_tab
from attention_site.checks.browser import visit as _visit
from attention_site.checks.server import SiteServer
from tests.conftest import require_or_skip

__all__ = [  # what the browser tests import from here
    "ARTIFACTS",
    "PHONE",
    "PHONE_SHOT",
    "ROOT",
    "THEME_SCRIPT",
    "Tab",
    "_open_tab",
    "probe",
    "slug",
]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__)  # how the pages are visited: part of what a kept record is keyed by
#: How ``seen`` came by its records this session (tests/conftest.py reports it)
VISITS: dict[str, Any] = {}


@pytest.fixture(scope="session")
def base_url(site_server: SiteServer, built_site: Path) -> str:
    """``http://127.0.0.1:PORT/attention-math``: the served site; page paths start with "/"."""
    return site_server.start(built_site).rstrip("/")


@pytest.fixture(scope="session")
def site_pages(built_site: Path) -> list[str]:
    pages = sitemap_paths(built_site)
    assert len(pages) > 10, pages
    return pages


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


@pytest.fixture(scope="session")
def desktop(browser: Any, base_url: str) -> Iterator[Tab]:
    """A 1280 px wide tab, reused by every desktop test."""
    tab = _open_tab(browser, base_url, viewport=DESKTOP)
    yield tab
    tab.page.context.close()


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


@pytest.fixture(scope="session")
def seen(desktop: Tab, site_pages: list[str], built_site: Path) -> dict[str, dict[str, Any]]:
    """Every page visited once at 1280 px, every probe run on it, then looked at PHONE's width.

    One visit per page keeps the suite fast; the probes need nothing but the loaded page.
    Half the pages are visited in a second browser at the same time (axe-core, the slowest
    probe, keeps a core busy for seconds a page, and the machine has two). A page whose
    every requested byte is what it was at a kept visit, looked at by the same checking code,
    reuses that visit's record (``attention_site.checks.visits``; never under CI).
    """
    import concurrent.futures

    import attention_site.checks.probes  # noqa: F401  (registers the probes)

    store = None
    if visits.switched_on():
        version = desktop.page.context.browser.version
        store = visits.VisitStore.for_run(built_site, desktop.base_url, version, [FIXTURES])
    records = {p: r for p in site_pages if store and (r := store.get(p)) is not None}
    todo = [p for p in site_pages if p not in records]
    # every other page, so that both halves hold long and short pages alike
    mine, theirs = todo[0::2], todo[1::2]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        other = pool.submit(visit_in_a_browser_of_its_own, desktop.base_url, theirs)
        fresh = _visit(desktop, mine) | other.result()
    if store:
        for path, record in fresh.items():
            store.put(path, record)
        store.forget_others()
    VISITS.update(visited=len(fresh), reused=len(records), kept=store is not None)
    records |= fresh
    return {path: records[path] for path in site_pages}  # in reading order
