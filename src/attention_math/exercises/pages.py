"""Markdown for the exercise pages: the statement, and a solution that must pass its checker."""

from __future__ import annotations

from attention_math.exercises.catalogue import catalogue
from attention_math.exercises.checker import diagnose
from attention_math.exercises.convert import to_sympy
from attention_math.exercises.live import answer_box
from attention_math.symbolic import latex

__all__ = ["SolutionError", "solved", "statement", "tolerance_tex"]


class SolutionError(AssertionError):
    """A solution on a page does not pass its own checker: the build must fail."""


def tolerance_tex(tol: float) -> str:
    """A tolerance as inline LaTeX, ``5e-05`` → ``$5 \\cdot 10^{-5}$``.

    Examples:
        >>> from attention_math.exercises.pages import tolerance_tex
        >>> tolerance_tex(5e-05), tolerance_tex(0.25)
        ('$5 \\\\cdot 10^{-5}$', '$0.25$')
    """
    mantissa, _, exponent = f"{tol:g}".partition("e")
    if not exponent:
        return f"${mantissa}$"
    return f"${mantissa} \\cdot 10^{{{int(exponent)}}}$"


def _shape_words(ex_shape: tuple[int, ...]) -> str:
    return "a single value" if ex_shape == () else f"a {ex_shape[0]}×{ex_shape[1]} matrix"


def statement(exercise_id: str) -> str:
    """The exercise as Markdown: statement, inputs as LaTeX, the form of the answer, its box.

    Examples:
        >>> from attention_math.exercises import statement
        >>> print(statement("scaling-factor"))
        By what number are the scores multiplied when $d_k = 64$?
        <BLANKLINE>
        *Answer:* a single value, exact. Id: `scaling-factor`.
        <BLANKLINE>
        <form class="exercise-check" data-exercise-id="scaling-factor" ...</form>
    """
    from attention_math.render import display  # NumPy: build time only

    ex = catalogue()[exercise_id]
    parts = [ex.statement]
    if ex.inputs:
        parts.append(display(r", \qquad ".join(f"{n} = {latex(m)}" for n, m in ex.inputs.items())))
    form = "exact" if ex.tolerance is None else f"every entry within {tolerance_tex(ex.tolerance)}"
    names = f"; symbols: {', '.join(f'`{s}`' for s in ex.symbols)}" if ex.symbols else ""
    parts.append(f"*Answer:* {_shape_words(ex.shape)}, {form}{names}. Id: `{ex.id}`.")
    parts.append(answer_box(ex.id))  # checked in the reader's browser (hooks/live.py)
    return "\n\n".join(p.strip("\n") for p in parts)


def solved(exercise_id: str, answer: object) -> str:
    """Check a page's solution and show it; raise `SolutionError` if it is wrong.

    The answer is shown in LaTeX; when the exercise has a NumPy reference, the exact answer
    is cross-checked against it and shown beside its decimals.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises import solved
        >>> print(solved("scaling-factor", 1 / sp.sqrt(64)))
        <BLANKLINE>
        $$
        \\frac{1}{8} \\approx 0.125
        $$
        <BLANKLINE>
        The checker says: **scaling-factor: correct (exactly).** ...
        >>> solved("scaling-factor", sp.Rational(1, 64))
        Traceback (most recent call last):
        ...
        attention_math.exercises.pages.SolutionError: the solution of scaling-factor fails ...
    """
    from attention_math.crosscheck import crosscheck  # NumPy: build time only
    from attention_math.render import decimal_latex, display

    ex = catalogue()[exercise_id]
    got = to_sympy(answer, ex.symbols)
    result = diagnose(ex, got)
    if not result.correct:
        raise SolutionError(f"the solution of {exercise_id} fails its checker: {result.message}")
    tex = latex(got)
    note = ""
    if ex.numeric is not None:
        num = ex.numeric()
        exact = ex.answer.subs(ex.subs) if ex.subs else ex.answer
        check = crosscheck(exact, num, bound_eps=ex.bound_eps, label=exercise_id)
        tex += r" \approx " + decimal_latex(num, 4)
        note = f" NumPy {check.dtype} agrees with the exact answer to {check.error_eps:.2g} ε."
    return display(tex) + f"\nThe checker says: **{result.message}**{note}\n"
