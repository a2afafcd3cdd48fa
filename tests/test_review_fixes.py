"""What a second careful reading of the built site found (session 4), each with a check on the
built pages that fails if the wrong statement comes back or the correction goes missing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_reader_errors import page, raw

GONE = {  # page: wrong or over-claimed statements that must not come back
    "long/flash-backward": ["A row that sees no key gets"],  # lse = −∞, not +∞
    "positions/kv-cache": ["long shared prefix"],  # the state depends on the query
    "attention-as": ["d_head = 2"],  # d_head is not defined there
    "forward": ["can attend to"],  # W_Q ≠ W_K makes the *scores* asymmetric
    "examples/lets-go": ["The last key entry of"],  # it is the first entry of go's key
    "positions/sinusoidal": ["only some of them depend"],  # in general none does
    "positions/rope": ["and no implementation can be:"],  # only float64 angles cannot
    "why/softmax": ["barely above ten"],  # and "just above" is now the next float
    "about": ["on any page; browser"],  # Pyodide loads on the reader's click
    "": ["No number on these pages"],  # transcribed inputs were typed
    "why/scaling": ["five standard errors wide"],  # ±5 standard errors
    "why/equivariance": ["sees only the tokens before it"],  # itself too
    "positions/alibi": ["m_h"],  # h is the head count only
    "why/masks": ["\\tau", "refuses the cast"],  # τ is the kernel bandwidth
    "reference/coming-from-pytorch": ["SDPA (2.x)"],  # zeros only since PyTorch 2.5
    "long/linear-attention": ["S_t = S_{t-1}"],  # S is the scores; the state is \\mathcal{S}_t
    "gradients": ["QK^\\top s + M"],  # s is a row of scores; the scale is α
}

PRESENT = {  # page: the corrected statement
    "long/flash-backward": ["the log of an empty sum"],
    "positions/kv-cache": ["cannot be kept for later tokens"],
    "attention-as": ["The identity is written for bandwidth", "each ≤ d_k = d_v = 2"],
    "forward": ["need not equal"],
    "examples/lets-go": ["first entry of"],
    "positions/sinusoidal": ["in general none of them"],
    "positions/rope": ["forms the angle in float64 can be"],
    "why/softmax": ["the next float up to infinity"],
    "about": ["until the reader presses"],
    "": ["No computed number"],
    "why/equivariance": ["itself and the tokens before it"],
    "positions/alibi": ["counted from 0"],
    "why/masks": ["r_{\\min}"],
    "reference/coming-from-pytorch": ["since 2.5"],
    "long/linear-attention": ["\\mathcal{S}_t = \\mathcal{S}_{t-1}"],
    "gradients": ["\\alpha\\, QK^\\top"],
}


@pytest.mark.docs
@pytest.mark.parametrize("path", sorted(GONE))
def test_statements_found_wrong_do_not_come_back(built_site: Path, path: str) -> None:
    html, text = raw(built_site, path), page(built_site, path)
    back = [s for s in GONE[path] if s in html or s in text]
    assert not back, f"{path or 'home'}: {back}"


@pytest.mark.docs
@pytest.mark.parametrize("path", sorted(PRESENT))
def test_corrections_are_on_their_pages(built_site: Path, path: str) -> None:
    html, text = raw(built_site, path), page(built_site, path)
    missing = [s for s in PRESENT[path] if s not in html and s not in text]
    assert not missing, f"{path or 'home'}: {missing}"


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


@pytest.mark.docs
def test_load_averages_stay_in_the_appendix(built_site: Path) -> None:
    """A load average qualifies a timing; the lesson pages show errors, not timings, so the
    engineering figures live in the Appendix (issue 15: reports out of the lesson)."""
    from tests.conftest import mkdocs_config, nav_pages

    nav = mkdocs_config()["nav"]
    appendix = {
        p
        for entry in nav
        if isinstance(entry, dict) and "Appendix" in entry
        for p in nav_pages(entry)
    }
    lesson = [p for p in nav_pages(nav) if p not in appendix]
    assert len(lesson) > 40 and appendix
    shown = [
        p
        for p in lesson
        if "load average" in page(built_site, p.removesuffix(".md").removesuffix("index"))
    ]
    assert not shown, shown
