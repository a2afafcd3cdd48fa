"""The online softmax: attention over key tiles, proved exact with SymPy.

For one query row with scores ``s_j`` and values ``v_j``, a tile of keys is summarised by
the state ``(m, λ, o)``:

* ``m = max_j s_j`` (the shift that keeps every ``exp`` ≤ 1),
* ``λ = Σ_j exp(s_j − m)``,
* ``o = Σ_j exp(s_j − m) v_j`` (unnormalised).

Two states merge with ``m = max(m_a, m_b)``, ``λ = e^{m_a − m} λ_a + e^{m_b − m} λ_b``,
``o = e^{m_a − m} o_a + e^{m_b − m} o_b``, and the attention output is ``o / λ``. The
functions below build these states from symbols and prove, by simplification to zero,
that merging is associative and commutative (so any grouping *and* any order of the tiles
gives the same state) and that the merged result is exactly ``softmax(s) · v``.
The NumPy engine that runs this update is [`attention_math.tiled`][].
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from attention_math._lazy import np

if TYPE_CHECKING:  # NumPy's types only: the module imports without NumPy (the reader's browser)
    from numpy.typing import ArrayLike, NDArray
import sympy as sp

from attention_math.derivations._once import derived_once
from attention_math.symbolic import is_zero

__all__ = [
    "REFERENCES",
    "State",
    "fa1_update",
    "fa2_update",
    "finish",
    "logsumexp",
    "merge",
    "merge_is_associative",
    "merge_is_commutative",
    "merged_equals_softmax",
    "numeric_trace",
    "symbols",
    "tile_state",
]


REFERENCES = {
    "online softmax": (
        "Maxim Milakov, Natalia Gimelshein",
        "Online normalizer calculation for softmax",
        "arXiv:1805.02867, 2018",
    ),
    "FlashAttention": (
        "Tri Dao, Daniel Y. Fu, Stefano Ermon, Atri Rudra, Christopher Ré",
        "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
        "NeurIPS 2022, arXiv:2205.14135",
    ),
    "FlashAttention-2": (
        "Tri Dao",
        "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
        "ICLR 2024, arXiv:2307.08691",
    ),
}
"""The published sources of the algorithm (data, printed by the page)."""


class State(NamedTuple):
    """The online-softmax state of one query row over the keys seen so far."""

    m: sp.Expr  # running maximum of the scores
    ell: sp.Expr  # λ = Σ exp(s − m)
    o: sp.Expr  # Σ exp(s − m) v, not yet divided by λ


def symbols(n: int, tag: str = "") -> tuple[list[sp.Symbol], list[sp.Symbol]]:
    """``n`` real score symbols ``s_1..s_n`` and value symbols ``v_1..v_n``.

    Examples:
        >>> from attention_math.derivations.online_softmax import symbols
        >>> symbols(2)
        ([s_1, s_2], [v_1, v_2])
    """
    s = [sp.Symbol(f"s{tag}_{j}", real=True) for j in range(1, n + 1)]
    v = [sp.Symbol(f"v{tag}_{j}", real=True) for j in range(1, n + 1)]
    return s, v


def tile_state(scores: Sequence[object], v: Sequence[object]) -> State:
    """The state of one tile: its maximum, shifted sum and shifted weighted sum.

    Raises:
        ValueError: no scores, or not as many scores as values.

    Examples:
        >>> from attention_math.derivations.online_softmax import tile_state
        >>> tile_state([0, 1], [5, 7])
        State(m=1, ell=exp(-1) + 1, o=5*exp(-1) + 7)
    """
    s = [sp.sympify(x) for x in scores]
    if len(s) != len(v) or not s:
        raise ValueError(f"need as many scores as values (≥ 1), got {len(s)} and {len(v)}")
    m = sp.Max(*s)
    w = [sp.exp(x - m) for x in s]
    return State(m, sp.Add(*w), sp.Add(*(wi * sp.sympify(vi) for wi, vi in zip(w, v, strict=True))))


def merge(a: State, b: State) -> State:
    """Combine the states of two disjoint sets of keys (the online-softmax update).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.online_softmax import State, merge
        >>> merge(State(sp.Integer(0), 1, 5), State(sp.Integer(1), 1, 7))
        State(m=1, ell=exp(-1) + 1, o=5*exp(-1) + 7)
    """
    m = sp.Max(a.m, b.m)
    ca, cb = sp.exp(a.m - m), sp.exp(b.m - m)  # rescale each side to the common shift
    return State(m, ca * a.ell + cb * b.ell, ca * a.o + cb * b.o)


def finish(state: State) -> sp.Expr:
    """The attention output ``o / λ``: the one division, done once at the end."""
    return state.o / state.ell


def logsumexp(state: State) -> sp.Expr:
    """``m + log λ = log Σ exp(s)``: what FlashAttention-2 keeps for the backward pass.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.online_softmax import logsumexp, tile_state
        >>> s = sp.symbols("a b", real=True)
        >>> lse = logsumexp(tile_state(s, [1, 1]))
        >>> sp.simplify(sp.exp(lse) - sp.exp(s[0]) - sp.exp(s[1]))
        0
    """
    return state.m + sp.log(state.ell)


def merge_is_associative(a: State, b: State, c: State) -> bool:
    """True when ``merge(merge(a, b), c)`` and ``merge(a, merge(b, c))`` are identical.

    Examples:
        >>> from attention_math.derivations.online_softmax import (
        ...     merge_is_associative, symbols, tile_state)
        >>> s, v = symbols(5)
        >>> a, b, c = tile_state(s[:2], v[:2]), tile_state(s[2:3], v[2:3]), tile_state(s[3:], v[3:])
        >>> merge_is_associative(a, b, c)
        True
    """
    left, right = merge(merge(a, b), c), merge(a, merge(b, c))
    return left.m == right.m and all(
        is_zero(x - y) for x, y in zip(left[1:], right[1:], strict=True)
    )


def merge_is_commutative(a: State, b: State) -> bool:
    """True when ``merge(a, b)`` and ``merge(b, a)`` are identical.

    Associativity alone lets tiles be *grouped* in any way while keeping their order;
    visiting them in another order also needs this.

    Examples:
        >>> from attention_math.derivations.online_softmax import (
        ...     merge_is_commutative, symbols, tile_state)
        >>> s, v = symbols(3)
        >>> merge_is_commutative(tile_state(s[:1], v[:1]), tile_state(s[1:], v[1:]))
        True
    """
    ab, ba = merge(a, b), merge(b, a)
    return bool(sp.simplify(ab.m - ba.m) == 0) and all(
        is_zero(x - y) for x, y in zip(ab[1:], ba[1:], strict=True)
    )


@derived_once
def merged_equals_softmax(
    scores: Sequence[object], v: Sequence[object], cuts: Sequence[int]
) -> bool:
    """True when tiling ``scores`` at ``cuts`` and merging gives exactly ``softmax(s) · v``.

    Both the output and the log-sum-exp are compared with the unshifted, untiled formulas
    ``Σ e^{s_j} v_j / Σ e^{s_j}`` and ``log Σ e^{s_j}``.

    Raises:
        ValueError: cuts that are not increasing inside 1 … len(scores) − 1.

    Examples:
        >>> from attention_math.derivations.online_softmax import merged_equals_softmax, symbols
        >>> s, v = symbols(4)
        >>> merged_equals_softmax(s, v, cuts=[1, 3])
        True
    """
    bounds = [0, *cuts, len(scores)]
    if sorted(set(bounds)) != bounds:
        raise ValueError(f"cuts must be increasing and inside 1..{len(scores) - 1}, got {cuts}")
    tiles = [tile_state(scores[i:j], v[i:j]) for i, j in itertools.pairwise(bounds)]
    state = tiles[0]
    for t in tiles[1:]:
        state = merge(state, t)
    z = sp.Add(*(sp.exp(x) for x in scores))
    full = sp.Add(*(sp.exp(x) * y for x, y in zip(scores, v, strict=True))) / z
    lse_ok = is_zero(sp.exp(logsumexp(state)) - z)
    return is_zero(finish(state) - full) and lse_ok


def fa1_update(state: State, scores: Sequence[object], v: Sequence[object]) -> State:
    """FlashAttention-1 form: the output kept *normalised* (``o/λ``), one division per tile.

    Both the incoming and the returned ``o`` fields hold the normalised output.
    """
    t = tile_state(scores, v)
    m = sp.Max(state.m, t.m)
    ell = sp.exp(state.m - m) * state.ell + sp.exp(t.m - m) * t.ell
    o = (sp.exp(state.m - m) * state.ell * state.o + sp.exp(t.m - m) * t.o) / ell
    return State(m, ell, o)


def fa2_update(state: State, scores: Sequence[object], v: Sequence[object]) -> State:
    """FlashAttention-2 form: ``o`` stays unnormalised; no division inside the loop.

    Examples:
        >>> from attention_math.derivations.online_softmax import (
        ...     fa1_update, fa2_update, finish, symbols, tile_state)
        >>> from attention_math.symbolic import is_zero
        >>> s, v = symbols(4)
        >>> first = tile_state(s[:2], v[:2])
        >>> one = fa1_update(first._replace(o=finish(first)), s[2:], v[2:])  # normalised
        >>> two = fa2_update(first, s[2:], v[2:])
        >>> is_zero(one.o - finish(two))
        True
    """
    return merge(state, tile_state(scores, v))


def numeric_trace(
    scores: ArrayLike, v: ArrayLike, block_size: int
) -> list[tuple[float, float, NDArray[np.floating]]]:
    """The float64 states ``(m, λ, o)`` after each tile of ``block_size`` keys (one query row).

    Examples:
        >>> from attention_math.derivations.online_softmax import numeric_trace
        >>> [(float(m), round(float(ell), 4)) for m, ell, _ in numeric_trace([0, 1], [[5], [7]], 1)]
        [(0.0, 1.0), (1.0, 1.3679)]
    """
    s = np.asarray(scores, dtype=np.float64)  # (L,): one query row
    va = np.asarray(v, dtype=np.float64).reshape(len(s), -1)  # (L, d_v)
    m, ell, o = -np.inf, 0.0, np.zeros(va.shape[1])
    out = []
    for j0 in range(0, len(s), block_size):
        st, vt = s[j0 : j0 + block_size], va[j0 : j0 + block_size]
        m_new = max(m, float(st.max()))
        alpha = np.exp(m - m_new)  # 0 on the first tile (m = -inf)
        p = np.exp(st - m_new)
        ell = alpha * ell + p.sum()
        o = alpha * o + p @ vt
        m = m_new
        out.append((m, ell, o.copy()))
    return out
