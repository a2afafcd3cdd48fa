"""Exercises with exact, auto-checked answers.

``check(exercise_id, answer)`` accepts a SymPy expression or Matrix, a NumPy array, a number,
a nested list, or a string in plain math syntax (read by a safe parser, never ``eval``), and
returns a `Result` with ``correct``, ``message`` and, for a recognised slip, a
``diagnosis`` code from `DIAGNOSES`.

Examples:
    >>> from attention_math.exercises import check
    >>> check("softmax-logs", "[1/6, 1/3, 1/2]").correct
    True
    >>> r = check("softmax-logs", [1, 2, 3])
    >>> r.correct, r.diagnosis
    (False, 'unnormalized')
    >>> check("softmax-logs", "[0.1667, 0.3333, 0.5]").diagnosis
    'rounding'
"""

from __future__ import annotations

from attention_math.exercises.catalogue import catalogue, find
from attention_math.exercises.checker import ROUNDING_TOLERANCE, diagnose
from attention_math.exercises.convert import to_sympy
from attention_math.exercises.model import CHAPTERS, DIAGNOSES, Exercise, Mistake, Result
from attention_math.exercises.parse import ParseError, parse_answer

__all__ = [
    "CHAPTERS",
    "DIAGNOSES",
    "ROUNDING_TOLERANCE",
    "Exercise",
    "Mistake",
    "ParseError",
    "Result",
    "catalogue",
    "check",
    "get",
    "parse_answer",
]


def get(exercise_id: str) -> Exercise:
    """The exercise with id ``exercise_id``.

    Examples:
        >>> from attention_math.exercises import get
        >>> get("grad-ds").chapter
        'gradients'
    """
    found = find(exercise_id) if isinstance(exercise_id, str) else None
    if found is None:
        known = ", ".join(catalogue())
        raise ValueError(f"unknown exercise id {exercise_id!r}; known: {known}")
    return found


def check(exercise_id: str, answer: object) -> Result:
    """Check ``answer`` for exercise ``exercise_id``; say what is wrong when it is a known slip.

    Args:
        exercise_id: an id from `catalogue` (``python -m attention_math exercises``).
        answer: SymPy expression or Matrix, NumPy array, number, nested list, or plain-math
            string such as ``"[[exp(1)/(1 + exp(1)), 1/(1 + exp(1))]]"``.

    Returns:
        Result: the verdict; ``bool(result)`` is ``result.correct``.

    Raises:
        ValueError: unknown id, or an answer string outside the allowed syntax
            (`ParseError`).
        TypeError: an answer of a type that cannot be read.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises import check
        >>> r = check("scaling-factor", sp.Rational(1, 8))
        >>> r.correct, r.message
        (True, 'scaling-factor: correct (exactly).')
        >>> check("scaling-factor", "1/64").diagnosis
        'wrong_scale'
    """
    ex = get(exercise_id)
    return diagnose(ex, to_sympy(answer, ex.symbols))
