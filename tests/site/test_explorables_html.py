"""The explorables' HTML (attention_site.pages.explorables), read without a browser: what a page
gets from the build."""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path

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

ROOT = Path(__file__).resolve().parents[2]


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


def test_the_kv_heads_readout_counts_in_words_at_the_ends() -> None:
    from attention_site.pages.explorables import _readout_html

    ex = explore.kv_heads("Llama 2 70B")

    def words(h_kv: int) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", _readout_html("kv-heads", ex.frame(h_kv=h_kv))))

    mha, mqa, gqa = words(64), words(1), words(8)
    assert "1 times" not in mha and "1 query heads" not in mha
    assert "one query head per kv head: multi-head attention" in mha
    assert "h_kv = 1 kv head (64 query heads share each)" in mqa
    assert "h_kv = 8 kv heads (8 query heads share each), the model's own choice" in gqa
    assert "8 times smaller" in gqa


def test_the_mask_readout_writes_the_offset_into_the_rule() -> None:
    from attention_site.pages.explorables import _readout_html

    ex = explore.mask()
    for frame in ex.frames.values():
        text = html.unescape(re.sub(r"<[^>]+>", "", _readout_html("mask", frame)))
        o = frame["offset"]
        rule = "j ≤ i" if o == 0 else f"j ≤ i + {o}" if o > 0 else f"j ≤ i − {-o}"
        assert f"when {rule};" in text and "(0)" not in text
        assert ("1 row sees" in text) == (frame["empty-rows"] == 1)


def test_the_script_is_written_where_an_explorable_is_and_nowhere_else() -> None:
    """The explorables extension, configured as ``mkdocs.yml`` configures it, writes the
    script once after a page that holds an explorable, under the site's path, and on no
    other page; a docstring showing the attribute in code holds none."""
    import markdown

    from attention_site.checks.hooks import mkdocs_config
    from attention_site.extensions import explorables
    from attention_site.extensions.badges import site_path

    config = mkdocs_config()
    name = "attention_site.extensions.explorables"
    (options,) = [
        e[name] for e in config["markdown_extensions"] if isinstance(e, dict) and name in e
    ]
    options = {"site_url": "https://example.org/attention-math/"} | {
        k: v
        for k, v in options.items()
        if v is not None  # !ENV reads as None here
    }
    script = f'<script src="{site_path(options["site_url"])}{explorables.SCRIPT}" defer></script>'
    for content, shown in [(page("mask"), True), ("text", False), (f"`{page('mask')}`", False)]:
        md = markdown.Markdown(extensions=["md_in_html", name], extension_configs={name: options})
        out = md.convert(content)
        assert out.count(script) == int(shown), content[:60]
    assert (ROOT / "docs" / explorables.SCRIPT).is_file()
    # the theme does not write it into every page
    assert explorables.SCRIPT not in str(config.get("extra_javascript"))


def test_the_browser_tests_refuse_a_script_nothing_keeps_to_its_users(monkeypatch):
    """A script added to extra_javascript would load on every page, used or not: the browser
    tests' allow-list has no users for it and says so (attention_site/checks/scripts.py)."""
    from attention_site.checks import scripts

    shipped = scripts.extra_scripts()
    assert {f"/{path}" for path in shipped} <= set(scripts.script_users())
    assert "/javascripts/explorables.js" in scripts.script_users()  # kept to its users
    monkeypatch.setattr(scripts, "extra_scripts", lambda: [*shipped, "javascripts/new.js"])
    with pytest.raises(LookupError, match=r"javascripts/new\.js"):
        scripts.script_users()
