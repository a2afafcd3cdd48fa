"""Masks: the exact −∞ limit, large finite stand-ins, padding, and the fully masked row.

A boolean mask says *True = may attend*; the additive mask is ``0`` where allowed and
``−∞`` where blocked. Many codebases write a large negative number such as ``−1e9``
instead of ``−∞``; whether that works depends on the floating-point format.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

# d2l's valid_lens as a mask; public in numeric, re-exported where the masks page used it.
from attention_math.numeric import padding_mask

__all__ = [
    "FillReport",
    "Underflow",
    "additive_from_boolean",
    "fill_report",
    "fully_masked_row",
    "padding_mask",
    "underflow",
]


def additive_from_boolean(mask: ArrayLike, fill: float = -np.inf) -> NDArray[np.floating]:
    """The additive mask of a boolean one: ``0`` where allowed, ``fill`` where blocked.

    Raises:
        TypeError: a mask that is not boolean.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.masks import additive_from_boolean
        >>> additive_from_boolean(np.array([[True, False]]))
        array([[  0., -inf]])
    """
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"mask must be boolean (True = may attend), got dtype {m.dtype}")
    return np.where(m, 0.0, fill)


@dataclass(frozen=True)
class FillReport:
    """What a finite fill value such as ``−1e9`` becomes in one format."""

    dtype: str
    stored: float  # the fill after rounding to dtype (−inf when it overflows)
    overflows: bool  # |fill| > largest finite: stored as −inf
    spacing: float  # distance to the next float at |fill|: scores smaller than half vanish
    weight: float  # softmax weight of a blocked key whose score was 0, allowed key score 0
    masked_row: tuple[float, ...]  # numeric.softmax of a fully masked row of scores (1, 2, 3)
    masked_row_textbook: tuple[float, ...]  # the same row through exp(s − max s) / Σ
    unmasked_row: tuple[float, ...]  # numeric.softmax of (1, 2, 3) with no mask at all

    @property
    def fully_masked(self) -> str:
        """What the textbook softmax makes of the fully masked row: one of ``"NaN"``,
        ``"uniform"`` (the fill rounded the scores away) or ``"as if unmasked"`` (the fill is a
        constant shift, which the softmax ignores).

        Examples:
            >>> import numpy as np
            >>> from attention_math.derivations.masks import fill_report
            >>> [fill_report(-1e9, t).fully_masked for t in (np.float16, np.float32, np.float64)]
            ['NaN', 'uniform', 'as if unmasked']
        """
        row = np.array(self.masked_row_textbook)  # (3,)
        if np.isnan(row).any():
            return "NaN"
        if np.all(row == row[0]):
            return "uniform"
        if np.allclose(row, self.unmasked_row, rtol=1e-6, atol=0):
            return "as if unmasked"
        raise ArithmeticError(f"unexpected fully masked row {self.masked_row_textbook}")


def fill_report(fill: float, dtype: type) -> FillReport:
    """Apply ``fill`` as an additive mask in ``dtype`` and report what happens.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.masks import fill_report
        >>> r = fill_report(-1e9, np.float32)
        >>> r.overflows, r.weight, r.spacing
        (False, 0.0, 64.0)
        >>> fill_report(-1e9, np.float16).overflows
        True
    """
    from attention_math import numeric

    info = np.finfo(dtype)
    overflows = abs(fill) > float(info.max)
    with np.errstate(over="ignore"):
        stored: NDArray[np.floating] = np.array(fill).astype(
            dtype
        )  # the cast a framework does: -inf on overflow
    spacing = float(np.spacing(np.abs(stored))) if not overflows else float("nan")
    scores: NDArray[np.floating] = np.array([[0.0, 0.0]], dtype=dtype) + np.array(
        [[0.0, stored]], dtype=dtype
    )
    weight = float(numeric.softmax(scores)[0, 1])
    row = np.array([[1.0, 2.0, 3.0]], dtype=dtype) + stored  # every key blocked
    masked_row = tuple(float(x) for x in numeric.softmax(row)[0])
    textbook = tuple(float(x) for x in _textbook_softmax(row)[0])
    scores_only: NDArray[np.floating] = np.array([[1.0, 2.0, 3.0]], dtype=dtype)  # (1, 3): no mask
    unmasked = tuple(float(x) for x in numeric.softmax(scores_only)[0])
    return FillReport(
        np.dtype(dtype).name,
        float(stored),
        overflows,
        spacing,
        weight,
        masked_row,
        textbook,
        unmasked,
    )


def _textbook_softmax(s: NDArray[np.floating]) -> NDArray[np.floating]:
    """``exp(s − max s) / Σ`` with no special case: ``−∞ − (−∞)`` gives NaN."""
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        out: NDArray[np.floating] = e / e.sum(axis=-1, keepdims=True)
        return out


def fully_masked_row(dtype: type = np.float64) -> dict[str, tuple[float, ...]]:
    """The weights of a row whose keys are all blocked, under three conventions.

    * ``zero`` (this project): ``attention_math.numeric.softmax`` of ``−∞`` everywhere;
    * ``nan``: the textbook shifted softmax ``exp(s − max s)/Σ`` with ``−∞ − (−∞) = NaN``;
    * ``uniform``: a finite fill ``−1e9`` (float32) added to scores ``(1, 2, 3)``: the
      fill swallows the scores and every key gets the same weight.

    Examples:
        >>> from attention_math.derivations.masks import fully_masked_row
        >>> rows = fully_masked_row()
        >>> rows["zero"], rows["nan"][0] != rows["nan"][0]
        ((0.0, 0.0, 0.0), True)
    """
    from attention_math import numeric

    blocked: NDArray[np.floating] = np.full((1, 3), -np.inf, dtype=dtype)
    zero = numeric.softmax(blocked)[0]
    nan = _textbook_softmax(blocked)  # -inf - (-inf) = NaN
    uniform = numeric.softmax(np.array([[1.0, 2.0, 3.0]], dtype=np.float32) - np.float32(1e9))[0]
    return {
        "zero": tuple(float(x) for x in zero),
        "nan": tuple(float(x) for x in nan[0]),
        "uniform": tuple(float(x) for x in uniform),
    }


@dataclass(frozen=True)
class Underflow:
    """Where the weight ``e^t / (e^0 + e^t + e^2)`` of a key of score ``t`` becomes zero."""

    dtype: str
    ln_tiny: sp.Expr  # ln of the smallest subnormal: below it the weight is below that float
    exact: sp.Expr  # t*: the exact weight rounds to zero (to nearest) iff t ≤ t*
    computed: float  # largest t of the format at which numeric.softmax gives exactly zero


def underflow(dtype: type) -> Underflow:
    """The thresholds of ``t`` below which a blocked key's weight is zero, exactly and computed.

    Round to nearest sends ``w`` to zero iff ``w ≤ τ/2`` (``τ`` the smallest subnormal; a tie
    goes to the even zero), and ``e^t/(1 + e^2 + e^t) = τ/2`` solves to
    ``t* = ln(τ/2 · (1 + e²) / (1 − τ/2))``. So ``t < ln τ`` is sufficient, not the threshold. A
    computed softmax rounds twice (``e^{t − 2}``, then the division), so its threshold, found
    by bisection, differs slightly.

    Raises:
        ArithmeticError: if the bisected threshold is not where the derivation puts it.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.masks import underflow
        >>> u = underflow(np.float64)
        >>> float(u.ln_tiny) < float(u.exact)
        True
    """
    from attention_math import numeric

    tau = sp.Rational(float(np.finfo(dtype).smallest_subnormal))  # exact binary value
    exact = sp.log(tau / 2 * (1 + sp.exp(2)) / (1 - tau / 2))

    def weight(t: float) -> float:
        return float(numeric.softmax(np.array([0.0, t, 2.0], dtype=dtype))[1])

    lo, hi = float(exact) - 8.0, float(exact) + 8.0  # weight(lo) == 0 < weight(hi)
    if weight(lo) != 0 or weight(hi) == 0:
        raise ArithmeticError(f"no zero crossing of the weight near t* in {np.dtype(dtype)}")
    for _ in range(80):  # bisection on float64 t: 80 halvings of 16 reach its spacing
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if weight(mid) == 0 else (lo, mid)
    # lo may fall between two numbers of the format (and round up to one whose weight is not
    # zero): report the largest number of the format whose weight is zero
    t = np.dtype(dtype).type(lo)
    if weight(float(t)) != 0:
        t = np.nextafter(t, np.dtype(dtype).type(-np.inf))
    if weight(float(t)) != 0 or weight(float(np.nextafter(t, np.dtype(dtype).type(0)))) == 0:
        raise ArithmeticError(f"the zero threshold of {np.dtype(dtype)} is not where bisected")
    return Underflow(np.dtype(dtype).name, sp.log(tau), exact, float(t))
