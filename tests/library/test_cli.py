"""The command line keeps the conventions a newcomer expects.

``--help`` everywhere (exit 0, on stdout); errors on stderr naming what was wrong, with exit
status 2; 1 for a wrong answer; output no wider than 100 columns and free of LaTeX.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from attention_math.__main__ import COMMANDS, main
from attention_math.exercises import catalogue
from attention_math.exercises.cli import show_exercise
from attention_math.exercises.parse import FUNCTIONS
from attention_math.terminal import WIDTH, plain, table

Capsys = pytest.CaptureFixture[str]


def _fits(text: str) -> None:
    too_wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not too_wide, too_wide


@pytest.mark.parametrize("argv", [["--help"], ["-h"], *([c, "--help"] for c in COMMANDS)])
def test_help_exits_zero_on_stdout(argv: list[str], capsys: Capsys) -> None:
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("usage: ")
    assert "exit status:" in out and "  2  " in out  # every help page documents its exit codes
    _fits(out)


def test_top_help_lists_every_command(capsys: Capsys) -> None:
    main(["--help"])
    out = capsys.readouterr().out
    for command, text in COMMANDS.items():
        assert re.search(rf"^ +{command} +{re.escape(text)}$", out, re.M), command


def test_audit_help_says_what_its_exit_status_means(capsys: Capsys) -> None:
    main(["audit", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert '"18 wrong" is the expected result' in out
    assert "0 every verdict is the one registered" in out
    assert "1 some verdict changed" in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "no COMMAND given; choose one of: exercises, check, audit"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["chek", "scaling-factor", "1"], "did you mean 'check'?"),
        (["--nope"], "unrecognized arguments: --nope"),
        (["exercises", "scaling-factr"], "did you mean 'scaling-factor'?"),
        (["exercises", "a", "b"], "unrecognized arguments: b"),
        (["check", "scaling-factor"], "required: ANSWER"),
        (["check", "nope", "1"], "unknown exercise 'nope'"),
        (
            ["check", "scaling-factor", "1/("],
            "cannot read the answer: the '(' at column 3 is never closed",
        ),
        (["check", "scaling-factor", ""], "cannot read the answer: it is empty"),
        (
            ["check", "scaling-factor", "__import__('os')"],
            "'__import__' at column 1 is not allowed",
        ),
        (["audit", "identity"], "did you mean 'identity-2x2'?"),
    ],
)
def test_usage_errors_go_to_stderr_with_status_2(
    argv: list[str], says: str, capsys: Capsys
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: ") and "error: " in err
    assert says in " ".join(err.split()), err  # the message may be wrapped
    assert "answer: answer" not in err
    _fits(err)


def test_check_right_and_wrong(capsys: Capsys) -> None:
    assert main(["check", "scaling-factor", "1/sqrt(64)"]) == 0
    assert capsys.readouterr() == ("scaling-factor: correct (exactly).\n", "")
    assert main(["check", "scaling-factor", "1"]) == 1  # wrong: a result, not an error
    out, err = capsys.readouterr()
    assert err == "" and "scale factor is missing" in out


@pytest.mark.parametrize("exercise_id", list(catalogue()))
def test_every_exercise_prints_as_plain_text(exercise_id: str, capsys: Capsys) -> None:
    assert main(["exercises", exercise_id]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"[$\\]|\^\{|_\{", out), out  # no LaTeX: $, \command, ^{…}, _{…}
    assert f"python -m attention_math check {exercise_id} " in out
    _fits(out)


def test_plain_writes_the_statements_maths_in_unicode() -> None:
    assert plain(r"$P = \operatorname{softmax}(QK^\top / \sqrt{d_k})$") == "P = softmax(QKᵀ / √dₖ)"
    assert plain(r"$\frac{1}{\sqrt{2}}$ and $x_{12}^2$") == "1/√2 and x₁₂²"
    assert plain("no maths, `code`") == "no maths, 'code'"


def test_table_wraps_cells_to_the_width() -> None:
    rows = [["a", "word " * 30], ["b", "short"]]
    out = table(["id", "text"], rows, width=40)
    assert max(len(line) for line in out.splitlines()) <= 40
    assert " ".join(out.split()).count("word") == 30  # nothing lost in the wrapping
    with pytest.raises(ValueError, match="cannot fit"):
        table(["one", "two", "three"], [["x" * 30] * 3], width=20)


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_the_module_runs_from_the_shell() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "attention_math", "exercises", "nope"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert "python -m attention_math exercises: error: unknown exercise 'nope'" in run.stderr


@pytest.mark.parametrize("text", ["", "1/(", "__import__('os')", "[[1, 2], [3]]"])
def test_the_answer_box_says_what_the_command_line_says(text: str, capsys: Capsys) -> None:
    from attention_math.exercises.live import check_text

    assert main(["check", "softmax-logs", text]) == 2
    err = " ".join(capsys.readouterr().err.split())
    message = check_text("softmax-logs", text)["message"]
    assert message.startswith("cannot read the answer: ") and "answer: answer" not in message
    assert f"error: {message}" in err


def test_check_help_and_the_exercises_page_name_every_function_the_parser_reads():
    from pathlib import Path

    from attention_math.__main__ import CHECK_EPILOG

    page = (Path(__file__).resolve().parents[2] / "docs" / "exercises" / "index.md").read_text()
    help_words = set(CHECK_EPILOG.replace(",", " ").split())
    assert [f for f in FUNCTIONS if f not in help_words] == []
    assert [f for f in FUNCTIONS if f"`{f}`" not in page] == []


def test_the_terminal_shows_no_raw_tex() -> None:
    out = show_exercise("views-crossover")
    assert "^*" not in out and "\\" not in out
