"""Input checks shared by the NumPy modules (``numeric``, ``backward``, ``multihead``, …).

This module imports nothing of ``attention_math``: every module that validates arrays
imports from here, so the dependencies between them run one way, with no cycle.
Each check raises a ``TypeError`` or ``ValueError`` that names the argument and its shape,
before NumPy has a chance to fail deep inside with a message about something else.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "OVERFLOW",
    "CausalAlignment",
    "as_float",
    "causal_offset",
    "check_count",
    "check_flag",
    "check_mask",
    "check_qkv",
    "check_scale",
    "check_weight",
    "is_real_dtype",
    "work_dtype",
]

FLOATS = (np.float16, np.float32, np.float64)


def is_real_dtype(dtype: np.dtype) -> bool:
    """Integer or floating dtype (not bool), bfloat16 from ``ml_dtypes`` included.

    Examples:
        >>> import numpy as np
        >>> from attention_math._checks import is_real_dtype
        >>> is_real_dtype(np.dtype(np.float32)), is_real_dtype(np.dtype(bool))
        (True, False)
    """
    if dtype == np.bool_:
        return False
    integer_or_float = np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)
    return bool(integer_or_float) or dtype.name == "bfloat16"


def work_dtype(*arrays: NDArray[np.generic]) -> tuple[np.dtype, np.dtype]:
    """``(result, work)``: the dtype returned and the dtype computed in.

    Mixed dtypes promote as NumPy does (float16 with float32 gives float32); float16 and
    bfloat16 are computed in float32 (their sums lose too much) and returned in their own
    format. bfloat16 mixed with another format promotes to float32 (``ml_dtypes`` defines no
    promotion, and float32 holds every bfloat16 exactly).

    Examples:
        >>> import numpy as np
        >>> from attention_math._checks import work_dtype
        >>> work_dtype(np.ones(2, np.float16), np.ones(2, np.float32))
        (dtype('float32'), dtype('float32'))
        >>> work_dtype(np.ones(2, np.float16))
        (dtype('float16'), dtype('float32'))
    """
    dtypes = {a.dtype for a in arrays}
    if any(d.name == "bfloat16" for d in dtypes):
        if len(dtypes) == 1:
            return dtypes.pop(), np.dtype(np.float32)
        result = np.result_type(np.float32, *(d for d in dtypes if d.name != "bfloat16"))
        return result, result
    result = np.result_type(*arrays)
    return result, np.dtype(np.float32) if result == np.float16 else result


def as_float(
    name: str, x: ArrayLike, *, min_ndim: int = 1, allow_empty: bool = False
) -> NDArray[np.floating]:
    """``x`` as a float array; integers become float64; anything else is a TypeError.

    An empty dimension (a zero-length sequence, an empty batch) is refused unless
    ``allow_empty``: most callers (weights, one-off inputs) have no use for it, while
    ``attention`` returns PyTorch's empty result for it. ``bfloat16`` (the ``ml_dtypes``
    dtype, the only way NumPy holds one) is accepted as it is: callers compute in float32.

    Examples:
        >>> from attention_math._checks import as_float
        >>> as_float("q", [[1, 2]])
        array([[1., 2.]])
        >>> as_float("q", [[1, 2], [3]])
        Traceback (most recent call last):
        ...
        ValueError: q is ragged (rows of different lengths); give a rectangular array
    """
    try:
        a = np.asarray(x)
    except ValueError:  # NumPy's "inhomogeneous shape" message does not name the argument
        raise ValueError(
            f"{name} is ragged (rows of different lengths); give a rectangular array"
        ) from None
    if not is_real_dtype(a.dtype):
        raise TypeError(f"{name} must hold real numbers (int or float), got dtype {a.dtype}")
    if np.issubdtype(a.dtype, np.integer):
        a = a.astype(np.float64)
    elif a.dtype.name == "bfloat16":
        pass  # an ml_dtypes array: its owner installed ml_dtypes, we need not import it
    elif a.dtype.type not in FLOATS:  # e.g. longdouble: keep the reference to IEEE formats
        raise TypeError(
            f"{name} has dtype {a.dtype}; use float16, float32, float64 or bfloat16 (ml_dtypes)"
        )
    if a.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {a.shape}")
    if 0 in a.shape and not allow_empty:
        raise ValueError(f"{name} has an empty dimension: shape {a.shape}")
    if a.dtype.name == "bfloat16":  # NumPy's isfinite has no bfloat16 loop: check in float32
        finite = np.isfinite(a.astype(np.float32))
    else:
        finite = np.isfinite(a)
    if not finite.all():
        bad = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise ValueError(f"{name} contains NaN or ±inf (first at index {bad}, value {a[bad]})")
    return a


OVERFLOW = "the scores q kᵀ · scale overflow the {} range (NaN or +inf); rescale q and k"
"""The one wording of a score overflow, in every path (untiled, tiled, tiled backward);
``.format(dtype.name)``. Other overflows say the same: "X overflow(s) the float32 range;
rescale Y"."""

CausalAlignment = Literal["top-left", "bottom-right"]
"""Where the causal diagonal sits when ``L_q ≠ L_k``: ``"top-left"`` (query ``i`` sees keys
``0..i``) or ``"bottom-right"`` (the queries are the last ``L_q`` positions)."""


def causal_offset(n_q: int, n_k: int, causal_alignment: CausalAlignment) -> int:
    """The diagonal of a causal mask: query ``i`` sees key ``j`` iff ``j ≤ i + offset``.

    ``"top-left"`` gives 0; ``"bottom-right"`` gives ``n_k − n_q`` (the last query sees
    every key); any other value is a ``ValueError``.

    Examples:
        >>> from attention_math.numeric import causal_offset
        >>> causal_offset(2, 5, "top-left"), causal_offset(2, 5, "bottom-right")
        (0, 3)
        >>> causal_offset(2, 5, "lower-right")
        Traceback (most recent call last):
        ...
        ValueError: causal_alignment must be "top-left" or "bottom-right", got 'lower-right'
    """
    if causal_alignment == "top-left":
        return 0
    if causal_alignment == "bottom-right":
        return n_k - n_q
    raise ValueError(
        f'causal_alignment must be "top-left" or "bottom-right", got {causal_alignment!r}'
    )


def check_count(name: str, n: object, *, minimum: int = 1) -> int:
    """``n`` as an int ``≥ minimum`` (1: "a positive integer", 0: "a non-negative integer").

    A bool, a float or anything else that is not an integer is a ``TypeError``; an integer
    below ``minimum`` a ``ValueError``. Both messages word the problem the same way.

    Examples:
        >>> from attention_math._checks import check_count
        >>> check_count("block_size", 64)
        64
        >>> check_count("block_size", 0)
        Traceback (most recent call last):
        ...
        ValueError: block_size must be a positive integer, got 0
        >>> check_count("n_k", True, minimum=0)
        Traceback (most recent call last):
        ...
        TypeError: n_k must be a non-negative integer, got True
    """
    what = (
        "a positive integer"
        if minimum == 1
        else ("a non-negative integer" if minimum == 0 else f"an integer ≥ {minimum}")
    )
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"{name} must be {what}, got {n!r}")
    if n < minimum:
        raise ValueError(f"{name} must be {what}, got {n!r}")
    return int(n)


def check_flag(name: str, flag: object) -> bool:
    """``flag`` as a bool; anything but ``True``/``False`` (NumPy's bools included) is a
    ``TypeError`` (``is_causal=1`` is more likely a slip for an offset than a yes).

    Examples:
        >>> from attention_math._checks import check_flag
        >>> check_flag("is_causal", 1)
        Traceback (most recent call last):
        ...
        TypeError: is_causal must be True or False, got 1
    """
    if not isinstance(flag, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {flag!r}")
    return bool(flag)


def check_weight(name: str, w: ArrayLike, d_model: int, columns: str) -> NDArray[np.floating]:
    """``w`` as a float matrix of shape ``(d_model, ·)``; ``columns`` names the second axis
    in the error message (``"d_k"``, ``"n_heads·d"``, …)."""
    a = as_float(name, w, min_ndim=2)
    if a.ndim != 2 or a.shape[0] != d_model:
        raise ValueError(
            f"{name} must have shape (d_model, {columns}) with d_model = {d_model}, got {a.shape}"
        )
    return a


def check_scale(scale: object, d_k: int) -> float:
    """The factor on the scores: ``1/√d_k`` for ``None``, else a finite real ``≥ 0``."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, Real):
        raise TypeError(f"scale must be a real number, got {type(scale).__name__} {scale!r}")
    s = float(scale)
    if not math.isfinite(s) or s < 0:
        raise ValueError(f"scale must be finite and ≥ 0, got {scale!r}")
    return s


def check_mask(
    mask: ArrayLike, scores_shape: tuple[int, ...]
) -> tuple[NDArray[np.bool_] | NDArray[np.floating], tuple[int, ...]]:
    """Validate ``mask``; return it with the shape of the scores it applies to.

    The mask must broadcast to ``scores_shape`` without enlarging it (the batch dimensions
    of the output are those of ``q``, ``k``, ``v``), as in PyTorch.

    Examples:
        >>> import numpy as np
        >>> from attention_math._checks import check_mask
        >>> check_mask(np.ones((2, 1, 1, 4), bool), (2, 4, 4))
        Traceback (most recent call last):
        ...
        ValueError: mask of shape (2, 1, 1, 4) would enlarge the scores' shape (2, 4, 4) = ...
    """
    m = np.asarray(mask)
    if m.dtype != np.bool_ and not np.issubdtype(m.dtype, np.floating):
        raise TypeError(
            f"mask must be boolean (True = may attend) or float (added to the scores), "
            f"got dtype {m.dtype}"
        )
    if m.dtype != np.bool_ and (np.isnan(m).any() or np.isposinf(m).any()):
        raise ValueError("an additive mask may hold finite values and -inf only, not NaN or +inf")
    try:
        full: tuple[int, ...] | None = np.broadcast_shapes(m.shape, scores_shape)
    except ValueError:
        full = None
    if full is None or full[-2:] != scores_shape[-2:]:
        raise ValueError(
            f"mask of shape {m.shape} is not broadcastable to the scores' shape "
            f"{scores_shape} = (..., L_q, L_k)"
        )
    if full != scores_shape:
        # PyTorch raises here too: a mask such as (B, 1, 1, L) against (B, L, L) scores would
        # silently turn B sequences into B × B outputs.
        raise ValueError(
            f"mask of shape {m.shape} would enlarge the scores' shape {scores_shape} = "
            f"(..., L_q, L_k) to {full}: a mask may not add or stretch batch dimensions "
            "beyond those of q, k and v"
        )
    return m, full


def check_qkv(
    q: ArrayLike, k: ArrayLike, v: ArrayLike
) -> tuple[NDArray[np.floating], NDArray[np.floating], NDArray[np.floating], tuple[int, ...]]:
    """Validate ``q``, ``k``, ``v`` as float arrays of compatible shapes; return them and the
    broadcast shape of their leading (batch) dimensions."""
    qa = as_float("q", q, min_ndim=2, allow_empty=True)  # L = 0 or B = 0: an empty result
    ka = as_float("k", k, min_ndim=2, allow_empty=True)
    va = as_float("v", v, min_ndim=2, allow_empty=True)
    if qa.shape[-1] == 0:
        raise ValueError(f"q and k have an empty dimension d_k = 0: q has shape {qa.shape}")
    if qa.shape[-1] != ka.shape[-1]:
        raise ValueError(
            f"q and k must share d_k (last axis): q has shape {qa.shape}, k has shape {ka.shape}"
        )
    if ka.shape[-2] != va.shape[-2]:
        raise ValueError(
            f"k and v must share L_k (second-to-last axis): k has shape {ka.shape}, "
            f"v has shape {va.shape}"
        )
    try:
        batch = np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2], va.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading (batch) dimensions do not broadcast: q {qa.shape}, k {ka.shape}, v {va.shape}"
        ) from None
    return qa, ka, va, batch
