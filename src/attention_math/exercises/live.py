"""The answer box on an exercise page: its markup, and the check it runs in the browser.

The box is plain HTML written at build time; "Check" runs `check_text` in the reader's browser
(Pyodide in a Web Worker, with SymPy and mpmath only: nothing here imports NumPy). The verdict
is the command line's, word for word: `check_text` and ``python -m attention_math check`` call
the same `diagnose` on the same parsed answer.
"""

from __future__ import annotations

from attention_math.exercises.catalogue import by_chapter, catalogue
from attention_math.exercises.checker import diagnose
from attention_math.exercises.convert import to_sympy
from attention_math.exercises.model import CHAPTERS
from attention_math.exercises.parse import unreadable
from attention_math.mathml import mathml
from attention_math.symbolic import latex

__all__ = ["VERDICTS", "check_text"]

VERDICTS = ("correct", "rounding", "wrong", "error")
"""The answer box's ``data-verdict`` values: right exactly, right up to rounding only, wrong,
or not read at all."""


def check_text(exercise_id: str, text: str, chapter: str | None = None) -> dict[str, str]:
    """Check a typed answer as the command line does; the verdict word, message and echo.

    ``chapter`` (the box's ``data-chapter``) lets the browser build only the exercises of
    that chapter; the exercise is the same object the whole catalogue holds.

    ``message`` is what ``python -m attention_math check ID ANSWER`` prints; ``verdict`` is
    one of `VERDICTS`; ``latex`` and ``mathml`` are the answer as read, as LaTeX and as the
    MathML the page shows (both empty when it could not be read).

    Examples:
        >>> from attention_math.exercises.live import check_text
        >>> r = check_text("scaling-factor", "1/sqrt(64)")
        >>> r["verdict"], r["message"], r["latex"]
        ('correct', 'scaling-factor: correct (exactly).', '\\\\frac{1}{8}')
        >>> check_text("scaling-factor", "1")["verdict"]
        'wrong'
        >>> check_text("scaling-factor", "0.125")["verdict"]
        'correct'
        >>> check_text("scaling-factor", "0.1251")["verdict"]
        'rounding'
        >>> check_text("scaling-factor", "1/8", "scaling")["verdict"]
        'correct'
        >>> r = check_text("scaling-factor", "__import__('os')")
        >>> r["verdict"], r["message"][:33]
        ('error', 'cannot read the answer: a call to')
    """
    exercises = by_chapter(chapter) if chapter in CHAPTERS else {}
    if exercise_id not in exercises:  # no chapter, or not this one: look everywhere
        exercises = catalogue()
    if exercise_id not in exercises:
        unknown = f"unknown exercise {exercise_id!r}"
        return {"verdict": "error", "message": unknown, "latex": "", "mathml": ""}
    ex = exercises[exercise_id]
    try:
        answer = to_sympy(text, ex.symbols)
    except (ValueError, TypeError) as exc:
        return {"verdict": "error", "message": unreadable(exc), "latex": "", "mathml": ""}
    result = diagnose(ex, answer)
    if result.correct:
        verdict = "correct"
    elif result.diagnosis == "rounding":
        verdict = "rounding"
    else:
        verdict = "wrong"
    return {
        "verdict": verdict,
        "message": result.message,
        "latex": latex(answer),
        "mathml": mathml(answer),
    }
