"""Gradient checking: central finite differences and their step-size trade-off.

The central difference ``(ℓ(x + h) − ℓ(x − h)) / 2h`` differs from ``ℓ'(x)`` by a truncation
error ``≈ h² ℓ'''(x) / 6``, which shrinks as ``h`` does, plus a rounding error
``≈ ε |ℓ| / h`` from subtracting two nearly equal floats, which grows. The total is smallest
near ``h ≈ ε^{1/3}``; [`step_size_sweep`][attention_math.gradcheck.step_size_sweep] measures the
whole curve.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["central_difference", "relative_error", "step_size_sweep"]


def central_difference(
    f: Callable[[NDArray[np.float64]], float], x: ArrayLike, h: float
) -> NDArray[np.float64]:
    """The gradient of the scalar function ``f`` at ``x`` by central differences of step ``h``.

    Each entry costs two evaluations of ``f``; ``x`` itself is not modified.

    Examples:
        >>> import numpy as np
        >>> from attention_math.gradcheck import central_difference
        >>> g = central_difference(lambda x: float(np.sum(x**3)), np.array([1.0, 2.0]), 1e-3)
        >>> g.round(6)                      # exact: 3x² = (3, 12); truncation error h² = 1e-6
        array([ 3.000001, 12.000001])
    """
    if not (isinstance(h, float | int) and not isinstance(h, bool) and np.isfinite(h) and h > 0):
        raise ValueError(f"the step h must be a positive finite number, got {h!r}")
    x = np.array(x, dtype=np.float64)  # a private copy, perturbed in place
    grad = np.empty_like(x)
    for i in np.ndindex(x.shape):
        x0 = x[i]
        x[i] = x0 + h
        up = f(x)
        x[i] = x0 - h
        down = f(x)
        x[i] = x0
        grad[i] = (up - down) / (2 * h)
    return grad


def relative_error(approx: ArrayLike, exact: ArrayLike) -> float:
    """Normwise relative error ``max |approx − exact| / max |exact|``.

    Examples:
        >>> from attention_math.gradcheck import relative_error
        >>> relative_error([1.0, 2.5], [1.0, 2.0])
        0.25
    """
    a, e = np.asarray(approx, dtype=np.float64), np.asarray(exact, dtype=np.float64)
    if a.shape != e.shape:
        raise ValueError(f"shapes differ: approx {a.shape}, exact {e.shape}")
    scale = float(np.max(np.abs(e)))
    err = float(np.max(np.abs(a - e)))
    return err / scale if scale > 0 else err


def step_size_sweep(
    f: Callable[[NDArray[np.float64]], float],
    x: ArrayLike,
    exact: ArrayLike,
    steps: Sequence[float],
) -> NDArray[np.float64]:
    """The relative error of the central difference at each step in ``steps``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.gradcheck import step_size_sweep
        >>> x = np.array([0.5])
        >>> err = step_size_sweep(lambda x: float(np.sin(x[0])), x, np.cos(x), [1e-1, 1e-2])
        >>> bool(90 < err[0] / err[1] < 110)   # h ten times smaller, error a hundred times
        True
    """
    return np.array([relative_error(central_difference(f, x, h), exact) for h in steps])
