"""The site's page transforms run as Python-Markdown extensions, on small Markdown input.

Each is loaded by its import path, as ``mkdocs.yml`` names it and as both MkDocs and Zensical
load it, and sees the page after the raw HTML (an executed block's output) is back in it.
markdown-exec and mkdocstrings convert parts of a page with a Markdown of their own: a
second pass over converted HTML changes nothing, and the maths' glyphs and style rules of
the parts end up once in the page.
"""

from __future__ import annotations

import re

import markdown
import pytest

from attention_site.checks.hooks import mkdocs_config
from attention_site.extensions import explorables, typeset

EXTENSIONS = [
    "attention_site.extensions.tables",
    "attention_site.extensions.keyboard",
    "attention_site.extensions.names",
    "attention_site.extensions.badges",
    "attention_site.extensions.explorables",
    "attention_site.extensions.typeset",
]
SITE = "https://example.org/attention-math/"


def _convert(text: str, *extensions: str) -> str:
    configs = {
        "attention_site.extensions.badges": {"site_url": SITE},
        "attention_site.extensions.explorables": {"site_url": SITE},
        "pymdownx.arithmatex": {"generic": True},
    }
    used = ["tables", "md_in_html", "pymdownx.arithmatex", *extensions]
    md = markdown.Markdown(
        extensions=used, extension_configs={k: v for k, v in configs.items() if k in used}
    )
    return str(md.convert(text))


def test_mkdocs_yml_registers_every_extension_after_arithmatex() -> None:
    names = [
        e if isinstance(e, str) else next(iter(e)) for e in mkdocs_config()["markdown_extensions"]
    ]
    assert [n for n in names if n.startswith("attention_site.extensions.")] == EXTENSIONS
    assert names.index("pymdownx.arithmatex") < names.index("attention_site.extensions.typeset")


def test_a_markdown_table_is_boxed_and_a_name_in_it_kept_whole() -> None:
    out = _convert("| name | what |\n|---|---|\n| `is_causal` | `a.b` |\n", EXTENSIONS[0])
    assert '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">' in out
    assert '<table class="am-table" tabindex="0">' in out
    assert '<code class="am-name">is_causal</code>' in out and "<code>a.b</code>" in out
    assert "<table" not in _convert("| a |\n|---|\n| 1 |\n")[:0]  # (without it: plain)
    assert '<table class="am-table"' not in _convert("| a |\n|---|\n| 1 |\n")


def test_an_empty_header_cell_is_logged_for_strict_builds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An error under MkDocs' logger (a strict build fails on it); the page is left unboxed."""
    out = _convert("| | b |\n|---|---|\n| 1 | 2 |\n", EXTENSIONS[0])
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert [r.name for r in errors] == ["mkdocs.extensions.attention_site.tables"]
    assert "empty header cell" in errors[0].getMessage()
    assert "<table>" in out and "am-table" not in out


def test_code_blocks_and_raw_html_figures_get_a_tab_stop() -> None:
    text = '    x = 1\n\n<div class="wide-figure"><svg></svg></div>\n'
    out = _convert(text, EXTENSIONS[1])
    assert '<pre><code tabindex="0">x = 1' in out
    assert '<div class="wide-figure" tabindex="0" role="group">' in out  # raw HTML, seen too


def test_an_object_name_in_raw_html_breaks_after_its_dots() -> None:
    span = '<span class="doc doc-object-name doc-module-name">attention_math.tiled</span>'
    out = _convert(f"<h2>{span}</h2>\n\nattention_math.tiled in prose\n", EXTENSIONS[2])
    assert ">attention_math.<wbr>tiled</span>" in out
    assert "<p>attention_math.tiled in prose</p>" in out


def test_a_badge_links_to_the_epsilon_page_under_the_sites_path() -> None:
    badge = '<span class="checked" title="NumPy agrees">✓</span>'
    out = _convert(f"<p>{badge}</p>\n\nand {badge}\n", EXTENSIONS[3])
    link = (
        '<a class="checked" href="/attention-math/reference/epsilon/" title="NumPy agrees"'
        ' aria-label="NumPy agrees">✓</a>'
    )
    assert out.count(link) == 2 and "<span" not in out


def test_the_explorables_script_only_where_an_explorable_is() -> None:
    held = '<div class="am-explorable" data-explorable="mask"></div>'
    out = _convert(f"{held}\n\n{held}\n", EXTENSIONS[4])
    script = f'<script src="/attention-math/{explorables.SCRIPT}" defer></script>'
    assert out.count(script) == 1 and out.endswith(script)
    assert "<script" not in _convert("text\n", EXTENSIONS[4])
    # an explorable shown in code, as a docstring does, is not held
    assert "<script" not in _convert(f"`{held}`\n", EXTENSIONS[4])
    # an inner conversion's copy (an executed block's output) is moved to the page's end
    assert (
        explorables.with_script(
            f"{held}\n{script}<p>after</p>", "/attention-math/" + explorables.SCRIPT
        ).count(script)
        == 1
    )


@pytest.mark.docs  # MathJax in Node, from the docs group
def test_the_maths_is_typeset_with_its_glyphs_and_style_once() -> None:
    out = _convert(
        "Score $q_i^\\top k_j$.\n\n$$\nP = \\frac{e^{s}}{\\sum_j e^{s_j}}\n$$\n", *EXTENSIONS
    )
    assert out.count("<mjx-container") == 2 and out.count("<mjx-assistive-mml") == 2
    assert '<span class="arithmatex" data-tex="q_i^\\top k_j">' in out
    displayed = re.search(
        r'<div class="arithmatex" data-tex="\s*P = \\frac[^"]*" tabindex="0"', out
    )
    assert displayed is not None
    assert out.count('<style id="mathjax-svg-styles">') == 1
    assert out.index('<style id="mathjax-svg-styles">') < out.index("<mjx-container")
    assert out.count('id="MJX-SVG-global-cache"') == 1 and out.endswith("</defs></svg>")
    assert "\\(" not in out and "\\[" not in out  # no raw TeX left
    assert typeset.typeset_html(out) == out  # a second pass changes nothing


@pytest.mark.docs
def test_inner_conversions_glyphs_are_gathered_into_the_pages_one_cache() -> None:
    """An executed block's output, converted on its own, comes back typeset into the page:
    the page's pass keeps one style and one glyph cache, each glyph once."""
    inner = [_convert(f"$x^{n}$ and $y$\n", EXTENSIONS[-1]) for n in (2, 3)]
    page = typeset.typeset_html(
        "<p>$$z$$ page</p>".replace("$$z$$", '<span class="arithmatex">\\(z\\)</span>')
        + "".join(inner)
    )
    assert page.count('id="MJX-SVG-global-cache"') == 1
    assert page.count('<style id="mathjax-svg-styles">') == 1
    ids = re.findall(r'<path id="([^"]+)"', page)
    assert len(ids) == len(set(ids)) and {
        "MJX-TEX-I-1D465",
        "MJX-TEX-I-1D466",
        "MJX-TEX-I-1D467",
    } <= set(ids)
    # every glyph a formula uses is defined once in the page
    used = set(re.findall(r'xlink:href="#([^"]+)"', page))
    assert used <= set(ids)


@pytest.mark.docs
def test_a_tex_error_is_logged_for_strict_builds_and_its_formula_shown_as_tex(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Logged under MkDocs' logger, so that ``mkdocs build --strict`` (and
    ``attention_site.strict``, for Zensical) fails; a server goes on serving."""
    page = _convert("$\\nosuchmacro{x}$ and $y$\n", EXTENSIONS[-1])
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and errors[0].name.startswith("mkdocs.")
    assert "nosuchmacro" in errors[0].getMessage()
    assert '<code class="am-tex-error" title="a TeX error">\\nosuchmacro{x}</code>' in page
    assert page.count("<mjx-container") == 1  # the other formula is typeset
