"""An output row of attention lies in the convex hull of the value rows it may see.

``o_i = Σ_j P_ij v_j`` with ``P_ij ≥ 0`` and ``Σ_j P_ij = 1`` is a convex combination. The
check here is a hull test, independent of ``P``: exact barycentric coordinates over
affinely independent subsets of the values (Carathéodory: a point of the hull of points whose
affine hull has dimension ``r`` is a convex combination of ``r + 1`` affinely independent ones).
A per-column range test is weaker: a point can lie inside every column's range and outside
the hull.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

__all__ = ["in_column_ranges", "in_hull"]


def _exact(a: ArrayLike, name: str) -> sp.Matrix:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 2 or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be a finite 2-D array, got shape {arr.shape}")
    return sp.Matrix([[sp.Rational(float(e)) for e in row] for row in arr])  # exact binary values


def in_hull(values: ArrayLike, point: ArrayLike) -> bool:
    """Whether ``point`` (length ``d``) lies in the convex hull of the rows of ``values`` (n, d).

    Exact: the float inputs are read as the rationals they are.

    Raises:
        ValueError: the point and the value rows have different numbers of coordinates.

    Examples:
        >>> from attention_math.derivations.convex_hull import in_hull
        >>> square = [[0, 0], [1, 0], [0, 1], [1, 1]]
        >>> in_hull(square, [0.5, 0.25]), in_hull(square, [1.5, 0.5])
        (True, False)
        >>> in_hull([[0, 0], [1, 1]], [1, 0])   # in both coordinate ranges, not on the segment
        False
    """
    v = _exact(values, "values")  # (n, d)
    x = _exact(np.atleast_2d(point), "point")  # (1, d)
    if x.shape != (1, v.cols):
        raise ValueError(f"point has {x.cols} coordinates, values have {v.cols}")
    rank = (v[1:, :] - sp.ones(v.rows - 1, 1) * v[0, :]).rank() if v.rows > 1 else 0
    target = x.T.col_join(sp.Matrix([1]))  # (d + 1, 1)
    for subset in combinations(range(v.rows), rank + 1):
        a = v.extract(list(subset), list(range(v.cols))).T.col_join(sp.ones(1, rank + 1))
        if a.rank() < rank + 1:  # affinely dependent: another subset covers it
            continue
        lam = (a.T * a).inv() * a.T * target  # (rank + 1, 1): barycentric coordinates
        if a * lam == target and all(c >= 0 for c in lam):
            return True
    return False


def in_column_ranges(values: ArrayLike, point: ArrayLike) -> bool:
    """The weaker test: each coordinate of ``point`` lies between its column's min and max.

    Examples:
        >>> from attention_math.derivations.convex_hull import in_column_ranges
        >>> in_column_ranges([[0, 0], [1, 1]], [1, 0])
        True
    """
    v = np.asarray(values, dtype=np.float64)  # (n, d)
    x = np.asarray(point, dtype=np.float64)  # (d,)
    return bool(np.all((x >= v.min(axis=0)) & (x <= v.max(axis=0))))
