"""Grouped-query attention, exactly: multi-head attention with tied key/value projections.

With ``h`` query heads and ``h_kv`` key/value heads, query head ``i`` reads key/value head
``i // (h/h_kv)``. That is the same function as multi-head attention whose key and value
projections are *tied*: head ``i``'s ``W_K``, ``W_V`` columns are copies of its group's.
Checked exactly for a small symbolic case; the counts of parameters and of cache entries
follow, with the cache shrinking by the factor ``h/h_kv``.
"""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math.derivations._once import derived_once
from attention_math.multihead import _check_heads  # the library's own check of the counts
from attention_math.symbolic import is_zero

__all__ = [
    "cache_per_token",
    "gqa_exact",
    "mha_exact",
    "parameters",
    "symbols",
    "tied_columns",
    "tying_holds",
]

d_model, h, h_kv, d_head = sp.symbols("d_model h h_kv d_head", positive=True, integer=True)


def symbols() -> dict[str, sp.Symbol]:
    """The size symbols by name.

    Examples:
        >>> from attention_math.derivations.gqa import symbols
        >>> sorted(symbols())
        ['d_head', 'd_model', 'h', 'h_kv']
    """
    return {str(s): s for s in (d_model, h, h_kv, d_head)}


def _head(w: sp.Matrix, i: int, width: int) -> sp.Matrix:
    return w[:, i * width : (i + 1) * width]


def gqa_exact(
    x: sp.Matrix, w_q: sp.Matrix, w_k: sp.Matrix, w_v: sp.Matrix, n_heads: int, n_kv_heads: int
) -> sp.Matrix:
    """Exact grouped-query attention (no output projection): the concatenated heads, head
    ``i`` attending with key/value head ``i // (n_heads / n_kv_heads)``.

    Raises:
        ValueError: unless ``n_kv_heads`` divides ``n_heads`` and the widths divide evenly.
    """
    _check_heads(n_heads, n_kv_heads)
    if w_q.cols % n_heads or w_k.cols % n_kv_heads or w_v.cols % n_kv_heads:
        raise ValueError(
            f"W_Q's {w_q.cols} columns must split into {n_heads} heads and W_K's {w_k.cols}, "
            f"W_V's {w_v.cols} into {n_kv_heads}"
        )
    d = w_q.cols // n_heads
    d_v = w_v.cols // n_kv_heads
    group = n_heads // n_kv_heads
    heads = [
        symbolic.attention(
            x * _head(w_q, i, d), x * _head(w_k, i // group, d), x * _head(w_v, i // group, d_v)
        )
        for i in range(n_heads)
    ]
    return sp.Matrix.hstack(*heads)


def mha_exact(
    x: sp.Matrix, w_q: sp.Matrix, w_k: sp.Matrix, w_v: sp.Matrix, n_heads: int
) -> sp.Matrix:
    """Exact multi-head attention (no output projection): ``gqa_exact`` with ``h_kv = h``."""
    return gqa_exact(x, w_q, w_k, w_v, n_heads, n_heads)


def tied_columns(w: sp.Matrix, n_heads: int, n_kv_heads: int) -> sp.Matrix:
    """The ``h``-head projection whose head ``i`` is a copy of kv head ``i // (h/h_kv)``.

    Raises:
        ValueError: unless ``n_kv_heads`` divides ``n_heads`` and ``w``'s columns.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.gqa import tied_columns
        >>> tied_columns(sp.Matrix([[1, 2]]), 4, 2)
        Matrix([[1, 1, 2, 2]])
    """
    _check_heads(n_heads, n_kv_heads)
    if w.cols % n_kv_heads:
        raise ValueError(f"{w.cols} columns do not split into {n_kv_heads} key/value heads")
    width = w.cols // n_kv_heads
    group = n_heads // n_kv_heads
    return sp.Matrix.hstack(*(_head(w, i // group, width) for i in range(n_heads)))


@derived_once
def tying_holds(n_heads: int = 2, n_kv_heads: int = 1, length: int = 2, width: int = 2) -> bool:
    """True when GQA equals MHA with tied key/value projections, for symbolic inputs and
    weights (``d_head = 1``).

    Raises:
        ValueError: unless ``n_kv_heads`` divides ``n_heads``.

    Examples:
        >>> from attention_math.derivations.gqa import tying_holds
        >>> tying_holds(2, 1)
        True
    """
    _check_heads(n_heads, n_kv_heads)
    x = symbolic.generic_matrix("x", length, width)
    w_q = symbolic.generic_matrix("a", width, n_heads)
    w_k = symbolic.generic_matrix("b", width, n_kv_heads)
    w_v = symbolic.generic_matrix("c", width, n_kv_heads)
    gqa = gqa_exact(x, w_q, w_k, w_v, n_heads, n_kv_heads)
    tied = mha_exact(
        x,
        w_q,
        tied_columns(w_k, n_heads, n_kv_heads),
        tied_columns(w_v, n_heads, n_kv_heads),
        n_heads,
    )
    return all(is_zero(a - b) for a, b in zip(gqa, tied, strict=True))


def parameters() -> sp.Expr:
    """Weights of the four projections (no biases), ``d_v = d_head``.

    Examples:
        >>> from attention_math.derivations.gqa import parameters
        >>> parameters()
        2*d_head*d_model*h + 2*d_head*d_model*h_kv
    """
    return sp.expand(d_model * h * d_head + 2 * d_model * h_kv * d_head + h * d_head * d_model)


def cache_per_token() -> sp.Expr:
    """Cache entries per token and layer: a key and a value for each of the ``h_kv`` kv heads.

    Examples:
        >>> from attention_math.derivations.gqa import cache_per_token
        >>> cache_per_token()
        2*d_head*h_kv
    """
    return 2 * h_kv * d_head
