"""Top-k attention, exactly: the error of dropping keys is ``p_S̄`` times a difference of averages.

Keep the keys ``S`` of one query and drop the rest, whose dense weight is ``p_S̄``. The dense
output ``o`` is the average of two averages, ``o = (1 − p_S̄) o_S + p_S̄ o_{S̄}`` (the kept keys'
renormalised output and the dropped keys'), so ``o − o_S = p_S̄ (o_{S̄} − o_S)``
(`error_identity` proves it in SymPy for softmax weights of symbolic scores). Both averages
lie in the convex hull of their values, so ``‖o − o_S‖ ≤ p_S̄ max_{i∉S, j∈S} ‖v_i − v_j‖ ≤
2p_S̄ max_j ‖v_j‖``; two keys with opposite values attain the last bound (`tight_example`).
`crosscheck_error` computes one example exactly and compares NumPy's
[`sparse.topk_error`][attention_math.sparse.topk_error] and
[`sparse.topk_attention`][attention_math.sparse.topk_attention] with it (it raises on a
mismatch). `pairs_formula` counts the scored pairs of a causal sequence under top-k, and
`selection_is_overlap` checks that NSA's eq. (9) weighs each compression block by its overlap.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import sympy as sp

from attention_math.crosscheck import CrossCheck, crosscheck
from attention_math.derivations._once import derived_once
from attention_math.sparse import causal_pairs, selection_scores, topk_attention, topk_error

__all__ = [
    "Example",
    "crosscheck_error",
    "error_identity",
    "example",
    "pairs_formula",
    "pairs_holds",
    "selection_is_overlap",
    "tight_example",
]

eps = sp.Symbol(r"p_{\bar S}", nonnegative=True)  # the discarded weight, p_S̄
L, k = sp.symbols("L k", positive=True, integer=True)


@derived_once
def error_identity(n: int, n_kept: int) -> bool:
    """True when ``o − o_S = p_S̄ (o_{S̄} − o_S)`` holds identically (SymPy cancels the difference
    to 0) for ``n`` keys of symbolic scores ``s_j`` (weights ``e_j / Σ e_i`` with ``e_j = e^{s_j}``,
    any positive numbers) and symbolic
    values ``v_j``, the first ``n_kept`` kept. A value's coordinates enter one at a time and
    linearly, so scalar values prove it for vectors.

    Examples:
        >>> from attention_math.derivations.sparse import error_identity
        >>> error_identity(4, 2)
        True
    """
    if not 1 <= n_kept < n:
        raise ValueError(f"keep between 1 and n − 1 keys: n = {n}, n_kept = {n_kept}")
    e = sp.symbols(f"e1:{n + 1}", positive=True)  # e^{s_j}: any positive numbers
    v = sp.symbols(f"v1:{n + 1}", real=True)
    z = sp.Add(*e)
    p = [x / z for x in e]  # the dense softmax weights
    kept, dropped = range(n_kept), range(n_kept, n)
    mass = sp.Add(*(p[j] for j in dropped))  # p_S̄
    o = sp.Add(*(p[j] * v[j] for j in range(n)))
    o_s = sp.Add(*(p[j] * v[j] for j in kept)) / (1 - mass)
    o_rest = sp.Add(*(p[j] * v[j] for j in dropped)) / mass
    return bool(sp.cancel(sp.together(o - o_s - mass * (o_rest - o_s))) == 0)


@derived_once
def tight_example() -> tuple[sp.Expr, sp.Expr]:
    r"""Two keys, weights ``(1 − p_S̄, p_S̄)``, values ``+1`` and ``−1``, the second dropped:
    ``(|o − o_S|, 2p_S̄ max_j |v_j|)``, both ``2p_S̄``: the bound is attained.

    Examples:
        >>> from attention_math.derivations.sparse import tight_example
        >>> tight_example()
        (2*p_{\bar S}, 2*p_{\bar S})
    """
    p = [1 - eps, eps]
    v = [sp.Integer(1), sp.Integer(-1)]
    o = p[0] * v[0] + p[1] * v[1]
    o_s = p[0] * v[0] / (1 - eps)
    error = sp.simplify(sp.Abs(sp.factor(o - o_s)))
    bound = 2 * eps * max(abs(x) for x in v)
    return error, bound


class Example(NamedTuple):
    """One query, its keys' scores and values, and the exact top-k results."""

    scores: list[sp.Expr]
    """The scaled scores ``q·k_j`` (logarithms, so that the weights are rational)."""
    values: sp.Matrix
    """The values ``(n, d_v)``."""
    top_k: int
    p: list[sp.Expr]
    """The dense weights."""
    discarded: sp.Expr
    """``p_S̄``."""
    o: sp.Matrix
    """The dense output ``(1, d_v)``."""
    o_s: sp.Matrix
    """The top-k output ``(1, d_v)``."""
    error: sp.Expr
    """``‖o − o_S‖``."""
    bound_spread: sp.Expr
    """``p_S̄ max_{i∉S, j∈S} ‖v_i − v_j‖``."""
    bound: sp.Expr
    """``2p_S̄ max_j ‖v_j‖``."""


def example(
    weights: tuple[int, ...] = (8, 4, 2, 1, 1), top_k: int = 2, values: sp.Matrix | None = None
) -> Example:
    """Top-k of one query exactly: scores ``log w_j`` (so that the weights are ``w_j / Σ w``),
    the ``top_k`` largest kept.

    Examples:
        >>> from attention_math.derivations.sparse import example
        >>> ex = example()
        >>> ex.p, ex.discarded
        ([1/2, 1/4, 1/8, 1/16, 1/16], 1/4)
    """
    if values is None:
        values = sp.Matrix([[1, 0], [0, 1], [-1, 0], [0, -1], [1, 1]])
    n = len(weights)
    scores = [sp.log(w) for w in weights]
    total = sp.Integer(sum(weights))
    p = [sp.Integer(w) / total for w in weights]
    order = sorted(range(n), key=lambda j: (-weights[j], j))  # ties to the earlier key
    kept = set(order[:top_k])
    mass = sp.Add(*(p[j] for j in range(n) if j not in kept))
    o = sp.Matrix([[sp.Add(*(p[j] * values[j, c] for j in range(n))) for c in range(values.cols)]])
    o_s = sp.Matrix(
        [[sp.Add(*(p[j] * values[j, c] for j in kept)) / (1 - mass) for c in range(values.cols)]]
    )
    error = sp.sqrt(sp.Add(*((o[c] - o_s[c]) ** 2 for c in range(values.cols))))
    dist = [
        sp.sqrt(sp.Add(*((values[i, c] - values[j, c]) ** 2 for c in range(values.cols))))
        for i in range(n)
        if i not in kept
        for j in kept
    ]
    norms = [sp.sqrt(sp.Add(*(values[j, c] ** 2 for c in range(values.cols)))) for j in range(n)]
    return Example(
        scores,
        values,
        top_k,
        p,
        mass,
        o,
        o_s,
        sp.nsimplify(sp.simplify(error)),
        sp.simplify(mass * sp.Max(*dist)),
        sp.simplify(2 * mass * sp.Max(*norms)),
    )


def crosscheck_error(ex: Example) -> list[CrossCheck]:
    """NumPy against the exact `example`: `topk_attention`'s output against ``o_S``, and
    `topk_error`'s error, ``p_S̄`` and both bounds against theirs. Raises on a mismatch.

    Examples:
        >>> from attention_math.derivations.sparse import crosscheck_error, example
        >>> all(c.passed for c in crosscheck_error(example()))
        True
    """
    n = len(ex.scores)
    s = np.array([[float(x) for x in ex.scores]])  # (1, n): the scores, as q·kᵀ with q = 1
    vals = np.array(ex.values.tolist(), dtype=float)  # (n, d_v)
    q = np.ones((1, 1))  # (1, 1)
    keys = s.T  # (n, 1): k_j = s_j, so q·k_j = s_j
    o_s = topk_attention(q, keys, vals, ex.top_k, scale=1.0)  # (1, d_v)
    p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()  # (1, n)
    kept = np.zeros((1, n), dtype=bool)  # (1, n)
    kept[0, np.argsort(-s[0], kind="stable")[: ex.top_k]] = True
    err = topk_error(p, vals, kept)
    exact = sp.Matrix([[ex.error, ex.discarded, ex.bound_spread, ex.bound]])
    measured = np.array([[err.error[0], err.discarded[0], err.bound_spread[0], err.bound[0]]])
    return [
        crosscheck(ex.o_s, o_s, label="top-k output o_S"),
        crosscheck(exact, measured, label="error, p_S̄ and the two bounds"),
    ]


@derived_once
def pairs_formula() -> sp.Expr:
    """``Σ_{t=1}^{L} min(t, k)`` for ``L ≥ k``, summed by SymPy: the pairs top-k scores on a
    causal sequence (dense: ``L(L + 1)/2``).

    Examples:
        >>> from attention_math.derivations.sparse import pairs_formula
        >>> pairs_formula()
        L*k - k**2/2 + k/2
    """
    t = sp.Symbol("t", positive=True, integer=True)
    ramp = sp.summation(t, (t, 1, k))  # the first k queries keep every key they see
    flat = sp.summation(k, (t, k + 1, L))  # the rest keep k
    return sp.expand(ramp + flat)


@derived_once
def pairs_holds(max_len: int = 12) -> bool:
    """`pairs_formula` equals `sparse.causal_pairs` counted, for every ``k ≤ L ≤ max_len``.

    Examples:
        >>> from attention_math.derivations.sparse import pairs_holds
        >>> pairs_holds(8)
        True
    """
    f = pairs_formula()
    return all(
        int(f.subs({L: n, k: kk})) == causal_pairs(n, kk)
        for n in range(1, max_len + 1)
        for kk in range(1, n + 1)
    )


@derived_once
def selection_is_overlap(block: int, stride: int, select_block: int, n_tokens: int) -> bool:
    """True when NSA's eq. (9), as `sparse.selection_scores` computes it, gives selection
    block ``j`` the sum over compression blocks ``i`` of ``p_cmp[i]`` times the number of
    tokens they share divided by the stride: counted here with integers, block by block.

    Examples:
        >>> from attention_math.derivations.sparse import selection_is_overlap
        >>> selection_is_overlap(32, 16, 64, 256)  # the paper's l, d, l'
        True
    """
    n_blocks = (n_tokens - block) // stride + 1
    n_sel = -(-n_tokens // select_block)
    eye = np.eye(n_blocks)  # (n_blocks, n_blocks): p_cmp = e_i, one compression block at a time
    got = selection_scores(eye, block, stride, select_block, n_sel)  # (n_blocks, n_select)
    for i in range(n_blocks):
        cmp_tokens = set(range(i * stride, i * stride + block))
        for j in range(n_sel):
            slc_tokens = set(range(j * select_block, (j + 1) * select_block))
            shared = len(cmp_tokens & slc_tokens)
            if shared % stride or got[i, j] != shared // stride:
                return False
    return True
