"""The exercise pages: rendered from the registry, every solution runs and passes its checker.

A chapter's page, ``docs/exercises/<chapter>.md``, is its introduction and one block that
prints `attention_site.pages.exercises.chapter_page`; every exercise of the registry is on the
page of its chapter, once, with its solution (CONTRIBUTING.md: "Add an exercise").
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math.exercises import CHAPTERS, catalogue, check, get
from attention_math.exercises.cli import show_exercise
from attention_site.pages import exercises as pages
from attention_site.pages.exercises import (
    SolutionError,
    chapter_page,
    decimals,
    entry,
    heading,
    solved,
    statement,
)
from tests.conftest import mkdocs_config

DOCS = Path(__file__).resolve().parents[2] / "docs" / "exercises"
_BLOCK = re.compile(r'^( *)```python exec="on"[^\n]*\n(.*?)^\1```', re.M | re.S)


def _blocks(page: Path) -> list[str]:
    return [textwrap.dedent(m.group(2)) for m in _BLOCK.finditer(page.read_text())]


#: the one block of a chapter's page: the page below its introduction is `chapter_page`'s
CHAPTER_BLOCK = """from attention_site.pages.exercises import chapter_page

print(chapter_page("{chapter}"))
"""


def _run(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<docs block>", "exec"), {})  # our own page code, not an answer
    return out.getvalue()


#: chapters whose page takes a second or more of CPU (the house's `slow`): the scaling page
#: runs the scaling-variance-means proof, seconds of SymPy (slow in test_proof_exercises too)
SLOW_CHAPTERS = {"scaling"}


@pytest.mark.parametrize(
    "chapter",
    [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CHAPTERS else c for c in CHAPTERS],
)
def test_a_chapters_page_is_its_introduction_and_the_rendered_exercises(chapter: str) -> None:
    page = DOCS / f"{chapter}.md"
    text = page.read_text(encoding="utf-8")
    assert "\n## " not in text, (
        f"{page.name} writes an exercise by hand: move it into the chapter's module "
        "(explanation=, solution=) and let chapter_page render it (CONTRIBUTING.md)"
    )
    (block,) = _blocks(page)
    # the block is the one call (so its output is what chapter_page renders, computed once)
    assert block == CHAPTER_BLOCK.format(chapter=chapter), block
    out = _run(block)
    ids = re.findall(r"Id: `([^`]+)`", out)
    assert ids == [i for i, ex in catalogue().items() if ex.chapter == chapter]
    solved = re.findall(r"The checker says: \*\*([\w-]+): correct \((?:exactly|to within)", out)
    assert solved == ids  # every solution shown, and each passes its checker


def _nav_entries(entry: object) -> list[object]:
    """Every page entry of the nav: ``"page.md"`` or ``{"title": "page.md"}``."""
    if isinstance(entry, list):
        return [e for item in entry for e in _nav_entries(item)]
    if isinstance(entry, dict) and len(entry) == 1:
        (value,) = entry.values()
        return [entry] if isinstance(value, str) else _nav_entries(value)
    return [entry] if isinstance(entry, str) else []


@pytest.fixture(scope="module")
def nav_entries() -> list[object]:
    """The nav's page entries, read from mkdocs.yml once for the module's cases."""
    return _nav_entries(mkdocs_config()["nav"])


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_a_chapters_title_is_the_registrys(chapter: str, nav_entries: list[object]) -> None:
    """The page's heading is `heading` of the chapter's title in `CHAPTERS`; the navigation
    gives it no title of its own (MkDocs then shows the heading), or that same one."""
    first = (DOCS / f"{chapter}.md").read_text(encoding="utf-8").splitlines()[0]
    assert first == f"# {heading(chapter)}"
    path = f"exercises/{chapter}.md"
    entries = nav_entries
    (found,) = [e for e in entries if path in ([e] if isinstance(e, str) else e.values())]
    assert found == path or found == {heading(chapter): path}, found


def test_no_paragraph_is_copied_from_one_chapters_page_to_another() -> None:
    """What every chapter's page says (how to check an answer) is printed by `chapter_page`."""
    seen: dict[str, str] = {}
    for chapter in CHAPTERS:
        text = _BLOCK.sub("", (DOCS / f"{chapter}.md").read_text(encoding="utf-8"))
        for paragraph in (" ".join(p.split()) for p in text.split("\n\n")):
            if paragraph:
                assert paragraph not in seen, f"{chapter}.md repeats {seen[paragraph]}.md"
                seen[paragraph] = chapter


def test_every_exercise_has_its_explanation_and_solution() -> None:
    for ex in catalogue().values():
        assert ex.explanation.strip() and ex.solution is not None, ex.id
        assert ex.solution.__module__ == f"attention_math.exercises.chapters.{ex.chapter}"


def test_the_solution_is_shown_as_its_source() -> None:
    text = entry("scaling-factor")
    assert "def _solve_scaling_factor(ex: Exercise) -> object:" in text
    assert get("scaling-factor").explanation in text


@pytest.mark.parametrize("wrong", [lambda ex: 64, None])
def test_a_wrong_or_missing_solution_fails_the_page(monkeypatch, wrong) -> None:
    ex = dataclasses.replace(get("scaling-factor"), solution=wrong)
    monkeypatch.setattr(pages, "get", lambda i: ex if i == ex.id else get(i))
    with pytest.raises(SolutionError, match="scaling-factor"):
        entry("scaling-factor")


def test_decimals_keep_their_trailing_zeros() -> None:
    assert decimals("positions-sinusoidal", np.cos(0.1)) == "0.9950"  # not 0.995
    assert decimals("positions-rope-score", np.array([[1.66048, 0.5, 1.0]])) == (
        r"\begin{bmatrix}1.660 & 0.5 & 1\end{bmatrix}"  # 0.5 and 1 are exact: no zeros
    )
    assert decimals("positions-rope-score", 1.50004e-7) == r"1.500 \times 10^{-7}"


def test_shown_decimals_pass_their_own_tolerance() -> None:
    ex = get("slip-round-output")
    assert ex.tolerance is not None
    exact = np.array(ex.answer.evalf(30).tolist(), dtype=float)
    out = solved("slip-round-output", exact)
    shown = re.search(r"\\approx \\begin\{bmatrix\}(.*?)\\end\{bmatrix\}", out)
    assert shown is not None
    rows = [[float(x) for x in r.split("&")] for r in shown.group(1).split(r"\\")]
    assert check("slip-round-output", rows).correct
    assert np.max(np.abs(np.array(rows) - exact)) <= ex.tolerance


def test_an_exact_short_decimal_is_shown_whole_not_as_a_tie():
    from attention_site.pages.exercises import decimals

    # 1/64 = 0.015625 at four digits is a tie, printed 0.01562 (half to even): misleading
    shown = decimals("positions-alibi-slopes", [0.25, 0.0625, 1 / 64, 1 / 256])
    assert "0.015625" in shown and "0.00390625" in shown and "0.01562 " not in shown


def test_input_names_with_a_word_subscript_render_as_a_word():

    assert r"S_{\text{raw}} = \begin{bmatrix}" in statement("scaling-row")
    assert "  S_raw = [[4, 0]]" in show_exercise("scaling-row")


def test_a_chapters_page_builds_that_chapter_only(monkeypatch) -> None:
    """A page (and its notebook, in a fresh process) computes one chapter's reference
    answers, not the whole registry's: the others can take seconds of SymPy."""
    import importlib

    registry = importlib.import_module("attention_math.exercises.catalogue")  # the module
    monkeypatch.setattr(registry, "_BUILT", {})  # as in a fresh process
    chapter_page.cache_clear()  # the page is kept once built, in a fresh process it is not
    page = chapter_page("masks")
    assert list(registry._BUILT) == ["masks"]
    assert page.count('??? success "Solution"') == len(registry._BUILT["masks"])
    assert get("softmax-logs").chapter == "softmax"  # found by building on, in order
    assert list(registry._BUILT)[:2] == ["masks", "forward"] and "views" not in registry._BUILT


def test_a_proof_is_labelled_and_its_answer_is_what_the_argument_reaches() -> None:
    for ex in catalogue().values():
        text = statement(ex.id)
        label = {"prove": "**Proof.** ", "explain": "**Explain.** "}.get(ex.task)
        assert text.startswith(label) if label else not text.startswith("**"), ex.id
        assert ("the value your argument arrives at" in text) == (label is not None), ex.id


def test_a_step_that_fails_fails_the_page(monkeypatch) -> None:
    """A proof's page runs its solution: a step SymPy cannot verify stops the build."""
    from attention_math.exercises.steps import StepError, step

    def wrong(ex):
        return step("the ratio is 2", sp.Integer(1), sp.Integer(2))

    ex = dataclasses.replace(get("softmax-shift-proof"), solution=wrong)
    monkeypatch.setattr(pages, "get", lambda i: ex if i == ex.id else get(i))
    with pytest.raises(StepError, match="the ratio is 2"):
        entry("softmax-shift-proof")


def test_exact_answers_are_shown_simplified() -> None:
    """Reader finding (issue 53): print 1, not 2/(2 + e) + e/(2 + e)."""
    e = sp.E
    assert pages.simplest(sp.Matrix([[2 / (2 + e) + e / (2 + e)]])) == sp.Matrix([[1]])
    n, w = sp.symbols("n w")
    assert pages.simplest(n * (w - 1) + 1) == n * (w - 1) + 1  # a formula keeps its form
    shown = solved("forward-output", get("forward-output").solution(get("forward-output")))
    assert r"\frac{3}{2 + e} & 1\end{bmatrix}" in shown
