"""The explorables' HTML (attention_site.pages.explorables), read without a browser: what a page
gets from the build."""

from __future__ import annotations

import html
import json
import re
from functools import cache

import pytest

from attention_site import explore
from attention_site.pages.explorables import (
    QUANTITIES,
    READOUTS,
    explorable_html,
    quantity_text,
    stop_text,
)

NAMES = sorted(explore.EXPLORABLES)


@cache
def page(name: str) -> str:
    return explorable_html(name)


def embedded(text: str) -> dict:
    found = re.search(r'<script type="application/json">(.*?)</script>', text, re.S)
    assert found
    return json.loads(found.group(1))


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
@pytest.mark.parametrize("name", NAMES)
def test_every_stop_is_embedded_with_the_package_texts(name: str) -> None:
    ex = explore.EXPLORABLES[name]()
    data = embedded(page(name))
    assert set(data["frames"]) == {",".join(map(str, k)) for k in ex.frames}
    for key, frame in ex.frames.items():
        shown = data["frames"][",".join(map(str, key))]
        assert shown["q"] == {q: quantity_text(name, frame, q) for q in QUANTITIES[name]}
        assert "<svg" in shown["fig"]
    assert data["stops"] == {s.name: [stop_text(x) for x in s.stops] for s in ex.sliders}


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
@pytest.mark.parametrize("name", NAMES)
def test_sliders_are_labelled_ranges_and_the_numbers_live(name: str) -> None:
    text = page(name)
    ex = explore.EXPLORABLES[name]()
    assert text.count(f'data-explorable="{name}"') == 1
    for s in ex.sliders:
        ident = re.search(rf'<input type="range" id="([^"]+)" data-slider="{s.name}"', text)
        assert ident, s.name
        label = re.search(rf'<label for="{ident.group(1)}">([^<]+)</label>', text)
        assert label and html.unescape(label.group(1)) == s.label
    live = re.search(r'<p class="ex-readout" aria-live="polite">(.*?)</p>', text, re.S)
    assert live
    shown = re.findall(r'data-quantity="([^"]+)"', live.group(1))
    assert shown == [q for _, q, _ in READOUTS[name]]
    assert set(shown) == set(QUANTITIES[name])
    # nothing in the embedded data looks like a tag to a later pass over the page's HTML
    body = re.search(r'<script type="application/json">(.*?)</script>', text, re.S)
    assert body and "<" not in body.group(1)


def test_temperature_carries_its_row() -> None:
    row = re.search(r'data-scores="([^"]+)"', page("temperature"))
    assert row
    assert json.loads(html.unescape(row.group(1))) == explore.temperature().frames[(0,)]["scores"]


def test_unknown_name_is_refused() -> None:
    with pytest.raises(ValueError, match="no explorable named 'gravity'"):
        explorable_html("gravity")
    with pytest.raises(ValueError, match="shows no quantity 'weights'"):
        quantity_text("temperature", explore.temperature().frames[(0,)], "weights")
