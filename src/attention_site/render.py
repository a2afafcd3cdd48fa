"""Markdown for the site: the library's display helpers, under the name the site's code uses.

What a page prints lives in the library, [`attention_math.display`][attention_math.display]
(the wheel holds it, so a downloaded notebook runs the page's code); the site's own modules
(figures, page builders) and its hidden blocks import it from here or from there alike.
"""

from __future__ import annotations

from attention_math.display import (
    COLUMN_CHARS,
    badge,
    bmatrix,
    decimal_latex,
    decimal_relation,
    decimal_text,
    display,
    display_row,
    exact_beside_decimal,
    exact_digits,
    fmt,
    folded,
    number_tex,
    sci_text,
    shape_str,
    shows_exactly,
    table,
    teaches,
    tex_width,
)

__all__ = [
    "COLUMN_CHARS",
    "badge",
    "bmatrix",
    "decimal_latex",
    "decimal_relation",
    "decimal_text",
    "display",
    "display_row",
    "exact_beside_decimal",
    "exact_digits",
    "fmt",
    "folded",
    "number_tex",
    "sci_text",
    "shape_str",
    "shows_exactly",
    "table",
    "teaches",
    "tex_width",
]
