"""Permutation equivariance: attention treats its inputs as a set, not a sequence.

For a permutation matrix ``Π`` and ``Q, K, V`` whose rows are permuted together
(``ΠQ, ΠK, ΠV``): the scores become ``Π S Πᵀ``, the row softmax permutes along
(``softmax(Π S Πᵀ) = Π softmax(S) Πᵀ``), and ``Π P Πᵀ Π V = Π P V`` because ``ΠᵀΠ = I``.
So ``attention(ΠQ, ΠK, ΠV) = Π · attention(Q, K, V)``. A causal mask or positional
information attached to the *positions* (not the tokens) breaks this.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from attention_math import numeric, symbolic
from attention_math.derivations._once import derived_once

_F = NDArray[np.floating]  # a float array

__all__ = [
    "causal_breaks",
    "equivariant_exactly",
    "permutation_matrix",
    "positional_breaks",
    "softmax_commutes",
]


def permutation_matrix(perm: tuple[int, ...]) -> sp.Matrix:
    """``Π`` with ``(Π X)_i = X_{perm[i]}``: row ``i`` of ``Π`` is the unit vector ``e_{perm[i]}``.

    Raises:
        ValueError: ``perm`` is not a permutation of 0 … n − 1.

    Examples:
        >>> from attention_math.derivations.equivariance import permutation_matrix
        >>> permutation_matrix((1, 2, 0))
        Matrix([
        [0, 1, 0],
        [0, 0, 1],
        [1, 0, 0]])
    """
    n = len(perm)
    if sorted(perm) != list(range(n)):
        raise ValueError(f"perm must be a permutation of 0..{n - 1}, got {perm!r}")
    return sp.Matrix(n, n, lambda i, j: 1 if perm[i] == j else 0)


def softmax_commutes(n: int = 3) -> bool:
    """``softmax(Π S Πᵀ) = Π softmax(S) Πᵀ`` for a generic ``n × n`` ``S`` and every ``Π``.

    Both sides hold the same exponentials: permuting rows and columns only reorders
    them, so the equality is exact (structural) after SymPy's canonical ordering of sums.

    Examples:
        >>> from attention_math.derivations.equivariance import softmax_commutes
        >>> softmax_commutes(3)
        True
    """
    S = symbolic.generic_matrix("s", n, n)
    weights = symbolic.softmax(S)
    for perm in itertools.permutations(range(n)):
        Pi = permutation_matrix(perm)
        if symbolic.softmax(Pi * S * Pi.T) != Pi * weights * Pi.T:
            return False
    return True


@derived_once
def equivariant_exactly(n: int = 3, d_k: int = 2, d_v: int = 1) -> bool:
    """``attention(ΠQ, ΠK, ΠV) = Π attention(Q, K, V)`` for generic ``Q, K, V`` and every ``Π``.

    Examples:
        >>> from attention_math.derivations.equivariance import equivariant_exactly
        >>> equivariant_exactly(2, 1, 1)
        True
    """
    Q = symbolic.generic_matrix("q", n, d_k)
    K = symbolic.generic_matrix("k", n, d_k)
    V = symbolic.generic_matrix("v", n, d_v)
    out = symbolic.attention(Q, K, V)
    for perm in itertools.permutations(range(n)):
        Pi = permutation_matrix(perm)
        lhs = symbolic.attention(Pi * Q, Pi * K, Pi * V)
        if (lhs - Pi * out).applyfunc(sp.expand) != sp.zeros(n, d_v):
            return False
    return True


def causal_breaks(q: _F, k: _F, v: _F, perm: tuple[int, ...]) -> tuple[_F, _F]:
    """``(attention(ΠQ, ΠK, ΠV, causal), Π · attention(Q, K, V, causal))``: they differ.

    The causal mask belongs to positions: after permuting, token ``perm[0]`` sits first
    and sees only itself, whatever it saw before.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.equivariance import causal_breaks
        >>> x = np.arange(6.0).reshape(3, 2) / 4
        >>> a, b = causal_breaks(x, x, x, (2, 1, 0))
        >>> bool(np.allclose(a, b))
        False
    """
    n = q.shape[0]
    P = np.array(permutation_matrix(perm).tolist(), dtype=float)
    mask = numeric.causal_mask(n)
    return numeric.attention(P @ q, P @ k, P @ v, mask=mask), P @ numeric.attention(
        q, k, v, mask=mask
    )


def positional_breaks(
    x: _F, pe: _F, w_q: _F, w_k: _F, w_v: _F, perm: tuple[int, ...]
) -> tuple[_F, _F]:
    """Self-attention on ``x + pe``: ``(output for Π x, Π · output for x)``; they differ.

    ``pe`` is added by position, so permuting the tokens does not permute it.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.equivariance import positional_breaks
        >>> x, pe, w = np.eye(3), np.diag([0.0, 1.0, 2.0]), np.eye(3)
        >>> a, b = positional_breaks(x, pe, w, w, w, (2, 1, 0))
        >>> bool(np.allclose(a, b))
        False
    """
    P = np.array(permutation_matrix(perm).tolist(), dtype=float)

    def self_attention(tokens: _F) -> _F:
        h = tokens + pe  # (n, d_model): position i always gets pe[i]
        return numeric.attention(*numeric.compute_qkv(h, w_q, w_k, w_v))

    return self_attention(P @ x), P @ self_attention(x)
