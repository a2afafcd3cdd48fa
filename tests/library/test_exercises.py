"""The exercise catalogue, the checker's verdicts and diagnoses (each slip named as what it is,
not as rounding or as unproven), the pages, and the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math import numeric
from attention_math.__main__ import main
from attention_math.crosscheck import crosscheck
from attention_math.exercises import (
    CHAPTERS,
    DIAGNOSES,
    catalogue,
    check,
    get,
)
from attention_math.exercises.cli import show_exercise
from attention_site.pages.exercises import SolutionError, chapter_page, solved, statement

EXERCISES = list(catalogue().values())
IDS = [e.id for e in EXERCISES]


def _numbers_only(ex):
    return not (ex.answer.free_symbols or ex.subs)


def _as_float(expr) -> np.ndarray:
    return np.array(sp.Matrix(expr).evalf(30).tolist(), dtype=np.float64)


def test_catalogue_spans_the_chapters():
    assert len(EXERCISES) >= 20
    per_chapter = {c: sum(e.chapter == c for e in EXERCISES) for c in CHAPTERS}
    assert all(n >= 2 for n in per_chapter.values()), per_chapter
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_reference_answer_is_correct(ex):
    r = check(ex.id, ex.answer)
    assert r.correct and r.diagnosis is None and bool(r)
    assert "correct" in r.message


@pytest.mark.parametrize("ex", [e for e in EXERCISES if e.numeric], ids=lambda e: e.id)
def test_exact_answer_agrees_with_numpy(ex):
    crosscheck(ex.answer.subs(ex.subs), ex.numeric(), bound_eps=ex.bound_eps, label=ex.id)


@pytest.mark.parametrize(
    ("ex", "mistake"),
    [(e, m) for e in EXERCISES for m in e.mistakes],
    ids=[f"{e.id}-{m.diagnosis}-{i}" for e in EXERCISES for i, m in enumerate(e.mistakes)],
)
def test_every_known_slip_is_named(ex, mistake):
    r = check(ex.id, mistake.answer)
    assert not r.correct
    assert r.diagnosis == mistake.diagnosis
    assert DIAGNOSES[mistake.diagnosis] in r.message


@pytest.mark.parametrize("ex", [e for e in EXERCISES if e.shape], ids=lambda e: e.id)
def test_transposed_and_wrong_shape(ex):
    t = ex.answer.T
    r = check(ex.id, t)
    vector = 1 in ex.shape  # a vector may come as a row or a column
    symmetric = t.shape == ex.shape and all(sp.simplify(d) == 0 for d in t - ex.answer)
    assert r.correct == (symmetric or vector)
    if not (symmetric or vector):
        # an exercise may name its transpose more precisely (Πᵀ is the inverse permutation)
        own = {m.diagnosis for m in ex.mistakes if m.answer.shape == t.shape and m.answer == t}
        assert r.diagnosis in {"transposed", *own}
    cut = ex.answer[:, :-1] if ex.answer.cols > 1 else ex.answer[:-1, :]
    r = check(ex.id, cut)
    assert (r.correct, r.diagnosis) == (False, "shape")
    assert "expected a" in r.message


def _terminating(e: sp.Expr) -> bool:
    """A rational whose decimal expansion ends (so its float's repr is exact), or ±∞."""
    if e in (sp.oo, -sp.oo):
        return True
    if not e.is_Rational:
        return False
    q = int(e.q)
    for f in (2, 5):
        while q % f == 0:
            q //= f
    return q == 1 and abs(int(e.p)) < 2**50


@pytest.mark.parametrize("ex", [e for e in EXERCISES if _numbers_only(e)], ids=lambda e: e.id)
def test_decimals_are_right_up_to_rounding(ex):
    entries = list(ex.answer) if ex.shape else [ex.answer]
    r = check(ex.id, _as_float(ex.answer) if ex.shape else float(ex.answer))
    if ex.tolerance is not None or all(_terminating(e) for e in entries):
        assert r.correct
    else:
        assert (r.correct, r.diagnosis) == (False, "rounding")
    # four decimals: rounding for an exact exercise, still fine for a tolerance of 5e-5
    rounded = np.round(_as_float(ex.answer), 4) if ex.shape else round(float(ex.answer), 4)
    r4 = check(ex.id, rounded)
    exact4 = all(
        e.is_infinite or (_terminating(e) and e == sp.Rational(round(float(e), 4))) for e in entries
    )
    if ex.tolerance is not None or exact4:
        assert r4.correct, r4
    else:
        assert r4.diagnosis == "rounding"


@pytest.mark.parametrize("ex", [e for e in EXERCISES if e.tolerance], ids=lambda e: e.id)
def test_tolerance_is_enforced(ex):
    a = _as_float(ex.answer)
    assert check(ex.id, a + 0.9 * ex.tolerance).correct
    r = check(ex.id, a + 3 * ex.tolerance)
    assert (r.correct, r.diagnosis) == (False, "rounding")
    r = check(ex.id, a + 1)
    assert not r.correct and r.diagnosis is None


# Slips computed independently of the catalogue, with NumPy, from the inputs on the page.
def test_numpy_slips_are_diagnosed():
    x = _as_float(get("slip-zero-weights").inputs["X"])  # (3, 2); Q = K = V = X
    no_scale = numeric.softmax(x @ x.T)  # forgot 1/sqrt(d_k)
    assert check("slip-zero-weights", no_scale).diagnosis == "missing_scale"
    assert check("slip-zero-output", no_scale @ x).diagnosis == "missing_scale"
    assert check("slip-zero-weights", numeric.softmax(x @ x.T / 2)).diagnosis == "wrong_scale"
    e = np.exp(x @ x.T / np.sqrt(2))
    e[x @ x.T == 0] = 0.0  # e^0 written as 0
    slipped = e / e.sum(axis=1, keepdims=True)
    assert check("slip-zero-weights", slipped).diagnosis == "exp0_zero"
    assert check("slip-zero-output", slipped @ x).diagnosis == "exp0_zero"
    rounded = np.round(numeric.attention_weights(x, x, x), 2) @ x  # rounded, then multiplied
    assert check("slip-round-output", rounded).diagnosis == "rounded_early"
    assert check("slip-round-output", numeric.attention(x, x, x)).correct

    s, m = (_as_float(get("slip-axis-weights").inputs[n]) for n in ("S", "M"))
    z = np.exp(s + m)  # (3, 3), zero where masked
    assert check("slip-axis-weights", z / z.sum()).diagnosis == "whole_matrix"  # no axis
    per_row = check("slip-axis-weights", z / z.sum(axis=-1, keepdims=True))
    assert per_row.diagnosis == "rounding"  # right, in floats: the exercise wants it exactly

    s = _as_float(get("mask-causal-weights").inputs["S"])
    causal = numeric.causal_mask(3)
    after = numeric.softmax(s) * causal  # mask after the softmax: rows no longer sum to 1
    assert check("mask-causal-weights", after).diagnosis == "mask_after_softmax"
    columns = numeric.softmax(np.where(causal, s, -np.inf), axis=0)
    assert check("mask-causal-weights", columns).diagnosis == "softmax_axis"
    # the right weights are 1/8, 1/4, …: their floats are exact, and so is the answer
    right = numeric.attention(s, np.eye(3), np.eye(3), mask=causal, scale=1.0)
    assert check("mask-causal-weights", right).correct

    x = _as_float(get("multihead-head-weights").inputs["X"])[:, :3]
    by_d_model = numeric.softmax(x @ x.T / np.sqrt(6))
    r = check("multihead-head-weights", by_d_model)
    assert r.diagnosis == "wrong_scale" and "d_model" in r.message


@pytest.mark.parametrize(
    ("exercise_id", "answer"),
    [
        ("softmax-sigmoid", "1/(1 + exp(-a))"),
        ("softmax-sigmoid", "sigmoid(a)"),
        ("multihead-params", "4*d_model^2"),
        ("scaling-factor", "1/sqrt(64)"),
        ("scaling-factor", 0.125),
        ("scaling-factor", Fraction(1, 8)),
        ("scaling-factor", np.float32(0.125)),
        ("scaling-factor", [[sp.Rational(1, 8)]]),
        ("softmax-logs", [Fraction(1, 6), "1/3", 0.5]),
        ("softmax-logs", np.array([1, 2, 3]) / sp.Integer(6)),
        ("softmax-logs", sp.Matrix([1, 2, 3]) / 6),  # a SymPy column for a row answer
        ("softmax-jacobian", "[[p_1*p_2, -p_1*p_2], [-p_1*p_2, p_1*p_2]]"),
        ("softmax-jacobian", "[[p_1 - p_1^2, -p_1*(1 - p_1)], [-p_1*p_2, p_2*(1 - p_2)]]"),
        (
            "grad-ds-row",
            "[p_1*(g_1 - p_1*g_1 - p_2*g_2 - p_3*g_3), p_2*g_2 - p_2*(p_1*g_1 + p_2*g_2 + p_3*g_3),"
            " p_3*(g_3 - p_1*g_1 - p_2*g_2 - p_3*g_3)]",
        ),
        ("slip-axis-weights", "[[1, 0, 0], [1/3, 2/3, 0], [3/6, 1/6, 2/6]]"),
        ("slip-sharp", "[[1/2, 0, 0.5], [0, 1/2, 1/2], [0, 0, 1]]"),
        ("modern-dropout-expectation", "a*v_1 + (1 - a)*v_2"),
        (
            "modern-dropout-expectation",
            "(a*v_1*(1 - p_drop) + (1 - a)*v_2*(1 - p_drop))/(1 - p_drop)",
        ),
        ("grad-dk", "[[1/4, 2/8, -1/2, -2/4], [-1/4, -1/4, 1/2, 1/2]]"),
    ],
)
def test_equivalent_forms_are_accepted(exercise_id, answer):
    assert check(exercise_id, answer).correct


@pytest.mark.parametrize(
    ("exercise_id", "answer"),
    [
        ("softmax-sigmoid", "(1 + tanh(a/2))/2"),
        ("scaling-row", "[(1 + tanh(1/2))/2, (1 - tanh(1/2))/2]"),
    ],
)
@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_tanh_forms_are_proven_equal(exercise_id, answer):
    r = check(exercise_id, answer)
    assert r.correct and "could not prove" not in r.message
    assert main(["check", exercise_id, answer]) == 0


def test_wrong_tanh_forms_are_rejected():
    assert not check("softmax-sigmoid", "(1 + tanh(a))/2").correct
    r = check("scaling-row", "[(1 + tanh(1/2))/2, (1 + tanh(1/2))/2]")
    assert not r.correct and "(1, 2)" in r.message


def test_symbols_match_by_name():
    p_1, p_2 = sp.symbols("p_1 p_2")  # no assumptions, unlike the catalogue's
    jac = sp.Matrix([[p_1 * (1 - p_1), -p_1 * p_2], [-p_1 * p_2, p_2 * (1 - p_2)]])
    assert check("softmax-jacobian", jac)
    assert check("softmax-jacobian", sp.diag(p_1, p_2)).diagnosis == "missing_term"


def test_answers_use_the_names_the_statements_ask_for():
    """One meaning per symbol (issue 37): a weight is typed `p_1` (σ is a standard deviation),
    the dropout probability `p_drop` (p is the weights); each statement names exactly the
    symbols its checker accepts."""
    from attention_math.exercises import get

    for exercise_id in ("softmax-jacobian", "modern-dropout-expectation"):
        ex = get(exercise_id)
        for name in ex.symbols:
            assert f"`{name}`" in ex.statement, (exercise_id, name)
    assert set(get("softmax-jacobian").symbols) == {"p_1", "p_2"}
    assert set(get("modern-dropout-expectation").symbols) == {"a", "p_drop", "v_1", "v_2"}
    with pytest.raises(ValueError, match="not allowed"):
        check("softmax-jacobian", "[[sigma, 0], [0, sigma]]")


def test_wrong_answer_without_a_known_slip_points_at_entries():
    r = check("softmax-rows", "[[1/4, 3/4], [1/2, 1/2]]")
    assert not r.correct and r.diagnosis is None
    assert "(2, 1), (2, 2)" in r.message
    r = check("softmax-sigmoid", "exp(-a)")
    assert not r.correct and r.diagnosis is None


def test_bad_input_raises():
    with pytest.raises(ValueError, match="unknown exercise id 'nope'"):
        check("nope", 1)
    with pytest.raises(TypeError, match="bool"):
        check("scaling-factor", True)
    with pytest.raises(TypeError, match="dict"):
        check("scaling-factor", {"a": 1})
    with pytest.raises(ValueError, match="non-finite"):
        check("scaling-factor", float("nan"))
    assert not check("scaling-factor", float("inf")).correct  # ±∞ is an answer, a wrong one
    with pytest.raises(ValueError, match="shape"):
        check("forward-qkv", np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="equally long rows"):
        check("forward-qkv", [[1, 2], [3]])


def test_statement_and_solution_rendering():
    text = statement("forward-scores")
    assert "\\begin{bmatrix}" in text and "Id: `forward-scores`" in text
    assert "within" in statement("slip-round-output")
    out = solved("forward-scores", get("forward-scores").answer)
    assert "correct (exactly)" in out and "agrees" in out
    with pytest.raises(SolutionError, match="missing"):
        solved("forward-scores", get("forward-scores").mistakes[0].answer)


def test_cli_lists_and_checks(capsys):
    assert main(["exercises"]) == 0
    out = capsys.readouterr().out
    assert all(i in out for i in IDS) and all(t in out for t in CHAPTERS.values())
    assert main(["exercises", "grad-ds"]) == 0
    assert "p_11" in capsys.readouterr().out
    assert main(["check", "scaling-factor", "1/8"]) == 0
    assert "correct" in capsys.readouterr().out
    typed_e = "[[1, 0, 0], [1/(1+e), e/(1+e), 0], [1, 1, 1]]"  # e is Euler's number: read
    assert main(["check", "slip-axis-weights", typed_e]) == 1
    assert "cannot read" not in capsys.readouterr().err
    typed_z = "[[1, 0, 0], [1/(1+z), z/(1+z), 0], [1, 1, 1]]"  # z is no name
    assert main(["check", "slip-axis-weights", typed_z]) == 2
    assert "unknown name 'z'" in capsys.readouterr().err
    no_scale = get("slip-zero-weights").mistakes[0]  # softmax(XXᵀ), typed with E
    assert no_scale.diagnosis == "missing_scale"
    assert main(["check", "slip-zero-weights", str(no_scale.answer.tolist())]) == 1
    assert DIAGNOSES["missing_scale"] in capsys.readouterr().out
    assert main(["check", "scaling-factor", "__import__('os')"]) == 2
    err = capsys.readouterr().err
    assert "cannot read the answer" in err and "answer: answer" not in err
    assert main(["check", "nope", "1"]) == 2
    assert main(["check", "scaling-factor"]) == 2
    assert main(["exercises", "nope"]) == 2


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_cli_from_the_shell():
    run = subprocess.run(
        [sys.executable, "-m", "attention_math", "check", "softmax-logs", "[1, 2, 3]"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert DIAGNOSES["unnormalized"] in run.stdout


@pytest.mark.parametrize(
    "answer", ["exp(exp(exp(100)))", "2^(2^(x))", "exp(10^100)", "log(0)", "0^-1", "sqrt(-1)", "oo"]
)
def test_huge_or_undefined_answers_are_wrong_and_finish(answer):
    import signal

    def too_slow(*_):
        raise TimeoutError(f"checking {answer!r} did not finish")

    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(20)
    try:
        if answer == "2^(2^(x))":  # x: a symbol this exercise does not know
            with pytest.raises(ValueError, match="unknown name 'x'"):
                check("scaling-factor", answer)
        else:
            r = check("scaling-factor", answer)
            assert (r.correct, r.diagnosis) == (False, None)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_numerically_equal_but_unproven_is_not_called_correct(monkeypatch):
    import attention_math.exercises.checker as checker

    eighth = "(sqrt(2) + sqrt(3))^2 / (40 + 16*sqrt(6))"  # = 1/8, not evaluated on sight
    assert check("scaling-factor", eighth).correct
    monkeypatch.setattr(checker, "_exact_zero", lambda d: d == 0)  # a weaker prover
    r = check("scaling-factor", eighth)
    assert not r.correct and "could not prove" in r.message
    r = check("scaling-factor", "sqrt(2)/2")
    assert not r.correct and "could not prove" not in r.message


def test_decimal_comparison_uses_thirty_digits():
    # 1/3 to 16 digits is within float64 rounding of 1/3, but not equal at 30 digits
    assert check("softmax-logs", "[0.1666666666666667, 1/3, 1/2]").diagnosis == "rounding"
    assert check("softmax-logs", "[1/6, 0.33333333333333333333333333333333, 1/2]").diagnosis == (
        "rounding"
    )


@pytest.mark.parametrize(
    ("exercise_id", "unscaled"),
    [
        ("forward-scores", "Without it: Q Kᵀ."),
        ("forward-weights", "Without it: softmax(Q Kᵀ)."),
        ("forward-output", "Without it: softmax(Q Kᵀ) V."),
    ],
)
def test_missing_scale_names_the_quantity_asked_for(exercise_id, unscaled):
    (slip,) = [m for m in get(exercise_id).mistakes if m.diagnosis == "missing_scale"]
    r = check(exercise_id, slip.answer)
    assert r.diagnosis == "missing_scale" and r.message.endswith(unscaled)


def test_unnormalized_message_does_not_repeat_itself():
    r = check("softmax-shift", "[1, 3]")
    assert r.diagnosis == "unnormalized" and r.message.count("their sum") == 1


def test_input_names_are_plain_keys():
    # a solution reads them as get(id).inputs["S"]: no TeX in the key
    for ex in EXERCISES:
        assert all(name.isidentifier() for name in ex.inputs), (ex.id, list(ex.inputs))
    assert get("scaling-row").inputs["S_raw"].shape == (1, 2)


def test_titles_with_maths_are_plain_on_the_command_line(capsys):
    assert get("scaling-factor").title == "The factor for $d_k = 64$"
    assert main(["exercises"]) == 0
    out = capsys.readouterr().out
    assert "The factor for dₖ = 64" in out and "A row of scores with dₖ = 16" in out
    assert "$" not in out and "d_k" not in out
    assert main(["exercises", "scaling-row"]) == 0
    assert capsys.readouterr().out.startswith("scaling-row: A row of scores with dₖ = 16\n")


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_page_headings_are_the_exercise_titles():
    from attention_math.terminal import plain
    from attention_site.pages.exercises import chapter_page

    seen = set()
    for chapter in CHAPTERS:
        for section in re.split(r"^## ", chapter_page(chapter), flags=re.M)[1:]:
            heading = re.sub(r"\s*\{[^}]*\}$", "", section.split("\n", 1)[0])  # no { attrs }
            (ex_id,) = re.findall(r"Id: `([^`]+)`", section)
            assert heading == plain(get(ex_id).title) and get(ex_id).chapter == chapter, ex_id
            seen.add(ex_id)
    assert seen == set(IDS)


def test_answer_box_placeholder_is_not_an_answer():
    from attention_site.pages.exercise_box import answer_box

    assert 'placeholder="your answer"' in answer_box("softmax-sigmoid")
    assert 'placeholder="[[a, b]]"' in answer_box("scaling-row")
    for ex in EXERCISES:  # the hint never spells one of the exercise's symbols
        hint = re.search(r'placeholder="([^"]*)"', answer_box(ex.id)).group(1)
        assert not set(re.findall(r"\w+", hint)) & set(ex.symbols), ex.id


def test_chapters_are_in_the_order_of_the_sites_navigation() -> None:
    """The exercises index and the command line list chapters as the reader meets them."""
    import re

    from attention_math.exercises import CHAPTERS

    nav = (Path(__file__).resolve().parents[2] / "mkdocs.yml").read_text(encoding="utf-8")
    pages = re.findall(r"exercises/(\w+)\.md", nav)
    in_nav = [p for p in pages if p in CHAPTERS]
    assert in_nav == list(CHAPTERS)


@pytest.mark.parametrize(
    "exercise, answer",
    [
        ("views-performer", "exp(0.5)"),
        ("views-performer", "E^0.5"),
        ("positions-sinusoidal", "[sin(2), cos(2), sin(0.2), cos(0.2)]"),
        ("scaling-row", "[exp(0.25*4)/(1 + exp(1)), 1/(1 + E)]"),
    ],
)
def test_a_decimal_inside_a_function_is_read_as_the_number_it_spells(exercise, answer):
    """``exp(0.5)`` is e^(1/2) exactly: the decimal is read before the function sees it (as
    a float, SymPy would evaluate exp at once to 15 digits and the answer be "rounded")."""
    assert check(exercise, answer).correct, check(exercise, answer).message


def test_a_column_may_be_typed_as_a_flat_list_as_a_row_may_as_a_column():
    """A vector has no orientation as typed: ``[2, 2]`` or a 1-D array for a 2×1 answer."""
    assert get("views-flash-d").shape == (2, 1)
    for answer in ("[2, 2]", "[[2], [2]]", np.array([2.0, 2.0]), [2, 2]):
        assert check("views-flash-d", answer).correct, answer
    assert get("views-linear-causal").shape[1] == 1
    assert check("views-linear-causal", "[2, 8/3, 4]").correct
    assert not check("views-flash-d", "[2, 3]").correct


def test_every_ds_given_in_an_exercise_has_zero_row_sums() -> None:
    from attention_math.exercises import catalogue

    found = 0
    for ex in catalogue().values():
        for name, value in ex.inputs.items():
            if name == "dS":
                found += 1
                sums = [sp.simplify(sum(value.row(i))) for i in range(value.rows)]
                assert sums == [0] * value.rows, (ex.id, value)
    assert found >= 2


def test_sharpening_numeric_side_reaches_the_limit_exactly() -> None:
    from attention_math.crosscheck import crosscheck
    from attention_math.exercises import get

    ex = get("slip-sharp")
    limit = np.array(ex.answer.tolist(), dtype=float)  # halves where two keys tie
    assert np.array_equal(ex.numeric(), limit)  # no 8e-308 beside an exact 0
    assert crosscheck(ex.answer, ex.numeric()).error_eps == 0


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


def test_dk_without_the_transpose_is_named() -> None:
    ex = get("grad-dk")
    d_s, q = ex.inputs["dS"], ex.inputs["Q"]
    r = check("grad-dk", d_s * q / 2)  # the shape of dK, but dS is not transposed
    assert (r.correct, r.diagnosis) == (False, "missing_transpose")
    assert DIAGNOSES["missing_transpose"] in r.message and "transpose of the right" not in r.message
    assert check("grad-dk", d_s.T * q / 2).correct


def test_uniform_weights_are_the_other_limit() -> None:
    r = check("slip-sharp", "[[1/3, 1/3, 1/3], [1/3, 1/3, 1/3], [1/3, 1/3, 1/3]]")
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


def test_the_alibi_explanation_reaches_the_answer_it_checks():
    """The explanation's last step is the answer (7/31), not the far keys' sum (7/16)."""
    ex = catalogue()["modern-alibi-far"]
    w = [sp.Rational(1, 2**dist) for dist in range(5)]  # 2^{-Δ}, Δ = 0 … 4
    assert ex.answer == sum(w[2:]) / sum(w) == sp.Rational(7, 31)
    assert f"= {ex.answer}$" in ex.explanation
    assert not check(ex.id, str(sum(w[2:]))).correct  # the far keys' sum alone is refused
