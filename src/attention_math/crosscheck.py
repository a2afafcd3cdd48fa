"""Exact versus floating point: the check that keeps the site's math and code in step.

`crosscheck` evaluates an exact SymPy result to many digits, compares it with a
NumPy result and states the largest error in units of the float's machine epsilon ε
(normwise: ``max |x̂ − x| / (ε · max |x|)``). Above the stated bound it raises
`CrossCheckError`, which fails ``mkdocs build --strict`` on any page that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

__all__ = ["CrossCheck", "CrossCheckError", "crosscheck"]

_DPS = 60  # far more digits than float64's 16: the exact side's own rounding is negligible


class CrossCheckError(AssertionError):
    """The exact and the numeric result disagree by more than the stated bound."""


@dataclass(frozen=True)
class CrossCheck:
    """The outcome of one comparison."""

    label: str
    dtype: str
    error_eps: float
    bound_eps: float
    shape: tuple[int, ...]

    @property
    def passed(self) -> bool:
        return self.error_eps <= self.bound_eps

    def __str__(self) -> str:
        return (
            f"{self.label}: largest error {self.error_eps:.3g} ε ({self.dtype}), "
            f"bound {self.bound_eps:g} ε: {'agrees' if self.passed else 'DISAGREES'}"
        )


def _exact_values(exact: object) -> tuple[list[mpmath.mpf], tuple[int, ...]]:
    e = sp.sympify(exact)
    if isinstance(e, sp.MatrixBase):
        entries, shape = list(e), e.shape
    else:
        entries, shape = [e], ()
    out = []
    with mpmath.workdps(_DPS):
        for x in entries:
            v = sp.N(x, _DPS)
            if not v.is_real or not v.is_finite:
                raise ValueError(f"exact entry {x} does not evaluate to a finite real number")
            out.append(mpmath.mpf(v))
    return out, shape


def crosscheck(
    exact: object, numeric: ArrayLike, *, bound_eps: float = 16.0, label: str = "result"
) -> CrossCheck:
    """Compare ``exact`` (SymPy) with ``numeric`` (NumPy); raise if they disagree.

    Args:
        exact: a SymPy expression or matrix.
        numeric: the float result of the same computation, same shape.
        bound_eps: the largest tolerated error in units of the numeric dtype's ε.
        label: what is compared, for the report and the error message.

    Returns:
        A `CrossCheck` with the measured error.

    Raises:
        CrossCheckError: the error exceeds ``bound_eps``.
        ValueError: the shapes differ, or an exact entry is not a finite real number.
        TypeError: ``numeric`` is not a float array.

    Examples:
        >>> import numpy as np, sympy as sp
        >>> from attention_math.crosscheck import crosscheck
        >>> crosscheck(1 / sp.sqrt(2), np.float64(1 / np.sqrt(2))).error_eps < 1
        True
        >>> crosscheck(sp.Rational(1, 3), np.float32(0.3334))
        Traceback (most recent call last):
        ...
        attention_math.crosscheck.CrossCheckError: result: largest error ...
    """
    num = np.asarray(numeric)
    if not np.issubdtype(num.dtype, np.floating):
        raise TypeError(f"numeric must be a float array, got dtype {num.dtype}")
    values, shape = _exact_values(exact)
    num_shape = num.shape if shape != () else ()
    if shape != () and num.ndim == 1 and len(shape) == 2 and 1 in shape:
        num = num.reshape(shape)  # a NumPy vector against a SymPy row or column
        num_shape = shape
    if tuple(num_shape) != tuple(shape) or num.size != len(values):
        raise ValueError(f"{label}: exact shape {shape} differs from numeric shape {num.shape}")
    eps = float(np.finfo(num.dtype).eps)
    with mpmath.workdps(_DPS):
        errs = [abs(mpmath.mpf(float(a)) - b) for a, b in zip(num.ravel(), values, strict=True)]
        scale = max(abs(b) for b in values)
        err = max(errs)
        error_eps = float(err / (eps * scale)) if scale != 0 else float(err / eps)
    if not np.isfinite(num).all():
        error_eps = float("inf")
    result = CrossCheck(label, num.dtype.name, error_eps, float(bound_eps), tuple(shape))
    if not result.passed:
        raise CrossCheckError(str(result))
    return result
