"""Why several heads: two attention patterns at once, and what ``h`` heads cost.

A head's output row is *one* weighted average of the value rows: every output column uses the
same weights. Two heads of width ``d/2`` carry two sets of weights, so one output block can
read "the previous token" while the other reads "the first token"; one head of width ``d``
with the same queries and keys adds the two score patterns and blends them
([Vaswani et al., 2017](https://arxiv.org/abs/1706.03762): "different representation
subspaces at different positions").

The example: four tokens, keys on the unit circle (token ``j`` at the angle ``(j − 1)π/2``),
queries ``c`` times a key, so a query scores ``c`` on the key it points at, ``0`` on the two
neighbours at a right angle and ``−c`` on the opposite one. With ``c = √2 · log 100`` a head of
width 2 (scale ``1/√2``) turns a match into the scaled score ``log 100``, and the weights are
fractions. The values of both heads are the token's number, ``1 … 4``.

The cost: with ``d_k = d_v = d/h``, the matrix products and the parameters do not depend on
``h``; only the softmax's elementwise work (``7 h L_q L_k`` FLOPs in
[`cost`][attention_math.derivations.cost]'s count) and the scores' memory (``h L_q L_k``)
grow with the number of heads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from attention_math._lazy import np

if TYPE_CHECKING:  # NumPy's types only: the module imports without NumPy (the reader's browser)
    from numpy.typing import NDArray
import sympy as sp

from attention_math import symbolic
from attention_math._lazy import numeric
from attention_math.derivations import cost
from attention_math.derivations._once import derived_once

__all__ = [
    "C",
    "TwoPatterns",
    "cost_difference",
    "matmul_flops",
    "one_head_columns_equal",
    "parameter_difference",
    "two_patterns",
    "two_patterns_numeric",
]

C = sp.sqrt(2) * sp.log(100)
"""The length of the queries: a match scores ``log 100`` after a head's ``1/√2``."""

d = sp.Symbol("d", positive=True)  # the total width d_model = h · d_head


@dataclass(frozen=True)
class TwoPatterns:
    """The example's inputs and results, exact.

    ``q_a``/``q_b`` are the two heads' queries (``L × 2``), ``k`` the keys both heads share
    (``L × 2``), ``v`` the value column (``L × 1``, the token's number). ``p_a``, ``p_b`` are the
    two heads' weights, ``p_one`` the weights of one head of width 4 whose queries are
    ``[q_a | q_b]`` and keys ``[k | k]``; ``two_heads`` (``L × 2``) is the concatenated output of
    the two heads, ``one_head`` (``L × 2``) that of the wide head with values ``[v | v]``.
    """

    q_a: sp.Matrix
    q_b: sp.Matrix
    k: sp.Matrix
    v: sp.Matrix
    mask: sp.Matrix
    p_a: sp.Matrix
    p_b: sp.Matrix
    p_one: sp.Matrix
    two_heads: sp.Matrix
    one_head: sp.Matrix


def _circle(j: int) -> list[sp.Expr]:
    """The unit vector at the angle ``j π/2`` (exact: its entries are 0 and ±1)."""
    return [sp.cos(j * sp.pi / 2), sp.sin(j * sp.pi / 2)]


def _causal(n: int) -> sp.Matrix:
    return sp.Matrix(n, n, lambda i, j: 0 if j <= i else -sp.oo)  # additive causal mask


@derived_once
def two_patterns(length: int = 4) -> TwoPatterns:
    """The example, exactly: head A reads the previous token, head B the first token.

    Raises:
        ValueError: ``length`` is not an integer from 2 to 4 (four directions on the circle
            tell at most four keys apart).

    Examples:
        >>> from attention_math.derivations.heads import two_patterns
        >>> ex = two_patterns()
        >>> ex.p_a.row(2)  # token 3 puts 100/102 on token 2
        Matrix([[1/102, 50/51, 1/102, 0]])
        >>> ex.p_b.row(2)  # and head B 10000/10101 on token 1
        Matrix([[10000/10101, 100/10101, 1/10101, 0]])
    """
    if isinstance(length, bool) or not isinstance(length, int) or not 2 <= length <= 4:
        raise ValueError(f"length must be an integer from 2 to 4, got {length!r}")
    k = sp.Matrix([_circle(j) for j in range(length)])  # (L, 2): token j+1 at angle jπ/2
    q_a = sp.Matrix([[C * x for x in _circle(max(i - 1, 0))] for i in range(length)])  # (L, 2)
    q_b = sp.Matrix([[C * x for x in _circle(0)] for _ in range(length)])  # (L, 2)
    v = sp.Matrix([[j + 1] for j in range(length)])  # (L, 1): the token's number
    mask = _causal(length)
    half = 1 / sp.sqrt(2)  # a head of width 2 scales by 1/√2
    p_a = symbolic.softmax(symbolic.scores(q_a, k, scale=half) + mask).applyfunc(sp.simplify)
    p_b = symbolic.softmax(symbolic.scores(q_b, k, scale=half) + mask).applyfunc(sp.simplify)
    q_one = sp.Matrix.hstack(q_a, q_b)  # (L, 4): the same numbers, one head
    k_one = sp.Matrix.hstack(k, k)  # (L, 4)
    s_one = symbolic.scores(q_one, k_one, scale=sp.Rational(1, 2)) + mask  # scale 1/√4
    p_one = symbolic.softmax(s_one).applyfunc(sp.simplify)
    two_heads = sp.Matrix.hstack(p_a * v, p_b * v).applyfunc(sp.simplify)  # (L, 2)
    one_head = (p_one * sp.Matrix.hstack(v, v)).applyfunc(sp.simplify)  # (L, 2)
    return TwoPatterns(q_a, q_b, k, v, mask, p_a, p_b, p_one, two_heads, one_head)


@derived_once
def two_patterns_numeric(length: int = 4) -> dict[str, NDArray[np.float64]]:
    """The same example in NumPy: ``numeric.attention`` with the head as a batch axis.

    Returns ``p_a``, ``p_b``, ``p_one`` (weights) and ``two_heads``, ``one_head`` (outputs).

    Examples:
        >>> from attention_math.derivations.heads import two_patterns_numeric
        >>> out = two_patterns_numeric()
        >>> out["two_heads"][:, 0].round(2)  # head A: about the previous token's number
        array([1.  , 1.01, 2.  , 3.  ])
        >>> out["one_head"][:, 0].round(2)  # one wide head: a blend
        array([1. , 1. , 1.5, 2.5])
    """
    ex = two_patterns(length)

    def f(m: sp.Matrix) -> NDArray[np.float64]:
        return np.array(m.evalf(30).tolist(), dtype=np.float64)

    q = np.stack([f(ex.q_a), f(ex.q_b)])  # (h=2, L, 2)
    k = np.stack([f(ex.k), f(ex.k)])  # (2, L, 2)
    v = np.stack([f(ex.v), f(ex.v)])  # (2, L, 1)
    causal = numeric.causal_mask(length)  # (L, L), True where a key is visible
    heads = numeric.attention(q, k, v, mask=causal)  # (2, L, 1)
    p = numeric.attention_weights(q, k, v, mask=causal)  # (2, L, L)
    q_one = np.concatenate([q[0], q[1]], axis=-1)  # (L, 4)
    k_one = np.concatenate([k[0], k[1]], axis=-1)  # (L, 4)
    v_one = np.concatenate([v[0], v[1]], axis=-1)  # (L, 2): the values, side by side
    one = numeric.attention(q_one, k_one, v_one, mask=causal)  # (L, 2)
    p_one = numeric.attention_weights(q_one, k_one, v_one, mask=causal)  # (L, L)
    return {
        "p_a": p[0],
        "p_b": p[1],
        "p_one": p_one,
        "two_heads": np.concatenate([heads[0], heads[1]], axis=-1),  # (L, 2)
        "one_head": one,
    }


def one_head_columns_equal(length: int = 3) -> bool:
    """True when, for generic weights (each row summing to 1), one head with the values
    ``[v | v]`` gives two equal output columns: the same weights read both copies.

    Examples:
        >>> from attention_math.derivations.heads import one_head_columns_equal
        >>> one_head_columns_equal(3)
        True
    """
    p = symbolic.generic_matrix("p", length, length)  # any weights
    v = symbolic.generic_matrix("v", length, 1)  # any value column
    out = p * sp.Matrix.hstack(v, v)  # (L, 2)
    return all(sp.expand(out[i, 0] - out[i, 1]) == 0 for i in range(length))


def cost_difference() -> sp.Expr:
    """FLOPs of ``h`` heads of width ``d/h`` minus those of one head of width ``d``.

    Both counted by [`cost.total_flops`][attention_math.derivations.cost.total_flops] with
    ``d_model = d``; the matrix products cancel and what remains is the softmax's elementwise
    work on ``h − 1`` more score matrices.

    Examples:
        >>> from attention_math.derivations.heads import cost_difference
        >>> cost_difference()
        7*L_k*L_q*h - 7*L_k*L_q
    """
    many = cost.total_flops().subs({cost.d_k: d / cost.h, cost.d_v: d / cost.h})
    one = cost.total_flops().subs({cost.d_k: d, cost.d_v: d, cost.h: 1})
    return sp.expand((many - one).subs(cost.d_model, d))


def matmul_flops(n_heads: sp.Expr | int) -> sp.Expr:
    """The matrix-product FLOPs of ``n_heads`` heads of width ``d/n_heads`` (projections,
    scores, weighted sum, output projection): the same for every ``n_heads``.

    Examples:
        >>> from attention_math.derivations.heads import matmul_flops
        >>> matmul_flops(1) == matmul_flops(8)
        True
    """
    products = ("projection", "scores", "weighted sum")
    total = sp.Add(*(s.flops for s in cost.STEPS if any(w in s.name for w in products)))
    width = d / n_heads
    return sp.expand(
        total.subs({cost.d_k: width, cost.d_v: width, cost.h: n_heads, cost.d_model: d})
    )


def parameter_difference() -> sp.Expr:
    """Parameters of ``h`` heads of width ``d/h`` minus those of one head of width ``d``
    (projections ``W_Q, W_K, W_V, W_O``, no biases): zero.

    Examples:
        >>> from attention_math.derivations.heads import parameter_difference
        >>> parameter_difference()
        0
    """
    from attention_math.derivations import gqa

    s = gqa.symbols()
    from attention_math.derivations.gqa import parameters  # imports NumPy: on use only

    many = parameters().subs({s["h_kv"]: s["h"], s["d_head"]: s["d_model"] / s["h"]})
    one = parameters().subs({s["h_kv"]: 1, s["h"]: 1, s["d_head"]: s["d_model"]})
    return sp.simplify(many - one)
