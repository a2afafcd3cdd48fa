"""The identities behind FlashAttention's tiled backward, exactly, on a small symbolic case.

``L_q = 2`` queries and ``L_k = 3`` keys of width 1 (generic real symbols), cut into query
tiles ``{1}, {2}`` and key tiles ``{1}, {2, 3}``:

* ``P = exp(S − lse·1ᵀ)`` with ``lse = log Σ_j e^{S_ij}`` *is* the softmax: the weights can
  be recomputed from one number per row;
* ``D = rowsum(dO ∘ O) = rowsum(P ∘ dP)``: the correction term needs no row of ``P``;
* adding the tiles' shares of ``dQ``, ``dK``, ``dV`` (and assembling ``dS`` from its
  tiles) gives the full formulas, which are the derivatives of ``ℓ = Σ dO ∘ O`` (SymPy's
  ``diff``).

Each identity is decided by ``symbolic.is_zero``: exponentials become powers of fresh
symbols and the difference cancels to 0 as a rational function (exact, and several times
faster than ``simplify`` here).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from attention_math.derivations._once import derived_once
from attention_math.symbolic import is_zero

__all__ = ["Case", "case", "d_two_ways", "lse_recomputes_softmax", "tiles_sum_to_full"]


@dataclass(frozen=True)
class Case:
    """The symbolic problem: inputs, the upstream gradient ``dO`` and the forward quantities
    (``S``, ``P``, ``lse``, ``O``)."""

    q: sp.Matrix  # (L_q, 1)
    k: sp.Matrix  # (L_k, 1)
    v: sp.Matrix  # (L_k, 1)
    d_out: sp.Matrix  # (L_q, 1)
    s: sp.Matrix  # scores q kᵀ (scale 1)
    p: sp.Matrix  # softmax weights
    lse: sp.Matrix  # (L_q, 1)
    out: sp.Matrix  # O = P V


@derived_once
def case(n_q: int = 2, n_k: int = 3) -> Case:
    """Build the symbolic case.

    Examples:
        >>> from attention_math.derivations.flash_backward import case
        >>> c = case()
        >>> c.lse[0]
        log(exp(k_1*q_1) + exp(k_2*q_1) + exp(k_3*q_1))
    """
    q = sp.Matrix(sp.symbols(f"q_1:{n_q + 1}", real=True))
    k = sp.Matrix(sp.symbols(f"k_1:{n_k + 1}", real=True))
    v = sp.Matrix(sp.symbols(f"v_1:{n_k + 1}", real=True))
    g = sp.Matrix(sp.symbols(f"g_1:{n_q + 1}", real=True))  # dO
    s = q * k.T
    e = s.applyfunc(sp.exp)
    p = sp.Matrix(n_q, n_k, lambda i, j: e[i, j] / sum(e[i, :]))
    lse = sp.Matrix(n_q, 1, lambda i, _: sp.log(sum(e[i, :])))
    return Case(q, k, v, g, s, p, lse, p * v)


@derived_once
def lse_recomputes_softmax(c: Case) -> bool:
    """``exp(S_ij − lse_i) = P_ij`` for every entry.

    Examples:
        >>> from attention_math.derivations.flash_backward import case, lse_recomputes_softmax
        >>> lse_recomputes_softmax(case())
        True
    """
    n_q, n_k = c.s.shape
    return all(
        is_zero(sp.exp(c.s[i, j] - c.lse[i]) - c.p[i, j]) for i in range(n_q) for j in range(n_k)
    )


@derived_once
def d_two_ways(c: Case) -> tuple[sp.Matrix, bool]:
    """``D = rowsum(dO ∘ O)`` and whether it equals ``rowsum(P ∘ dP)`` with ``dP = dO Vᵀ``.

    Examples:
        >>> from attention_math.derivations.flash_backward import case, d_two_ways
        >>> d_two_ways(case())[1]
        True
    """
    d_from_o = c.d_out.multiply_elementwise(c.out)  # width 1: the row sum is the entry
    dp = c.d_out * c.v.T
    d_from_p = sp.Matrix([sum(c.p.multiply_elementwise(dp)[i, :]) for i in range(c.p.rows)])
    return d_from_o, all(is_zero(e) for e in d_from_o - d_from_p)


@derived_once
def tiles_sum_to_full(
    c: Case,
    q_tiles: tuple[tuple[int, ...], ...] = ((0,), (1,)),
    k_tiles: tuple[tuple[int, ...], ...] = ((0,), (1, 2)),
) -> dict[str, bool]:
    """Accumulate ``dQ``, ``dK``, ``dV`` tile by tile, each tile's ``P`` recomputed from
    ``lse``, and compare with the full formulas and with ``∂ℓ/∂q``, ``∂ℓ/∂k``, ``∂ℓ/∂v``.

    Examples:
        >>> from attention_math.derivations.flash_backward import case, tiles_sum_to_full
        >>> tiles_sum_to_full(case())
        {'dS': True, 'dQ': True, 'dK': True, 'dV': True, 'autograd': True}
    """
    n_q, n_k = c.s.shape
    dp = c.d_out * c.v.T
    d_row = c.d_out.multiply_elementwise(c.out)  # D, (L_q, 1)
    ds_full = sp.Matrix(n_q, n_k, lambda i, j: c.p[i, j] * (dp[i, j] - d_row[i]))
    full = {"dQ": ds_full * c.k, "dK": ds_full.T * c.q, "dV": c.p.T * c.d_out}
    acc = {"dQ": sp.zeros(n_q, 1), "dK": sp.zeros(n_k, 1), "dV": sp.zeros(n_k, 1)}
    ds_tiled = sp.zeros(n_q, n_k)
    for kt in k_tiles:
        for qt in q_tiles:
            for i in qt:
                for j in kt:
                    p_ij = sp.exp(c.s[i, j] - c.lse[i])  # recomputed, not stored
                    ds_ij = p_ij * (c.d_out[i] * c.v[j] - d_row[i])
                    ds_tiled[i, j] = ds_ij
                    acc["dV"][j] += p_ij * c.d_out[i]
                    acc["dQ"][i] += ds_ij * c.k[j]
                    acc["dK"][j] += ds_ij * c.q[i]
    same = {"dS": all(is_zero(e) for e in ds_tiled - ds_full)}
    for name in ("dQ", "dK", "dV"):
        same[name] = all(is_zero(e) for e in acc[name] - full[name])
    loss = sum(c.d_out[i] * c.out[i] for i in range(n_q))  # ℓ = Σ dO ∘ O
    grads = {"dQ": c.q, "dK": c.k, "dV": c.v}
    same["autograd"] = all(
        is_zero(loss.diff(x) - full[name][r])
        for name, xs in grads.items()
        for r, x in enumerate(xs)
    )
    return same
