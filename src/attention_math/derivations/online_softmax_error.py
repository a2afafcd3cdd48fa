"""How accurate is the tiled (online) softmax? Measured against many-digit references.

The reference is computed with mpmath from the *same* floating-point inputs, so what is
measured is the error of the algorithm alone, in units of the dtype's ε, row-normwise:
``max_i max_j |ô_ij − o_ij| / (ε · max_j |o_ij|)``. The reference is kept as a float64 pair
``hi + lo`` (a `ReferenceValue`): rounded to float64 alone it would move a float64
measurement by up to 0.5 ε.

Two ways to finish a softmax are compared (Blanchard, Higham & Higham 2021, "Accurately
computing the log-sum-exp and softmax functions", IMA J. Numer. Anal. 41(4)):

* shifted, with a division: ``exp(s − m) / Σ exp(s − m)``; the tiled path's ``o / λ``;
* division-free: ``exp(s − lse)`` with ``lse = m + log λ`` (the form a backward pass uses
  to recompute the weights). The rounding error of ``lse`` is about ``|lse| · ε`` in
  absolute terms and it enters *every* weight, so the error grows with the size of the
  scores; the shifted form's error does not.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from attention_math.derivations.softmax_stability import BLANCHARD_HIGHAM_HIGHAM
from attention_math.tiled import tiled_attention

__all__ = [
    "REFERENCE",
    "ReferenceValue",
    "division_free",
    "online",
    "reference",
    "reference_softmax",
    "row_error_eps",
]

REFERENCE = BLANCHARD_HIGHAM_HIGHAM
"""The published source audited on the page: the one record ``softmax_stability`` holds."""

_DPS = 40


@dataclass(frozen=True)
class ReferenceValue:
    """A many-digit result as two float64 arrays: the value is ``hi + lo``, ``hi`` its float64
    rounding and ``lo`` the rest (about 32 digits in all). ``np.asarray`` gives ``hi``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.online_softmax_error import reference_softmax
        >>> r = reference_softmax([[0.0, 0.0, 0.0]], [[0.0], [0.0], [1.0]])
        >>> np.asarray(r), r.lo[0, 0] != 0  # 1/3 is not a float64
        (array([[0.33333333]]), np.True_)
    """

    hi: NDArray[np.float64]
    lo: NDArray[np.float64]

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the result."""
        return tuple(self.hi.shape)

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        return self.hi if dtype is None else self.hi.astype(dtype)


def reference(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, *, scale: float = 1.0, rows: int | None = None
) -> ReferenceValue:
    """``softmax(q kᵀ · scale) v`` for the first ``rows`` queries, to 40 digits (kept as a
    float64 pair, `ReferenceValue`).

    Every input float is taken exactly; products, sums and ``exp`` run in mpmath.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.online_softmax_error import reference
        >>> np.asarray(reference(np.zeros((1, 2)), np.zeros((2, 2)), [[1.0], [2.0]]))
        array([[1.5]])
    """
    q, k, v = (np.asarray(a) for a in (q, k, v))
    n = q.shape[0] if rows is None else min(rows, q.shape[0])
    with mpmath.workdps(_DPS):
        km = [[mpmath.mpf(float(x)) for x in row] for row in k]
        sc = mpmath.mpf(float(scale))
        s = [
            [
                sc * mpmath.fsum(mpmath.mpf(float(a)) * b for a, b in zip(q[i], kj, strict=True))
                for kj in km
            ]
            for i in range(n)
        ]
        return _softmax_times(s, v)


def reference_softmax(scores: ArrayLike, v: ArrayLike) -> ReferenceValue:
    """``softmax(scores) v`` row by row, to 40 digits (kept as a float64 pair,
    `ReferenceValue`), scores taken exactly.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.online_softmax_error import reference_softmax
        >>> np.asarray(reference_softmax([[0.0, 0.0]], [[1.0], [2.0]]))
        array([[1.5]])
    """
    with mpmath.workdps(_DPS):
        s = [[mpmath.mpf(float(x)) for x in row] for row in np.asarray(scores)]
        return _softmax_times(s, v)


def _softmax_times(s: list[list[mpmath.mpf]], v: ArrayLike) -> ReferenceValue:
    vm = [[mpmath.mpf(float(x)) for x in row] for row in np.asarray(v)]
    hi = np.empty((len(s), len(vm[0])))
    lo = np.empty_like(hi)
    for i, row in enumerate(s):
        m = max(row)
        w = [mpmath.exp(x - m) for x in row]
        z = mpmath.fsum(w)
        for c in range(hi.shape[1]):
            o = mpmath.fsum(wj * vj[c] for wj, vj in zip(w, vm, strict=True)) / z
            hi[i, c] = float(o)
            lo[i, c] = float(o - mpmath.mpf(hi[i, c]))
    return ReferenceValue(hi, lo)


def row_error_eps(
    approx: ArrayLike, ref: ArrayLike | ReferenceValue, dtype: DTypeLike | None = None
) -> float:
    """Row-normwise error of ``approx`` in units of ε (of ``dtype``, default approx's).

    A `ReferenceValue` is read with its ``lo`` part, so a float64 result is not measured against
    a rounded float64 reference.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.online_softmax_error import row_error_eps
        >>> eps = np.finfo(np.float32).eps
        >>> row_error_eps(np.float32([[1 + eps, 2]]), [[1.0, 2.0]])  # |err| 1 ε, row max 2
        0.5
    """
    a = np.asarray(approx)
    if isinstance(ref, ReferenceValue):
        hi, lo = ref.hi, ref.lo
    else:
        hi, lo = np.asarray(ref, np.float64), np.zeros(1)
    eps = float(np.finfo(a.dtype if dtype is None else np.dtype(dtype)).eps)
    err = np.abs((a.astype(np.float64) - hi) - lo).max(axis=-1)  # a − hi: exact when close
    size = np.abs(hi).max(axis=-1)
    return float((err / (eps * np.where(size == 0, 1, size))).max())


def online(scores: ArrayLike, v: ArrayLike, block_size: int) -> NDArray[np.floating]:
    """Softmax(scores) · v by the tiled engine: shifts per tile, one division at the end.

    ``scores`` are fed as ``q`` against ``k = I`` with scale 1, which reproduces them
    exactly (products by 1 and sums of zeros do not round).

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.online_softmax_error import online
        >>> online(np.float64([[0.0, 0.0]]), np.float64([[1.0], [3.0]]), block_size=1)
        array([[2.]])
    """
    s = np.asarray(scores)
    eye = np.eye(s.shape[-1], dtype=s.dtype)
    va = np.asarray(v, dtype=s.dtype)
    return tiled_attention(s, eye, va, scale=s.dtype.type(1), block_size=(8, block_size))


def division_free(scores: ArrayLike, v: ArrayLike) -> NDArray[np.floating]:
    """``exp(s − lse) · v`` with ``lse = m + log Σ exp(s − m)``: no division, same dtype.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.online_softmax_error import division_free
        >>> division_free(np.float64([[0.0, 0.0]]), np.float64([[1.0], [3.0]]))
        array([[2.]])
    """
    s = np.asarray(scores)
    m = s.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(axis=-1, keepdims=True))
    out: NDArray[np.floating] = np.exp(s - lse) @ np.asarray(v, dtype=s.dtype)
    return out
