"""What a reader does on the site: search, switch colour scheme, copy code, mistype a URL."""

from __future__ import annotations

import pytest

from .conftest import Tab

pytestmark = pytest.mark.browser


def test_search_finds_softmax_and_opens_a_result(desktop: Tab) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # the fixture needs it

    desktop.goto("/")
    page = desktop.page
    page.keyboard.press("s")  # Material's shortcut focuses the search box
    box = page.locator("input.md-search__input")
    results = page.locator(".md-search-result__item a")
    # Material's search listens to key presses: type the query (fill() alone was answered
    # only when the page had finished starting up, which on a loaded machine it had not),
    # and type it again if the first attempt came too early to be seen.
    for _ in range(6):
        box.fill("")
        box.press_sequentially("softmax", delay=20)
        try:
            results.first.wait_for(state="visible", timeout=10_000)
            break
        except PlaywrightTimeoutError:
            continue
    results.first.wait_for(state="visible")
    assert results.count() > 3
    assert "softmax" in page.locator(".md-search-result").inner_text().lower()
    href = results.first.get_attribute("href")
    results.first.click()
    page.wait_for_load_state("load")
    desktop.wait_for_math()
    assert page.url.split("#")[0] == href.split("#")[0]
    assert "softmax" in page.locator("article").inner_text().lower()
    assert desktop.errors == [] and desktop.external == []


def _scheme(page) -> tuple[str, str]:
    scheme, background = page.evaluate(
        "() => [document.body.getAttribute('data-md-color-scheme'),"
        " getComputedStyle(document.body).backgroundColor]"
    )
    return scheme, background


def test_light_dark_toggle(desktop: Tab) -> None:
    desktop.goto("/forward/softmax/")
    page = desktop.page
    first, first_bg = _scheme(page)
    page.locator("form[data-md-component=palette] label:visible").first.click()
    second, second_bg = _scheme(page)
    assert {first, second} == {"default", "slate"}
    assert first_bg != second_bg
    page.reload()  # the choice is remembered
    assert _scheme(page)[0] == second
    page.locator("form[data-md-component=palette] label:visible").first.click()
    assert _scheme(page) == (first, first_bg)
    assert desktop.errors == []


def test_copy_button_copies_the_code(desktop: Tab) -> None:
    page = desktop.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    desktop.goto("/forward/softmax/")
    # Executed blocks show their result first: open the tab that holds the first code, and
    # bring it into view (the theme gives a block its copy button as the block shows).
    page.evaluate(
        """() => {
          const pre = document.querySelector('article pre');
          pre.setAttribute('data-test', 'first-code');
          const block = pre.closest('.tabbed-block');
          if (block) {
            const i = [...block.parentElement.children].indexOf(block);
            block.closest('.tabbed-set')
                 .querySelectorAll(':scope > .tabbed-labels > label')[i].click();
          }
          pre.scrollIntoView({block: 'center'});
        }"""
    )
    pre = page.locator("pre[data-test=first-code]")
    code = pre.locator("> code").inner_text()
    pre.hover()
    pre.locator("button[data-md-type=copy]").click(timeout=10_000)
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied.strip() == code.strip() and copied.strip()


def test_missing_page_gets_the_styled_404_page(desktop: Tab) -> None:
    """A deep wrong address under the sub-path: the 404 page, styled, its links in the site."""
    response = desktop.goto("/no/such/page/")
    assert response.status == 404
    page = desktop.page
    assert "404" in page.locator("article").inner_text()
    # styled: the theme's stylesheets loaded (from the sub-path, not the domain root)
    sheets = page.evaluate(
        "() => [...document.styleSheets].filter(s => s.href).map(s => [s.href, s.cssRules.length])"
    )
    assert len(sheets) >= 2 and all(n > 0 for _, n in sheets), sheets
    assert all(h.startswith(desktop.base_url + "/") for h, _ in sheets), sheets
    assert page.evaluate("() => getComputedStyle(document.querySelector('.md-header')).position")
    # icons at their size, not the page's width (unstyled, the theme's SVGs grow huge)
    assert (
        page.evaluate(
            "() => document.querySelector('.md-header svg').getBoundingClientRect().width"
        )
        < 50
    )
    # its links lead to pages of the site
    links = page.locator("article a[href]")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert len(hrefs) >= 3
    for href in hrefs:
        target = page.evaluate("h => new URL(h, location.href).href", href)
        assert target.startswith(desktop.base_url + "/"), href
        assert page.request.get(target).status == 200, href
    # the one error is the document's own status; no asset failed (nor left the site)
    assert [e for e in desktop.errors if "404 (Not Found)" not in e] == []
    icon = page.evaluate("() => document.querySelector('link[rel=icon]').href")
    assert icon.startswith(desktop.base_url + "/") and page.request.get(icon).status == 200
    assert desktop.external == []


def test_favicon_is_the_sites_own(desktop: Tab) -> None:
    desktop.goto("/")
    href = desktop.page.evaluate("() => document.querySelector('link[rel=icon]').href")
    assert href.endswith("/assets/favicon.svg")
    reply = desktop.page.request.get(href)
    assert reply.status == 200 and b"<svg" in reply.body()


def test_notation_shows_its_meaning_on_hover(desktop: Tab) -> None:
    desktop.goto("/forward/softmax/")
    page = desktop.page
    term = page.locator("article abbr", has_text="softmax").first
    assert "sum to one" in term.get_attribute("title")
    term.scroll_into_view_if_needed()
    term.hover()
    tip = page.locator(".md-tooltip--active, .md-tooltip2--active").first
    tip.wait_for(state="visible", timeout=10_000)
    assert "sum to one" in tip.inner_text()


def _figure_page(site) -> str:
    for html in sorted(site.rglob("index.html")):
        if "figure_1" in html.read_text(encoding="utf-8"):
            return "/" + html.parent.relative_to(site).as_posix().strip(".") + "/"
    raise AssertionError("no page of the site shows a figure")


FIGURE_INK = """() => {
  const text = document.querySelector('article svg [id$=figure_1] text');
  return [getComputedStyle(text).fill, getComputedStyle(document.querySelector('article')).color];
}"""


def test_figures_are_drawn_in_the_text_colour_of_both_schemes(desktop: Tab, built_site) -> None:
    path = _figure_page(built_site).replace("//", "/")
    desktop.goto(path)
    page = desktop.page
    inks = []
    for _ in range(2):
        fill, color = page.evaluate(FIGURE_INK)
        assert fill == color, (path, _scheme(page)[0])
        inks.append(fill)
        page.locator("form[data-md-component=palette] label:visible").first.click()
    assert inks[0] != inks[1]  # the figure's text changed with the scheme


def test_a_tap_on_search_focuses_the_box(phone: Tab) -> None:
    """On a phone the header's search button opens search with the box focused (only then
    does a phone bring up its keyboard), and the query is answered."""
    page = phone.page
    phone.goto("/why/")
    button = page.locator("header label.md-header__button[for=__search]")
    assert button.is_visible()
    button.tap()
    page.wait_for_function("() => document.activeElement.name === 'query'")
    page.keyboard.type("mask", delay=20)
    page.locator(".md-search-result__item").first.wait_for(state="visible")
    assert "mask" in page.locator(".md-search-result").inner_text().lower()
    assert phone.errors == [] and phone.external == []


def test_the_search_shortcut_opens_search(desktop: Tab) -> None:
    """The theme's "/" shortcut opens search with the box focused. The theme binds the key
    once its search has started, which on a loaded machine can be after the page's script
    runs: a reader who presses it again a moment later gets search, and so does the test."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # the fixture needs it

    page = desktop.page
    desktop.goto("/forward/scores/")
    for _ in range(5):
        page.keyboard.press("/")
        try:
            page.wait_for_function("() => document.activeElement.name === 'query'", timeout=5_000)
            break
        except PlaywrightTimeoutError:
            continue
    page.wait_for_function("() => document.activeElement.name === 'query'")
    assert page.evaluate("() => document.getElementById('__search').checked")
    assert desktop.errors == []
