"""Attention as kernel smoothing, and what a bilinear score can and cannot express, exactly.

* ``−‖q − k‖²/2 = q·k − ‖q‖²/2 − ‖k‖²/2``: the query term is the same for every key of a
  row, and softmax ignores a row constant, so Gaussian-kernel attention is dot-product
  attention plus a key bias ``−‖k‖²/2`` (equal to it when all keys have the same norm).
* Bandwidth limits: ``τ → 0⁺`` puts all weight on the nearest key, ``τ → ∞`` spreads it
  evenly.
* A bilinear score ``q W kᵀ`` with ``W = W_Q W_Kᵀ`` has rank ≤ d_k (the head width), and
  only the product matters: ``W_Q → W_Q A``, ``W_K → W_K A^{−ᵀ}`` changes nothing.
* The circuits view: multi-head attention is the sum over heads ``i`` of
  ``P^(i) X W_V^(i) W_O^(i)``.

The derivations return SymPy objects or booleans computed here (the regression data and its
figure are NumPy arrays and SVG); the pages print them.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from attention_math.derivations._once import derived_once
from attention_math.symbolic import is_zero

__all__ = [
    "bandwidth_limits",
    "bilinear_invariance",
    "bilinear_rank",
    "circuits_sum_of_heads",
    "gaussian_is_dot_plus_bias",
    "regression_data",
    "row_constant_cancels",
]


def _vec(name: str, d: int) -> sp.Matrix:
    return sp.Matrix(1, d, lambda _, c: sp.Symbol(f"{name}_{c + 1}", real=True))


def gaussian_is_dot_plus_bias(d: int = 3) -> tuple[sp.Expr, sp.Expr, bool]:
    """``(−‖q − k‖²/2, q·k − ‖q‖²/2 − ‖k‖²/2, equal?)`` for generic real ``d``-vectors.

    Examples:
        >>> from attention_math.derivations.kernels import gaussian_is_dot_plus_bias
        >>> gaussian_is_dot_plus_bias(2)[2]
        True
    """
    q, k = _vec("q", d), _vec("k", d)
    lhs = -((q - k) * (q - k).T)[0] / 2
    rhs = (q * k.T)[0] - (q * q.T)[0] / 2 - (k * k.T)[0] / 2
    return lhs, rhs, sp.expand(lhs - rhs) == 0


def row_constant_cancels(n: int = 3) -> bool:
    """``softmax(s + c) = softmax(s)`` for symbolic scores ``s_1..s_n`` and a constant ``c``.

    Examples:
        >>> from attention_math.derivations.kernels import row_constant_cancels
        >>> row_constant_cancels(3)
        True
    """
    s = sp.symbols(f"s1:{n + 1}", real=True)
    c = sp.Symbol("c", real=True)
    den, den_c = sum(sp.exp(x) for x in s), sum(sp.exp(x + c) for x in s)
    # exp(x + c) = exp(x)·exp(c): each difference is then a rational function of the
    # exponentials, which is_zero's cancel decides
    return all(is_zero(sp.exp(x + c) / den_c - sp.exp(x) / den) for x in s)


def bandwidth_limits(
    q: sp.Rational, k: list[sp.Rational]
) -> tuple[list[sp.Expr], list[sp.Expr], list[sp.Expr]]:
    """Exact Gaussian-kernel weights of one 1-D query ``q`` against the keys ``k``, as
    functions of the bandwidth ``τ``,
    and their limits ``τ → 0⁺`` and ``τ → ∞`` (SymPy's ``limit``).

    Returns ``(weights(τ), limits at 0, limits at ∞)``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.kernels import bandwidth_limits
        >>> _, near, far = bandwidth_limits(sp.Rational(1, 4), [0, 1, 2])
        >>> near, far
        ([1, 0, 0], [1/3, 1/3, 1/3])
    """
    tau = sp.Symbol("tau", positive=True)  # the bandwidth (h counts heads on this site)
    keys = [sp.nsimplify(x) for x in k]
    xq = sp.nsimplify(q)
    scores = [-((xq - x) ** 2) / (2 * tau**2) for x in keys]
    top = max(scores, key=lambda e: e.subs(tau, 1))  # shift by the largest score: finite limits
    weights = [sp.simplify(sp.exp(s - top) / sum(sp.exp(t - top) for t in scores)) for s in scores]
    near = [sp.limit(w, tau, 0, "+") for w in weights]
    far = [sp.limit(w, tau, sp.oo) for w in weights]
    return weights, near, far


@derived_once
def bilinear_rank(d_model: int = 4, d_k: int = 2) -> tuple[int, int]:
    """``(rank of W_Q W_Kᵀ, d_k)`` for generic symbolic ``W_Q``, ``W_K`` of shape
    ``(d_model, d_k)``, ``d_k < d_model``: every ``(d_k + 1)``-minor expands to 0 and a
    ``d_k``-minor does not, so the rank is exactly ``d_k``.

    Raises:
        ValueError: unless ``0 < d_k < d_model``.

    Examples:
        >>> from attention_math.derivations.kernels import bilinear_rank
        >>> bilinear_rank(3, 1)
        (1, 1)
    """
    if not 0 < d_k < d_model:
        raise ValueError(f"need 0 < d_k < d_model, got d_k = {d_k}, d_model = {d_model}")
    wq = sp.Matrix(d_model, d_k, lambda r, c: sp.Symbol(f"a_{r}{c}"))
    wk = sp.Matrix(d_model, d_k, lambda r, c: sp.Symbol(f"b_{r}{c}"))
    w = wq * wk.T  # (d_model, d_model)
    idx = range(d_model)
    big = all(
        sp.expand(w.extract(list(r), list(c)).det()) == 0
        for r in combinations(idx, d_k + 1)
        for c in combinations(idx, d_k + 1)
    )
    top = list(range(d_k))
    small = sp.expand(w.extract(top, top).det()) != 0
    if not (big and small):
        raise AssertionError("the minors contradict rank d_k")  # the derivation failed
    return d_k, d_k


@derived_once
def bilinear_invariance(d_model: int = 3, d_k: int = 2) -> bool:
    """``(W_Q A)(W_K A^{−ᵀ})ᵀ = W_Q W_Kᵀ`` for generic symbolic matrices and invertible ``A``.

    Examples:
        >>> from attention_math.derivations.kernels import bilinear_invariance
        >>> bilinear_invariance(2, 2)
        True
    """
    wq = sp.Matrix(d_model, d_k, lambda r, c: sp.Symbol(f"a_{r}{c}"))
    wk = sp.Matrix(d_model, d_k, lambda r, c: sp.Symbol(f"b_{r}{c}"))
    a = sp.Matrix(d_k, d_k, lambda r, c: sp.Symbol(f"t_{r}{c}"))
    changed = (wq * a) * (wk * a.inv().T).T
    # every entry is a rational function of the symbols: cancel decides it exactly
    return all(is_zero(e) for e in changed - wq * wk.T)


@derived_once
def circuits_sum_of_heads(n_heads: int = 2, length: int = 2, d_model: int = 2) -> bool:
    """``Concat(P^(1) X W_V^(1), …) W_O = Σ_i P^(i) X (W_V^(i) W_O^(i))`` for symbolic matrices
    (``d_v = 1`` per head, ``d_out = d_model``); ``P^(i)`` stands for any weights.

    Examples:
        >>> from attention_math.derivations.kernels import circuits_sum_of_heads
        >>> circuits_sum_of_heads(2, 2, 2)
        True
    """
    x = sp.Matrix(length, d_model, lambda r, c: sp.Symbol(f"x_{r}{c}"))
    ps = [sp.Matrix(length, length, lambda r, c, i=i: sp.Symbol(f"p{i}_{r}{c}")) for i in
          range(n_heads)]  # fmt: skip
    wv = [sp.Matrix(d_model, 1, lambda r, _, i=i: sp.Symbol(f"v{i}_{r}")) for i in range(n_heads)]
    w_o = sp.Matrix(n_heads, d_model, lambda r, c: sp.Symbol(f"o_{r}{c}"))
    concat = sp.Matrix.hstack(*(p * x * w for p, w in zip(ps, wv, strict=True))) * w_o
    total = sp.zeros(length, d_model)
    for i in range(n_heads):
        total += ps[i] * x * (wv[i] * w_o[i, :])  # P^(i) X W_OV^(i)
    return bool((concat - total).expand() == sp.zeros(length, d_model))


def regression_data(
    n: int = 40, seed: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Noisy samples of ``f(x) = 2 sin x + x^0.8`` on ``[0, 5]`` (the function of d2l's
    kernel-regression chapter): ``(x_train, y_train, x_grid, f(x_grid))``.

    Examples:
        >>> from attention_math.derivations.kernels import regression_data
        >>> x, y, grid, truth = regression_data(10)
        >>> x.shape, grid.shape, bool((x[1:] >= x[:-1]).all())
        ((10,), (101,), True)
    """
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 5, n))
    y = _truth(x) + rng.normal(0, 0.5, n)
    grid = np.linspace(0, 5, 101)
    return x, y, grid, _truth(grid)


def _truth(x: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = 2 * np.sin(x) + x**0.8
    return out
