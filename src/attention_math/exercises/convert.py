"""Any answer a learner may give (string, SymPy, NumPy, number, nested list) as SymPy.

Floats become ``sympy.Float`` (so the checker can tell a rounded answer from an exact
one); strings go through the safe parser only, never ``sympify``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeGuard

import sympy as sp

from attention_math._lazy import loaded_numpy

if TYPE_CHECKING:
    import numpy as np
from attention_math.exercises.parse import ParseError, parse_answer

__all__ = ["to_sympy"]


def _is_array(x: object) -> TypeGuard[np.ndarray]:
    numpy = loaded_numpy()  # not imported here: if it is not loaded, x is no array
    return numpy is not None and isinstance(x, numpy.ndarray)


def _scalar(x: object, symbols: Mapping[str, sp.Basic]) -> sp.Expr:
    numpy = loaded_numpy()
    if numpy is not None and isinstance(x, numpy.generic):
        x = x.item()  # a NumPy scalar as the Python bool, int or float it holds
    if isinstance(x, bool):
        raise TypeError(f"answer entries must be numbers or expressions, got the bool {x!r}")
    if isinstance(x, int):
        return sp.Integer(int(x))
    if isinstance(x, float):
        if math.isnan(x):
            raise ValueError(f"answer contains the non-finite value {x!r}")
        if math.isinf(x):  # an answer may be ±∞ (float16(−1e9)); NaN never is
            return sp.oo if x > 0 else -sp.oo
        return sp.Float(repr(float(x)))  # the shortest decimal that reads back as x
    if isinstance(x, Fraction):
        return sp.Rational(x.numerator, x.denominator)
    if isinstance(x, str):
        e = parse_answer(x, symbols, exact_decimals=True)
        if isinstance(e, sp.MatrixBase):
            raise ParseError(f"answer: a matrix entry is itself a matrix: {x!r}")
        return e
    if isinstance(x, sp.Basic) and not isinstance(x, sp.MatrixBase):
        return x
    raise TypeError(
        "answer entries must be numbers, strings or SymPy expressions, "
        f"got {type(x).__name__} {x!r}"
    )


def _rows(x: list[Any] | tuple[Any, ...], symbols: Mapping[str, sp.Basic]) -> sp.Matrix:
    if not x:
        raise ValueError("answer is an empty list")
    if all(not (isinstance(r, list | tuple) or _is_array(r)) for r in x):
        x = [x]  # a flat list is one row
    if not all(isinstance(r, list | tuple) or _is_array(r) for r in x):
        raise ValueError(f"answer must be a list of equally long rows, got {x!r}")
    rows = [list(r) for r in x]
    if len({len(r) for r in rows}) != 1 or not rows[0]:
        raise ValueError(f"answer must be a list of equally long rows, got {x!r}")
    return sp.Matrix([[_scalar(e, symbols) for e in r] for r in rows])


def to_sympy(answer: object, symbols: Mapping[str, sp.Basic] | None = None) -> sp.Basic:
    """``answer`` as a SymPy expression or Matrix; a vector is a 1×n row, 1×1 is a scalar.

    Examples:
        >>> import numpy as np
        >>> from attention_math.exercises.convert import to_sympy
        >>> to_sympy(np.array([0.5, 1]))
        Matrix([[0.5, 1.0]])
        >>> to_sympy([[1, "sqrt(2)"]])
        Matrix([[1, sqrt(2)]])
        >>> to_sympy("[[1/3]]")
        1/3
    """
    symbols = symbols or {}
    if isinstance(answer, str):
        out = parse_answer(answer, symbols, exact_decimals=True)
    elif isinstance(answer, sp.MatrixBase):
        out = sp.Matrix(answer)
    elif _is_array(answer):
        if answer.ndim > 2:
            raise ValueError(f"answer must be a number, vector or matrix, got shape {answer.shape}")
        out = (
            _scalar(answer.item(), symbols) if answer.ndim == 0 else _rows(answer.tolist(), symbols)
        )
    elif isinstance(answer, list | tuple):
        out = _rows(answer, symbols)
    else:
        out = _scalar(answer, symbols)
    if isinstance(out, sp.MatrixBase) and out.shape == (1, 1):
        out = out[0, 0]
    return out
