"""The build puts each plain table in the theme's scrolling box, so the theme's script need not.

The theme wraps every ``table:not([class])`` from its script as the page starts, taking the
table out of the page and back (a second style and layout pass over it). The Markdown extension
``attention_site.extensions.tables`` writes the same box around the page content's tables at
build time and gives the table a class that keeps the script off it; docs/stylesheets/extra.css
gives that class the theme's table rules (the theme's stylesheet is not rewritten). The browser
test tests/browser/test_pages.py sees the result on every page: one box per table, styled as
the theme styles a plain table.
"""

from __future__ import annotations

import re
from pathlib import Path

import material
import pytest

from attention_site.extensions import tables as hook

BOX = hook.TABLE_BOX


def test_a_plain_table_gets_the_box_a_class_and_a_tab_stop() -> None:
    out = hook.boxed("<p>x</p><table><tr><td>1</td></tr></table><p>y</p>")
    assert out == (
        f'<p>x</p>{BOX}<table class="am-table" tabindex="0"><tr><td>1</td></tr></table>'
        "</div></div><p>y</p>"
    )


def test_a_table_with_a_class_of_its_own_is_left_inside_a_plain_one() -> None:
    code = '<table class="highlighttable"><tr><td>1</td></tr></table>'
    out = hook.boxed(f"<table><tr><td>{code}</td></tr></table><table></table>")
    # the inner closing tag closes the inner table; the outer box closes after the outer one
    assert out == (
        f'{BOX}<table class="am-table" tabindex="0"><tr><td>{code}</td></tr></table></div></div>'
        f'{BOX}<table class="am-table" tabindex="0"></table></div></div>'
    )


def test_a_name_alone_in_a_plain_tables_code_is_marked_to_stay_whole() -> None:
    name = '<code class="am-name">missing_transpose</code>'
    cells = "<td><code>missing_transpose</code></td><td><code>torch.nn.functional</code></td>"
    inner = '<table class="highlighttable"><tr><td><code>x</code></td></tr></table>'
    out = hook.boxed(f"<p><code>outside</code></p><table><tr>{cells}<td>{inner}</td></tr></table>")
    assert out == (
        f'<p><code>outside</code></p>{BOX}<table class="am-table" tabindex="0"><tr>'
        f"<td>{name}</td><td><code>torch.nn.functional</code></td><td>{inner}</td></tr>"
        "</table></div></div>"
    )
    assert f".md-typeset table.am-table code.{hook.NAME_CLASS} {{" in EXTRA_CSS.read_text()


@pytest.mark.parametrize("broken", ["<table><tr></tr>", "</table>", "<table></table></table>"])
def test_unbalanced_tables_fail_the_build(broken: str) -> None:
    with pytest.raises(ValueError, match="table"):
        hook.boxed(broken)


ROOT = Path(__file__).resolve().parents[2]
EXTRA_CSS = ROOT / "docs" / "stylesheets" / "extra.css"
THEME_SHEETS = Path(material.__file__).parent / "templates" / "assets" / "stylesheets"
THEME_TABLES = "table:not([class])"


def _rules(css: str, context: str = "") -> list[tuple[str, str, str]]:
    """Each style rule of ``css`` as (its at-rule, its selectors, its declarations), written
    the same way whatever the spacing (a minified sheet and a hand-written one compare equal)."""
    out: list[tuple[str, str, str]] = []
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    at = 0
    while (brace := css.find("{", at)) != -1:
        head = css[at:brace].strip()
        if head.startswith("@"):  # a block of rules: up to its matching brace
            depth, end = 1, brace + 1
            while depth:
                depth += {"{": 1, "}": -1}.get(css[end], 0)
                end += 1
            out += _rules(css[brace + 1 : end - 1], _compact(head))
        else:
            end = css.index("}", brace) + 1
            body = ";".join(
                sorted(filter(None, map(_declaration, css[brace + 1 : end - 1].split(";"))))
            )
            out.append((context, _compact(head), body))
        at = end
    return out


def _compact(text: str) -> str:
    text = re.sub(r"\s*([>+~,])\s*", r"\1", " ".join(text.split()))
    return re.sub(r"(?<![\w.])0\.(?=\d)", ".", text)


def _declaration(text: str) -> str:
    name, _, value = text.partition(":")
    return f"{_compact(name)}:{_compact(value)}" if value else _compact(text)


def test_rules_compare_equal_whatever_their_spacing() -> None:
    hand = (
        "/* x */ a > b , c { margin: 0.5em ; color: red }\n@media print { a { display: table; } }"
    )
    assert _rules(hand) == _rules("a>b,c{color:red;margin:.5em}@media print{a{display:table}}")
    assert _rules(hand) == [
        ("", "a>b,c", "color:red;margin:.5em"),
        ("@media print", "a", "display:table"),
    ]
    assert _rules("a{margin:.5em}") != _rules("a{margin:.6em}")


def test_our_stylesheet_gives_boxed_tables_the_theme_rules_for_plain_tables() -> None:
    """Every rule of the installed theme for ``table:not([class])`` is in extra.css for
    ``table.am-table`` (same specificity), before extra.css's own table rules. When the theme
    changes its table style, this fails: copy its new rules into extra.css."""
    (sheet,) = THEME_SHEETS.glob("main.*.min.css")
    theme = [
        (at, sel.replace(THEME_TABLES, f"table.{hook.TABLE_CLASS}"), body)
        for at, sel, body in _rules(sheet.read_text(encoding="utf-8"))
        if THEME_TABLES in sel
    ]
    assert len(theme) >= 10, "the theme's stylesheet no longer styles table:not([class])"
    ours = _rules(EXTRA_CSS.read_text(encoding="utf-8"))
    missing = [rule for rule in theme if rule not in ours]
    assert missing == [], f"extra.css lacks the theme's table rules {missing} ({sheet.name})"
    # first, as the theme's were: our later rules for boxed tables (the scroll shades'
    # transparent background, the compact tables' padding) still win over them
    last = max(ours.index(rule) for rule in theme)
    later = [
        i for i, (_, sel, _) in enumerate(ours) if "scrollwrap table" in sel or "compact" in sel
    ]
    assert later and min(later) > last
