"""A worked solution's steps, each verified by SymPy: a step that does not hold raises.

The proof and explain exercises (``task="prove"`` or ``"explain"``) argue in steps; every
step that is algebra is one call of `step` in the exercise's solution, so that a chapter's
page, which runs the solution, cannot show an argument whose algebra is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp

__all__ = ["StepError", "fact", "step"]


class StepError(AssertionError):
    """A step of a worked solution does not hold."""


def _zero(d: sp.Expr) -> bool:
    if d == 0:
        return True
    if sp.cancel(sp.together(d)) == 0 or sp.simplify(d) == 0:
        return True
    return bool(sp.simplify(sp.expand(sp.powsimp(sp.expand_log(d, force=True)))) == 0)


def step(
    claim: str,
    lhs: sp.Basic,
    rhs: sp.Basic,
    given: Mapping[sp.Basic, sp.Basic] | None = None,
) -> sp.Basic:
    """Verify that ``lhs`` equals ``rhs`` (entry by entry for matrices) and return ``rhs``.

    ``given`` is substituted into both sides first: the step's assumptions, such as
    ``p₃ → 1 − p₁ − p₂`` (the weights sum to one).

    Raises:
        StepError: the two sides differ in shape, or SymPy cannot show ``lhs − rhs = 0``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.steps import step
        >>> a, c = sp.symbols("a c", real=True)
        >>> step("e^c cancels", sp.exp(a + c) / (sp.exp(a + c) + sp.exp(c)),
        ...      sp.exp(a) / (sp.exp(a) + 1))
        exp(a)/(exp(a) + 1)
        >>> step("wrong", sp.exp(a + c), sp.exp(a))
        Traceback (most recent call last):
        ...
        attention_math.exercises.steps.StepError: step 'wrong' does not hold: ...
    """
    left, right = sp.sympify(lhs), sp.sympify(rhs)
    if given:
        left, right = left.subs(given), right.subs(given)
    if isinstance(left, sp.MatrixBase) or isinstance(right, sp.MatrixBase):
        if not (isinstance(left, sp.MatrixBase) and isinstance(right, sp.MatrixBase)) or (
            left.shape != right.shape
        ):
            raise StepError(f"step {claim!r} does not hold: the two sides differ in shape")
        diffs = list(left - right)
    else:
        diffs = [left - right]
    bad = [d for d in diffs if not _zero(d)]
    if bad:
        raise StepError(f"step {claim!r} does not hold: lhs − rhs = {sp.simplify(bad[0])}")
    return rhs


def fact(claim: str, condition: object) -> None:
    """Verify a step that is not an equation: an inequality, or a property SymPy or NumPy
    decides (``10⁹ > 65504``, ``float16(−10⁹) = −∞``).

    Raises:
        StepError: ``condition`` is not true (SymPy's ``true`` or Python's ``True``).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.steps import fact
        >>> fact("e^1000 overflows float64", sp.Integer(1000) > sp.log(sp.Float("1.8e308")))
        >>> fact("wrong", sp.Integer(1) > 2)
        Traceback (most recent call last):
        ...
        attention_math.exercises.steps.StepError: step 'wrong' does not hold
    """
    if not (condition is True or condition is sp.true or bool(condition) is True):
        raise StepError(f"step {claim!r} does not hold")
