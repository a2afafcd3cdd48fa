"""Why softmax subtracts the row maximum, and how accurate the result is.

* Shift invariance: ``softmax(z + c) = softmax(z)`` for every real ``c`` (exact, symbolic).
* After subtracting ``m = max z`` every exponent is ``≤ 0``, so every ``exp`` is in
  ``(0, 1]`` and the sum is in ``[1, n]``: nothing can overflow and the division is safe.
* ``exp(x)`` overflows a format once ``x > ln(r_max)``, ``r_max`` the largest finite value.
* Accuracy: Blanchard, Higham & Higham (2021) analyse the shifted and unshifted formulas;
  the measured errors of ``attention_math.numeric.softmax`` are computed here.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from attention_math import numeric

__all__ = [
    "BLANCHARD_HIGHAM_HIGHAM",
    "FORMATS",
    "FloatFormat",
    "InputRounding",
    "division_free_softmax",
    "input_rounding",
    "measured_errors",
    "naive_softmax",
    "shift_invariance",
    "shifted_bounds",
]

BLANCHARD_HIGHAM_HIGHAM = {
    "authors": "Pierre Blanchard, Desmond J. Higham, Nicholas J. Higham",
    "title": "Accurately computing the log-sum-exp and softmax functions",
    "journal": "IMA Journal of Numerical Analysis",
    "volume": "41",
    "issue": "4",
    "pages": "2311–2330",
    "year": "2021",
    "doi": "10.1093/imanum/draa038",
    # The conclusion of their abstract, paraphrased: the claim the page tests.
    "claim": (
        "the shifted formulas are about as accurate as the unshifted ones, so the shift can "
        "safely be used, while the division-free variant exp(x_i − logsumexp(x)) can lose accuracy"
    ),
}
"""The published source of the error bounds (data, printed by the page)."""


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: ``p`` significand bits (with the hidden one), ``e_max``."""

    name: str
    p: int
    e_max: int

    @property
    def r_max(self) -> sp.Integer:
        """The largest finite value ``(2 − 2^(1−p)) · 2^e_max``, exactly."""
        return (2 - sp.Integer(2) ** (1 - self.p)) * sp.Integer(2) ** self.e_max

    @property
    def log_r_max(self) -> sp.Expr:
        """``ln r_max = ln(2 − 2^(1−p)) + e_max ln 2``, exactly."""
        return sp.log(2 - sp.Integer(2) ** (1 - self.p)) + self.e_max * sp.log(2)


FORMATS = (
    FloatFormat("float16", p=11, e_max=15),
    FloatFormat("bfloat16", p=8, e_max=127),  # (2 − 2^−7) · 2^127
    FloatFormat("float32", p=24, e_max=127),
    FloatFormat("float64", p=53, e_max=1023),
)
"""The floating-point formats whose overflow thresholds the pages derive."""


def shift_invariance(n: int = 3) -> bool:
    """Prove ``softmax(z + c) = softmax(z)`` for ``n`` generic real ``z_i`` and a real ``c``.

    ``e^{z_i + c} = e^c e^{z_i}``: the factor ``e^c > 0`` cancels between numerator and
    denominator. SymPy checks each component difference is exactly zero.

    Examples:
        >>> from attention_math.derivations.softmax_stability import shift_invariance
        >>> shift_invariance(4)
        True
    """
    z = sp.symbols(f"z_1:{n + 1}", real=True)
    c = sp.Symbol("c", real=True)
    shifted = [sp.exp(zi + c) / sp.Add(*(sp.exp(zj + c) for zj in z)) for zi in z]
    plain = [sp.exp(zi) / sp.Add(*(sp.exp(zj) for zj in z)) for zi in z]
    diffs = (sp.expand(a - b, power_exp=True) for a, b in zip(shifted, plain, strict=True))
    return all(sp.cancel(d) == 0 for d in diffs)


def shifted_bounds(n: int = 3) -> tuple[sp.Expr, sp.Expr]:
    """The exact bounds of the shifted denominator ``Σ e^{z_j − m}``: it lies in ``[1, n]``.

    With ``m = max z``, put ``t_j = z_j − m ≤ 0``, one of them ``0``. Each ``e^{t_j}`` is
    in ``(0, 1]``, so the sum lies in ``[1, n]``: ``n`` is reached when all scores are equal,
    ``1`` only approached (for ``n ≥ 2``) as the others go to ``−∞``; SymPy takes the two
    extreme limits.

    Examples:
        >>> from attention_math.derivations.softmax_stability import shifted_bounds
        >>> shifted_bounds(5)
        (1, 5)
    """
    t = sp.Symbol("t", real=True)
    den = 1 + (n - 1) * sp.exp(t)  # one term is e^0 = 1, the others equal e^t, t ≤ 0
    return sp.limit(den, t, -sp.oo), den.subs(t, 0)


def naive_softmax(s: ArrayLike) -> NDArray[np.floating]:
    """The formula of two of the source documents (the Audit page lists them), unshifted:
    ``exp(s) / Σ exp(s)`` along axis 1.

    Shown only to fail: ``exp`` overflows to ``inf`` and ``inf / inf`` is NaN.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.softmax_stability import naive_softmax
        >>> naive_softmax(np.array([[0.0, 0.0]]))
        array([[0.5, 0.5]])
    """
    s = np.asarray(s)
    out: NDArray[np.floating] = np.exp(s) / np.sum(np.exp(s), axis=1, keepdims=True)
    return out


def division_free_softmax(s: ArrayLike) -> NDArray[np.floating]:
    """``exp(s_i − logsumexp(s))`` with a shifted log-sum-exp: no division.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.softmax_stability import division_free_softmax
        >>> division_free_softmax(np.array([[0.0, 0.0]]))
        array([[0.5, 0.5]])
    """
    s = np.asarray(s)
    m = np.max(s, axis=-1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(s - m), axis=-1, keepdims=True))
    out: NDArray[np.floating] = np.exp(s - lse)
    return out


def _reference(row: NDArray[np.floating], dps: int = 50) -> list[mpmath.mpf]:
    """The softmax of the float row (taken as exact binary values) to ``dps`` digits."""
    with mpmath.workdps(dps):
        xs = [mpmath.mpf(float(x)) for x in row]
        m = max(xs)
        es = [mpmath.exp(x - m) for x in xs]
        total = mpmath.fsum(es)
        return [e / total for e in es]


def measured_errors(
    n: int,
    dtype: type,
    rng: np.random.Generator,
    rows: int = 20,
    spread: float = 10.0,
    offset: float = 0.0,
) -> dict[str, float]:
    """Largest componentwise relative error, in units of ``u = ε/2``, of two softmax formulas.

    Rows of ``n`` scores drawn uniformly from ``offset + [−spread, spread]`` are rounded to
    ``dtype``; the reference is the exact softmax of those rounded scores to 50 digits.

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.softmax_stability import measured_errors
        >>> e = measured_errors(8, np.float64, np.random.default_rng(0), rows=3)
        >>> e["numeric.softmax"] < 8 * 8
        True
    """
    s: NDArray[np.floating] = (offset + rng.uniform(-spread, spread, size=(rows, n))).astype(dtype)
    u = float(np.finfo(dtype).eps) / 2
    results = {"numeric.softmax": numeric.softmax(s), "division-free": division_free_softmax(s)}
    worst = dict.fromkeys(results, 0.0)
    with mpmath.workdps(50):
        for i in range(rows):
            ref = _reference(s[i])
            for name, p in results.items():
                err = max(abs(mpmath.mpf(float(a)) - b) / b for a, b in zip(p[i], ref, strict=True))
                worst[name] = max(worst[name], float(err) / u)
    return worst


@dataclass(frozen=True)
class InputRounding:
    """How the rounding of the scores themselves moves the softmax of one row (float64)."""

    delta_eps: tuple[float, ...]  # fl(z_j) − z_j for each score, in units of ε
    jacobian: sp.Matrix  # diag(p) − p pᵀ at the exact weights
    moved_eps: tuple[float, ...]  # J δ: the first-order change of each weight, in ε
    normwise_eps: float  # max |J δ| / (ε max p): the crosscheck's units


def input_rounding(z: sp.Matrix) -> InputRounding:
    """The error a float64 softmax of the exact row ``z`` inherits from storing ``z``.

    A score ``z_j`` that is not a float is stored as ``fl(z_j) = z_j + δ_j``; to first order
    the weights move by ``J δ`` with ``J = diag(p) − p pᵀ``, whatever the softmax algorithm.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.softmax_stability import input_rounding
        >>> r = input_rounding(sp.Matrix([[1000, 1000 + sp.log(3)]]))
        >>> r.jacobian[1, 1], round(r.delta_eps[1]), round(r.normwise_eps)
        (3/16, 245, 61)
    """
    from attention_math.symbolic import softmax

    row = sp.Matrix(z).reshape(1, len(z))  # (1, n)
    eps = sp.Rational(1, 2**52)  # float64 ε, exactly
    delta = [sp.Rational(float(sp.N(x, 30))) - x for x in row]  # exact rounding of each score
    p = softmax(row)  # (1, n), exact
    jac = sp.diag(*p) - p.T * p  # (n, n)
    moved = jac * sp.Matrix(delta)  # (n, 1)
    as_eps = [float(sp.N(m / eps, 30)) for m in moved]
    normwise = max(abs(m) for m in as_eps) / float(sp.N(max(p), 30))
    return InputRounding(
        tuple(float(sp.N(d / eps, 30)) for d in delta), jac, tuple(as_eps), normwise
    )
