"""Issue 37's site-wide presentation items: badges link to the ε page, wide boxes show that
they scroll, the home page's pipeline has a phone layout, "Back to top" stays off the headings,
and the home page does not open with "Download notebook"."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import yaml

from attention_site.figures.panels import running_pipeline
from tests.hooks import load_hook

ROOT = Path(__file__).resolve().parents[1]
CSS = (ROOT / "docs/stylesheets/extra.css").read_text(encoding="utf-8")


def _config() -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # !!python/name tags
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


def test_badges_link_to_the_epsilon_page_relative_to_each_page():
    badges = load_hook("badges")
    span = '<span class="checked" title="NumPy agrees">✓ float64 <small>(bound 16 ε)</small></span>'
    html = f"<p>before</p>{span}<p>after {span}</p>"
    out = badges.linked(html, "../../reference/epsilon/")
    assert out.count('<a class="checked" href="../../reference/epsilon/" title=') == 2
    assert "<span" not in out and out.count("</a>") == 2 and "(bound 16 ε)</small></a>" in out
    assert badges._href("long/online-softmax/", "reference/epsilon/") == "../../reference/epsilon/"
    assert badges._href("", "reference/epsilon/") == "reference/epsilon/"
    config = _config()
    assert "hooks/badges.py" in config["hooks"]
    page = (ROOT / "docs" / badges.TARGET).read_text(encoding="utf-8")
    assert "machine epsilon" in page and "Why 16 ε" in page
    assert badges.TARGET in str(config["nav"])


def test_home_page_ends_with_the_notebook_link_other_pages_open_with_it():
    notebooks = load_hook("notebooks")
    source = '# T\n\n```python exec="on"\nprint(1)\n```\n'

    def page(home: bool) -> SimpleNamespace:
        file = SimpleNamespace(content_string=source, src_uri="index.md", dest_uri="index.html")
        return SimpleNamespace(file=file, is_homepage=home, title="T", url="")

    html = "<h1>T</h1><p>first</p>"
    config = {"site_url": "http://x/"}
    home = notebooks.on_page_content(html, page(True), config, None)
    other = notebooks.on_page_content(html, page(False), config, None)
    assert home.startswith("<h1>T</h1><p>first</p>") and "Download notebook" in home
    assert other.index("Download notebook") < other.index("<p>first</p>")


def test_pipeline_has_a_phone_layout_and_the_css_picks_it():
    wide, narrow = running_pipeline(), running_pipeline(narrow=True)

    def box(svg: str) -> tuple[float, float]:
        w, h = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups()
        return float(w), float(h)

    (ww, wh), (nw, nh) = box(wide), box(narrow)
    assert ww > wh and nh > 2 * nw  # wide for a desk, tall for a phone
    # at a phone's 343 px of content, the narrow figure's 10 pt labels are at least 11 px
    assert 343 / (nw * 4 / 3) * 10 * 4 / 3 >= 11
    for title in ("input $X$", "output $O = PV$"):
        assert title.split("$")[0] in narrow
    home = (ROOT / "docs/index.md").read_text(encoding="utf-8")
    assert "pipeline-narrow" in home and "narrow=True" in home
    assert re.search(r"\.pipeline-narrow \{ display: none; \}", CSS)
    assert re.search(r"max-width: 44\.9375em\) \{\s*\.pipeline-wide \{ display: none; \}", CSS)


def test_scrolling_boxes_show_a_cue_and_back_to_top_stays_off_the_headings():
    boxes = r"\.md-typeset div\.arithmatex, \.md-typeset table:not\(\[class\]\), "
    boxes += r"\.md-typeset \.wide-figure,\s*\.md-typeset \.md-typeset__scrollwrap \{(.*?)\}"
    rule = re.search(boxes, CSS, flags=re.S)
    assert rule and rule[1].count("no-repeat local") == 2 and rule[1].count("no-repeat scroll") == 2
    assert ".md-typeset__scrollwrap table { background: transparent; }" in CSS  # shades show
    top = re.search(r"\.md-top \{([^}]*)\}", CSS)
    assert top and "top: auto !important" in top[1] and "bottom: 1rem" in top[1]  # beats inline
