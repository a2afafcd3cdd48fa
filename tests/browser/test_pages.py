"""Every page of the built site as a reader's browser shows it, at desktop and phone width.

Each width's tab visits every page once (a session fixture) and records what it saw; the
tests below then each judge one property over all pages, naming the pages at fault.
"""

from __future__ import annotations

import re

import pytest

from .conftest import Tab, slug

pytestmark = pytest.mark.browser

# TeX source a reader must never see outside code: maths MathJax did not typeset.
RAW_TEX = ("\\(", "\\)", "\\[", "\\]", "$$", "\\frac", "\\begin{", "\\mathbf", "\\operatorname")

SEEN = """() => {
  const article = document.querySelector('article') || document.body;
  const prose = article.cloneNode(true);
  prose.querySelectorAll('pre, code, script, style, mjx-container').forEach(e => e.remove());
  const maths = [...document.querySelectorAll('.arithmatex')];
  return {
    title: document.title,
    prose: prose.textContent,
    maths: maths.length,
    unrendered: maths.filter(b => !b.querySelector('mjx-container'))
                     .map(b => b.textContent.slice(0, 80)),
    tex_errors: [...document.querySelectorAll('mjx-merror, [data-mjx-error]')]
                  .map(e => e.getAttribute('data-mjx-error') || e.textContent.slice(0, 80)),
    code_blocks: document.querySelectorAll('article pre > code').length,
    copy_buttons: document.querySelectorAll('article pre button[data-md-type=copy]').length,
    eq_links: [...document.querySelectorAll('article a[href*="#eq-"]')].map(a => a.href),
    // each numbered equation: its anchor id and the number MathJax printed beside it
    equations: Object.fromEntries([...document.querySelectorAll('article [id^="eq-"]')]
      .map(a => {
        const math = a.closest('p') ? a.closest('p').nextElementSibling : a.nextElementSibling;
        const mml = math && math.querySelector('mjx-assistive-mml');
        return [a.id, mml ? mml.textContent : ''];
      })),
  };
}"""

WIDTHS = """() => ({viewport: window.innerWidth,
  page: document.documentElement.scrollWidth, body: document.body.scrollWidth,
  // typeset maths squeezed to nothing (visible, yet a pixel or two wide)
  collapsed: [...document.querySelectorAll('article mjx-container > svg')]
    .filter(s => s.closest('.arithmatex').offsetParent !== null)
    .filter(s => s.getBoundingClientRect().width < 3).length})"""


@pytest.fixture(scope="session")
def desktop_seen(desktop: Tab, site_pages: list[str]) -> dict[str, dict]:
    seen = {}
    for path in site_pages:
        response = desktop.goto(path)
        record = desktop.page.evaluate(SEEN)
        record["status"] = response.status if response else None
        record["errors"] = list(desktop.errors)
        record["external"] = list(desktop.external)
        desktop.screenshot(slug(path))
        seen[path] = record
    return seen


@pytest.fixture(scope="session")
def phone_seen(phone: Tab, site_pages: list[str]) -> dict[str, dict]:
    seen = {}
    for path in site_pages:
        phone.goto(path)
        seen[path] = phone.page.evaluate(WIDTHS) | {"errors": list(phone.errors)}
        phone.screenshot(slug(path) + "-390px")
    return seen


def test_every_page_loads(desktop_seen: dict[str, dict]) -> None:
    bad = {p: r["status"] for p, r in desktop_seen.items() if r["status"] != 200 or not r["title"]}
    assert bad == {}


def test_no_console_errors(desktop_seen: dict[str, dict], phone_seen: dict[str, dict]) -> None:
    bad = {p: r["errors"] for p, r in desktop_seen.items() if r["errors"]}
    bad |= {p + " (390 px)": r["errors"] for p, r in phone_seen.items() if r["errors"]}
    assert bad == {}


def test_no_request_leaves_localhost(desktop_seen: dict[str, dict]) -> None:
    assert {p: r["external"] for p, r in desktop_seen.items() if r["external"]} == {}


def test_all_maths_is_typeset(desktop_seen: dict[str, dict]) -> None:
    assert sum(r["maths"] for r in desktop_seen.values()) > 100  # the check has something to see
    bad = {p: r["unrendered"] + r["tex_errors"] for p, r in desktop_seen.items()}
    assert {p: v for p, v in bad.items() if v} == {}


def test_no_raw_tex_in_the_prose(desktop_seen: dict[str, dict]) -> None:
    bad = {p: [t for t in RAW_TEX if t in r["prose"]] for p, r in desktop_seen.items()}
    assert {p: v for p, v in bad.items() if v} == {}


def test_every_code_block_has_a_copy_button(desktop_seen: dict[str, dict]) -> None:
    assert sum(r["code_blocks"] for r in desktop_seen.values()) > 20
    bad = {
        p: (r["code_blocks"], r["copy_buttons"])
        for p, r in desktop_seen.items()
        if r["copy_buttons"] < r["code_blocks"]
    }
    assert bad == {}


def test_no_page_overflows_a_phone_screen(phone_seen: dict[str, dict]) -> None:
    """At 390 px nothing pushes the page sideways (wide maths scrolls in its own box)."""
    # a page wider than the screen makes a mobile browser zoom out: innerWidth grows
    bad = {
        p: r
        for p, r in phone_seen.items()
        if r["viewport"] != 390 or max(r["page"], r["body"]) > r["viewport"]
    }
    assert bad == {}


def test_maths_keeps_its_size_on_a_phone(phone_seen: dict[str, dict]) -> None:
    """A wide equation scrolls in its box at 390 px; it is never squeezed to nothing."""
    assert {p: r["collapsed"] for p, r in phone_seen.items() if r["collapsed"]} == {}


def test_screenshots_are_written(desktop_seen, phone_seen, site_pages: list[str]) -> None:
    from .conftest import ARTIFACTS

    for path in site_pages:
        for name in (slug(path), slug(path) + "-390px"):
            shot = ARTIFACTS / f"{name}.png"
            assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot


def test_equation_references_lead_to_their_numbered_equation(
    desktop_seen: dict[str, dict], base_url: str
) -> None:
    """Links like "(1)" on later pages land on an anchor beside the equation numbered (1)."""
    links = [(p, href) for p, r in desktop_seen.items() for href in r["eq_links"]]
    assert len(links) >= 3
    bad = []
    for page, href in links:
        target, _, anchor = href.removeprefix(base_url).partition("#")
        number = desktop_seen.get(target, {}).get("equations", {}).get(anchor)
        if number is None or not re.search(r"\(\d+\)", number):
            bad.append((page, href, number))
    assert bad == []
