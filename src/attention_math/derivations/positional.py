"""Positions, exactly: the sinusoidal shift, RoPE's relative property and layouts, ALiBi.

* Sinusoidal: ``PE(p + δ) = G(δ) · PE(p)`` with ``G(δ)`` block-diagonal rotations that do
  not depend on ``p``.
* RoPE: ``R(mθ)ᵀ R(nθ) = R((n − m)θ)``, so the score of a rotated query at ``m`` and a
  rotated key at ``n`` depends on ``n − m`` only; rotations keep norms; the two pair
  layouts are conjugate by a fixed permutation.
* ALiBi: the bias depends on ``i − j`` only; with equal content scores, a causal row's
  weights are ``e^{−m(i−j)}`` over a geometric normaliser.

The NumPy side is [`positional`][attention_math.positional].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from numpy.typing import NDArray

from attention_math import positional
from attention_math._checks import check_count
from attention_math.crosscheck import crosscheck
from attention_math.derivations._once import derived_once

__all__ = [
    "alibi_row_normaliser",
    "alibi_row_weights",
    "alibi_slopes_exact",
    "alibi_toeplitz",
    "conventions_conjugate",
    "float32_path_gap",
    "layout_mismatch",
    "layout_permutation",
    "pe_vector",
    "rope_float32_path",
    "rope_keeps_norms",
    "rope_matrix",
    "rope_relative_holds",
    "rotation",
    "shift_matrix",
    "sinusoidal_exact",
    "sinusoidal_shift_holds",
    "theta_rounding",
]


def _trig_zero(e: sp.Expr) -> bool:
    """True when ``e`` is 0 by the angle-addition formulas (arguments expanded first)."""
    return bool(sp.expand(sp.expand_trig(sp.expand(e))) == 0)


def sinusoidal_exact(n_positions: int, d_model: int, base: int = 10000) -> sp.Matrix:
    """The sinusoidal encoding with exact entries ``sin(p / base^(2i/d))``, ``cos(·)``.

    Examples:
        >>> from attention_math.derivations.positional import sinusoidal_exact
        >>> sinusoidal_exact(2, 4, base=100)
        Matrix([
        [     0,      1,         0,         1],
        [sin(1), cos(1), sin(1/10), cos(1/10)]])
    """
    theta = [sp.Integer(base) ** sp.Rational(-2 * i, d_model) for i in range(d_model // 2)]
    rows = []
    for p in range(n_positions):
        row: list[sp.Expr] = []
        for t in theta:
            row += [sp.sin(p * t), sp.cos(p * t)]
        rows.append(row)
    return sp.Matrix(rows)


def pe_vector(p: sp.Expr, thetas: Sequence[sp.Expr]) -> sp.Matrix:
    """The column ``(sin θ₁p, cos θ₁p, sin θ₂p, cos θ₂p, …)``."""
    return sp.Matrix([f(t * p) for t in thetas for f in (sp.sin, sp.cos)])


def shift_matrix(delta: sp.Expr, thetas: Sequence[sp.Expr]) -> sp.Matrix:
    """``G(δ)``: one 2×2 block ``[[cos θδ, sin θδ], [−sin θδ, cos θδ]]`` per frequency θ.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.positional import shift_matrix
        >>> shift_matrix(sp.Symbol("delta"), [1])
        Matrix([
        [ cos(delta), sin(delta)],
        [-sin(delta), cos(delta)]])
    """
    blocks = [
        sp.Matrix([[sp.cos(t * delta), sp.sin(t * delta)], [-sp.sin(t * delta), sp.cos(t * delta)]])
        for t in thetas
    ]
    return sp.diag(*blocks)


def sinusoidal_shift_holds(n_frequencies: int = 2) -> bool:
    """True when ``G(δ) · PE(p) = PE(p + δ)`` for symbolic ``p``, ``δ`` and frequencies.

    Examples:
        >>> from attention_math.derivations.positional import sinusoidal_shift_holds
        >>> sinusoidal_shift_holds(2)
        True
    """
    p, delta = sp.symbols("p delta", real=True)
    thetas = sp.symbols(f"theta_1:{n_frequencies + 1}", positive=True)
    diff = shift_matrix(delta, thetas) * pe_vector(p, thetas) - pe_vector(p + delta, thetas)
    return all(_trig_zero(e) for e in diff)


def rotation(angle: sp.Expr) -> sp.Matrix:
    """The 2×2 rotation ``R(α) = [[cos α, −sin α], [sin α, cos α]]``."""
    return sp.Matrix([[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]])


def rope_matrix(position: sp.Expr, thetas: Sequence[sp.Expr], *, interleaved: bool) -> sp.Matrix:
    """The ``d × d`` matrix of RoPE at ``position`` (``d = 2·len(thetas)``), acting on columns.

    Pair ``i`` is ``(2i, 2i+1)`` when ``interleaved``, else ``(i, i + d/2)``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.positional import rope_matrix
        >>> rope_matrix(1, [sp.Symbol("a"), sp.Symbol("b")], interleaved=False)
        Matrix([
        [cos(a),      0, -sin(a),      0],
        [     0, cos(b),       0, -sin(b)],
        [sin(a),      0,  cos(a),      0],
        [     0, sin(b),       0,  cos(b)]])
    """
    half = len(thetas)
    out = sp.zeros(2 * half, 2 * half)
    for i, th in enumerate(thetas):
        a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
        r = rotation(position * th)
        out[a, a], out[a, b], out[b, a], out[b, b] = r[0, 0], r[0, 1], r[1, 0], r[1, 1]
    return out


@derived_once
def rope_relative_holds(half_d: int = 2, *, interleaved: bool = False) -> bool:
    """True when ``R(m)ᵀ R(n) = R(n − m)`` and so ``⟨R(m) q, R(n) k⟩ = qᵀ R(n − m) k`` for
    symbolic positions ``m, n``, frequencies and vectors ``q, k``.

    Examples:
        >>> from attention_math.derivations.positional import rope_relative_holds
        >>> rope_relative_holds(2), rope_relative_holds(2, interleaved=True)
        (True, True)
    """
    m, n = sp.symbols("m n", integer=True)
    thetas = sp.symbols(f"theta_1:{half_d + 1}", positive=True)
    d = 2 * half_d
    q = sp.Matrix(sp.symbols(f"q_1:{d + 1}", real=True))
    k = sp.Matrix(sp.symbols(f"k_1:{d + 1}", real=True))
    rm, rn = (rope_matrix(x, thetas, interleaved=interleaved) for x in (m, n))
    rel = rope_matrix(n - m, thetas, interleaved=interleaved)
    product_ok = all(_trig_zero(e) for e in rm.T * rn - rel)
    score = ((rm * q).T * (rn * k))[0, 0] - (q.T * rel * k)[0, 0]
    return product_ok and _trig_zero(score)


@derived_once
def rope_keeps_norms(half_d: int = 2) -> bool:
    """True when ``R(p)ᵀ R(p) = I`` for symbolic ``p`` and frequencies (so ``‖R q‖ = ‖q‖``,
    and the variance argument for ``1/√d_k`` is untouched).

    Examples:
        >>> from attention_math.derivations.positional import rope_keeps_norms
        >>> rope_keeps_norms(3)
        True
    """
    p = sp.Symbol("p", integer=True)
    thetas = sp.symbols(f"theta_1:{half_d + 1}", positive=True)
    r = rope_matrix(p, thetas, interleaved=False)
    return bool((r.T * r).applyfunc(sp.trigsimp) == sp.eye(2 * half_d))


def layout_permutation(d: int) -> sp.Matrix:
    """The permutation matrix ``Π`` with ``(Π x)[j] = x[perm[j]]``, ``perm = (0, 2, 4, …, 1, 3,
    5, …)``: it moves interleaved pairs ``(2i, 2i+1)`` to the halves ``(i, i + d/2)``.

    Examples:
        >>> from attention_math.derivations.positional import layout_permutation
        >>> layout_permutation(4)
        Matrix([
        [1, 0, 0, 0],
        [0, 0, 1, 0],
        [0, 1, 0, 0],
        [0, 0, 0, 1]])
    """
    perm = [*range(0, d, 2), *range(1, d, 2)]
    out = sp.zeros(d, d)
    for j, src in enumerate(perm):
        out[j, src] = 1
    return out


def conventions_conjugate(half_d: int = 2) -> bool:
    """True when ``R_halves(p) = Π R_interleaved(p) Πᵀ`` for symbolic ``p`` and frequencies:
    the two layouts are one map, read in two orders of the coordinates.

    Examples:
        >>> from attention_math.derivations.positional import conventions_conjugate
        >>> conventions_conjugate(3)
        True
    """
    p = sp.Symbol("p", integer=True)
    thetas = sp.symbols(f"theta_1:{half_d + 1}", positive=True)
    pi = layout_permutation(2 * half_d)
    halves = rope_matrix(p, thetas, interleaved=False)
    inter = rope_matrix(p, thetas, interleaved=True)
    return bool(halves == pi * inter * pi.T)


def layout_mismatch(d: int = 8, length: int = 6, seed: int = 0) -> dict[str, float]:
    """The classic bug, measured: weights whose ``q``, ``k`` are meant for one layout, run with
    the other. Returns the largest score error of the wrong layout and of the wrong layout
    after permuting the columns of ``W_Q`` and ``W_K`` (what checkpoint converters do), and,
    for scale, the largest score of the right layout.

    Examples:
        >>> from attention_math.derivations.positional import layout_mismatch
        >>> r = layout_mismatch()
        >>> r["wrong layout"] > 0.1, r["permuted weights"] < 1e-12
        (True, True)
        >>> r["wrong layout"] > r["largest score"] / 2  # an error as large as the scores
        True
    """
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((length, d))  # (L, d_model), d_model = d
    w_q, w_k = rng.standard_normal((2, d, d))  # (d_model, d_k)

    def scores(wq: NDArray[np.float64], wk: NDArray[np.float64], inter: bool) -> NDArray[Any]:
        q = positional.rope(x @ wq, interleaved=inter)  # (L, d)
        k = positional.rope(x @ wk, interleaved=inter)  # (L, d)
        return q @ k.T  # (L, L)

    right = scores(w_q, w_k, True)  # trained (and meant) interleaved
    wrong = scores(w_q, w_k, False)  # loaded into rotate_half code as they are
    perm = np.array([*range(0, d, 2), *range(1, d, 2)])
    fixed = scores(w_q[:, perm], w_k[:, perm], False)  # columns permuted first
    return {
        "wrong layout": float(np.abs(wrong - right).max()),
        "permuted weights": float(np.abs(fixed - right).max()),
        "largest score": float(np.abs(right).max()),
    }


def theta_rounding(d: int, base: int = 10000) -> dict[str, int]:
    """How many of ``rope_frequencies(d)`` are not ``base^(−2i/d)`` correctly rounded.

    ``rope_frequencies`` computes ``math.pow(base, −2i/d)``: one correctly rounded power, but of
    the exponent ``−2i/d`` *as a float64*, which is exact only when ``d`` is a power of two.
    Otherwise the exponent is rounded first and some ``θ_i`` land one unit in the last place
    away from the correctly rounded value (computed here with 50 digits by mpmath).

    Returns:
        ``{"pairs": d/2, "differ": how many θ_i differ from the correctly rounded value}``.

    Examples:
        >>> from attention_math.derivations.positional import theta_rounding
        >>> theta_rounding(64)
        {'pairs': 32, 'differ': 0}
        >>> theta_rounding(80)["differ"] > 0
        True
    """
    ours = positional.rope_frequencies(d, base=float(base))  # (d/2,); checks d
    with mpmath.workdps(50):
        exact = [float(mpmath.power(base, mpmath.mpf(-2 * i) / d)) for i in range(d // 2)]
    return {"pairs": d // 2, "differ": int(np.sum(ours != np.array(exact)))}


def rope_float32_path(
    x: NDArray[np.float32], positions: NDArray[np.int64], base: float = 10000.0
) -> NDArray[np.float32]:
    """RoPE as Hugging Face's LLaMA code computes it, every step in float32, in NumPy.

    ``inv_freq = 1 / base ** (arange(0, d, 2) / d)`` in float32, the angles ``p · inv_freq``
    as a float32 product, their cosines and sines in float32, then
    ``x · cos + rotate_half(x) · sin`` (Meta's code forms the same float32 angles and turns
    them into complex64 numbers). ``positional.rope`` forms the angles in float64 instead.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.positional import rope_float32_path
        >>> x = np.array([[1.0, 0.0]], dtype=np.float32)   # one token, one pair
        >>> rope_float32_path(x, np.array([1])).round(4)   # turned by 1 radian
        array([[0.5403, 0.8415]], dtype=float32)
    """
    a = np.asarray(x, dtype=np.float32)  # (..., L, d)
    d = a.shape[-1]
    f32 = np.float32
    exponent = np.arange(0, d, 2).astype(f32) / f32(d)  # (d/2,), float32 as torch forms it
    # the float32 power correctly rounded, as torch's pow gives it: NumPy's own float32 power
    # (a SIMD kernel on some CPUs) can be one ulp off, and at position 8000 one ulp of a
    # frequency turns the angle by 5e-4 radians
    power = (np.float64(base) ** exponent.astype(np.float64)).astype(f32)  # (d/2,)
    inv_freq = f32(1.0) / power  # (d/2,)
    angle = np.asarray(positions).astype(f32)[:, None] * inv_freq[None, :]  # (L, d/2), float32
    emb = np.concatenate([angle, angle], axis=-1)  # (L, d)
    x1, x2 = a[..., : d // 2], a[..., d // 2 :]  # (..., L, d/2) each
    rotated = np.concatenate([-x2, x1], axis=-1)  # (..., L, d)
    out: NDArray[np.float32] = a * np.cos(emb) + rotated * np.sin(emb)  # (..., L, d)
    return out


def float32_path_gap(d: int = 128, p_max: int = 8192) -> dict[str, float]:
    """The cosines and sines of RoPE for positions ``0 … p_max − 1``, two ways, in units of
    float32's ε: ``positional.rope``'s (angles in float64, rounded to float32 at the end)
    and the float32 path of
    [`rope_float32_path`][attention_math.derivations.positional.rope_float32_path]; each
    against float64 angles, whose own error (about ``p_max`` times float64's ε) is far below
    float32's ε.

    Returns:
        A dict, all in ε₃₂: ``between`` (largest ``|ours − float32 path|``), ``ours_exact``
            (largest ``|ours − float64|``) and ``float32_exact`` (largest
            ``|float32 path − float64|``).

    Examples:
        >>> from attention_math.derivations.positional import float32_path_gap
        >>> g = float32_path_gap(64, 8192)
        >>> g["ours_exact"] <= 0.5 < 100 < g["between"]
        True
    """
    theta = positional.rope_frequencies(d)  # (d/2,), float64; checks d
    p = np.arange(check_count("p_max", p_max))  # (p_max,)
    angle64 = p[:, None] * theta[None, :]  # (p_max, d/2)
    f32 = np.float32
    inv_freq = f32(1.0) / f32(10000.0) ** (np.arange(0, d, 2).astype(f32) / f32(d))  # (d/2,)
    angle32 = p.astype(f32)[:, None] * inv_freq[None, :]  # (p_max, d/2), float32
    eps = float(np.finfo(f32).eps)
    exact = np.concatenate([np.cos(angle64), np.sin(angle64)])  # (2 p_max, d/2), float64
    ours = exact.astype(f32).astype(np.float64)  # what rope uses in float32
    theirs = np.concatenate([np.cos(angle32), np.sin(angle32)]).astype(np.float64)
    return {
        "between": float(np.abs(ours - theirs).max() / eps),
        "ours_exact": float(np.abs(ours - exact).max() / eps),
        "float32_exact": float(np.abs(theirs - exact).max() / eps),
    }


def alibi_slopes_exact(n_heads: int) -> list[sp.Expr]:
    """The ALiBi slopes as exact powers of two.

    Examples:
        >>> from attention_math.derivations.positional import alibi_slopes_exact
        >>> alibi_slopes_exact(6)
        [1/4, 1/16, 1/64, 1/256, 1/2, 1/8]
    """
    return [
        sp.Integer(2) ** -sp.Rational(e.numerator, e.denominator)
        for e in positional.alibi_exponents(n_heads)
    ]


@derived_once
def alibi_toeplitz(n_heads: int, size: int) -> bool:
    """True when every head's exact bias matrix is constant along diagonals
    (``B[i+1, j+1] = B[i, j]``: it depends on ``i − j`` only), the NumPy bias is so too, bit
    for bit, and the two agree to within rounding (an irrational slope such as ``√2/2`` has
    no float equal to it).

    Raises:
        CrossCheckError: a head's NumPy bias is more than 1 ε (relative) from the exact one.

    Examples:
        >>> from attention_math.derivations.positional import alibi_toeplitz
        >>> alibi_toeplitz(4, 5), alibi_toeplitz(12, 6)
        (True, True)
    """
    numeric = positional.alibi_bias(n_heads, size)
    for h, m in enumerate(alibi_slopes_exact(n_heads)):
        b = sp.Matrix([[-m * abs(i - j) for j in range(size)] for i in range(size)])
        shifted = all(b[i + 1, j + 1] == b[i, j] for i in range(size - 1) for j in range(size - 1))
        n = numeric[h]  # (size, size)
        if not (shifted and np.array_equal(n[1:, 1:], n[:-1, :-1])):
            return False
        crosscheck(b, n, bound_eps=1, label=f"ALiBi bias of head {h + 1}")
    return True


def alibi_row_weights(m: sp.Expr, i: int) -> sp.Matrix:
    """The causal row ``i`` (keys ``0 … i``) of softmax(bias) with equal content scores:
    weights ``e^{−m(i−j)} / Σ_k e^{−m k}``, as a row vector.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.positional import alibi_row_weights
        >>> alibi_row_weights(sp.log(2), 2)
        Matrix([[1/7, 2/7, 4/7]])
    """
    e = [sp.exp(-m * (i - j)) for j in range(i + 1)]
    total = sp.Add(*e)
    return sp.Matrix([[sp.simplify(x / total) for x in e]])


def alibi_row_normaliser(m: sp.Expr, i: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """``Σ_{k=0}^{i} e^{−mk}`` summed by SymPy, and the closed form
    ``(1 − e^{−m(i+1)}) / (1 − e^{−m})``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.positional import alibi_row_normaliser
        >>> m, i = sp.Symbol("m", positive=True), sp.Symbol("i", integer=True, nonnegative=True)
        >>> summed, closed = alibi_row_normaliser(m, i)
        >>> sp.simplify(summed - closed)
        0
    """
    k = sp.Symbol("k", integer=True, nonnegative=True)
    summed = sp.summation(sp.exp(-m * k), (k, 0, i))
    # SymPy keeps the case e^{-m} = 1 (m = 0) apart; ALiBi slopes are positive
    summed = summed.subs(sp.Eq(sp.exp(-m), 1), sp.false)
    closed = (1 - sp.exp(-m * (i + 1))) / (1 - sp.exp(-m))
    return summed, closed
