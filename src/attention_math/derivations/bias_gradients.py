"""The gradient of an additive bias on the scores, exactly: ``dM = dS``, and for a learned
relative bias ``b_{i−j}`` the sum of ``dS`` over each diagonal.

The scores are ``S = α QKᵀ + M``: ``M`` enters with coefficient 1, so ``∂ℓ/∂M_ij = ∂ℓ/∂S_ij``,
and a blocked entry (weight 0) gets gradient 0. When ``M_ij = b_{i−j}`` fills the matrix from a
table of one number per offset (T5's relative position bias, before its buckets), the chain
rule adds the ``dS_ij`` of every ``(i, j)`` that read the same number. Both are checked
against SymPy's own derivatives, and against
[`attention_backward_with_dmask`][attention_math.backward.attention_backward_with_dmask] with
[`relative_bias_grad`][attention_math.backward.relative_bias_grad].
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from attention_math import symbolic
from attention_math.backward import attention_backward_with_dmask, relative_bias, relative_bias_grad
from attention_math.crosscheck import CrossCheck, crosscheck
from attention_math.derivations._once import derived_once
from attention_math.derivations.gradients import backward

__all__ = ["BiasCase", "bias_case", "diagonal_sums", "dmask_is_ds", "relative_bias_is_diagonal_sum"]


def _loss(d_out: sp.Matrix, out: sp.Matrix) -> sp.Expr:
    """ℓ = Σ dO ∘ O, whose gradient with respect to O is dO."""
    return sum(d_out.multiply_elementwise(out), sp.S.Zero)


def _loss_and_backward(m: sp.Matrix) -> tuple[sp.Expr, dict[str, sp.Matrix]]:
    """ℓ and the backward's matrices for generic one-column ``q, k, v, dO``, a generic scale
    ``α`` and the additive mask ``m`` (``L_q × L_k``)."""
    l_q, l_k = m.shape
    q = symbolic.generic_matrix("q", l_q, 1)
    k = symbolic.generic_matrix("k", l_k, 1)
    v = symbolic.generic_matrix("v", l_k, 1)
    d_o = symbolic.generic_matrix("g", l_q, 1)
    g = backward(q, k, v, d_o, mask=m, scale=sp.Symbol("alpha", positive=True))
    return _loss(d_o, g["O"]), g


def _zero(e: sp.Expr) -> bool:
    return bool(sp.simplify(sp.expand(e)) == 0)


def diagonal_sums(ds: sp.Matrix) -> sp.Matrix:
    """Row of the sums of ``ds`` over its diagonals ``i − j = −(n_k − 1), …, n_q − 1``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.bias_gradients import diagonal_sums
        >>> diagonal_sums(sp.Matrix([[1, 2], [3, 4]]))
        Matrix([[2, 5, 3]])
    """
    n_q, n_k = ds.shape
    return sp.Matrix(
        [
            [
                sum((ds[i, j] for i in range(n_q) for j in range(n_k) if i - j == o), sp.S.Zero)
                for o in range(-(n_k - 1), n_q)
            ]
        ]
    )


@derived_once
def dmask_is_ds(l_q: int = 2, l_k: int = 2) -> bool:
    """True when SymPy's derivative of ``ℓ = Σ dO ∘ O`` with respect to a generic additive mask
    ``M`` equals the backward's ``dS``, entry by entry (``Q, K, V, dO, M`` and ``α`` generic).

    Examples:
        >>> from attention_math.derivations.bias_gradients import dmask_is_ds
        >>> dmask_is_ds(1, 2)
        True
    """
    m = symbolic.generic_matrix("m", l_q, l_k)
    loss, g = _loss_and_backward(m)
    return all(
        _zero(sp.diff(loss, m[i, j]) - g["dS"][i, j]) for i in range(l_q) for j in range(l_k)
    )


@derived_once
def relative_bias_is_diagonal_sum(l_q: int = 2, l_k: int = 2) -> bool:
    """True when SymPy's derivative of ``ℓ`` with respect to each entry of a relative-bias
    table ``b`` (``M_ij = b_{i−j}``) equals the sum of ``dS`` over that offset's diagonal.

    Examples:
        >>> from attention_math.derivations.bias_gradients import relative_bias_is_diagonal_sum
        >>> relative_bias_is_diagonal_sum(2, 2)
        True
    """
    b = [sp.Symbol(f"b_{o}", real=True) for o in range(-(l_k - 1), l_q)]  # one per offset
    m = sp.Matrix(l_q, l_k, lambda i, j: b[i - j + l_k - 1])
    loss, g = _loss_and_backward(m)
    sums = diagonal_sums(g["dS"])
    return all(_zero(sp.diff(loss, bo) - sums[0, n]) for n, bo in enumerate(b))


class BiasCase:
    """An exact case: rational ``q, k, v, dO`` and a relative-bias table of logarithms (so the
    weights are rational), with the exact ``dS``, its diagonal sums, the NumPy results and the
    cross-checks."""

    def __init__(self) -> None:
        self.q = sp.Matrix([[1, 0], [0, 1], [1, 1]])  # (3, 2)
        self.k = sp.Matrix([[0, 0], [0, 0], [0, 0]])  # (3, 2): scores are the bias alone
        self.v = sp.Matrix([[1, 0], [0, 2], [3, 1]])  # (3, 2)
        self.d_out = sp.Matrix([[1, 0], [0, 1], [1, -1]])  # (3, 2)
        self.table = sp.Matrix([[sp.log(k) for k in (1, 2, 3, 4, 5)]])  # offsets -2 … 2
        self.bias = sp.Matrix(3, 3, lambda i, j: self.table[i - j + 2])
        g = backward(self.q, self.k, self.v, self.d_out, mask=self.bias)
        self.d_bias = g["dS"].applyfunc(sp.simplify)
        self.d_table = diagonal_sums(self.d_bias).applyfunc(sp.simplify)

    def numeric(self) -> tuple[np.ndarray, np.ndarray]:
        """``(d_bias, d_table)`` from `attention_backward_with_dmask` and `relative_bias_grad`."""

        def f(m: sp.Matrix) -> np.ndarray:
            return np.array(m.evalf(30).tolist(), dtype=np.float64)

        bias = relative_bias(f(self.table)[0], 3, 3)  # (3, 3)
        *_, d_bias = attention_backward_with_dmask(
            f(self.q), f(self.k), f(self.v), f(self.d_out), bias
        )
        return d_bias, relative_bias_grad(d_bias)

    def checks(self) -> tuple[CrossCheck, CrossCheck]:
        """Both cross-checks (raising if NumPy and SymPy disagree)."""
        d_bias, d_table = self.numeric()
        return (
            crosscheck(self.d_bias, d_bias, label="dM"),
            crosscheck(self.d_table, d_table[None, :], label="d table"),
        )


def bias_case() -> BiasCase:
    """The exact case of the page.

    Examples:
        >>> from attention_math.derivations.bias_gradients import bias_case
        >>> c = bias_case()
        >>> all(check.passed for check in c.checks())
        True
    """
    return BiasCase()
