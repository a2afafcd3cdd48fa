""" "Your own example"'s form: the HTML the page writes at build time.

The steps it shows are computed in the reader's browser by
[`own_example`][attention_math.own_example.own_example], library code that the page's Python
runtime loads from the library's wheel; only the markup lives here.
"""

from __future__ import annotations

import sympy as sp

from attention_math.own_example import MAX_SIZE, MODES

__all__ = ["form_html"]


def _typed(rows: tuple[tuple[object, ...], ...]) -> str:
    return "\n".join(" ".join(str(e) for e in row) for row in rows)


def form_html() -> str:
    """The page's form: the matrices (prefilled with the 2×2 identity example), the mask, and
    the button; the steps appear below it. One HTML block with no blank line.

    Examples:
        >>> from attention_site.pages.own_example import form_html
        >>> html = form_html()
        >>> 'class="own-example"' in html, 'name="W_V"' in html, "\\n\\n" in html
        (True, True, False)
    """
    from attention_math.examples import EXAMPLES  # build time only: the page's default inputs

    ex = EXAMPLES["identity-2x2"]
    x = sp.Matrix(ex.x)
    given = {
        "Q": x * sp.Matrix(ex.w_q),
        "K": x * sp.Matrix(ex.w_k),
        "V": x * sp.Matrix(ex.w_v),
        "X": x,
        "W_Q": sp.Matrix(ex.w_q),
        "W_K": sp.Matrix(ex.w_k),
        "W_V": sp.Matrix(ex.w_v),
    }
    labels = {"W_Q": "W<sub>Q</sub>", "W_K": "W<sub>K</sub>", "W_V": "W<sub>V</sub>"}

    def area(name: str) -> str:
        m = given[name]
        text = _typed(tuple(tuple(m.row(i)) for i in range(m.rows)))
        return (
            f'<label class="own-example__matrix"><span>{labels.get(name, name)}</span>'
            f'<textarea name="{name}" rows="{MAX_SIZE}" spellcheck="false" autocapitalize="off">'
            f"{text}</textarea></label>"
        )

    def radios(group: str, options: dict[str, str], legend: str) -> str:
        items = "".join(
            f'<label><input type="radio" name="{group}" value="{value}"'
            f"{' checked' if i == 0 else ''}> {text}</label>"
            for i, (value, text) in enumerate(options.items())
        )
        return f'<fieldset class="own-example__{group}"><legend>{legend}</legend>{items}</fieldset>'

    return (
        '<form class="own-example" autocomplete="off">\n'
        + radios(
            "mode",
            {"qkv": "Q, K and V", "x": "X with W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub>"},
            "Give",
        )
        + "\n"
        + '<div class="own-example__matrices own-example__qkv">'
        + "".join(area(n) for n in MODES["qkv"])
        + "</div>\n"
        + '<div class="own-example__matrices own-example__x">'
        + "".join(area(n) for n in MODES["x"])
        + "</div>\n"
        + radios(
            "mask",
            {"none": "no mask", "causal": "causal (each token sees itself and earlier ones)"},
            "Mask",
        )
        + "\n"
        + '<button type="submit" class="md-button">Show every step</button>\n'
        + '<span class="exercise-check__progress" aria-live="polite"></span>\n'
        + '<span class="exercise-check__verdict" role="status" aria-live="polite"></span>\n'
        + '<div class="own-example__steps"></div>\n'
        + "</form>"
    )
