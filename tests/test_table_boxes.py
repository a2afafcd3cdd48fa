"""The build puts each plain table in the theme's scrolling box, so the theme's script need not.

The theme wraps every ``table:not([class])`` from its script as the page starts, taking the
table out of the page and back (a second style and layout pass over it). hooks/assets.py
``wrapped_tables`` writes the same box at build time and gives the table a class that keeps
the script off it; ``table_styles`` lets the theme's table rules match that class too. The
browser test tests/browser/test_pages.py sees the result on every page: one box per table,
styled by the theme.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError

from tests.test_typeset_memo import _hook

hook = _hook("assets_for_tables")
BOX = hook.TABLE_BOX


def test_a_plain_table_gets_the_box_a_class_and_a_tab_stop() -> None:
    out = hook.wrapped_tables("<p>x</p><table><tr><td>1</td></tr></table><p>y</p>", "t.md")
    assert out == (
        f'<p>x</p>{BOX}<table class="am-table" tabindex="0"><tr><td>1</td></tr></table>'
        "</div></div><p>y</p>"
    )


def test_a_table_with_a_class_of_its_own_is_left_inside_a_plain_one() -> None:
    code = '<table class="highlighttable"><tr><td>1</td></tr></table>'
    out = hook.wrapped_tables(f"<table><tr><td>{code}</td></tr></table><table></table>", "t.md")
    # the inner closing tag closes the inner table; the outer box closes after the outer one
    assert out == (
        f'{BOX}<table class="am-table" tabindex="0"><tr><td>{code}</td></tr></table></div></div>'
        f'{BOX}<table class="am-table" tabindex="0"></table></div></div>'
    )


@pytest.mark.parametrize("broken", ["<table><tr></tr>", "</table>", "<table></table></table>"])
def test_unbalanced_tables_fail_the_build(broken: str) -> None:
    with pytest.raises(PluginError, match=r"t\.md"):
        hook.wrapped_tables(broken, "t.md")


THEME_CSS = (
    ".md-typeset table:not([class]){display:inline-block}"
    ".md-typeset table:not([class]) th{min-width:5rem}"
    "@media print{.md-typeset table:not([class]){display:table}}"
)


def _site(tmp_path: Path, css: str) -> Path:
    sheets = tmp_path / "assets" / "stylesheets"
    sheets.mkdir(parents=True)
    (sheets / "main.0123abcd.min.css").write_text(css, encoding="utf-8")
    return sheets / "main.0123abcd.min.css"


def test_the_theme_rules_for_plain_tables_also_match_the_boxed_ones(tmp_path: Path) -> None:
    sheet = _site(tmp_path, THEME_CSS)
    hook.table_styles(str(tmp_path))
    once = sheet.read_text(encoding="utf-8")
    assert "table:not([class])" not in once
    assert once.count("table:is(:not([class]),.am-table)") == 3
    hook.table_styles(str(tmp_path))  # a --dirty rebuild finds it done
    assert sheet.read_text(encoding="utf-8") == once


def test_a_theme_that_styles_tables_otherwise_fails_the_build(tmp_path: Path) -> None:
    _site(tmp_path, ".md-typeset table{display:block}")
    with pytest.raises(PluginError, match="unstyled"):
        hook.table_styles(str(tmp_path))
