"""Fixtures for the real-browser suite: the site built once, served on localhost, and
Debian's Chromium driven by Playwright.

Without Chromium or the ``playwright`` package the suite skips with the reason, except
when the ``CI`` environment variable is set: there it fails, so CI never passes by
silently skipping the browser.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

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


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"browser suite cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


class _AnyTagLoader(yaml.SafeLoader):
    """Reads mkdocs.yml's ``!!python/name:`` and ``!ENV`` values as plain data."""


def _untagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


_AnyTagLoader.add_multi_constructor("!", _untagged)
_AnyTagLoader.add_multi_constructor("tag:yaml.org,2002:python/", _untagged)


def nav_paths(config_file: Path = ROOT / "mkdocs.yml") -> list[str]:
    """URL paths ("/", "/forward/notation/") of every Markdown page in the mkdocs nav."""

    def walk(node) -> Iterator[str]:
        if isinstance(node, str):
            if node.endswith(".md") and "://" not in node:
                yield node
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                yield from walk(value)

    nav = yaml.load(config_file.read_text(encoding="utf-8"), Loader=_AnyTagLoader)["nav"]
    paths = []
    for md in walk(nav):
        stem = re.sub(r"(^|/)(index|README)\.md$", r"\1", md)
        stem = stem.removesuffix(".md")
        paths.append("/" + (stem + "/" if stem and not stem.endswith("/") else stem))
    return paths


def slug(path: str) -> str:
    """A file name for the screenshot of the page at ``path``."""
    return path.strip("/").replace("/", "__") or "home"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("browser-site")
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=900,
    )
    return site


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files; a missing path gets the site's 404.html, as on a real host."""

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


@pytest.fixture(scope="session")
def sitemap_paths(built_site: Path) -> list[str]:
    """URL paths of every page listed in the built sitemap.xml."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    tree = ET.parse(built_site / "sitemap.xml")
    return [urlsplit(loc.text).path for loc in tree.getroot().iterfind("s:url/s:loc", ns)]


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.is_file():
        _unavailable(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (uv sync --group test)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class Visit:
    """A browser tab on the local site that records what went wrong while it was open."""

    page: object
    base_url: str
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)

    def goto(self, path: str):
        response = self.page.goto(self.base_url + path, wait_until="load")
        self.wait_for_math()
        return response

    def wait_for_math(self) -> None:
        """Wait until MathJax has typeset the page (a no-op on pages without it)."""
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
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


def _local(url: str, base_url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.hostname in ("127.0.0.1", "localhost") and url.startswith(base_url)


def open_visit(browser, base_url: str, **context_options) -> Visit:
    context = browser.new_context(**context_options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    visit = Visit(page=page, base_url=base_url)

    def route(route) -> None:
        url = route.request.url
        if _local(url, base_url):
            route.continue_()
        else:
            visit.external.append(url)
            route.abort()

    context.route("**/*", route)
    page.on(
        "console",
        lambda msg: msg.type == "error" and visit.errors.append(f"console: {msg.text}"),
    )
    page.on("pageerror", lambda exc: visit.errors.append(f"page error: {exc}"))
    return visit


@pytest.fixture
def visit(browser, base_url: str) -> Iterator[Visit]:
    v = open_visit(browser, base_url, viewport={"width": 1280, "height": 900})
    yield v
    v.page.context.close()


@pytest.fixture
def phone(browser, base_url: str) -> Iterator[Visit]:
    v = open_visit(
        browser,
        base_url,
        viewport={"width": 390, "height": 844},
        device_scale_factor=1,
        is_mobile=True,
        has_touch=True,
    )
    yield v
    v.page.context.close()
