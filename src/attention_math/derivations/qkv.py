"""What distinguishes queries, keys and values: where each enters the formula.

``Q`` and ``K`` enter only through the scores ``S = QKᵀ = X W_Q W_Kᵀ Xᵀ``: the bilinear form
``W_Q W_Kᵀ`` (``d_model × d_model``) has rank at most ``d_k``, and it is unchanged when
``W_Q → W_Q A`` and ``W_K → W_K A^{−ᵀ}`` for any invertible ``A``, so ``W_Q`` and ``W_K`` are
not separately identifiable. ``V`` enters after the softmax and linearly: ``O = P X W_V``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from attention_math.derivations._once import derived_once
from attention_math.symbolic import generic_matrix

__all__ = ["QKV", "qkv_roles"]


@dataclass(frozen=True)
class QKV:
    """Exact facts about the roles of ``W_Q``, ``W_K``, ``W_V`` for generic entries."""

    d_model: int
    d_k: int
    form: sp.Matrix  # W_Q W_Kᵀ, (d_model, d_model)
    rank: int  # rank of the form for generic entries, proved by its minors
    minors_vanish: bool  # every (d_k + 1)-minor of the form is identically zero
    invariant: bool  # W_Q A (W_K A^{-T})ᵀ == W_Q W_Kᵀ for a generic invertible A
    scores_through_form: bool  # (X W_Q)(X W_K)ᵀ == X (W_Q W_Kᵀ) Xᵀ
    linear_in_v: bool  # O(W_V + W_V') == O(W_V) + O(W_V') with the same weights P


@derived_once
def qkv_roles(d_model: int = 3, d_k: int = 2, length: int = 2) -> QKV:
    """Check, exactly and for generic symbolic entries, where ``W_Q``, ``W_K``, ``W_V`` enter.

    Raises:
        ValueError: unless ``0 < d_k < d_model`` (integers).
        ArithmeticError: if the form's minors contradicted its rank ``d_k`` (they cannot).

    Examples:
        >>> from attention_math.derivations.qkv import qkv_roles
        >>> r = qkv_roles()
        >>> r.rank, r.minors_vanish, r.invariant, r.scores_through_form, r.linear_in_v
        (2, True, True, True, True)
    """
    if not (isinstance(d_k, int) and isinstance(d_model, int) and 0 < d_k < d_model):
        raise ValueError(f"need integers 0 < d_k < d_model, got d_k={d_k!r}, d_model={d_model!r}")
    x = generic_matrix("x", length, d_model)  # (L, d_model)
    w_q = generic_matrix("a", d_model, d_k)  # (d_model, d_k)
    w_k = generic_matrix("b", d_model, d_k)  # (d_model, d_k)
    form = w_q * w_k.T  # (d_model, d_model)
    minors = [  # every (d_k + 1) × (d_k + 1) minor: zero for all entries ⇔ rank ≤ d_k
        # (Berkowitz: division-free, so the determinant stays a polynomial; 3× faster here)
        sp.expand(form.extract(list(rows), list(cols)).det(method="berkowitz"))
        for rows in _subsets(d_model, d_k + 1)
        for cols in _subsets(d_model, d_k + 1)
    ]
    a = generic_matrix("m", d_k, d_k)  # (d_k, d_k), invertible for generic entries
    moved = (w_q * a) * (w_k * a.inv().T).T  # (d_model, d_model)
    # cancel: each entry as one reduced fraction p/q, which is 0 exactly when it is 0
    invariant = (moved - form).applyfunc(sp.cancel).is_zero_matrix
    through = sp.expand((x * w_q) * (x * w_k).T - x * form * x.T).is_zero_matrix
    p = generic_matrix("p", length, length)  # (L, L): weights, whatever they are
    w_v, w_v2 = generic_matrix("c", d_model, 2), generic_matrix("e", d_model, 2)  # (d_model, d_v)
    linear = sp.expand(p * x * (w_v + w_v2) - p * x * w_v - p * x * w_v2).is_zero_matrix
    # rank ≥ d_k generically: the leading d_k-minor is det(W_Q[:d_k]) det(W_K[:d_k]) (a
    # product of two square blocks), a polynomial that is not zero; with the (d_k + 1)-minors
    # all zero, the generic rank is exactly d_k. (One integer point can fall on a zero of it.)
    leading = sp.expand(form.extract(list(range(d_k)), list(range(d_k))).det())
    vanish = all(m == 0 for m in minors)
    if leading == 0 or not vanish:
        raise ArithmeticError(f"the form W_Q W_Kᵀ does not have generic rank d_k = {d_k}")
    return QKV(
        d_model,
        d_k,
        form,
        d_k,
        vanish,
        bool(invariant),
        bool(through),
        bool(linear),
    )


def _subsets(n: int, k: int) -> list[tuple[int, ...]]:
    from itertools import combinations

    return list(combinations(range(n), k))
