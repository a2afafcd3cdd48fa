"""What every page is asked in its single visit (``browser.visit``): the browser tests judge
the records (``tests/browser``).

Importing this module registers the probes in ``browser.PROBES``, in the order they run.
"""

from __future__ import annotations

from typing import Any

from attention_site.checks.axe import run_axe
from attention_site.checks.browser import Tab, probe
from attention_site.checks.scripts import script_users

__all__ = ["ASSETS", "BLOCKS", "COPY", "MEASURE", "SCRIPT_USERS", "SEEN", "WIDTHS"]

# Each script the site ships, and the elements that use it (derived from mkdocs.yml and the
# hooks, see scripts.py): a page loading a script none of whose elements it has loads
# something it does not use (tests/browser/test_pages.py).
SCRIPT_USERS = script_users()

# Everything a reader sees on the page, for the tests of tests/browser/test_pages.py.
SEEN = """() => {
  const article = document.querySelector('article') || document.body;
  const prose = article.cloneNode(true);
  prose.querySelectorAll('pre, code, script, style, mjx-container').forEach(e => e.remove());
  const maths = [...document.querySelectorAll('.arithmatex')];
  const canonical = document.querySelector('link[rel=canonical]');
  return {
    title: document.title,
    canonical: canonical ? canonical.href : null,
    prose: prose.textContent,
    maths: maths.length,
    unrendered: maths.filter(b => !b.querySelector('mjx-container'))
                     .map(b => b.textContent.slice(0, 80)),
    tex_errors: [...document.querySelectorAll('mjx-merror, [data-mjx-error]')]
                  .map(e => e.getAttribute('data-mjx-error') || e.textContent.slice(0, 80)),
    unread_maths: [...document.querySelectorAll('mjx-container')]
      .filter(c => !c.querySelector('mjx-assistive-mml math') && !c.getAttribute('aria-label'))
      .length,
    // each table of the page as the theme's script left it: the boxes around it (one, the
    // build's) and the theme's table style (its border) on it
    // (an explorable's trace table is redrawn by its own script, not boxed by the build)
    tables: [...document.querySelectorAll(
      'article table:not(.highlighttable):not(.ex-trace)')].map(t => [
      [...document.querySelectorAll('.md-typeset__scrollwrap')].filter(b => b.contains(t)).length,
      getComputedStyle(t).borderTopStyle]),
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

# Measured once the page has reacted to the new width: the theme gives a code block that now
# scrolls its tab stop from a resize observer, a frame or more after the resize (measured at
# once, the block was seen unreachable now and then on a busy machine). Measured again after
# half a second if something is unreachable: what a reader would meet is the settled page.
WIDTHS = """async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const measure = () => ({viewport: window.innerWidth,
  page: document.documentElement.scrollWidth, body: document.body.scrollWidth,
  // typeset maths squeezed to nothing (visible, yet a pixel or two wide)
  // (a formula's other drawing, hidden at this width, is not squeezed: extensions.linebreak)
  collapsed: [...document.querySelectorAll('article mjx-container > svg')]
    .filter(s => s.closest('.arithmatex').offsetParent !== null &&
                 getComputedStyle(s.parentElement).display !== 'none')
    .filter(s => s.getBoundingClientRect().width < 3).length,
  // boxes that scroll sideways yet cannot be reached with the keyboard
  unreachable: [...document.querySelectorAll('article *')]
    .filter(e => e.scrollWidth > e.clientWidth + 1 &&
                 ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
    .filter(e => e.tabIndex < 0 && ![...e.querySelectorAll('a[href], button, input, [tabindex]')]
      .some(f => f.tabIndex >= 0 && f.getBoundingClientRect().width > 0))
    .map(e => e.className || e.tagName)});
  await frame();
  let found = measure();
  if (found.unreachable.length) {
    await new Promise(r => setTimeout(r, 500));
    await frame();
    found = measure();
  }
  return found;
}"""

# Stylesheets of the page that style nothing on it, and every script it loads.
ASSETS = """() => {
  const matches = sel => {
    // drop pseudo-classes and -elements that querySelector cannot test statically
    const s = sel.replace(/::?[a-z-]+(\\([^)]*\\))?/g, '').trim();
    if (!s) return true;
    try { return document.querySelector(s) !== null; } catch (e) { return true; }
  };
  const used = rules => [...rules].some(r =>
    r.selectorText ? r.selectorText.split(',').some(matches)
    : r.cssRules ? used(r.cssRules) : false);
  return {
    unused_css: [...document.styleSheets].filter(s => s.href && !used(s.cssRules))
                  .map(s => s.href),
    scripts: [...document.scripts].filter(s => s.src).map(s => s.src),
  };
}"""


@probe("page")
def _page(tab: Tab) -> dict[str, Any]:
    return dict(tab.page.evaluate(SEEN))


# axe-core on the page as it loads, before any probe scrolls it: the theme readies a code
# block (its focus, its copy button) only when it comes into view (content.lazy), so on a
# page scrolled through axe would not see what a reader who has not scrolled meets.
# Probes run in the order they are registered; COPY marks the page once it has scrolled.
@probe("axe")
def _axe(tab: Tab) -> list[dict[str, Any]]:
    if tab.page.evaluate("() => window.scrollY !== 0 || window.probesScrolled === true"):
        raise AssertionError(f"axe must run before the page is scrolled: {tab.page.url}")
    return run_axe(tab.page)


# The theme gives a code block its copy button when the block first comes into view
# (content.lazy): each block the reader can see (not in a closed tab or fold) must come into
# view. The window is first made as tall as the page, which brings them all into view at once
# (a block at a time took two frames each, a seventh of the browser suite); a block still
# without its button is then scrolled to, as a reader would.
COPY = """async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const button = c => c.closest('pre').querySelector('button[data-md-type=copy]');
  window.probesScrolled = true;
  // a closed fold's content is not in view, though Chromium may lay it out (and give it a
  // rect) when it is the page's last block
  const shown = [...document.querySelectorAll('article pre > code')]
    .filter(c => c.getClientRects().length > 0 && !c.closest('details:not([open])'));
  await frame();
  for (const code of shown.filter(c => !button(c))) {
    code.scrollIntoView({block: 'center'});
    await frame();
  }
  window.scrollTo(0, 0);
  await frame();
  return {code_blocks: shown.length, copy_buttons: shown.filter(button).length};
}"""
TALLEST = 16_000  # px: a taller window than this is scrolled through instead


@probe("copy")
def _copy(tab: Tab) -> dict[str, Any]:
    size = tab.page.viewport_size
    height = tab.page.evaluate("() => document.documentElement.scrollHeight")
    tab.page.set_viewport_size({"width": size["width"], "height": min(height, TALLEST)})
    try:
        return dict(tab.page.evaluate(COPY))
    finally:
        tab.page.set_viewport_size(size)


@probe("assets")
def _assets(tab: Tab) -> dict[str, Any]:
    found = dict(tab.page.evaluate(ASSETS))
    found["present"] = {
        sel: tab.page.evaluate("s => document.querySelector(s) !== null", sel)
        for sel in set(SCRIPT_USERS.values())
    }
    return found


@probe("narrow:widths")
def _widths(tab: Tab) -> dict[str, Any]:
    return dict(tab.page.evaluate(WIDTHS))


# Layout (tests/browser/test_layout.py): the blocks a reader reads as one piece: displayed
# maths, tables, wide figures.
BLOCKS = (
    "article div.arithmatex, article .md-typeset__scrollwrap, article .wide-figure, "
    "article .legible-figure"
)

MEASURE = """(blocks) => ({
  viewport: window.innerWidth,
  page: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
  column: document.querySelector('article').clientWidth,
  // blocks whose content is wider than the block: they need a scroll bar
  wide: [...document.querySelectorAll(blocks)]
    .filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
    .map(b => ({what: b.className, content: b.scrollWidth, box: b.clientWidth,
                overflow: getComputedStyle(b).overflowX,
                // a formula's drawing shown (the wide one, or its narrow one on a phone)
                drawing: [...b.querySelectorAll(':scope > mjx-container')]
                  .filter(c => getComputedStyle(c).display !== 'none').map(c => c.className)
                  .join(' '),
                text: b.textContent.replace(/\\s+/g, ' ').trim().slice(0, 60)})),
  // a name in inline code (short enough for any line) drawn on two lines: broken mid-word
  split: [...document.querySelectorAll('article code')]
    .filter(c => !c.closest('pre') && /^\\w{1,30}$/.test(c.textContent) &&
                 c.getClientRects().length > 1)
    .map(c => c.textContent),
})"""


@probe("layout")
def _layout(tab: Tab) -> dict[str, Any]:
    """Measured at 1280 px during the one visit of each page."""
    return dict(tab.page.evaluate(MEASURE, BLOCKS))


@probe("narrow:layout")
def _narrow_layout(tab: Tab) -> dict[str, Any]:
    """Measured at the phone width in the same visit (the settled page, after ``WIDTHS``)."""
    return dict(tab.page.evaluate(MEASURE, BLOCKS))
