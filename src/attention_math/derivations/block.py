"""The block around attention, exactly: what LayerNorm does to the scale of the scores.

The residual stream grows as blocks add to it; the scores are quadratic in it. LayerNorm
(without its gain and bias, ``eps = 0``) maps every token to a vector of mean 0 and squared
norm exactly ``d_model``, whatever the token's scale: in a pre-LN block the scores no longer
see the size of the residual stream. The mean and the norm are checked exactly for a generic
token of a few entries, the scale of the scores for a small stream.

The modern block's changes, exactly: RMSNorm is LayerNorm without the subtraction of the mean
(`rms_norm_vs_layer_norm`), its gradient (`rms_norm_jacobian`), and the bound QK-norm puts on
every score (`qk_norm_bound`).
"""

from __future__ import annotations

import sympy as sp

from attention_math.derivations._once import derived_once
from attention_math.symbolic import is_zero

__all__ = [
    "layer_norm_exact",
    "mean_after_layer_norm",
    "norm_after_layer_norm",
    "qk_norm_bound",
    "rms_norm_exact",
    "rms_norm_jacobian",
    "rms_norm_vs_layer_norm",
    "scores_scale",
]


def _generic(d: int, name: str = "x") -> sp.Matrix:
    return sp.Matrix([sp.symbols(f"{name}_1:{d + 1}", real=True)])


def rms_norm_exact(x: sp.Matrix) -> sp.Matrix:
    """``x / rms(x)`` of a row vector, ``rms(x) = √(Σ x_i² / d)`` (``eps = 0``, gain 1).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.block import rms_norm_exact
        >>> rms_norm_exact(sp.Matrix([[3, 4]]))
        Matrix([[3*sqrt(2)/5, 4*sqrt(2)/5]])
    """
    rms = sp.sqrt(sp.Add(*(e**2 for e in x)) / x.cols)
    return x.applyfunc(lambda e: sp.simplify(e / rms))


@derived_once
def rms_norm_vs_layer_norm(d: int = 3) -> dict[str, sp.Expr | sp.Matrix]:
    """What RMSNorm drops from LayerNorm, for a generic real ``x`` of ``d`` entries.

    ``LN(x) = RMSNorm(x − mean(x))`` exactly: LayerNorm is RMSNorm of the centred vector.
    Both have squared norm ``d`` and ignore a positive scale ``c``; only LayerNorm also
    ignores a shift ``x + t·1`` (its re-centring, which RMSNorm drops).

    Raises:
        AssertionError: if an identity fails (the derivation is wrong).

    Examples:
        >>> from attention_math.derivations.block import rms_norm_vs_layer_norm
        >>> r = rms_norm_vs_layer_norm(3)
        >>> r["norm² of RMSNorm(x)"], r["LN(x) − RMSNorm(x − mean)"]
        (3, Matrix([[0, 0, 0]]))
        >>> r["RMSNorm ignores a shift"], r["LN ignores a shift"]
        (False, True)
    """
    x = _generic(d)
    c, t = sp.Symbol("c", positive=True), sp.Symbol("t", real=True)
    mean = sp.Add(*x) / d
    y = rms_norm_exact(x)
    diff = (layer_norm_exact(x) - rms_norm_exact(x.applyfunc(lambda e: e - mean))).applyfunc(
        sp.simplify
    )
    norm2 = sp.simplify(sp.Add(*(e**2 for e in y)))
    scale_free = (rms_norm_exact(c * x) - y).applyfunc(sp.simplify)
    shifted = x.applyfunc(lambda e: e + t)
    rms_shift = (rms_norm_exact(shifted) - y).applyfunc(sp.simplify)
    ln_shift = (layer_norm_exact(shifted) - layer_norm_exact(x)).applyfunc(sp.simplify)
    if any(diff) or norm2 != d or any(scale_free) or any(ln_shift) or not any(rms_shift):
        raise AssertionError("RMSNorm / LayerNorm identities failed")
    return {
        "RMSNorm(x)": y,
        "LN(x) − RMSNorm(x − mean)": diff,
        "norm² of RMSNorm(x)": norm2,
        "RMSNorm ignores a shift": not any(rms_shift),
        "LN ignores a shift": not any(ln_shift),
    }


@derived_once
def rms_norm_jacobian(d: int = 3) -> dict[str, sp.Matrix]:
    """The Jacobian of ``y = x / rms(x)``: ``∂y/∂x = (I − y yᵀ/d) / rms(x)``, derived by
    differentiating a generic ``x`` of ``d`` entries and checked against the closed form.

    The gradient of a loss ``ℓ(y)`` is then ``∂ℓ/∂x = (g − y·(y·g)/d) / rms(x)`` with
    ``g = ∂ℓ/∂y``: the component of ``g`` along ``y`` is removed (a scale of ``x`` does not
    move ``y``).

    Raises:
        AssertionError: if differentiation and the closed form disagree.

    Examples:
        >>> from attention_math.derivations.block import rms_norm_jacobian
        >>> r = rms_norm_jacobian(2)
        >>> r["J − closed form"]
        Matrix([
        [0, 0],
        [0, 0]])
    """
    x = _generic(d)
    rms = sp.sqrt(sp.Add(*(e**2 for e in x)) / d)
    y = x / rms
    jac = y.T.jacobian(x)  # (d, d): ∂y_i/∂x_j
    closed = (sp.eye(d) - y.T * y / d) / rms
    diff = (jac - closed).applyfunc(sp.simplify)
    if any(diff):
        raise AssertionError("the RMSNorm Jacobian is not (I − y yᵀ/d)/rms(x)")
    return {"J": jac, "closed form": closed, "J − closed form": diff}


@derived_once
def qk_norm_bound(d: int = 4) -> dict[str, sp.Expr]:
    """The bound QK-norm puts on a score: with ``q̂ = g_q ⊙ q/rms(q)`` and ``k̂`` alike,
    ``|q̂·k̂| / √d ≤ √d · max|g_q| · max|g_k|`` whatever the size of ``q`` and ``k``.

    Derived in three exact steps for a generic ``q`` of ``d`` entries: ``‖q/rms(q)‖² = d``;
    so ``‖q̂‖ ≤ max|g_q|·√d``; then Cauchy–Schwarz. Equality holds for ``k ∥ q`` with
    uniform gains, so no smaller bound holds; the score of ``q`` with itself is computed.

    Raises:
        AssertionError: if a step fails.

    Examples:
        >>> from attention_math.derivations.block import qk_norm_bound
        >>> r = qk_norm_bound(4)
        >>> r["‖q/rms(q)‖²"], r["bound (g_q = g_k = g)"], r["score of q with itself"]
        (4, 2*g**2, 2*g**2)
    """
    q = _generic(d, "q")
    g = sp.Symbol("g", positive=True)
    unit = rms_norm_exact(q)
    norm2 = sp.simplify(sp.Add(*(e**2 for e in unit)))
    if norm2 != d:
        raise AssertionError("‖q/rms(q)‖² is not d")
    bound = sp.sqrt(d) * g**2  # (√d·g)·(√d·g)/√d
    attained = sp.simplify(sp.Add(*((g * e) ** 2 for e in unit)) / sp.sqrt(d))
    if sp.simplify(attained - bound) != 0:
        raise AssertionError("q with itself does not attain the bound")
    return {
        "‖q/rms(q)‖²": norm2,
        "bound (g_q = g_k = g)": bound,
        "score of q with itself": attained,
    }


def layer_norm_exact(x: sp.Matrix) -> sp.Matrix:
    """``(x − mean) / √var`` of a row vector (``eps = 0``, gain 1, bias 0).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.block import layer_norm_exact
        >>> layer_norm_exact(sp.Matrix([[1, 2, 3]]))
        Matrix([[-sqrt(6)/2, 0, sqrt(6)/2]])
    """
    d = x.cols
    mean = sp.Add(*x) / d
    centred = x.applyfunc(lambda e: e - mean)
    var = sp.Add(*(e**2 for e in centred)) / d
    return centred.applyfunc(lambda e: sp.simplify(e / sp.sqrt(var)))


@derived_once
def norm_after_layer_norm(d: int = 3) -> sp.Expr:
    """``‖LN(x)‖²`` for a generic real ``x`` of ``d`` entries, simplified: ``d``.

    Examples:
        >>> from attention_math.derivations.block import norm_after_layer_norm
        >>> norm_after_layer_norm(3)
        3
    """
    x = sp.Matrix([sp.symbols(f"x_1:{d + 1}", real=True)])
    y = layer_norm_exact(x)
    return sp.simplify(sp.Add(*(e**2 for e in y)))


@derived_once
def mean_after_layer_norm(d: int = 3) -> sp.Expr:
    """The mean of ``LN(x)``'s entries for a generic real ``x`` of ``d`` entries: ``0``.

    Examples:
        >>> from attention_math.derivations.block import mean_after_layer_norm
        >>> mean_after_layer_norm(3)
        0
    """
    x = sp.Matrix([sp.symbols(f"x_1:{d + 1}", real=True)])
    return sp.simplify(sp.Add(*layer_norm_exact(x)) / d)


def scores_scale(x: sp.Matrix) -> dict[str, sp.Expr]:
    """Scores ``X Xᵀ / √d`` of the stream ``c·X`` (``c > 0`` a symbol), with and without a
    LayerNorm first: ``c²`` times the scores of ``X`` without it, independent of ``c`` with.

    Raises:
        AssertionError: if the scores were not a fixed multiple (the derivation failed).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.block import scores_scale
        >>> r = scores_scale(sp.Matrix([[1, 0, 2], [0, 1, 1]]))
        >>> r["factor without LayerNorm"], r["factor with LayerNorm"]
        (c**2, 1)
    """
    c = sp.Symbol("c", positive=True)
    d = x.cols

    def scores(m: sp.Matrix) -> sp.Matrix:
        return m * m.T / sp.sqrt(d)

    def ln(m: sp.Matrix) -> sp.Matrix:
        return sp.Matrix.vstack(*(layer_norm_exact(m.row(i)) for i in range(m.rows)))

    plain, scaled = scores(x), scores(c * x)
    normed, normed_scaled = scores(ln(x)), scores(ln(c * x))
    factor = sp.simplify(scaled[0, 0] / plain[0, 0])
    if not all(is_zero(a - factor * b) for a, b in zip(scaled, plain, strict=True)):
        raise AssertionError("scores of c·X are not a fixed multiple of those of X")
    factor_ln = sp.simplify(normed_scaled[0, 0] / normed[0, 0])
    if not all(is_zero(a - factor_ln * b) for a, b in zip(normed_scaled, normed, strict=True)):
        raise AssertionError("scores after LayerNorm are not a fixed multiple")
    return {
        "scores": plain,
        "scores after LayerNorm": normed.applyfunc(sp.simplify),
        "factor without LayerNorm": factor,
        "factor with LayerNorm": factor_ln,
    }
