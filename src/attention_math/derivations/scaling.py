"""Why the scores are divided by √d_k: the mean and variance of ``q · k``.

Assumptions; the moments in A2 and A3 (``μ``, ``σ``, ``ρ``) are parameters, so that the page
can show what happens away from the standard case (A1 and A4 are built in):

* A1. the query ``q`` and the key ``k`` are independent of each other;
* A2. all entries of ``q`` have the same mean ``μ_q`` and variance ``σ_q²`` (same for ``k``);
* A3. two different entries of ``q`` have correlation ``ρ_q`` (of ``k``: ``ρ_k``); the same
  for every pair (the entries are equicorrelated);
* A4. the second moments exist (finite variance).

The standard case is ``μ = 0``, ``σ = 1``, ``ρ = 0``. No distribution is assumed (normality
is only used for the Monte Carlo check and its confidence bound).

The derivation is explicit expectation algebra: ``E`` is linear, and by A1 the expectation
of a product of a function of ``q`` and a function of ``k`` is the product of expectations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from numpy.typing import NDArray

__all__ = [
    "DotMoments",
    "MonteCarlo",
    "dot_moments",
    "fourth_moment",
    "monte_carlo",
    "sample_dots",
    "saturation",
    "saturation_limits",
    "standard_moments",
]

d_k = sp.Symbol("d_k", positive=True, integer=True)
mu_q, mu_k = sp.symbols("mu_q mu_k", real=True)
sigma_q, sigma_k = sp.symbols("sigma_q sigma_k", positive=True)
rho_q, rho_k = sp.symbols("rho_q rho_k", real=True)


@dataclass(frozen=True)
class DotMoments:
    """``E[q·k]`` and ``Var(q·k)`` and the two per-coordinate ingredients."""

    mean: sp.Expr
    variance: sp.Expr
    term_variance: sp.Expr  # Var(q_l k_l)
    term_covariance: sp.Expr  # Cov(q_l k_l, q_m k_m), l ≠ m


def _expect(
    expr: sp.Expr,
    q: tuple[sp.Symbol, sp.Symbol],
    k: tuple[sp.Symbol, sp.Symbol],
    mq: dict[sp.Expr, sp.Expr],
    mk: dict[sp.Expr, sp.Expr],
) -> sp.Expr:
    """E[expr] for a polynomial of degree ≤ 2 in ``q`` and in ``k`` separately (A1, A2, A3)."""
    total = sp.S.Zero
    for term in sp.Add.make_args(sp.expand(expr)):
        coeff, q_part, k_part = sp.S.One, sp.S.One, sp.S.One
        for factor in sp.Mul.make_args(term):
            base = factor.as_base_exp()[0]
            if base in q:
                q_part *= factor
            elif base in k:
                k_part *= factor
            else:
                coeff *= factor
        total += coeff * mq[q_part] * mk[k_part]  # independence (A1): E[f(q)g(k)] = E[f]E[g]
    return total


def _moment_table(
    x: tuple[sp.Symbol, sp.Symbol], mu: sp.Expr, sigma: sp.Expr, rho: sp.Expr
) -> dict[sp.Expr, sp.Expr]:
    x1, x2 = x
    return {
        sp.S.One: sp.S.One,
        x1: mu,  # A2
        x2: mu,
        x1**2: sigma**2 + mu**2,  # Var + mean²
        x2**2: sigma**2 + mu**2,
        x1 * x2: rho * sigma**2 + mu**2,  # A3: Cov = ρσ²
        x1**2 * x2**2: None,  # never needed: each X_l uses each entry once
    }


def dot_moments(
    mu: tuple[sp.Expr, sp.Expr] = (mu_q, mu_k),
    sigma: tuple[sp.Expr, sp.Expr] = (sigma_q, sigma_k),
    rho: tuple[sp.Expr, sp.Expr] = (rho_q, rho_k),
    d: sp.Expr = d_k,
) -> DotMoments:
    """``E[q·k]`` and ``Var(q·k)`` for ``q·k = Σ_{l=1}^{d} q_l k_l`` under A1–A4.

    Var of a sum is the sum of all covariances: ``d`` diagonal terms ``Var(q_l k_l)`` and
    ``d² − d`` off-diagonal ones ``Cov(q_l k_l, q_m k_m)``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.scaling import dot_moments, d_k
        >>> m = dot_moments(mu=(0, 0), sigma=(1, 1), rho=(0, 0))
        >>> m.mean, m.variance
        (0, d_k)
        >>> dot_moments(mu=(0, 0), rho=(0, 0)).variance
        d_k*sigma_k**2*sigma_q**2
    """
    q = sp.symbols("q_1 q_2", real=True)
    k = sp.symbols("k_1 k_2", real=True)
    mq = _moment_table(q, sp.sympify(mu[0]), sp.sympify(sigma[0]), sp.sympify(rho[0]))
    mk = _moment_table(k, sp.sympify(mu[1]), sp.sympify(sigma[1]), sp.sympify(rho[1]))
    x1, x2 = q[0] * k[0], q[1] * k[1]  # two different coordinates l ≠ m of the dot product
    e1 = _expect(x1, q, k, mq, mk)
    var1 = sp.expand(_expect(x1**2, q, k, mq, mk) - e1**2)
    cov12 = sp.expand(_expect(x1 * x2, q, k, mq, mk) - e1 * _expect(x2, q, k, mq, mk))
    i, j = sp.symbols("i j", integer=True, positive=True)
    mean = sp.Sum(e1, (i, 1, d)).doit()  # linearity; every term has the same mean (A2)
    n_off = sp.Sum(1, (i, 1, d), (j, 1, d)).doit() - sp.Sum(1, (i, 1, d)).doit()  # d² − d
    variance = sp.factor(sp.Sum(var1, (i, 1, d)).doit() + n_off * cov12)
    return DotMoments(sp.factor(mean), variance, sp.factor(var1), sp.factor(cov12))


def standard_moments() -> tuple[sp.Expr, sp.Expr]:
    """``(E[q·k], Var(q·k))`` in the standard case: ``(0, d_k)``.

    Examples:
        >>> from attention_math.derivations.scaling import standard_moments
        >>> standard_moments()
        (0, d_k)
    """
    m = dot_moments(mu=(0, 0), sigma=(1, 1), rho=(0, 0))
    return m.mean, m.variance


def fourth_moment() -> tuple[sp.Expr, sp.Expr]:
    """``(E[(q·k)⁴], Var((q·k)²))`` for standard normal entries, from the χ² distribution.

    Given ``q``, ``q·k`` is normal with variance ``|q|²``, whose fourth moment is
    ``3|q|⁴``; ``|q|²`` is χ² with ``d_k`` degrees of freedom (SymPy's ``stats`` gives its
    second moment). These set the standard error of the sample variance in
    ``monte_carlo``.

    Examples:
        >>> from attention_math.derivations.scaling import fourth_moment
        >>> fourth_moment()
        (3*d_k*(d_k + 2), 2*d_k*(d_k + 3))
    """
    from sympy.stats import ChiSquared, E

    norm_sq = ChiSquared("chi2", d_k)  # |q|², q with d_k standard normal entries
    m4 = sp.factor(3 * E(norm_sq**2))
    return m4, sp.factor(m4 - d_k**2)  # Var(X²) = E[X⁴] − (E[X²])², E[X²] = Var = d_k


def sample_dots(
    d: int,
    n: int,
    rng: np.random.Generator,
    mu: float = 0.0,
    sigma: float = 1.0,
    rho: float = 0.0,
) -> NDArray[np.float64]:
    """``n`` samples of ``q·k`` for normal ``q, k ∈ ℝ^d`` meeting A1–A4 with the given moments.

    Equicorrelated entries: ``q = μ + σ(√ρ z₀ + √(1−ρ) z)`` with one shared standard
    normal ``z₀`` per vector and independent ``z``, so ``Corr(q_l, q_m) = ρ`` (``0 ≤ ρ ≤ 1``).

    Raises:
        ValueError: ``rho`` outside [0, 1].

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.scaling import sample_dots
        >>> sample_dots(4, 3, np.random.default_rng(0)).shape
        (3,)
    """
    if not 0 <= rho <= 1:
        raise ValueError(f"rho must lie in [0, 1] for this construction, got {rho}")

    def draw() -> NDArray[np.float64]:
        shared = rng.standard_normal((n, 1))  # (n, 1): one common factor per vector
        own = rng.standard_normal((n, d))  # (n, d)
        x: NDArray[np.float64] = mu + sigma * (np.sqrt(rho) * shared + np.sqrt(1 - rho) * own)
        return x  # (n, d)

    q, k = draw(), draw()  # independent of each other (A1)
    dots: NDArray[np.float64] = np.einsum("nd,nd->n", q, k)  # (n,)
    return dots


@dataclass(frozen=True)
class MonteCarlo:
    """Sample mean and variance of ``q·k`` with the half-widths of ``z``-sigma intervals."""

    d_k: int
    n: int
    mean: float
    variance: float
    mean_halfwidth: float
    variance_halfwidth: float

    @property
    def within(self) -> bool:
        """Both estimates lie within their intervals around the exact ``0`` and ``d_k``."""
        return (
            abs(self.mean) <= self.mean_halfwidth
            and abs(self.variance - self.d_k) <= self.variance_halfwidth
        )


def monte_carlo(d: int, n: int, rng: np.random.Generator, z: float = 5.0) -> MonteCarlo:
    """Sample ``n`` pairs of standard normal ``q, k ∈ ℝ^d`` and estimate mean and variance.

    Standard errors (normal entries): the mean has ``√(d/n)``. For the variance,
    given ``q`` the dot product is ``N(0, |q|²)``, so ``E[(q·k)⁴] = 3 E|q|⁴ = 3(d² + 2d)``
    (``|q|²`` is χ² with ``d`` degrees of freedom) and ``Var((q·k)²) = 2d² + 6d``; the sample
    variance has standard error ``√((2d² + 6d)/n)`` (``fourth_moment``). One ``z = 5``
    interval fails with probability below one in a million, the two that ``within`` checks
    together below two in a million (normal approximation).

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.scaling import monte_carlo
        >>> monte_carlo(16, 20_000, np.random.default_rng(0)).within
        True
    """
    q = rng.standard_normal((n, d))  # (n, d_k)
    k = rng.standard_normal((n, d))  # (n, d_k)
    dots = np.einsum("nd,nd->n", q, k)  # (n,): one q·k per pair
    return MonteCarlo(
        d_k=d,
        n=n,
        mean=float(dots.mean()),
        variance=float(dots.var(ddof=1)),
        mean_halfwidth=z * float(np.sqrt(d / n)),
        variance_halfwidth=z * float(np.sqrt((2 * d**2 + 6 * d) / n)),
    )


def saturation(
    ds: list[int], rng: np.random.Generator, n_keys: int = 16, n_samples: int = 200
) -> dict[str, NDArray[np.float64]]:
    """Mean largest weight and mean softmax-Jacobian norm against ``d_k``, scaled and unscaled.

    For each ``d_k``: ``n_samples`` queries against ``n_keys`` keys, all standard normal;
    the weights ``p = softmax(s)`` of the scores ``s = k q`` (unscaled) or ``k q / √d_k``;
    the Jacobian of the softmax is ``diag(p) − p pᵀ``, its Frobenius norm is how much a
    small change in the scores moves the weights (it tends to 0 as ``p`` becomes one-hot).

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.scaling import saturation
        >>> r = saturation([1, 256], np.random.default_rng(0), n_samples=50)
        >>> bool(r["max_unscaled"][1] > r["max_scaled"][1])
        True
    """
    from attention_math.numeric import softmax

    out: dict[str, list[float]] = {
        key: [] for key in ("max_scaled", "max_unscaled", "grad_scaled", "grad_unscaled")
    }
    for d in ds:
        q = rng.standard_normal((n_samples, 1, d))  # (n, 1, d_k)
        k = rng.standard_normal((n_samples, n_keys, d))  # (n, L_k, d_k)
        s = (k @ np.swapaxes(q, -1, -2))[..., 0]  # (n, L_k)
        for name, scores in (("unscaled", s), ("scaled", s / np.sqrt(d))):
            p = softmax(scores)  # (n, L_k)
            jac = np.einsum("ni,ij->nij", p, np.eye(n_keys)) - p[:, :, None] * p[:, None, :]
            out[f"max_{name}"].append(p.max(axis=1).mean())
            out[f"grad_{name}"].append(np.linalg.norm(jac, axis=(1, 2)).mean())
    return {key: np.array(val) for key, val in out.items()}


def saturation_limits(n_keys: int = 16) -> dict[str, sp.Expr]:
    """Where `saturation`'s curves can go, exactly, for ``n_keys`` keys.

    The largest weight of a row ``p`` lies between ``1/n`` (*uniform*: every key ``1/n``) and
    ``1`` (*one-hot*: all the weight on one key). The Frobenius norm of the softmax Jacobian
    ``J = diag(p) − p pᵀ`` is ``0`` at a one-hot row (its weights no longer move when its
    scores move) and ``√(n − 1)/n`` at the uniform one (the norm is largest in between, at two
    equal weights: ``1/2``). The norms are computed from ``J``, not typed.

    Raises:
        ValueError: ``n_keys`` is smaller than 2.

    Examples:
        >>> from attention_math.derivations.scaling import saturation_limits
        >>> lim = saturation_limits(16)
        >>> lim["max_uniform"], lim["max_one_hot"], lim["grad_uniform"], lim["grad_one_hot"]
        (1/16, 1, sqrt(15)/16, 0)
    """
    if isinstance(n_keys, bool) or not isinstance(n_keys, int):
        raise TypeError(f"n_keys must be an int, got {type(n_keys).__name__}")
    if n_keys < 2:
        raise ValueError(f"n_keys must be at least 2, got {n_keys}")

    def frobenius(p: sp.Matrix) -> sp.Expr:
        jac = sp.diag(*p) - p * p.T  # (n, n): the softmax Jacobian at p
        return sp.sqrt(sum(x**2 for x in jac))

    uniform = sp.Matrix([sp.Rational(1, n_keys)] * n_keys)  # (n, 1)
    one_hot = sp.Matrix([1] + [0] * (n_keys - 1))  # (n, 1)
    return {
        "max_uniform": max(uniform),
        "max_one_hot": max(one_hot),
        "grad_uniform": sp.nsimplify(sp.simplify(frobenius(uniform))),
        "grad_one_hot": sp.simplify(frobenius(one_hot)),
    }
