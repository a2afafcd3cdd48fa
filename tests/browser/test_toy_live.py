"""'A model that learned': typed tokens redraw every head in the page (Pyodide, no NumPy), and
the patterns equal the package's NumPy model."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from attention_math.toy import load, repeated_tokens
from attention_math.toy.heads import report

from .conftest import Tab, _open_tab

pytestmark = pytest.mark.browser

PAGE = "/model/"
FIRST_REDRAW_MS = 300_000  # the first redraw downloads and starts Python on two shared cores
READY = (
    "t => document.querySelector('input[data-toy-tokens]').dataset.toyTokens === t"
    " && document.querySelector('[data-toy-heads]').dataset.state === 'ready'"
)


@pytest.fixture(scope="module")
def tab(browser, base_url: str) -> Iterator[Tab]:
    t = _open_tab(browser, base_url)
    t.goto(PAGE)
    try:
        yield t
    finally:
        t.page.context.close()


def patterns_in_page(tab: Tab) -> dict[tuple[int, int], np.ndarray]:
    out = {}
    for fig in tab.page.locator("[data-toy-heads] figure[data-layer][data-head]").all():
        key = (int(fig.get_attribute("data-layer")), int(fig.get_attribute("data-head")))
        out[key] = np.array(json.loads(fig.get_attribute("data-pattern")))
    return out


def test_typed_tokens_redraw_every_head_as_the_package_computes(tab: Tab) -> None:
    model = load()
    before = patterns_in_page(tab)
    assert len(before) == 4  # first paint: drawn at build time, before any Python runs
    tokens = [int(t) for t in repeated_tokens(np.random.default_rng(11), 1, 16, 32)[0]]
    text = " ".join(map(str, tokens))
    tab.page.locator("input[data-toy-tokens]").fill(text)
    tab.page.get_by_role("button", name="Redraw").click()
    tab.page.wait_for_function(READY, arg=text, timeout=FIRST_REDRAW_MS)
    after = patterns_in_page(tab)
    expected = model.attention_patterns(tokens)  # (layers, heads, L, L)
    for (layer, head), pattern in after.items():
        assert pattern.shape == expected[layer, head].shape
        assert np.abs(pattern - expected[layer, head]).max() < 1e-9
        assert pattern.shape != before[(layer, head)].shape or not np.allclose(
            pattern, before[(layer, head)]
        ), f"head {layer}.{head} was not redrawn"
    # the induction head, found by score: the query at 16 + i looks at i + 1
    il, ih = report(model).induction_head
    stripe = after[(il, ih)][np.arange(16, 32), np.arange(1, 17)]  # (16,)
    assert stripe.mean() > 0.5
    assert (after[(il, ih)][16:].argmax(axis=1) == np.arange(1, 17)).mean() > 0.75


def test_a_seeded_random_sequence_redraws_within_a_second(tab: Tab) -> None:
    tab.page.locator("input.toy-live__seed").fill("7")
    before = tab.page.locator("input[data-toy-tokens]").get_attribute("data-toy-tokens")
    tab.page.get_by_role("button", name="Random repeated sequence").click()
    tab.page.wait_for_function(
        "b => { const t = document.querySelector('input[data-toy-tokens]').dataset.toyTokens;"
        " return t !== b && document.querySelector('[data-toy-heads]').dataset.state === 'ready' }",
        arg=before,
        timeout=60_000,
    )
    tokens = [int(t) for t in tab.page.locator("input[data-toy-tokens]").input_value().split()]
    assert tokens[: len(tokens) // 2] == tokens[len(tokens) // 2 :]  # a repeated sequence
    ms = float(tab.page.locator("[data-toy-heads]").get_attribute("data-ms"))
    assert ms <= 1000, f"a redraw took {ms} ms once Python was loaded"
    expected = load().attention_patterns(tokens)
    for (layer, head), pattern in patterns_in_page(tab).items():
        assert np.abs(pattern - expected[layer, head]).max() < 1e-9


def test_a_head_downloads_as_csv_and_svg(tab: Tab) -> None:
    fig = tab.page.locator('[data-toy-heads] figure[data-layer="1"][data-head="0"]')
    pattern = np.array(json.loads(fig.get_attribute("data-pattern")))
    with tab.page.expect_download() as got:
        fig.get_by_role("button", name="CSV").click()
    rows = got.value.path().read_text().splitlines()
    body = np.array([[float(x) for x in r.split(",")[1:]] for r in rows[1:]])
    assert np.array_equal(body, pattern)
    with tab.page.expect_download() as got:
        fig.get_by_role("button", name="SVG").click()
    assert got.value.path().read_text().startswith("<svg")
