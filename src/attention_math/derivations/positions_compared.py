"""Positions side by side, exactly: T5's buckets in integer arithmetic, ALiBi's far weight as
a geometric tail, and which rotary pairs leave the angles of training.

`exact_t5_bucket` decides T5's logarithmic floor by comparing integers (no logarithm is
evaluated), so the float32 function of the T5 code can be checked against it offset by offset.
`alibi_far_weight_exact` sums ALiBi's weights in closed form; `unseen_pairs_exact` compares
each pair's angle range with ``2π`` exactly.
"""

from __future__ import annotations

import sympy as sp

from attention_math.crosscheck import CrossCheck, crosscheck
from attention_math.derivations._once import derived_once

__all__ = [
    "alibi_far_weight_exact",
    "check_alibi_far_weight",
    "exact_t5_bucket",
    "unseen_pairs_exact",
]


def exact_t5_bucket(
    relative_position: int,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> int:
    """T5's bucket of one offset ``key − query``, with the logarithmic bin decided exactly.

    The bin ``e + ⌊ln(δ/e)/ln(D/e) · (n − e)⌋`` (``e = n/2`` exact buckets, ``D`` the
    max distance) is the largest ``e + j`` with ``(δ/e)^(n−e) ≥ (D/e)^j``, that is
    ``δ^(n−e) · e^j ≥ D^j · e^(n−e)``: integers only.

    Examples:
        >>> from attention_math.derivations.positions_compared import exact_t5_bucket
        >>> [exact_t5_bucket(r) for r in (-3, 0, 3, 20, 200)]
        [3, 0, 19, 26, 31]
    """
    n, out, delta = num_buckets, 0, relative_position
    if bidirectional:
        n //= 2
        out += n if delta > 0 else 0
        delta = abs(delta)
    else:
        delta = max(-delta, 0)
    e = n // 2
    if delta < e:
        return out + delta
    m = n - e
    j = 0
    while j + 1 < m and delta**m * e ** (j + 1) >= max_distance ** (j + 1) * e**m:
        j += 1
    return out + e + j


def alibi_far_weight_exact(slope: sp.Expr, train_len: int, test_len: int) -> sp.Expr:
    """``Σ_{r=L}^{T−1} e^(−m r) / Σ_{r=0}^{T−1} e^(−m r)`` summed by SymPy and simplified.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.positions_compared import alibi_far_weight_exact
        >>> alibi_far_weight_exact(sp.log(2), 2, 4)
        1/5
    """
    r = sp.Symbol("r", integer=True, nonnegative=True)
    term = sp.exp(-slope * r)
    far = sp.summation(term, (r, train_len, test_len - 1))
    total = sp.summation(term, (r, 0, test_len - 1))
    return sp.nsimplify(sp.simplify(far / total))


def check_alibi_far_weight(n_heads: int, train_len: int, test_len: int) -> CrossCheck:
    """The float64 `positional.alibi_far_weight` of every head against the closed form
    ``(x^L − x^T)/(1 − x^T)``, ``x = e^(−m)`` with the exact slopes ``m = 2^(−e_k)``.

    Raises:
        CrossCheckError: if a head disagrees by more than 64 ε of the largest weight.

    Examples:
        >>> from attention_math.derivations.positions_compared import check_alibi_far_weight
        >>> check_alibi_far_weight(8, 16, 64).passed
        True
    """

    from attention_math.positional import alibi_exponents, alibi_far_weight

    got = alibi_far_weight(n_heads, train_len, test_len)  # (h,)
    exact = []
    for e in alibi_exponents(n_heads):
        x = sp.exp(-(sp.Integer(2) ** -sp.Rational(e.numerator, e.denominator)))
        exact.append((x**train_len - x**test_len) / (1 - x**test_len))
    # normwise, relative to the largest weight: the steep heads' weights are below 1e-300,
    # where float64 has no relative precision left (subnormal), only absolute
    return crosscheck(sp.Matrix([exact]), got, bound_eps=64, label="ALiBi far weight")


@derived_once
def unseen_pairs_exact(d: int, *, base: int, train_len: int) -> int:
    """How many rotary pairs turn less than once within ``train_len`` positions:
    ``train_len · base^(−2i/d) < 2π``, decided exactly. Without scaling, every such pair
    reaches new angles at any longer length.

    Examples:
        >>> from attention_math.derivations.positions_compared import unseen_pairs_exact
        >>> unseen_pairs_exact(128, base=10000, train_len=4096)
        18
    """
    b = sp.Integer(base)
    return sum(1 for k in range(0, d, 2) if bool(train_len * b ** sp.Rational(-k, d) < 2 * sp.pi))
