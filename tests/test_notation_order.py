"""Nothing used before it is defined, and one meaning per symbol.

Order: following the nav, a page may use a glossary symbol only if the page that introduces it
(its ``page=`` in ``attention_site.notation.SYMBOLS``) comes no later. The symbols of a page are
those of its built maths (``tests/test_notation.page_math``), read by ``symbols_in_tex``.

One meaning: no symbol name is defined by two entries, and the symbols issue 37 found with
several meanings keep the one the site chose (m the running maximum, as FlashAttention writes
it; W_Q, W_K, W_V for the projections; R RoPE's rotation by position, rot a rotation by an
angle; σ the sigmoid, σ_q and σ_k standard deviations).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attention_site.notation import introduced_late, meanings, symbol_for, symbols_in_tex
from tests.conftest import mkdocs_config, nav_pages
from tests.test_notation import page_math, source_of

#: Pages that show symbols of a whole chapter by design, each linked to the page that explains
#: it: the home page's one-line formula, the chapter overviews (the forward pass previews its
#: formula with the running example), the forward chapter's table of notation, the glossary,
#: and the exercises (a solution may use the notation of any chapter; each links its pages).
#: Their symbols are not checked; a symbol they introduce still counts from where they stand.
#: an entry of a generic SymPy matrix (``generic_matrix("w", 2, 2)`` prints w_11 … w_22): a
#: placeholder of one derivation, named on its page, not a symbol of the glossary
GENERIC_ENTRY = re.compile(r"^[a-z]_[1-9][0-9]$")

EXEMPT = {
    "index.md",
    "forward/index.md",
    "forward/notation.md",
    "why/index.md",
    "positions/index.md",
    "glossary.md",
}


def test_no_symbol_name_has_two_entries():
    twice = {
        name: [s.tex for s in entries] for name, entries in meanings().items() if len(entries) > 1
    }
    assert not twice, f"one meaning per symbol: {twice}"


def test_the_chosen_meanings_hold():
    assert "maximum" in symbol_for("m").meaning and "Cost" not in symbol_for("m").meaning
    assert symbol_for("m_k") is symbol_for("m")  # no ALiBi slope m_k any more: it is β_k
    assert "ALiBi" in symbol_for(r"\beta_k").meaning
    assert "position" in symbol_for("R").meaning and "alpha" not in symbol_for("R").meaning
    assert "angle" in symbol_for("rot").meaning
    assert symbol_for("W_q") is None and symbol_for("W_v") is None  # W_Q, W_V only
    assert "sigmoid" in symbol_for(r"\sigma").meaning
    assert "standard deviation" in symbol_for(r"\sigma_q").meaning
    assert "random features" in symbol_for("r").meaning


def test_a_symbol_used_before_its_page_is_reported():
    pages = [("forward/notation.md", symbols_in_tex(r"O = PV")), ("forward/index.md", [])]
    assert introduced_late(pages) == [
        "forward/notation.md: O (introduced on forward/weighted-sum.md)",
    ] or "forward/notation.md: P (introduced on forward/index.md)" in introduced_late(pages)


def _by_nav(site) -> list[tuple[str, list[str]]]:
    math = page_math(site)
    by_source: dict[str, list[str]] = {}
    for page, texs in math.items():
        src = source_of(page).removeprefix("docs/")
        by_source.setdefault(src, []).extend(
            n for tex in texs for n in symbols_in_tex(tex) if not GENERIC_ENTRY.match(n)
        )
    return [
        (p, [] if p in EXEMPT or p.startswith("exercises/") else by_source.get(p, []))
        for p in nav_pages(mkdocs_config()["nav"])
    ]


def test_every_symbol_is_introduced_no_later_than_its_first_use(built_site):
    late = introduced_late(_by_nav(built_site))
    assert not late, "symbols used before the page that introduces them:\n" + "\n".join(late)


def test_no_lower_case_projection_names_in_the_maths(built_site):
    """W_q, W_k, W_v (or w_q …) beside W_Q: one spelling, the capital one."""
    bad = [
        f"{source_of(page)}: {tex[:60]}"
        for page, texs in page_math(built_site).items()
        for tex in texs
        if re.search(r"\b[Ww]_\{?[qkv]\b", tex)
    ]
    assert not bad, bad


def test_a_row_of_scores_is_s_on_the_forward_and_why_pages(built_site):
    """z and s both named a row of scores; the lessons of the forward pass, Why it works, the
    worked examples and "Attention as …" write s (z remains the logits of the gradients
    chapter and the exercises, and z_t linear attention's normaliser)."""
    lessons = ("docs/forward/", "docs/why/", "docs/examples/", "docs/attention-as.md")
    bad = [
        f"{source_of(page)}: {tex[:60]}"
        for page, texs in page_math(built_site).items()
        if source_of(page).startswith(lessons)
        for tex in texs
        if any(n.partition("_")[0] in ("z", "Z") for n in symbols_in_tex(tex))
    ]
    assert not bad, bad


@pytest.mark.docs
def test_equations_are_numbered_in_reading_order(built_site: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    first_seen: list[int] = []
    for md in nav_pages(mkdocs_config()["nav"]):
        text = (root / "docs" / md).read_text(encoding="utf-8")
        for tag in re.findall(r"\\tag\{(\d+)\}", text):
            if int(tag) not in first_seen:
                first_seen.append(int(tag))
    assert first_seen and first_seen == sorted(first_seen), first_seen
