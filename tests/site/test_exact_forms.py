"""Exact forms that do not teach (long rationals: decimals in disguise) are a click away.

``render.exact_beside_decimal`` and ``attention_math.example_markdown.steps_md`` fold them under
the decimal; in the built site no long integer is left in the maths a reader reads without
unfolding.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math.display import exact_beside_decimal, teaches
from attention_math.example_markdown import steps_md

#: an integer of seven digits or more in typeset maths (MathJax's MathML keeps <mn>…</mn>)
LONG_NUMBER = re.compile(r"<mn>(\d{7,})</mn>")


def test_a_long_rational_is_folded_even_when_it_fits() -> None:
    w = sp.Rational(6714893, 10**6)
    assert not teaches(w) and teaches(sp.E / (2 + sp.E))
    text = exact_beside_decimal("w", w, np.float64(6.714893))
    reading, fold = text.split("??? info")
    assert "6714893" not in reading and "6714893" in fold
    assert "6.715" in reading  # the short form stays in the reading line


def test_steps_fold_the_one_entry_that_does_not_teach() -> None:
    from attention_math.example_markdown import steps_md

    text = steps_md("lets-go")
    reading = re.sub(r"\n\?\?\? .*?(?=\n\S|\Z)", "", text, flags=re.S)  # folds removed
    assert re.search(r"\d{7,}", text) and not re.search(r"\d{7,}", reading)


@pytest.mark.docs
def test_no_long_rational_outside_a_fold_in_the_built_site(built_site: Path) -> None:
    found = {}
    for html in sorted(built_site.rglob("index.html")):
        text = re.sub(r"<details.*?</details>", "", html.read_text("utf-8"), flags=re.S)
        text = re.sub(r"<(pre|code)\b.*?</\1>", "", text, flags=re.S)
        if hits := LONG_NUMBER.findall(text):
            found[str(html.parent.relative_to(built_site))] = hits[:3]
    assert not found, f"long rationals shown unfolded (exact_beside_decimal folds them): {found}"


def test_steps_md_names_the_entry_of_a_product() -> None:
    """A step whose symbol is a product is bracketed: ``(QK^\\top)_{11}``, not ``Q_{11}``."""
    text = steps_md("identity-2x2", ("scores", "scaled"), max_exact=0)
    assert r"(QK^\top)_{11} = " in text
    assert r"S_{11} = " in text
    assert "Q_{11}" not in text.replace(r"(QK^\top)_{11}", "")


def test_key_order_writes_the_output_entry_term_by_term_in_key_order() -> None:
    # "The cat sleeps": row 1 of S is 581/200, 327/100, 493/200 (keys 1, 2, 3); SymPy's own
    # order would put 493/200 first. The first column of V is 11/10, 19/10, 7/5.
    shown = steps_md("the-cat-sleeps", ("output",), key_order=True)
    entry = shown[shown.index("O_{11}") :]
    top = entry[entry.index("= \\frac{\\frac{11}{10}") :]
    exponents = re.findall(r"e\^\{\\frac\{(\d+)\}\{(\d+)\}\}", top)
    assert exponents[:3] == [("581", "200"), ("327", "100"), ("493", "200")], exponents
    assert "\\frac{19}{10}\\, e^{\\frac{327}{100}}" in top
    assert "P_{1j} V_{j1}" not in steps_md("the-cat-sleeps", ("output",))  # opt-in only
