"""The site builds strictly, shows computed values, and has no hand-typed results nor TeX
where TeX is not typeset (navigation, table of contents, figures' text alternatives)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from attention_math import numeric
from attention_math.display import fmt
from attention_math.examples import IDENTITY_2X2 as ex
from tests.conftest import mkdocs_config, nav_pages

# Only the tests that build a site are `docs` tests (conftest marks those that use the built
# site): the checks of the Markdown sources run in the quick loop (`-m "not docs"`) too.

DOCS = Path(__file__).resolve().parents[2] / "docs"
# a decimal number in prose: 0.67, -1.5, 3.0 (not part of a word, a version or a path, not
# a section "§3.3" or an identifier "arXiv:2407.08608", "doi:10.1137/…")
DECIMAL = re.compile(r"(?<![\w.\-/§:])[-+−]?\d+\.\d+(?![\w.])")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")


def prose_lines(text: str):
    """Lines of Markdown outside fenced code blocks, with inline code and comments removed."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(2)[0] * len(m.group(2))
            continue
        if fence is not None:
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
            continue
        yield number, re.sub(r"`[^`]*`", "", line)


def hand_typed_decimals(text: str) -> list[tuple[int, str]]:
    return [(n, m.group()) for n, line in prose_lines(text) for m in DECIMAL.finditer(line)]


def test_detector_finds_typed_decimals_and_ignores_code():
    sample = "\n".join(
        [
            "The weight is 0.6698 here.",  # typed: found
            "Inline `0.5` code is fine, so is v1.2",  # ignored
            '```python exec="on"',
            "print(0.25)",  # inside an executed block: fine
            "```",
            "$$ P \\approx 0.33 $$",  # typed inside math: found
            "([Dao, 2023](https://arxiv.org/abs/2307.08691), §3.3) and arXiv:2307.08691",  # no
        ]
    )
    assert hand_typed_decimals(sample) == [(1, "0.6698"), (6, "0.33")]


# a version is not a result: "version 2.5", "PyTorch 2.5", "Llama 3.1"
VERSION = re.compile(r"(?:version|PyTorch|Llama|Python) $")
# published figures a page quotes, with their source: data, not results of this site
QUOTED = {
    ("forward/dropout.md", "0.1"): "Vaswani et al. 2017, §5.4: P_drop = 0.1",
    ("positions/sinks.md", "5.60"): "Xiao et al. (StreamingLLM), Table 1",
    ("positions/sinks.md", "5.40"): "Xiao et al. (StreamingLLM), Table 1",
    ("recent/latent.md", "0.1"): "YaRN's attention factor m = 0.1 μ ln(factor) + 1 (Peng et al.)",
    ("recent/low-precision.md", "0.001"): "Shah et al. 2024, §4.3: outliers on 0.1 % of entries",
    ("recent/low-precision.md", "0.1"): "Shah et al. 2024, §4.3: outliers on 0.1 % of entries",
    ("recent/low-precision.md", "2.6"): "Shah et al. 2024, abstract: 2.6 times lower error",
    ("recent/sinks-gates.md", "0.25"): "Qwen3-Next's config: partial_rotary_factor = 0.25",
}


def test_no_hand_typed_decimal_results_in_docs():
    offenders = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        lines = text.splitlines()
        name = page.relative_to(DOCS).as_posix()
        for n, number in hand_typed_decimals(text):
            before = lines[n - 1].split(number)[0]
            if (name, number) in QUOTED or VERSION.search(before):
                continue
            offenders.append(f"{name}:{n}: {number}")
    assert not offenders, "decimals typed by hand (print them from the package):\n" + "\n".join(
        offenders
    )


def test_strict_build_shows_the_computed_identity_example(built_site):
    html = (built_site / "examples" / "identity-2x2" / "index.html").read_text(encoding="utf-8")
    q, k, v = numeric.compute_qkv(*(ex.numeric(n) for n in ("x", "w_q", "w_k", "w_v")))
    out, w = numeric.attention(q, k, v), numeric.attention_weights(q, k, v)
    for value in (*w.ravel(), *out.ravel()):
        shown = re.compile(rf"(?<![\d.]){re.escape(fmt(value, 6))}(?!\d)")  # whole, not a prefix
        assert shown.search(html), f"computed value {value!r} missing from the page"
    assert "agrees with the exact value" in html
    # the closed form in p_1 = sigmoid(1/√2), in the typeset MathML
    assert "<msub><mi>p</mi><mn>1</mn></msub>" in html and "<mi>sigmoid</mi>" in html


def test_every_page_in_the_nav_was_built(built_site):
    missing = []
    pages = nav_pages(mkdocs_config()["nav"])
    for page in pages:
        stem = page[: -len(".md")]
        stem = stem[: -len("index")] if stem.endswith("index") else stem + "/"
        if not (built_site / stem / "index.html").is_file():
            missing.append(page)
    assert len(pages) > 40 and not missing


# A fence that neither superfences nor markdown-exec took (one that did not run): its ``` marks
# or markdown-exec's options left in the page, as text or as an inline code span. A code block
# shown on the page may print fences: it is left out.
_SHOWN_CODE = re.compile(r"<pre\b.*?</pre>", re.S)
_FENCE_TEXT = re.compile(r"```|exec=(?:&quot;|\")on")


def fences_left_as_text(html: str) -> list[str]:
    text = _SHOWN_CODE.sub("", html)
    return [text[max(0, m.start() - 40) : m.end() + 40] for m in _FENCE_TEXT.finditer(text)]


def test_fence_detector_finds_a_fence_left_as_text_and_ignores_shown_code():
    assert fences_left_as_text('<p>```python exec="on"\nprint(1)\n```</p>')
    assert fences_left_as_text("<p><code>python exec=&quot;on&quot; print(1)</code></p>")
    assert not fences_left_as_text('<pre><code>print("```text")</code></pre><p>prose</p>')


def test_every_fence_was_taken_so_every_executed_block_ran(built_site):
    left = {
        page.relative_to(built_site).as_posix(): found[:2]
        for page in sorted(built_site.rglob("*.html"))
        if (found := fences_left_as_text(page.read_text(encoding="utf-8")))
    }
    assert len(list(built_site.rglob("*.html"))) > 40 and not left, left


def test_maths_is_typeset_at_build_time_and_assets_are_local(built_site):
    page = (built_site / "forward" / "formula" / "index.html").read_text(encoding="utf-8")
    # typeset SVG with MathML beside it for screen readers; no TeX left for a browser
    assert "<mjx-container" in page and "<mjx-assistive-mml" in page
    article = re.sub(r'data-tex="[^"]*"', "", page.split("<article")[1])  # TeX kept to copy
    assert 'class="arithmatex">\\(' not in page and "\\begin{" not in article
    assert not list(built_site.rglob("tex-svg.js"))
    assert not [s for s in re.findall(r'<script[^>]+src="([^"]+)"', page) if "mathjax" in s]
    index = (built_site / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', index)
    assert scripts and not [s for s in scripts if s.startswith(("http:", "https:", "//"))]
    links = re.findall(r'<link[^>]+href="(https?:[^"]+)"', index)
    assert not [u for u in links if "stylesheet" in u or u.endswith((".css", ".js"))]


def test_the_site_prints_numpy_values_not_typed_ones(built_site):
    # the softmax page's decimal for σ(1), the running example's token 2 under the causal
    # mask, is NumPy's, rounded by the build
    html = (built_site / "forward" / "softmax" / "index.html").read_text(encoding="utf-8")
    sigma = numeric.softmax(np.array([1.0, 0.0]))[0]
    assert fmt(sigma, 4) in html


@pytest.mark.docs
def test_a_disagreement_fails_the_strict_build(tmp_path):
    import subprocess
    import sys

    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nplugins: [markdown-exec]\nmarkdown_extensions: [pymdownx.superfences]\n"
    )
    (tmp_path / "docs" / "index.md").write_text(
        '# t\n\n```python exec="on"\nimport numpy as np, sympy as sp\n'
        "from attention_math.crosscheck import crosscheck\n"
        "print(crosscheck(sp.Rational(1, 3), np.float64(0.3334), label='slip'))\n```\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "CrossCheckError" in proc.stdout + proc.stderr


def test_no_raw_tex_in_the_navigation_or_table_of_contents(built_site):
    """The maths is typeset in the article only: a heading with maths needs a plain
    ``data-toc-label``, or its TeX shows in the sidebar's table of contents."""
    import re

    bad = {}
    for page in built_site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        links = re.findall(r'<a [^>]*class="md-nav__link[^"]*"[^>]*>(.*?)</a>', html, flags=re.S)
        raw = [t for t in links if re.search(r"\\[(\[]|\$|\\[a-z]+\{", t)]
        if raw:
            bad[page.relative_to(built_site).as_posix()] = raw[:3]
    assert bad == {}


@pytest.mark.docs
def test_figure_descriptions_carry_no_tex(built_site: Path) -> None:
    """A screen reader reads an aria-label aloud: a backslash or a dollar sign is noise."""
    bad = [
        (str(f.relative_to(built_site)), label[:80])
        for f in built_site.rglob("*.html")
        for label in re.findall(r'aria-label="([^"]*)"', f.read_text(encoding="utf-8"))
        if "\\" in label or "$" in label
    ]
    assert not bad, bad


def test_the_browser_tests_know_exactly_the_scripts_the_site_ships(built_site):
    """tests/browser's allow-list (``scripts.script_users``, from mkdocs.yml and the hooks)
    names every script a built page loads, as the theme writes it, and nothing the site does
    not ship."""
    from attention_site.checks.scripts import script_users

    users = script_users()
    shipped: set[str] = set()
    unknown: dict[str, list[str]] = {}
    for html_file in sorted(built_site.rglob("*.html")):
        text = html_file.read_text(encoding="utf-8")
        for src in re.findall(r'<script\b[^>]*?\ssrc="([^"]+)"', text):
            keys = [key for key in users if key in "/" + src.split("?")[0].lstrip("./")]
            shipped.update(keys)
            if not keys:
                unknown.setdefault(src, []).append(str(html_file.relative_to(built_site)))
    assert unknown == {}, {src: pages[:3] for src, pages in unknown.items()}
    assert shipped == set(users), sorted(set(users) - shipped)  # no entry the site dropped


@pytest.mark.docs
def test_a_page_lists_only_the_navigation_it_shows(built_site: Path) -> None:
    """A collapsed section's pages are listed only on the pages inside it (``navigation.prune``):
    a lesson's sidebar holds the API section as one link, an API page its list of modules."""
    from urllib.parse import urljoin

    def nav_links(page: str) -> set[str]:
        html = (built_site / page / "index.html").read_text(encoding="utf-8")
        nav = html.split("md-sidebar--primary", 1)[1].split("md-sidebar--secondary", 1)[0]
        hrefs = re.findall(r'<a href="([^"]*)" class="md-nav__link', nav)
        return {urljoin(f"/{page}/", href) for href in hrefs}

    api_modules = {f"/reference/api/{name}/" for name in ("numeric", "tiled", "toy/train")}
    assert not api_modules & nav_links("forward")
    assert api_modules <= nav_links("reference/api/toy/train")
    assert "/forward/softmax/" in nav_links("forward")  # the reader's own section, listed
