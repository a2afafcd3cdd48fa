"""Scores that say what a head does, as the papers define them.

- ``previous_token_score``: the mean weight a query puts on the token just before it.
- ``prefix_matching_score`` (Olsson et al., 2022): on a sequence where tokens recur, the
  mean weight a query puts on the token *after* an earlier occurrence of itself — where an
  induction head looks.
- ``copying_score`` (Elhage et al., 2021): of the full OV circuit ``W_E W_OV W_U``
  (``vocab × vocab``: which logits a head raises for the token it attends to), the ratio
  ``Σ λᵢ / Σ |λᵢ|`` of its eigenvalues; near 1 when the head raises the logit of the very
  token it attends to, i.e. copies.
- ``composition_score`` (Elhage et al., 2021): ``‖A B‖_F / (‖A‖_F ‖B‖_F)``, how much a
  later head's circuit reads what an earlier head's OV writes. K-composition is
  ``A = W_QK`` of the layer-2 head and ``B = W_OVᵀ`` of the layer-1 head: the keys of the
  layer-2 head made of what the layer-1 head moved.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float

__all__ = [
    "composition_score",
    "copying_score",
    "k_composition_score",
    "prefix_matching_score",
    "previous_token_score",
]


def _pattern(pattern: ArrayLike) -> NDArray[np.floating]:
    p = as_float("pattern", pattern, min_ndim=2)
    if p.shape[-1] != p.shape[-2]:
        raise ValueError(f"pattern must be square in its last two axes (L, L), got {p.shape}")
    return p


def previous_token_score(pattern: ArrayLike) -> float:
    """Mean over queries ``i ≥ 1`` (and any leading axes) of ``pattern[..., i, i − 1]``.

    Args:
        pattern: one head's attention weights, ``(..., L, L)`` (row = query).

    Raises:
        ValueError: ``pattern`` is not square in its last two axes, or ``L < 2``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.scores import previous_token_score
        >>> previous_token_score(np.eye(4, k=-1) + np.eye(4) * [1, 0, 0, 0])
        1.0
    """
    p = _pattern(pattern)
    if p.shape[-1] < 2:
        raise ValueError(f"pattern needs L ≥ 2 for a previous token, got {p.shape}")
    return float(np.diagonal(p, offset=-1, axis1=-2, axis2=-1).mean())


def prefix_matching_score(pattern: ArrayLike, tokens: ArrayLike) -> float:
    """Mean, over the queries whose token occurred before, of the weight on the positions
    right after those earlier occurrences.

    For query ``i`` with ``tokens[j] == tokens[i]`` for some ``j < i``, the head scores
    ``Σ_j pattern[i, j + 1]``; queries whose token is new count for nothing (they are left
    out of the mean). On a repeated random sequence this is the weight from each token of
    the copy on the token after its first occurrence.

    Args:
        pattern: one head's attention weights, ``(..., L, L)``.
        tokens: ``(..., L)``, the token ids, broadcast against ``pattern``'s leading axes.

    Raises:
        ValueError: the shapes do not fit, or no token recurs.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.scores import prefix_matching_score
        >>> tokens = np.array([5, 6, 7, 5, 6, 7])
        >>> ideal = np.zeros((6, 6)); ideal[[0, 1, 2], 0] = 1
        >>> ideal[[3, 4, 5], [1, 2, 3]] = 1  # each copy looks where its token came next
        >>> prefix_matching_score(ideal, tokens)
        1.0
    """
    p = _pattern(pattern)
    t = np.asarray(tokens)
    length = p.shape[-1]
    if t.shape[-1:] != (length,):
        raise ValueError(f"tokens must have shape (..., L) with L = {length}, got {t.shape}")
    t = np.broadcast_to(t, (*np.broadcast_shapes(t.shape[:-1], p.shape[:-2]), length))
    p = np.broadcast_to(p, (*t.shape, length))
    same = t[..., :, None] == t[..., None, :]  # (..., L, L): same token at i and j
    earlier = same & np.tri(length, k=-1, dtype=np.bool_)  # j < i
    target = np.zeros_like(earlier)
    target[..., :, 1:] = earlier[..., :, :-1]  # (..., L, L): j + 1 for each earlier j
    counted = earlier.any(axis=-1)  # (..., L): queries whose token occurred before
    if not counted.any():
        raise ValueError("no token recurs in tokens: the prefix-matching score is undefined")
    per_query = np.where(target, p, 0.0).sum(axis=-1)  # (..., L)
    return float(per_query[counted].mean())


def copying_score(full_ov: ArrayLike) -> float:
    """``Σ λᵢ / Σ |λᵢ|`` over the eigenvalues of a square circuit (their real parts summed).

    Args:
        full_ov: ``W_E W_OV W_U``, ``(vocab, vocab)``: row = attended token, column = logit.

    Raises:
        ValueError: the matrix is not square.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.scores import copying_score
        >>> copying_score(np.eye(3)), copying_score(-np.eye(3))
        (1.0, -1.0)
    """
    a = as_float("full_ov", full_ov, min_ndim=2)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"full_ov must be a square matrix, got shape {a.shape}")
    lam = np.linalg.eigvals(a)  # (vocab,), complex in general
    return float(lam.sum().real / np.abs(lam).sum())


def composition_score(a: ArrayLike, b: ArrayLike) -> float:
    """``‖A B‖_F / (‖A‖_F ‖B‖_F)``: 0 when ``A`` ignores ``B``'s output, at most 1.

    Raises:
        ValueError: the shapes do not multiply, or a matrix is zero.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.scores import composition_score
        >>> composition_score(np.diag([1.0, 0]), np.diag([1.0, 0]))
        1.0
        >>> composition_score(np.diag([1.0, 0]), np.diag([0, 1.0]))
        0.0
    """
    x = as_float("a", a, min_ndim=2)
    y = as_float("b", b, min_ndim=2)
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
        raise ValueError(f"a @ b needs (m, n) and (n, p) matrices, got {x.shape} and {y.shape}")
    norms = float(np.linalg.norm(x)) * float(np.linalg.norm(y))
    if norms == 0:
        raise ValueError("composition_score of a zero matrix is undefined (0/0)")
    return float(np.linalg.norm(x @ y)) / norms


def k_composition_score(qk_later: ArrayLike, ov_earlier: ArrayLike) -> float:
    """K-composition of a later head (its ``W_QK``) with an earlier one (its ``W_OV``).

    In the row-vector convention (``scores = x W_QK xᵀ``, the earlier head writes
    ``x W_OV``), keys made of the earlier head's output give ``x W_QK (x W_OV)ᵀ``, so the
    product is ``W_QK W_OVᵀ`` (Elhage et al.'s ``W_QK W_OV`` in their column convention).

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.scores import k_composition_score
        >>> k_composition_score(np.eye(2), np.eye(2)).__round__(4)  # ‖I‖/(‖I‖‖I‖) = 1/√2
        0.7071
    """
    return composition_score(qk_later, np.asarray(ov_earlier).T)
