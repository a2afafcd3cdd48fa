"""``python -m attention_math exercises [ID]`` and ``python -m attention_math check ID ANSWER``."""

from __future__ import annotations

import sympy as sp

from attention_math.exercises.catalogue import catalogue
from attention_math.exercises.checker import diagnose
from attention_math.exercises.convert import to_sympy
from attention_math.exercises.model import CHAPTERS

__all__ = ["cli"]

_USAGE_CHECK = 'usage: python -m attention_math check ID "answer"'


def _list() -> str:
    lines = []
    for chapter, title in CHAPTERS.items():
        lines.append(f"{title}:")
        lines += [f"  {e.id:<24} {e.title}" for e in catalogue().values() if e.chapter == chapter]
    return "\n".join(lines)


def _show(exercise_id: str) -> str:
    ex = catalogue()[exercise_id]
    lines = [f"{ex.id}: {ex.title}", "", ex.statement]
    # nested lists: the same syntax an answer is typed in
    lines += [f"  {name} = {sp.sstr(sp.Matrix(v).tolist())}" for name, v in ex.inputs.items()]
    if ex.symbols:
        lines.append(f"symbols: {', '.join(ex.symbols)}")
    how = "exact" if ex.tolerance is None else f"within {ex.tolerance:g}"
    lines.append(f"answer: {'a single value' if ex.shape == () else 'a matrix'}, {how}")
    return "\n".join(lines)


def cli(command: str, argv: list[str]) -> int:
    """Run ``exercises`` (list, or show one) or ``check``; return the exit status.

    ``exercises`` lists the exercises by chapter; ``exercises ID`` prints one with its inputs.
    ``check`` exits 0 for a correct answer, 1 for a wrong one, 2 for a usage error, an
    unknown id or an answer that cannot be read.

    Examples:
        >>> from attention_math.exercises import cli
        >>> cli("check", ["scaling-factor", "1/sqrt(64)"])
        scaling-factor: correct (exactly).
        0
        >>> cli("check", ["scaling-factor", "1"])
        scaling-factor: not right: the scale factor is missing: ...
        1
    """
    exercises = catalogue()
    if command == "exercises":
        if not argv:
            print(_list())
            return 0
        if len(argv) == 1 and argv[0] in exercises:
            print(_show(argv[0]))
            return 0
        print(f"unknown exercise {' '.join(argv)!r}; run: python -m attention_math exercises")
        return 2
    if command != "check":
        print(f"unknown command {command!r}")
        return 2
    if len(argv) != 2:
        print(_USAGE_CHECK)
        return 2
    exercise_id, text = argv
    if exercise_id not in exercises:
        print(f"unknown exercise {exercise_id!r}; run: python -m attention_math exercises")
        return 2
    ex = exercises[exercise_id]
    try:
        result = diagnose(ex, to_sympy(text, ex.symbols))
    except (ValueError, TypeError) as exc:
        print(f"cannot read the answer: {exc}")
        return 2
    print(result.message)
    return 0 if result.correct else 1
