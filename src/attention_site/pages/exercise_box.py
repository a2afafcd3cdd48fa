"""The answer box on an exercise page: its markup, written at build time.

"Check" runs ``attention_math.exercises.live.check_text`` in the reader's browser
(the library's wheel, loaded by the page's Python runtime); only the HTML lives here.
"""

from __future__ import annotations

import html

from attention_math.exercises import get

__all__ = ["answer_box", "placeholder"]


def placeholder(shape: tuple[int, ...]) -> str:
    """The box's greyed-out hint: the answer's form, never a value or an exercise's symbol.

    Examples:
        >>> from attention_site.pages.exercise_box import placeholder
        >>> placeholder(()), placeholder((1, 3))
        ('your answer', '[[a, b, c]]')
    """
    if shape == ():
        return "your answer"  # a letter such as "a" can be the exercise's own variable
    rows, cols = shape
    names = iter("abcdefghijklmnopqrstuvwxyz")
    return (
        "["
        + ", ".join(
            "[" + ", ".join(next(names, "x") for _ in range(cols)) + "]" for _ in range(rows)
        )
        + "]"
    )


def answer_box(exercise_id: str) -> str:
    """The answer box of ``exercise_id`` as one HTML block (no blank line, so Markdown keeps it).

    Examples:
        >>> from attention_site.pages.exercise_box import answer_box
        >>> box = answer_box("scaling-factor")
        >>> 'class="exercise-check"' in box, 'data-exercise-id="scaling-factor"' in box
        (True, True)
        >>> ">Check</button>" in box, "\\n\\n" in box
        (True, False)
    """
    ex = get(exercise_id)
    i = html.escape(ex.id, quote=True)
    hint = html.escape(placeholder(ex.shape), quote=True)
    return (
        f'<form class="exercise-check" data-exercise-id="{i}"'
        f' data-chapter="{html.escape(ex.chapter, quote=True)}" autocomplete="off">\n'
        f'<label for="answer-{i}">Check in the page</label>\n'
        f'<span class="exercise-check__row"><input id="answer-{i}" type="text" name="answer"'
        f' data-exercise-id="{i}" placeholder="{hint}" spellcheck="false"'
        ' autocapitalize="off">\n'  # no maxlength: the parser's limit speaks, as on the CLI
        '<button type="submit" class="md-button">Check</button></span>\n'
        '<span class="exercise-check__progress" aria-live="polite"></span>\n'
        '<span class="exercise-check__verdict" role="status" aria-live="polite"></span>\n'
        '<span class="exercise-check__echo"></span>\n'
        "</form>"
    )
