"""Multi-head attention: the block identity behind ``W_O`` and a per-head reference loop.

``Concat(head_1, …, head_h) · W_O = Σ_i head_i · W_O^(i)``, where ``W_O^(i)`` is the
``i``-th block of ``d_v`` rows of ``W_O``: the output projection mixes the heads only by
adding their separately projected outputs.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from attention_math import numeric
from attention_math._checks import check_count
from attention_math.multihead import (
    AttentionParams,
    _check_heads,
    _check_params,
    _check_qk,
    _check_vo,
    _inputs,
    _multi_head,
)

__all__ = [
    "STEP_LATEX",
    "block_identity",
    "concat_equals_sum",
    "multi_head_loop",
    "shape_trace",
    "step_latex",
]


def block_identity(n_heads: int = 2) -> tuple[sp.Expr, sp.Expr]:
    """Both sides of the identity for matrices of symbolic size ``L × d_v`` and ``d_v × d_out``.

    The heads are ``sympy.MatrixSymbol`` blocks; SymPy's block multiplication
    (``block_collapse``) turns the row of heads times the column of ``W_O`` blocks into
    the sum. Returns ``(lhs, rhs)`` with ``lhs`` collapsed.

    Raises:
        ValueError: ``n_heads`` is not a positive integer.

    Examples:
        >>> from attention_math.derivations.multihead import block_identity
        >>> lhs, rhs = block_identity(2)
        >>> lhs == rhs, rhs
        (True, H_1*W_O^(1) + H_2*W_O^(2))
    """
    n_heads = check_count("n_heads", n_heads)
    L_q, d_v, d_out = sp.symbols("L_q d_v d_out", positive=True, integer=True)
    heads = [sp.MatrixSymbol(f"H_{i}", L_q, d_v) for i in range(1, n_heads + 1)]  # a row a query
    blocks = [sp.MatrixSymbol(f"W_O^({i})", d_v, d_out) for i in range(1, n_heads + 1)]
    concat = sp.BlockMatrix([heads])  # L_q × h·d_v
    w_o = sp.BlockMatrix([[b] for b in blocks])  # h·d_v × d_out
    lhs = sp.block_collapse(concat * w_o)
    rhs = sp.MatAdd(*(h * b for h, b in zip(heads, blocks, strict=True))).doit()
    return lhs, rhs


def concat_equals_sum(L: int = 2, d_v: int = 2, d_out: int = 2, n_heads: int = 2) -> bool:
    """Check the identity entry by entry on explicit matrices of generic symbols.

    Examples:
        >>> from attention_math.derivations.multihead import concat_equals_sum
        >>> concat_equals_sum(2, 1, 3, 3)
        True
    """
    heads = [sp.Matrix(L, d_v, lambda r, c, i=i: sp.Symbol(f"h{i}_{r}{c}")) for i in range(n_heads)]
    w_o = sp.Matrix(n_heads * d_v, d_out, lambda r, c: sp.Symbol(f"w_{r}{c}"))
    lhs = sp.Matrix.hstack(*heads) * w_o
    rhs = sp.zeros(L, d_out)
    for i, h in enumerate(heads):
        rhs += h * w_o[i * d_v : (i + 1) * d_v, :]  # the i-th block of rows
    return bool((lhs - rhs).expand() == sp.zeros(L, d_out))


def multi_head_loop(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    params: AttentionParams,
    n_heads: int,
    mask: ArrayLike | None = None,
) -> NDArray[np.floating]:
    """The same result as ``multi_head_attention``, one head at a time, summed through ``W_O``.

    No reshape or transpose: head ``i`` takes column slices of the projections and its
    own block of rows of ``w_o``, which is the right-hand side of the block identity.
    The biases of ``params``, if any, are left out (the identity is about ``W_O``).

    Raises:
        ValueError: as ``multi_head_attention`` does (shapes that do not fit, a width not
            divisible by ``n_heads``).

    Examples:
        >>> import numpy as np
        >>> from attention_math.multihead import AttentionParams, multi_head_attention
        >>> from attention_math.derivations.multihead import multi_head_loop
        >>> rng = np.random.default_rng(1)
        >>> x_q, x_kv = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
        >>> shapes = [(4, 4), (4, 4), (4, 6), (6, 5)]
        >>> p = AttentionParams(*(rng.standard_normal(s) for s in shapes))
        >>> np.allclose(multi_head_loop(x_q, x_kv, p, 2), multi_head_attention(x_q, x_kv, p, 2))
        True
    """
    # the library's own checks: a width not divisible by n_heads is refused, not cut short
    p = _check_params(params)
    h, _ = _check_heads(n_heads, None)
    xq, xk, xv, _ = _inputs(x_q, x_kv, None)
    d_k = _check_qk(p, xq, xk, h, h)
    _check_vo(p, xv, "x_kv", h, h)
    d_v = p.w_v.shape[1] // h
    out: NDArray[np.floating] | float = 0.0  # the sum over heads, (L_q, d_out)
    for i in range(h):
        cols_k = slice(i * d_k, (i + 1) * d_k)
        cols_v = slice(i * d_v, (i + 1) * d_v)
        q_i = xq @ p.w_q[:, cols_k]  # (L_q, d_k)
        k_i = xk @ p.w_k[:, cols_k]  # (L_k, d_k)
        v_i = xk @ p.w_v[:, cols_v]  # (L_k, d_v)
        head_i = numeric.attention(q_i, k_i, v_i, mask=mask)  # (L_q, d_v)
        out = out + head_i @ p.w_o[cols_v, :]  # (L_q, d_out): head i through its block W_O^(i)
    return np.asarray(out)


def shape_trace(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    params: AttentionParams,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    mask: ArrayLike | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """The ``(step, shape)`` of every product inside ``multi_head_attention``, recorded by it.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.multihead import shape_trace
        >>> from attention_math.multihead import AttentionParams
        >>> z = np.zeros
        >>> p = AttentionParams(z((4, 4)), z((4, 4)), z((4, 2)), z((2, 4)))
        >>> shape_trace(z((3, 4)), z((5, 4)), p, 2)[-1]
        ('output Concat · W_O', (3, 4))
    """
    trace: list[tuple[str, tuple[int, ...]]] = []
    _multi_head(x_q, x_kv, params, n_heads, n_kv_heads=n_kv_heads, mask=mask, trace=trace)
    return trace


STEP_LATEX: dict[str, str] = {
    "Q = X_q W_Q": r"$Q = X_q W_Q$",
    "K = X_kv W_K": r"$K = X_{kv} W_K$",
    "V = X_kv W_V": r"$V = X_{kv} W_V$",
    "Q split into heads": r"$Q$ split into heads",
    "K split into heads": r"$K$ split into heads",
    "V split into heads": r"$V$ split into heads",
    "K, V repeated for each query head": r"$K$, $V$ repeated for each query head",
    "scores Q⁽ⁱ⁾K⁽ⁱ⁾ᵀ per head": r"scores $Q^{(i)} K^{(i)\top}$ per head",
    "heads softmax(·) V⁽ⁱ⁾": r"heads $\operatorname{softmax}(\cdot)\, V^{(i)}$",
    "Concat(head_1, …, head_h)": r"$\operatorname{Concat}(\text{head}_1, \dots, \text{head}_h)$",
    "output Concat · W_O": r"output $\operatorname{Concat}(\dots)\, W_O$",
}
"""Each step label ``multi_head_attention`` records (plain text, for a terminal) as a page
shows it: words as text, the maths as TeX between dollars."""


def step_latex(step: str) -> str:
    """The label of a ``shape_trace`` step as a page shows it (``STEP_LATEX``).

    Raises:
        ValueError: for a label ``multi_head_attention`` does not record.

    Examples:
        >>> from attention_math.derivations.multihead import step_latex
        >>> step_latex("K = X_kv W_K")
        '$K = X_{kv} W_K$'
    """
    try:
        return STEP_LATEX[step]
    except KeyError:
        raise ValueError(
            f"no TeX form for the step {step!r}; known: {sorted(STEP_LATEX)}"
        ) from None
