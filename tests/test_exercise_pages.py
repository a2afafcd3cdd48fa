"""The exercise pages: every executed block runs, and a wrong solution fails like the build."""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from pathlib import Path

import pytest

from attention_math.exercises import catalogue
from attention_site.pages.exercises import SolutionError

DOCS = Path(__file__).resolve().parents[1] / "docs" / "exercises"
_BLOCK = re.compile(r'^( *)```python exec="on"[^\n]*\n(.*?)^\1```', re.M | re.S)


def _blocks(page: Path) -> list[str]:
    return [textwrap.dedent(m.group(2)) for m in _BLOCK.finditer(page.read_text())]


def _run(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<docs block>", "exec"), {})  # our own page code, not an answer
    return out.getvalue()


PAGES = sorted(p for p in DOCS.glob("*.md") if p.stem != "api")  # api.md: docstrings only


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_every_block_runs_and_every_solution_passes(page):
    blocks = _blocks(page)
    assert blocks
    outputs = [_run(code) for code in blocks]
    solved = sum("correct (exactly)" in o or "correct (to within" in o for o in outputs)
    assert solved == sum('solved("' in code for code in blocks)


def test_each_exercise_has_exactly_one_page_entry():
    text = "\n".join(p.read_text() for p in PAGES)
    for ex_id in catalogue():
        assert text.count(f'print(statement("{ex_id}"))') == 1, ex_id
        assert len(re.findall(rf'solved\("{re.escape(ex_id)}"', text)) == 1, ex_id
        assert f'check("{ex_id}", ' in text and f"attention_math check {ex_id} " in text


def test_a_wrong_solution_fails():
    (code,) = [b for b in _blocks(DOCS / "scaling.md") if 'solved("scaling-factor"' in b]
    assert "sp.sqrt(64)" in code
    _run(code)
    with pytest.raises(SolutionError, match="wrong"):
        _run(code.replace("sp.sqrt(64)", "sp.Integer(64)"))
