"""Compare an answer with the reference exactly, and name the slip when it is a known one.

Two values are compared in two steps: first numerically at 30 digits (at a few fixed
rational points when they contain symbols), which rejects a wrong answer fast; then, when
the numbers agree, exactly: ``simplify(a − b) == 0`` entry by entry (then with ``tanh``
rewritten as ``exp``, then ``(a − b).equals(0)``).
An answer holding decimals can never be *exactly* right unless its decimals are exactly the
value (``0.25`` for ``1/4``); within the rounding tolerance it is "right up to rounding".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mpmath
import sympy as sp

from attention_math.exercises.model import DIAGNOSES, Exercise, Mistake, Result

__all__ = ["ROUNDING_TOLERANCE", "compare", "diagnose", "rounds_to"]

MAX_LOG = 10_000  # exp(x) with |x| above this is treated as unequal to any answer here
ROUNDING_TOLERANCE = 5e-3
"""A decimal answer within this of the exact value (relative to max(1, |x|)) is "rounded"."""
_DPS = 30
# Values for free symbols: positive (symbols may be declared so), distinct and far apart, so
# that a formula wrong in its algebra is far from the right one, not "right up to rounding"
# (values close together made a plain mean of g pass for the p-weighted one). At point k,
# symbol i gets _VALUES[(i + 5k) % 12]: a rotation, so the symbols never share a value.
_VALUES = tuple(
    sp.Rational(p, q)
    for p, q in (
        (3, 7), (11, 5), (7, 10), (17, 4), (5, 13), (7, 2),
        (13, 11), (2, 9), (19, 6), (9, 14), (23, 8), (11, 17),
    )
)  # fmt: skip
_N_POINTS = 3
_INFINITIES = (sp.oo, -sp.oo, sp.zoo)


def _value(i: int, k: int, sign_free: bool = False) -> sp.Rational:
    """Symbol ``i``'s value at sample point ``k``; beyond 12 symbols, (2i + 1)/3 (above 8).
    A symbol that may be negative (``sign_free``) is negative at point 1, so that ``|a|`` is
    not taken for ``a``."""
    n = len(_VALUES)
    value = _VALUES[(i + 5 * k) % n] if i < n else sp.Rational(2 * i + 1, 3)
    return -value if sign_free and k == 1 else value


def _sign_free(s: sp.Symbol) -> bool:
    return not (s.is_positive or s.is_nonnegative)


def _entries(x: sp.Basic) -> list[sp.Expr]:
    return list(x) if isinstance(x, sp.MatrixBase) else [x]


def _shape(x: sp.Basic) -> tuple[int, ...]:
    return tuple(x.shape) if isinstance(x, sp.MatrixBase) else ()


def _too_large(e: sp.Expr) -> bool:
    """True when a power in ``e`` is beyond ``e^MAX_LOG`` (evaluating it would not finish).

    Walks inside out, so each exponent is evaluated only after its own powers were checked:
    ``exp(exp(exp(100)))`` stops at the middle ``exp`` instead of hanging.
    """
    for node in sp.postorder_traversal(e):
        if isinstance(node, sp.exp):
            size = abs(sp.N(node.args[0], 5))
        elif isinstance(node, sp.Pow) and not node.exp.is_Integer:
            size = abs(sp.N(node.exp * sp.log(abs(node.base)), 5)) if node.base != 0 else 0
        else:
            continue
        if not size.is_number or size > MAX_LOG:
            return True
    return False


def _numbers(
    entries: Sequence[sp.Expr], point: Mapping[sp.Basic, sp.Basic]
) -> list[mpmath.mpc] | None:
    out = []
    for e in entries:
        e = e.xreplace(point) if point else e
        if _too_large(e):
            return None
        v = sp.N(e, _DPS)
        if not v.is_number or v.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            return None
        try:
            with mpmath.workdps(_DPS):  # mpf(v) rounds to the working precision
                re, im = (mpmath.mpf(sp.Float(c, _DPS)) for c in v.as_real_imag())
                out.append(re if im == 0 else mpmath.mpc(re, im))
        except (TypeError, ValueError):
            return None
    return out


def _exact_zero(d: sp.Expr) -> bool:
    if d == 0:
        return True
    if sp.cancel(sp.together(d)) == 0 or sp.simplify(d) == 0:
        return True
    if d.has(sp.tanh) and sp.simplify(d.rewrite(sp.exp)) == 0:  # tanh(x) = (e^2x − 1)/(e^2x + 1)
        return True
    return d.equals(0) is True


def _rationalise(x: sp.Basic) -> sp.Basic:
    """Decimals as the exact fractions they spell: ``0.25`` → ``1/4``."""
    return x.xreplace({f: sp.Rational(str(f)) for f in x.atoms(sp.Float)})


def compare(got: sp.Basic, want: sp.Basic, tolerance: float, relative: bool = True) -> str | None:
    """``"exact"``, ``"close"`` (every entry within ``tolerance``) or ``None`` (different).

    ``"unproven"`` means equal to 25 digits (at every sample point) but SymPy could not show
    ``a − b = 0``.

    With ``relative`` the tolerance is scaled by ``max(1, largest |entry|)`` of ``want``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.checker import compare
        >>> compare(sp.Matrix([[sp.Rational(1, 4)]]), sp.Matrix([[1 / (1 + sp.Integer(3))]]), 1e-3)
        'exact'
        >>> compare(sp.Float("0.6698"), sp.exp(1 / sp.sqrt(2)) / (1 + sp.exp(1 / sp.sqrt(2))), 1e-3)
        'close'
        >>> compare(sp.Integer(1), sp.Integer(2), 1e-3) is None
        True
        >>> compare(-sp.oo, -sp.oo, 1e-3), compare(sp.oo, -sp.oo, 1e-3), compare(-sp.oo, -1, 1e-3)
        ('exact', None, None)
    """
    if _shape(got) != _shape(want):
        return None
    inexact = got.has(sp.Float)
    g_ex = _rationalise(got) if inexact else got
    a, b = _entries(g_ex), _entries(want)
    # an infinite entry (float16(−10⁹) is −∞) is right only as the same infinity; the finite
    # entries are compared as below
    infinite = [x in _INFINITIES or y in _INFINITIES for x, y in zip(a, b, strict=True)]
    if any(x != y for x, y, inf in zip(a, b, infinite, strict=True) if inf):
        return None
    a = [x for x, inf in zip(a, infinite, strict=True) if not inf]
    b = [y for y, inf in zip(b, infinite, strict=True) if not inf]
    if not b:
        return "exact"
    free = sorted(set().union(*(e.free_symbols for e in a + b)), key=str)
    points = (
        [{s: _value(i, k, _sign_free(s)) for i, s in enumerate(free)} for k in range(_N_POINTS)]
        if free
        else [{}]
    )
    close = exact = True
    for point in points:
        va, vb = _numbers(a, point), _numbers(b, point)
        if va is None or vb is None:
            return None
        with mpmath.workdps(_DPS):
            size = max([mpmath.mpf(1)] + [abs(x) for x in vb])
            err = max(abs(x - y) for x, y in zip(va, vb, strict=True))
            err = err / size if relative else err
            exact = exact and err < mpmath.mpf(10) ** (-(_DPS - 5)) * size
        close = close and err <= tolerance
    if exact:
        diffs = [x - y for x, y in zip(a, b, strict=True)]
        if all(_exact_zero(d) for d in diffs):
            return "exact"
        if not any(d.is_zero is False for d in diffs):
            return "unproven"
        # an entry provably differs, by less than 25 digits show: a long decimal, say
    return "close" if close else None


def _places(x: sp.Basic) -> int | None:
    """How many decimal places a typed decimal has (``3/5`` → 1, ``2`` → 0); ``None`` for a
    number no decimal writes (``1/3``, ``√2``) or one with more than 30 places."""
    if not isinstance(x, sp.Rational):
        return None
    for places in range(31):
        if (x * 10**places).is_Integer:
            return places
    return None


def rounds_to(got: sp.Basic, want: sp.Basic) -> bool:
    """Whether ``got`` is ``want`` rounded to the decimal places it is written with: every
    entry within half a unit of its last place (an integer entry exactly equal), at least
    one entry a decimal. The right answer typed with too few digits, then, not a slip that
    happens to round alike.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.checker import rounds_to
        >>> s = 1 / (1 + sp.exp(-1 / sp.sqrt(3)))  # 0.6405…
        >>> rounds_to(sp.Matrix([[sp.Rational(3, 5), 1]]), sp.Matrix([[s, 1]]))
        True
        >>> rounds_to(sp.Rational(13, 20), s), rounds_to(sp.Integer(1), s)  # 0.65 is two places
        (False, False)
    """
    if _shape(got) != _shape(want):
        return False
    a, b = _entries(_rationalise(got)), _entries(want)
    if any(e.free_symbols for e in a + b):
        return False
    found = [_places(e) for e in a]
    places = [p for p in found if p is not None]
    values = _numbers(b, {})
    if values is None or len(places) < len(found) or not any(places):
        return False
    with mpmath.workdps(_DPS):
        slack = mpmath.mpf(10) ** (5 - _DPS)
        return all(
            abs(mpmath.mpf(e.p) / e.q - w) <= mpmath.mpf(10) ** -p / 2 + slack
            for e, w, p in zip(a, values, places, strict=True)
        )


def _fmt_shape(shape: tuple[int, ...]) -> str:
    return "a single value" if shape == () else f"a {shape[0]}×{shape[1]} matrix"


def _wrong_entries(got: sp.Basic, want: sp.Basic, tolerance: float) -> str:
    if not isinstance(want, sp.MatrixBase):
        return ""
    bad = [
        f"({i + 1}, {j + 1})"
        for i in range(want.rows)
        for j in range(want.cols)
        if compare(got[i, j], want[i, j], tolerance) is None
    ]
    return (
        f" Entries that differ: {', '.join(bad[:6])}{' …' if len(bad) > 6 else ''}." if bad else ""
    )


def diagnose(ex: Exercise, got: sp.Basic) -> Result:
    """The verdict on ``got`` (already SymPy) for exercise ``ex``.

    Order: right (exactly, or within a stated tolerance); right up to rounding; a known slip
    (the exercise's own, then "transposed"; with a stated tolerance a slip matched within it
    comes before "close"); wrong shape; plain wrong, naming the entries.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises import get
        >>> from attention_math.exercises.checker import diagnose
        >>> diagnose(get("softmax-rows"), sp.Matrix([[1, 3], [2, 1]]) / 4).message
        'softmax-rows: not right. Entries that differ: (2, 1), (2, 2).'
    """
    # A learner's Symbol("sigma") has no assumptions: match the exercise's symbols by name.
    names = {s: ex.symbols[s.name] for s in got.free_symbols if s.name in ex.symbols}
    got = got.xreplace(names) if names else got
    if 1 in ex.shape and _shape(got) == ex.shape[::-1]:
        # a vector has no orientation as a learner types it: a flat list or a 1-D array
        # reads as a row, sp.Matrix([a, b, c]) as a column; either is fine
        got = got.T

    def sub(x: Any) -> Any:
        return x.subs(ex.subs) if ex.subs else x

    g, want = sub(got), sub(ex.answer)
    tol = ex.tolerance if ex.tolerance is not None else ROUNDING_TOLERANCE
    absolute = ex.tolerance is not None  # a stated tolerance is per entry, not relative
    verdict = compare(g, want, tol, relative=not absolute)
    if verdict == "exact" or (verdict == "close" and ex.tolerance is not None):
        how = "exactly" if verdict == "exact" else f"to within the tolerance {ex.tolerance:g}"
        return Result(ex.id, True, f"{ex.id}: correct ({how}).")
    if verdict == "unproven":
        text = (
            f"{ex.id}: your answer agrees with the right one to 25 digits, but SymPy could not "
            "prove them equal; simplify it (or write it with exp, log and sqrt) and try again."
        )
        return Result(ex.id, False, text)
    if verdict == "close":
        return Result(ex.id, False, f"{ex.id}: {DIAGNOSES['rounding']}.", "rounding")
    mistakes = list(ex.mistakes)
    if isinstance(want, sp.MatrixBase) and compare(want.T, want, 0) is None:
        mistakes.append(Mistake("transposed", ex.answer.T))

    def slip() -> Result | None:
        for m in mistakes:
            if compare(g, sub(m.answer), tol, relative=not absolute) is not None:
                text = f"{ex.id}: not right: {DIAGNOSES[m.diagnosis]}."
                detail = f" {m.detail}" if m.detail else ""
                return Result(ex.id, False, text + detail, m.diagnosis)
        return None

    # with a stated tolerance, a slip matched within it (weights rounded before multiplying)
    # says more than "close"
    named = slip() if ex.tolerance is not None else None
    if named is not None:
        return named
    if ex.tolerance is not None and compare(g, want, ROUNDING_TOLERANCE) is not None:
        text = f"{ex.id}: close, but not every entry is within the tolerance {ex.tolerance:g}."
        return Result(ex.id, False, text, "rounding")
    if rounds_to(g, want):  # the right answer with too few digits: no slip to name
        return Result(ex.id, False, f"{ex.id}: {DIAGNOSES['rounding']}.", "rounding")
    named = slip()
    if named is not None:
        return named
    if _shape(g) != _shape(want):
        text = (
            f"{ex.id}: not right: {DIAGNOSES['shape']}: expected {_fmt_shape(_shape(want))}, "
            f"got {_fmt_shape(_shape(g))}."
        )
        return Result(ex.id, False, text, "shape")
    return Result(ex.id, False, f"{ex.id}: not right.{_wrong_entries(g, want, tol)}")
