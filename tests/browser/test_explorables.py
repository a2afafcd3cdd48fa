"""The explorables in the browser: each slider moved (by the keyboard, and by setting its
value with an ``input`` event) shows, at every stop tried, the numbers the package computes
here in the test, as the package writes them; labelled sliders, a polite live region, and no
request leaving the site.

The pages are found in the built site (each explorable on exactly one page), so the test
follows an explorable that moves to another page.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attention_math.numeric import softmax
from attention_site import explore
from attention_site.pages.explorables import QUANTITIES, quantity_text, quantity_value, stop_text

from .conftest import ARTIFACTS, PHONE, Tab

pytestmark = pytest.mark.browser

NAMES = sorted(explore.EXPLORABLES)


@cache
def data(name: str) -> explore.Explorable:
    return explore.EXPLORABLES[name]()


@pytest.fixture(scope="module")
def pages(built_site: Path) -> dict[str, str]:
    """Each explorable's page path ("/forward/softmax/"), read from the built HTML."""
    found: dict[str, list[str]] = {}
    for page in sorted(built_site.rglob("index.html")):
        text = page.read_text(encoding="utf-8")
        for name in re.findall(r'<[a-z]+[^<>]*\sdata-explorable="([^"]+)"', text):
            path = "/" + page.parent.relative_to(built_site).as_posix() + "/"
            found.setdefault(name, []).append(path.replace("/./", "/"))
    assert {n: len(p) for n, p in found.items()} == dict.fromkeys(NAMES, 1)
    return {n: p[0] for n, p in found.items()}


def open_explorable(tab: Tab, path: str, name: str) -> str:
    """Load the page, interact (the script arrives then), wait until the explorable runs."""
    tab.goto(path)
    root = f'[data-explorable="{name}"]'
    tab.page.wait_for_function(f"() => document.querySelector('{root}').dataset.explorableReady")
    return root


SET_STOP = """([root, indices]) => {
  const inputs = [...document.querySelector(root).querySelectorAll('input[type="range"]')];
  const t0 = performance.now();
  inputs.forEach((input, i) => {
    input.value = String(indices[i]);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
  return performance.now() - t0;
}"""

READ = """root => {
  const el = document.querySelector(root);
  const shown = {};
  for (const q of el.querySelectorAll("[data-quantity]")) {
    shown[q.dataset.quantity] = [q.textContent, q.dataset.value ?? null];
  }
  const sliders = [...el.querySelectorAll('input[type="range"]')].map(i => ({
    value: +i.value, max: +i.max, valuetext: i.getAttribute("aria-valuetext"),
  }));
  const figure = el.querySelector("[data-figure]").innerHTML;
  return { shown, sliders, stop: el.dataset.stop, figure };
}"""


def stops_to_try(ex: explore.Explorable) -> list[tuple[int, ...]]:
    """The start, the first and last frames, and a few between (every one for small ones)."""
    keys = sorted(ex.frames)
    if len(keys) <= 12:
        return keys
    picks = {keys[0], keys[-1], tuple(s.start for s in ex.sliders)}
    picks |= {keys[i] for i in np.linspace(0, len(keys) - 1, 7).astype(int)}
    return sorted(picks)


def assert_shows(name: str, key: tuple[int, ...], seen: dict[str, Any]) -> None:
    """The page shows, at stop ``key``, the package's numbers as the package writes them."""
    ex = data(name)
    frame = ex.frames[key]
    assert seen["stop"] == ",".join(map(str, key))
    for q in QUANTITIES[name]:
        text, value = seen["shown"][q]
        assert text == quantity_text(name, frame, q), (name, key, q)
        expected = quantity_value(frame, q)
        if isinstance(expected, str):
            assert value is None
        else:
            # the float64 itself, to within 1e-12 (it round-trips exactly through JSON)
            assert math.isclose(float(value), float(expected), rel_tol=1e-12, abs_tol=0), q
    for slider, s, i in zip(seen["sliders"], ex.sliders, key, strict=True):
        assert slider["value"] == i and slider["valuetext"] == stop_text(s.stops[i])


@pytest.mark.parametrize("name", NAMES)
def test_slider_values_show_the_package_numbers(
    name: str, pages: dict[str, str], desktop: Tab
) -> None:
    root = open_explorable(desktop, pages[name], name)
    figures = set()
    for key in stops_to_try(data(name)):
        desktop.page.evaluate(SET_STOP, [root, list(key)])
        seen = desktop.page.evaluate(READ, root)
        assert_shows(name, key, seen)
        assert "<svg" in seen["figure"]
        figures.add(seen["figure"])
    assert len(figures) > 1  # the drawing changes with the stop
    assert desktop.errors == [] and desktop.external == []


def test_temperature_max_weight_is_softmax_of_its_scores(pages: dict[str, str], desktop: Tab):
    """From outside, with nothing but the page: ``data-scores``, the shown T and the shown
    largest weight agree with softmax(scores / T) to the digits shown (≥ 4 significant)."""
    root = open_explorable(desktop, pages["temperature"], "temperature")
    scores = np.array(json.loads(desktop.page.get_attribute(root, "data-scores")))
    n = len(data("temperature").sliders[0].stops)
    for i in range(n):
        desktop.page.evaluate(SET_STOP, [root, [i]])
        shown = desktop.page.evaluate(READ, root)["shown"]
        t, text = float(shown["T"][0]), shown["max-weight"][0]
        digits = len(re.sub(r"^[-0.]*|e.*$|\.", "", text))
        assert digits >= 4, text
        expected = softmax(scores / t).max()
        assert abs(float(text) - expected) <= 0.5 * 10 ** (
            math.floor(math.log10(expected)) - digits + 1
        )


@pytest.mark.parametrize("name", NAMES)
def test_arrow_keys_move_each_slider(name: str, pages: dict[str, str], desktop: Tab) -> None:
    root = open_explorable(desktop, pages[name], name)
    ex = data(name)
    start = [s.start for s in ex.sliders]
    for i, slider in enumerate(ex.sliders):
        selector = f'{root} input[data-slider="{slider.name}"]'
        desktop.page.evaluate(SET_STOP, [root, start])  # each slider from the starting stop
        before = desktop.page.evaluate(READ, root)
        at = before["sliders"][i]["value"]
        key = "ArrowLeft" if at == before["sliders"][i]["max"] else "ArrowRight"
        desktop.page.focus(selector)
        desktop.page.keyboard.press(key)
        after = desktop.page.evaluate(READ, root)
        assert after["sliders"][i]["value"] == at + (1 if key == "ArrowRight" else -1)
        assert_shows(name, tuple(s["value"] for s in after["sliders"]), after)
        desktop.page.keyboard.press("Home")
        home = desktop.page.evaluate(READ, root)
        assert home["sliders"][i]["value"] == 0
        assert_shows(name, tuple(s["value"] for s in home["sliders"]), home)
    assert desktop.errors == [] and desktop.external == []


def test_a_limited_slider_stays_within_its_limit(pages: dict[str, str], desktop: Tab) -> None:
    """ALiBi's head index never passes the head count, by keyboard or by value."""
    root = open_explorable(desktop, pages["alibi"], "alibi")
    desktop.page.evaluate(SET_STOP, [root, [11, 9]])  # 12 heads, head 10
    desktop.page.evaluate(SET_STOP, [root, [3, 9]])  # 4 heads: head 10 is clamped to 4
    seen = desktop.page.evaluate(READ, root)
    assert [s["value"] for s in seen["sliders"]] == [3, 3]
    assert seen["sliders"][1]["max"] == 3
    assert_shows("alibi", (3, 3), seen)
    desktop.page.focus(f'{root} input[data-slider="head"]')
    desktop.page.keyboard.press("End")
    assert desktop.page.evaluate(READ, root)["sliders"][1]["value"] == 3


A11Y = """root => {
  const el = document.querySelector(root);
  const live = el.querySelectorAll('[aria-live="polite"]');
  return {
    live: live.length,
    quantities_in_live: [...el.querySelectorAll("[data-quantity]")].every(q => live[0].contains(q)),
    labels: [...el.querySelectorAll('input[type="range"]')].map(i =>
      i.labels.length === 1 ? i.labels[0].textContent.trim() : ""),
    json: el.querySelectorAll('script[type="application/json"]').length,
  };
}"""


@pytest.mark.parametrize("name", NAMES)
def test_labelled_sliders_and_a_live_readout(name: str, pages: dict[str, str], desktop: Tab):
    root = open_explorable(desktop, pages[name], name)
    found = desktop.page.evaluate(A11Y, root)
    assert found["live"] == 1 and found["quantities_in_live"] and found["json"] == 1
    assert found["labels"] == [s.label for s in data(name).sliders]
    # the script came from the site itself, after the first interaction
    scripts = [u for kind, u in desktop.requests if u.endswith("/javascripts/explorables.js")]
    assert scripts and all(u.startswith(desktop.base_url + "/") for u in scripts)


@pytest.mark.parametrize("name", NAMES)
def test_fits_a_phone(name: str, pages: dict[str, str], phone: Tab) -> None:
    root = open_explorable(phone, pages[name], name)
    phone.page.locator(root).scroll_into_view_if_needed()
    width = phone.page.evaluate(
        "root => { const e = document.querySelector(root); return [e.scrollWidth, e.clientWidth,"
        " e.getBoundingClientRect().right]; }",
        root,
    )
    assert width[0] <= width[1] and width[2] <= PHONE["width"], width
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    phone.page.locator(root).screenshot(path=str(ARTIFACTS / f"explorable-{name}-375px.png"))
