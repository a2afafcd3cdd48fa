"""The block around attention, exactly: what LayerNorm does to the scale of the scores.

The residual stream grows as blocks add to it; the scores are quadratic in it. LayerNorm
(without its gain and bias, ``eps = 0``) maps every token to a vector of mean 0 and squared
norm exactly ``d_model``, whatever the token's scale: in a pre-LN block the scores no longer
see the size of the residual stream. The mean and the norm are checked exactly for a generic
token of a few entries, the scale of the scores for a small stream.
"""

from __future__ import annotations

import sympy as sp

from attention_math.derivations.online_softmax import is_zero

__all__ = ["layer_norm_exact", "mean_after_layer_norm", "norm_after_layer_norm", "scores_scale"]


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
