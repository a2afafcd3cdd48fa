"""The ``exercises`` and ``check`` commands of ``python -m attention_math`` (parsed there).

Statements are written for the site in LaTeX; here they are printed as plain text with
Unicode maths (`attention_math.terminal.plain`), wrapped to the terminal's 100 columns.
"""

from __future__ import annotations

import sys

import sympy as sp

from attention_math.exercises.catalogue import catalogue
from attention_math.exercises.checker import diagnose
from attention_math.exercises.convert import to_sympy
from attention_math.exercises.model import CHAPTERS, TASKS, Exercise, input_tex, shape_words
from attention_math.exercises.parse import unreadable
from attention_math.terminal import UsageError, did_you_mean, plain, wrap

__all__ = ["check_answer", "list_exercises", "show_exercise"]

_HINT = "list them with: python -m attention_math exercises"


def _get(exercise_id: str) -> Exercise:
    exercises = catalogue()
    if exercise_id not in exercises:
        hint = did_you_mean(exercise_id, list(exercises))
        raise UsageError(f"unknown exercise {exercise_id!r}{hint or ';'} {_HINT}")
    return exercises[exercise_id]


def list_exercises() -> str:
    """The exercises by chapter, one ``id  title`` a line.

    Examples:
        >>> from attention_math.exercises.cli import list_exercises
        >>> print(list_exercises().splitlines()[0])
        The forward pass:
    """
    lines = []
    for chapter, title in CHAPTERS.items():
        lines.append(f"{title}:")
        lines += [
            f"  {e.id:<24} {plain(e.title)}" for e in catalogue().values() if e.chapter == chapter
        ]
    return "\n".join(lines)


def show_exercise(exercise_id: str) -> str:
    """One exercise as plain text: title, statement, inputs (in the syntax an answer is typed
    in), symbols, and what kind of answer is expected.

    Examples:
        >>> from attention_math.exercises.cli import show_exercise
        >>> print(show_exercise("scaling-factor"))
        scaling-factor: The factor for dₖ = 64
        <BLANKLINE>
        By what number are the scores multiplied when dₖ = 64?
        answer: a single value, exact
        check it with: python -m attention_math check scaling-factor "ANSWER"
    """
    ex = _get(exercise_id)
    label = TASKS[ex.task]  # "Proof" or "Explain": it asks for an argument that ends in a value
    text = f"{label}. {ex.statement}" if label else ex.statement
    lines = [f"{ex.id}: {plain(ex.title)}", "", wrap(plain(text))]
    # nested lists: the same syntax an answer is typed in
    lines += [
        wrap(f"{plain(f'${input_tex(name)}$')} = {sp.sstr(sp.Matrix(v).tolist())}", indent="  ")
        for name, v in ex.inputs.items()
    ]
    if ex.symbols:
        lines.append(f"symbols: {', '.join(ex.symbols)}")
    how = "exact" if ex.tolerance is None else f"within {ex.tolerance:g}"
    reached = ", the value your argument arrives at" if label else ""
    lines.append(f"answer: {shape_words(ex.shape)}, {how}{reached}")
    lines.append(f'check it with: python -m attention_math check {ex.id} "ANSWER"')
    return "\n".join(lines)


def check_answer(exercise_id: str, text: str) -> int:
    """Print the checker's verdict on ``text``; return 0 if it is right, 1 if it is wrong.

    Raises:
        UsageError: an unknown id, or an answer that cannot be read.

    Examples:
        >>> from attention_math.exercises.cli import check_answer
        >>> check_answer("scaling-factor", "1/sqrt(64)")
        scaling-factor: correct (exactly).
        0
        >>> check_answer("scaling-factor", "1")
        scaling-factor: not right: the scale factor is missing: ...
        1
    """
    ex = _get(exercise_id)
    try:
        got = to_sympy(text, ex.symbols)
    except (ValueError, TypeError) as exc:
        raise UsageError(unreadable(exc)) from None
    result = diagnose(ex, got)
    print(wrap(result.message), file=sys.stdout)
    return 0 if result.correct else 1
