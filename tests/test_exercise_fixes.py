"""Fixes from a review of the exercises: typed sin/cos, diagnoses that name the real slip,
input names that render, decimals that keep their digits, and the API page."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math.__main__ import main
from attention_math.exercises import DIAGNOSES, check, get
from attention_math.exercises.cli import show_exercise
from attention_math.exercises.parse import FUNCTIONS, ParseError, parse_answer
from attention_site.pages.exercises import chapter_page, decimals, solved, statement

DOCS = Path(__file__).resolve().parents[1] / "docs" / "exercises"


@pytest.mark.parametrize(
    ("exercise_id", "right", "wrong"),
    [
        ("positions-sinusoidal", "[[sin(2), cos(2), sin(1/5), cos(1/5)]]", "[[sin(2), cos(2)]]"),
        (
            "positions-rope",
            "[[cos(1), -sin(1/10), sin(1), cos(1/10)]]",
            "[[cos(1), sin(1), -sin(1/10), cos(1/10)]]",  # the interleaved layout
        ),
        ("positions-rope-score", "cos(2)", "cos(8)"),
    ],
)
def test_sin_and_cos_can_be_typed(exercise_id: str, right: str, wrong: str) -> None:
    assert check(exercise_id, right).correct
    assert not check(exercise_id, wrong).correct
    assert main(["check", exercise_id, right]) == 0  # was a usage error (exit 2)
    assert main(["check", exercise_id, wrong]) == 1


def test_the_parser_still_refuses_calls_outside_the_allow_list() -> None:
    assert {"sin", "cos"} <= set(FUNCTIONS)
    assert parse_answer("sin(x)^2 + cos(x)^2", {"x": sp.Symbol("x")}).equals(1)
    for text in ("tan(1)", "eval(1)", "sin.__class__", "sin(1, 2)"):
        with pytest.raises(ParseError):
            parse_answer(text)
    with pytest.raises(ParseError, match=r"a call to 'tan'.*the functions .*sin, cos"):
        parse_answer("tan(1)")


def test_dk_without_the_transpose_is_named() -> None:
    ex = get("grad-dk")
    d_s, q = ex.inputs["dS"], ex.inputs["Q"]
    r = check("grad-dk", d_s * q / 2)  # the shape of dK, but dS is not transposed
    assert (r.correct, r.diagnosis) == (False, "missing_transpose")
    assert DIAGNOSES["missing_transpose"] in r.message and "transpose of the right" not in r.message
    assert check("grad-dk", d_s.T * q / 2).correct


def test_uniform_weights_are_the_other_limit() -> None:
    r = check("identity-sharp", "[[1/2, 1/2], [1/2, 1/2]]")
    assert (r.correct, r.diagnosis) == (False, "wrong_limit")
    assert "scale factor" not in r.message and "c → 0" in r.message


def test_kernel_inputs_have_plain_names() -> None:
    assert list(get("views-nw-weights").inputs) == ["x"]
    assert list(get("views-nw-limit").inputs) == ["x", "y"]
    for ex_id in ("views-nw-weights", "views-nw-limit"):
        assert "eys" not in show_exercise(ex_id) and "_keys" not in statement(ex_id)
    assert r"e^{-(q - x_i)^2/(2\tau^2)}" in get("views-nw-weights").statement
    text = chapter_page("views")
    assert "x_keys" not in text and "y_values" not in text


def test_the_terminal_shows_no_raw_tex() -> None:
    out = show_exercise("views-crossover")
    assert "^*" not in out and "\\" not in out


def test_decimals_keep_their_trailing_zeros() -> None:
    assert decimals("positions-sinusoidal", np.cos(0.1)) == "0.9950"  # not 0.995
    assert decimals("positions-rope-score", np.array([[1.66048, 0.5, 1.0]])) == (
        r"\begin{bmatrix}1.660 & 0.5 & 1\end{bmatrix}"  # 0.5 and 1 are exact: no zeros
    )
    assert decimals("positions-rope-score", 1.50004e-7) == r"1.500 \times 10^{-7}"


def test_shown_decimals_pass_their_own_tolerance() -> None:
    ex = get("identity-numeric")
    assert ex.tolerance is not None
    exact = np.array(ex.answer.evalf(30).tolist(), dtype=float)
    out = solved("identity-numeric", exact)
    shown = re.search(r"\\approx \\begin\{bmatrix\}(.*?)\\end\{bmatrix\}", out)
    assert shown is not None
    rows = [[float(x) for x in r.split("&")] for r in shown.group(1).split(r"\\")]
    assert check("identity-numeric", rows).correct
    assert np.max(np.abs(np.array(rows) - exact)) <= ex.tolerance


def test_the_api_page_documents_the_catalogue_function() -> None:
    import griffe

    src = Path(__file__).resolve().parents[1] / "src"
    package = griffe.load("attention_math", search_paths=[str(src)])
    blocks = re.findall(r"^::: (\S+)", (DOCS / "api.md").read_text(encoding="utf-8"), re.M)
    objects = [package[p.removeprefix("attention_math.")] for p in blocks]
    assert any(o.is_function and o.name == "catalogue" for o in objects)
    assert package["exercises"].members["catalogue"].is_module  # why members cannot name it


def test_page_wording_fixes() -> None:
    grad = (DOCS / "gradients.md").read_text(encoding="utf-8")  # its introduction
    assert "up to deriving $dS$" not in grad and "$dQ$ and $dK$" in grad
    views = chapter_page("views")
    assert r"/ (\varphi(q_t) z_t)$" in views
    examples = chapter_page("examples")
    assert "r_{\\min}/2" in examples and "exp(-oo)" not in examples


def test_an_exact_short_decimal_is_shown_whole_not_as_a_tie():
    from attention_site.pages.exercises import decimals

    # 1/64 = 0.015625 at four digits is a tie, printed 0.01562 (half to even): misleading
    shown = decimals("positions-alibi-slopes", [0.25, 0.0625, 1 / 64, 1 / 256])
    assert "0.015625" in shown and "0.00390625" in shown and "0.01562 " not in shown


def test_input_names_with_a_word_subscript_render_as_a_word():
    from attention_math.exercises.cli import show_exercise
    from attention_site.pages.exercises import statement

    assert r"S_{\text{raw}} = \begin{bmatrix}" in statement("scaling-row")
    assert "  S_raw = [[4, 0]]" in show_exercise("scaling-row")


def test_wrong_algebra_is_not_called_rounding() -> None:
    # the plain mean of g for the p-weighted sum: wrong, though close at nearby sample points
    mean = "(g_1 + g_2 + g_3)/3"
    answer = f"[[p_1*(g_1 - {mean}), p_2*(g_2 - {mean}), p_3*(g_3 - {mean})]]"
    r = check("grad-ds-row", answer)
    assert not r.correct and r.diagnosis != "rounding", r.message


def test_the_sample_points_give_every_symbol_its_own_value() -> None:
    from attention_math.exercises.checker import _N_POINTS, _value

    for k in range(_N_POINTS):
        values = [_value(i, k) for i in range(20)]
        assert len(set(values)) == len(values) and min(values) > 0


def test_the_right_answer_with_too_few_digits_is_rounding_not_a_slip() -> None:
    # 0.6405 to one place is 0.6, which the 1/√d_model slip (0.6007) also rounds to
    r = check("multihead-head-weights", "[[0.6, 0.4], [0.4, 0.6]]")
    assert r.diagnosis == "rounding", r.message
    slip = check("multihead-head-weights", "[[0.6007, 0.3993], [0.3993, 0.6007]]")
    assert slip.diagnosis == "wrong_scale", slip.message


def test_a_formula_wrong_for_negative_values_is_not_called_unproven() -> None:
    for wrong in ("1/(1+exp(-abs(a)))", "exp(a)/(exp(a)+1) + abs(a) - a"):
        r = check("softmax-sigmoid", wrong)
        assert not r.correct and "25 digits" not in r.message, r.message


def test_the_queries_exercise_catches_the_transposed_layout() -> None:
    q = get("forward-qkv").answer
    assert q != q.T
    r = check("forward-qkv", str(q.T.tolist()))
    assert r.diagnosis == "transposed", r.message


@pytest.mark.parametrize(
    "exercise_id", ["mask-causal-weights", "mask-causal-output", "mask-padding"]
)
def test_a_forgotten_mask_is_named(exercise_id: str) -> None:
    ex = get(exercise_id)
    (slip,) = [m for m in ex.mistakes if m.diagnosis == "missing_mask"]
    assert check(exercise_id, str(slip.answer.tolist())).diagnosis == "missing_mask"


def test_a_column_softmax_in_an_output_exercise_speaks_of_the_weights() -> None:
    (slip,) = [m for m in get("forward-output").mistakes if m.diagnosis == "softmax_axis"]
    assert slip.detail.startswith("Your weights")
