"""One notation for the whole site: every symbol a page uses is in the glossary.

"Uses" is checkable: the TeX of every math element (`class="arithmatex"`) in the built
HTML, cut into symbols by `attention_site.notation.symbols_in_tex` (rule in its module
docstring), generated math included. A symbol no entry of `notation.SYMBOLS` defines fails.
"""

from __future__ import annotations

import html
import re
import string
from collections import defaultdict
from pathlib import Path

import pytest

from attention_site import notation
from attention_site.notation import SYMBOLS, TERMS, symbols_in_tex, undefined

# the TeX of each formula, kept beside its SVG (attention_site.extensions.typeset)
MATH = re.compile(r'<(span|div) class="arithmatex" data-tex="([^"]*)"')
ROOT = Path(__file__).resolve().parents[2]

# Notation conventions a table cannot express: each pattern in a page's math is an error.
FORBIDDEN = [
    (r"\\partial\s*L\b|\bL\s*\(", "the loss is ℓ; L is only a length"),
    (r"\\ell_", "the online softmax's running denominator is λ; ℓ is the loss"),
    (
        r"x\s*(?:[+-]|\\pm)\s*h\b|\b2\s*h\b|h\^\s*\{?(?:\\ast|\*)",
        "the finite-difference step is Δ; h counts heads",
    ),
    (r"\\epsilon\b|\\varepsilon\s*=\s*2\^\{?-53", "ε is machine epsilon, 2^-52 in float64"),
]


def page_math(site: Path) -> dict[str, list[str]]:
    """The TeX of every math element of every built page, by page."""
    out: dict[str, list[str]] = {}
    for page in sorted(site.rglob("*.html")):
        found = [html.unescape(m.group(2)) for m in MATH.finditer(page.read_text("utf-8"))]
        if found:
            out[str(page.relative_to(site))] = found
    assert len(out) > 10, f"only {len(out)} pages with math under {site}: is the build complete?"
    return out


def test_the_rule_finds_an_undefined_symbol_and_accepts_indices_and_labels():
    used = symbols_in_tex(r"O_{ij} = \sum_l P_{il} V_{lj} + \Gamma + W_Z, \; P_{\text{raw}}")
    assert undefined(used) == [r"\Gamma", "W_Z"]
    assert (
        undefined(symbols_in_tex(r"d_{\text{model}} = h\,d_v,\ dO = \partial\ell/\partial O")) == []
    )


def source_of(page: str) -> str:
    """The Markdown file under docs/ that built ``page`` (``forward/qkv/index.html``)."""
    stem = page.removesuffix("index.html").removesuffix(".html").rstrip("/")
    for cand in (f"{stem}.md", f"{stem}/index.md" if stem else "index.md"):
        if (ROOT / "docs" / cand).is_file():
            return f"docs/{cand}"
    return page


HOW_TO_ADD = """
Each symbol above appears in the math of the page(s) named after it. To fix, either
  - add an entry to SYMBOLS in src/attention_math/notation.py, e.g.
        Symbol(r"$W_Z$", ("W_Z",), "what it means", r"its shape", "the/page.md", group=_M),
    (names: each symbol as printed above, in a raw string; any_subscript=True lets it
    carry any subscript), or
  - write the page's math with a symbol the glossary already has (see docs/glossary.md).
A subscript of digits or of the index letters c i j k l m n t is an index and needs no entry;
wrap a descriptive subscript in \\text{...} to make it a label (P_{\\text{raw}} is a P).
"""


def missing_report(math: dict[str, list[str]]) -> str:
    """Each undefined symbol, the page source and TeX using it, and how to fix it; "" if none."""
    missing: dict[str, dict[str, str]] = defaultdict(dict)  # symbol -> {page source: its TeX}
    for page, texs in math.items():
        for tex in texs:
            for name in undefined(symbols_in_tex(tex)):
                missing[name].setdefault(source_of(page), " ".join(tex.split())[:90])
    if not missing:
        return ""
    lines = [
        f"  {name}  on {src}, in: {tex}"
        for name, where in sorted(missing.items())
        for src, tex in sorted(where.items())
    ]
    head = "symbols in a page's math that the glossary (attention_site.notation.SYMBOLS) lacks:"
    return "\n".join([head, *lines]) + HOW_TO_ADD


def test_symbols_in_exponents_and_under_big_operators_are_read_too():
    """An undefined symbol cannot hide in a superscript, under a sum, or under an accent."""
    assert undefined(symbols_in_tex(r"e^{Y_3}")) == ["Y_3"]
    assert undefined(symbols_in_tex(r"\sum_{j \in \Gamma} P_{ij}")) == [r"\Gamma"]
    assert symbols_in_tex(r"\hat{P}_{ij}") == symbols_in_tex(r"\hat P_{ij}") == ["P_ij"]
    assert undefined(symbols_in_tex(r"\sum_{j'} e^{S_{ij'}}")) == []  # j' is an index


def test_the_report_names_symbol_page_and_fix():
    report = missing_report({"why/multi-head/index.html": [r"O = [H_1, H_2] W_Z + \Gamma"]})
    assert r"W_Z  on docs/why/multi-head.md, in: O = [H_1, H_2] W_Z + \Gamma" in report
    assert r"\Gamma  on docs/why/multi-head.md" in report
    assert "src/attention_math/notation.py" in report
    assert missing_report({"index.html": [r"O = PV"]}) == ""


def test_every_symbol_on_every_page_is_in_the_glossary(built_site):
    report = missing_report(page_math(built_site))
    assert not report, report


@pytest.mark.parametrize(("pattern", "why"), FORBIDDEN)
def test_notation_conventions_hold_on_every_page(built_site, pattern, why):
    offenders = [
        f"{source_of(page)}: {tex.strip()[:80]}"
        for page, texs in page_math(built_site).items()
        for tex in texs
        if re.search(pattern, tex)
    ]
    assert not offenders, f"{why}:\n" + "\n".join(offenders[:10])


def test_the_glossary_shows_every_symbol_and_term(built_site):
    raw = (built_site / "glossary" / "index.html").read_text("utf-8")
    page = html.unescape(re.sub(r"</?abbr[^>]*>", "", raw))
    for s in SYMBOLS:
        for tex in re.findall(r"\$([^$]+)\$", s.tex):
            assert tex in page, f"the glossary does not show {tex}"
    for t in TERMS:
        assert f"<dt>{t.word}</dt>" in page, f"the glossary does not define {t.word!r}"


def test_every_hover_definition_is_a_glossary_entry():
    words = {w.strip() for t in TERMS for w in t.word.split(",")}
    words |= {"dₖ", "√dₖ"}  # the hover text of the symbol d_k, in the glossary's symbol table
    abbr = (ROOT / "includes" / "abbreviations.md").read_text("utf-8")
    terms = re.findall(r"^\*\[([^\]]+)\]:", abbr, flags=re.M)
    assert terms, "no hover definitions found: has includes/abbreviations.md moved?"
    assert not [t for t in terms if t not in words]


def test_every_entry_points_at_a_page_that_exists():
    docs = ROOT / "docs"
    for entry in (*SYMBOLS, *TERMS):
        assert not entry.page or (docs / entry.page).is_file(), entry


def test_index_subscripts_are_the_ones_documented() -> None:
    """The module docstring lists exactly the characters and commands ``_INDEX`` accepts."""
    doc = notation.__doc__ or ""
    letters, chars = "c i j k l m n t", ", : = < > + - '"
    assert f"``{letters}``" in doc and f"``{chars}``" in doc
    documented = set(string.digits) | set(letters.split()) | set(chars.split())
    accepted = {c for c in string.printable if notation._INDEX.match(c)}
    assert accepted == documented
    for command in (r"\cdot", r"\ldots", r"\le"):
        assert f"``{command}``" in doc
        assert notation._INDEX.match(command) and notation._INDEX.match(command[1:])


def test_symbols_in_tex_keeps_index_subscripts_and_undefined_reads_them() -> None:
    assert notation.symbols_in_tex(r"S_{ij}") == ["S_ij"]
    assert notation.undefined(["S_ij", "S_k=1", "S_t-1"]) == []
