"""FlashAttention's IO analysis, exactly: HBM accesses of the standard and the tiled
algorithm, their orders, the arithmetic intensity of each step, and the backward's cost.

Symbols: ``L`` the sequence length, ``d`` the head width, ``M_SRAM`` the SRAM size in numbers,
``n_bytes`` per number. Block sizes are taken without their ceilings (``B_c = M_SRAM / 4d``,
``L`` a multiple of it), where the counts of [`io_model`][attention_math.io_model] are exactly
these polynomials; `check_against_counts` evaluates both and raises if they differ.
"""

from __future__ import annotations

import sympy as sp

from attention_math import io_model
from attention_math.derivations._once import derived_once

__all__ = [
    "backward_ratio",
    "check_against_counts",
    "flash",
    "flash2",
    "flash2_against_flash",
    "flash_order",
    "intensity_steps",
    "standard",
    "step_work",
    "symbols",
]

L, d, M, n_bytes = sp.symbols("L d M_SRAM n_bytes", positive=True)


def symbols() -> dict[str, sp.Symbol]:
    """The symbols by name.

    Examples:
        >>> from attention_math.derivations.io import symbols
        >>> sorted(symbols())
        ['L', 'M_SRAM', 'd', 'n_bytes']
    """
    return {str(s): s for s in (L, d, M, n_bytes)}


def standard() -> sp.Expr:
    """Algorithm 0's HBM accesses: ``Q, K`` in, ``S`` out, ``S`` in, ``P`` out, ``P, V`` in,
    ``O`` out.

    Examples:
        >>> from attention_math.derivations.io import standard
        >>> standard()
        4*L**2 + 4*L*d
    """
    return sp.expand((2 * L * d + L**2) + 2 * L**2 + (L**2 + 2 * L * d))


def flash() -> sp.Expr:
    """Algorithm 1's HBM accesses with ``B_c = M_SRAM/4d`` key rows per block:
    ``T_c = L/B_c`` key blocks, each reading all of ``Q, O, λ, m`` and writing ``O, λ, m``.

    Examples:
        >>> from attention_math.derivations.io import flash
        >>> flash()
        12*L**2*d**2/M_SRAM + 16*L**2*d/M_SRAM + 3*L*d + 2*L
    """
    t_c = L / (M / (4 * d))  # key blocks
    return sp.expand(L * d + 2 * L + 2 * L * d + t_c * L * (3 * d + 4))


def flash_order() -> tuple[sp.Expr, sp.Expr]:
    """``(lim_{L→∞} flash / (L² d² / M_SRAM), lim_{L→∞} standard / flash)``: the constant of
    ``Θ(L² d² / M_SRAM)`` and how many times fewer accesses FlashAttention makes at long ``L``.

    Examples:
        >>> from attention_math.derivations.io import flash_order
        >>> flash_order()
        (12 + 16/d, M_SRAM/(d*(3*d + 4)))
    """
    const = sp.limit(flash() / (L**2 * d**2 / M), L, sp.oo)
    ratio = sp.limit(standard() / flash(), L, sp.oo)
    return sp.expand(const), sp.simplify(ratio)


def flash2() -> sp.Expr:
    """FlashAttention-2's forward HBM accesses with Algorithm 1's tile transposed,
    ``B_r = M_SRAM/4d`` query rows (``B_c = min(B_r, d)`` key rows do not enter the count):
    ``Q`` read once, ``K, V`` once per query block, ``O`` and the log-sum-exp written once.

    Examples:
        >>> from attention_math.derivations.io import flash2
        >>> flash2()
        8*L**2*d**2/M_SRAM + 2*L*d + L
    """
    t_r = L / (M / (4 * d))  # query blocks
    return sp.expand(L * d + t_r * 2 * L * d + L * d + L)


def flash2_against_flash() -> sp.Expr:
    """``lim_{L→∞} flash / flash2``: how many times fewer accesses the swapped loops make with
    the same tile, transposed: ``(3d + 4) / 2d``, the numbers a pass moves per row (``Q``,
    ``O`` in and out, ``λ``, ``m`` in and out, against ``K``, ``V`` in).

    Examples:
        >>> from attention_math.derivations.io import flash2_against_flash
        >>> flash2_against_flash()
        3/2 + 2/d
    """
    return sp.expand(sp.limit(flash() / flash2(), L, sp.oo))


def step_work() -> dict[str, tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]]:
    """``step → (matrix-product FLOPs, elementwise FLOPs, exponentials, bytes)`` for the
    standard implementation's three steps and for the fused kernel. The softmax does 5
    operations per score: an exponential (on the special-function units) and 4 elementwise
    FLOPs on the FP32 cores (max, subtract, sum, divide); the products run on the tensor cores.

    Examples:
        >>> from attention_math.derivations.io import step_work
        >>> step_work()["P = softmax(S)"]
        (0, 4*L**2, L**2, 2*L**2*n_bytes)
    """
    zero = sp.Integer(0)
    return {
        "S = QKᵀ": (2 * L**2 * d, zero, zero, n_bytes * (2 * L * d + L**2)),
        "P = softmax(S)": (zero, 4 * L**2, L**2, n_bytes * 2 * L**2),
        "O = PV": (2 * L**2 * d, zero, zero, n_bytes * (L**2 + 2 * L * d)),
        "fused (Algorithm 1)": (4 * L**2 * d, 4 * L**2, L**2, n_bytes * flash()),
    }


def intensity_steps() -> dict[str, tuple[sp.Expr, sp.Expr]]:
    """``step → (FLOPs, bytes)`` of `step_work`, every operation counted as one FLOP
    (5 per score for the softmax: max, subtract, exp, sum, divide).

    Examples:
        >>> from attention_math.derivations.io import intensity_steps, L, d
        >>> import sympy as sp
        >>> flops, nbytes = intensity_steps()["S = QKᵀ"]
        >>> sp.limit(flops / nbytes, L, sp.oo)  # FLOPs per byte at long L: d in 16-bit numbers
        2*d/n_bytes
    """
    return {step: (sp.expand(mm + ew + ex), nb) for step, (mm, ew, ex, nb) in step_work().items()}


def backward_ratio() -> sp.Expr:
    """The backward's matrix-product FLOPs over the forward's when ``S`` is recomputed.

    Examples:
        >>> from attention_math.derivations.io import backward_ratio
        >>> backward_ratio()
        5/2
    """
    forward = 2 * (2 * L**2 * d)  # S = QKᵀ, O = PV
    backward = 5 * (2 * L**2 * d)  # S again, dV, dP, dQ, dK
    return sp.simplify(backward / forward)


@derived_once
def check_against_counts(L_: int, d_: int, M_: int) -> bool:
    """True when the symbolic counts equal `io_model`'s counts (and the counted runs) at
    sizes where ``4 d`` divides ``M_SRAM`` and ``M_SRAM/4d`` divides ``L`` and is at most ``d``.

    Raises:
        ValueError: sizes that do not divide as required.
        AssertionError: the counts differ.

    Examples:
        >>> from attention_math.derivations.io import check_against_counts
        >>> check_against_counts(64, 8, 128)
        True
    """
    b_c = M_ // (4 * d_)
    if M_ % (4 * d_) or L_ % b_c or b_c > d_:
        raise ValueError(f"need 4d | M, M/4d | L and M/4d ≤ d, got L={L_}, d={d_}, M={M_}")
    import numpy as np  # the counted runs, at build time only

    point = {L: L_, d: d_, M: M_}
    rng = np.random.default_rng(L_ + d_)
    q, k, v = rng.normal(size=(3, L_, d_))  # (L, d) each
    _, io_std = io_model.standard_forward_counted(q, k, v)
    _, io_fl = io_model.flash_forward_counted(q, k, v, M_)
    _, io_fl2 = io_model.flash2_forward_counted(q, k, v, M_)
    ok = (
        standard().subs(point) == io_model.standard_accesses(L_, d_) == io_std.total
        and flash().subs(point) == io_model.flash_accesses(L_, d_, M_) == io_fl.total
        and flash2().subs(point) == io_model.flash2_accesses(L_, d_, M_) == io_fl2.total
    )
    if not ok:
        raise AssertionError(f"symbolic and counted accesses differ at L={L_}, d={d_}, M={M_}")
    return True
