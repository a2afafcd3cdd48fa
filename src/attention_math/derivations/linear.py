"""Linear attention and Performer's random features, exactly.

* Associativity: ``(φ(Q) φ(K)ᵀ) V = φ(Q) (φ(K)ᵀ V)`` for symbolic features (L = 3).
* The causal recurrence ``U_t = U_{t−1} + φ(k_t) v_tᵀ``, ``z_t = z_{t−1} + φ(k_t)`` gives
  the same rows as the lower-triangular (masked) quadratic form (L = 3).
* The FLOP counts of both forms, from the conventions of
  [`attention_math.derivations.cost`][], and the length at which they cross.
* ``E_ω[φ_ω(q)·φ_ω(k)] = e^{q·k}`` for ``ω ~ N(0, I)``: an exact Gaussian integral; and the
  Monte Carlo error of ``r`` features, which shrinks like ``1/√r``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

from attention_math._lazy import np
from attention_math.derivations._once import derived_once
from attention_math.derivations.cost import STEPS, L_k, L_q, d_k, d_v, h

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "associativity",
    "causal_recurrence_equals_masked",
    "crossover_length",
    "linear_flops",
    "monte_carlo_errors",
    "monte_carlo_pair",
    "performer_crossover",
    "performer_expectation",
    "performer_flops",
    "performer_relative_variance",
    "softmax_flops",
]

L, d = sp.symbols("L d", positive=True)


def _features(name: str, n: int, m: int) -> sp.Matrix:
    return sp.Matrix(n, m, lambda r, c: sp.Symbol(f"{name}_{r + 1}{c + 1}", positive=True))


def associativity(n: int = 3, m: int = 2, d_val: int = 2) -> bool:
    """``(F_Q F_Kᵀ) V = F_Q (F_Kᵀ V)`` for symbolic ``n × m`` features and ``n × d_v`` values.

    Examples:
        >>> from attention_math.derivations.linear import associativity
        >>> associativity(3, 2, 1)
        True
    """
    fq, fk = _features("a", n, m), _features("b", n, m)
    v = sp.Matrix(n, d_val, lambda r, c: sp.Symbol(f"v_{r + 1}{c + 1}"))
    return bool(((fq * fk.T) * v - fq * (fk.T * v)).expand() == sp.zeros(n, d_val))


@derived_once
def causal_recurrence_equals_masked(n: int = 3, m: int = 2, d_val: int = 1) -> bool:
    """Row ``t`` of the recurrence, ``φ(q_t)ᵀ U_t / φ(q_t)ᵀ z_t``, equals row ``t`` of the
    lower-triangular quadratic form ``tril(F_Q F_Kᵀ) V / tril(F_Q F_Kᵀ) 1``, for every ``t``.

    Examples:
        >>> from attention_math.derivations.linear import causal_recurrence_equals_masked
        >>> causal_recurrence_equals_masked(3)
        True
    """
    fq, fk = _features("a", n, m), _features("b", n, m)
    v = sp.Matrix(n, d_val, lambda r, c: sp.Symbol(f"v_{r + 1}{c + 1}"))
    a = (fq * fk.T).lower_triangular()  # the causal mask keeps j ≤ t
    quad = [(a[t, :] * v) / sum(a[t, :]) for t in range(n)]
    s, z = sp.zeros(m, d_val), sp.zeros(m, 1)
    for t in range(n):
        s += fk[t, :].T * v[t, :]  # U_t = U_{t−1} + φ(k_t) v_tᵀ
        z += fk[t, :].T  # z_t = z_{t−1} + φ(k_t)
        row = (fq[t, :] * s) / (fq[t, :] * z)[0]
        if sp.simplify(row - quad[t]) != sp.zeros(1, d_val):
            return False
    return True


def softmax_flops() -> sp.Expr:
    """FLOPs of one head of softmax attention, scores to weighted sum, ``L_q = L_k = L``,
    ``d_k = d_v = d`` (the projections are the same in both forms and left out, and so is
    the mask: the linear form compared with it has none to add).

    Examples:
        >>> from attention_math.derivations.linear import softmax_flops
        >>> softmax_flops()
        4*L**2*d + 6*L**2
    """
    core = [s for s in STEPS if "projection" not in s.name and s.name != "mask"]
    total = sp.Add(*(s.flops for s in core))
    return sp.expand(total.subs({h: 1, L_q: L, L_k: L, d_k: d, d_v: d}))


def linear_flops() -> sp.Expr:
    """FLOPs of linear attention with ``φ = elu + 1`` (``r = d`` features), same conventions:
    φ of Q and K (2 per entry: exp or add, then compare), ``U = φ(K)ᵀ V`` and ``φ(Q) U``
    (``2 L d d`` each), ``φ(K)ᵀ 1`` and ``φ(Q) z`` (``L d`` and ``2 L d``), the division.

    Examples:
        >>> from attention_math.derivations.linear import linear_flops
        >>> linear_flops()
        4*L*d**2 + 8*L*d
    """
    steps = [
        2 * L * d,  # φ(Q)
        2 * L * d,  # φ(K)
        2 * L * d * d,  # U = φ(K)ᵀ V
        L * d,  # z = φ(K)ᵀ 1
        2 * L * d * d,  # φ(Q) U
        2 * L * d,  # φ(Q) z
        L * d,  # divide
    ]
    return sp.expand(sp.Add(*steps))


def crossover_length() -> sp.Expr:
    """The length ``L*(d)`` above which linear attention costs fewer FLOPs than softmax.

    Examples:
        >>> from attention_math.derivations.linear import crossover_length
        >>> crossover_length()
        2*d*(d + 2)/(2*d + 3)
    """
    (root,) = [r for r in sp.solve(sp.Eq(softmax_flops(), linear_flops()), L) if r != 0]
    return sp.factor(root)


n_features = sp.Symbol("r", positive=True)  # Performer's number of random features


def performer_flops() -> sp.Expr:
    """FLOPs of linear attention with Performer's ``r`` positive random features, same conventions
    as [`linear_flops`][attention_math.derivations.linear.linear_flops]: the features
    ``φ_Ω(x) = exp(Ωx − ‖x‖²/2)/√r`` of Q and K (the product ``Ωx``, ``2 L r d`` each; the
    squared norm, ``2 L d``; subtract, exp and scale, ``3 L r``), then ``U = φ(K)ᵀ V`` and
    ``φ(Q) U`` (``2 L r d`` each), ``φ(K)ᵀ 1`` and ``φ(Q) z`` (``L r`` and ``2 L r``), the
    division (``L d``).

    Examples:
        >>> from attention_math.derivations.linear import performer_flops
        >>> performer_flops()
        8*L*d*r + 5*L*d + 9*L*r
    """
    r = n_features
    feature_map = 2 * L * r * d + 2 * L * d + 3 * L * r  # φ_Ω of one of Q, K
    steps = [
        feature_map,  # φ(Q)
        feature_map,  # φ(K)
        2 * L * r * d,  # U = φ(K)ᵀ V
        L * r,  # z = φ(K)ᵀ 1
        2 * L * r * d,  # φ(Q) U
        2 * L * r,  # φ(Q) z
        L * d,  # divide
    ]
    return sp.expand(sp.Add(*steps))


def performer_crossover() -> sp.Expr:
    """The length above which Performer costs fewer FLOPs than softmax attention, in terms of
    ``d`` and ``r``: about ``2r`` when ``r`` and ``d`` are large, so near ``r``, not ``d``.

    Examples:
        >>> from attention_math.derivations.linear import d, n_features, performer_crossover
        >>> performer_crossover()
        (8*d*r + 5*d + 9*r)/(2*(2*d + 3))
        >>> round(float(performer_crossover().subs({d: 64, n_features: 256})), 1)
        510.3
    """
    (root,) = [x for x in sp.solve(sp.Eq(softmax_flops(), performer_flops()), L) if x != 0]
    return sp.factor(root)


@derived_once
def performer_expectation(dim: int = 2) -> tuple[sp.Expr, bool]:
    """``E_ω[exp(ω·q − ‖q‖²/2) exp(ω·k − ‖k‖²/2)]`` for ``ω ~ N(0, I_dim)``, exactly, and
    whether it equals ``exp(q·k)``.

    The integrand is ``exp(ω·(q + k)) · exp(−‖q‖²/2 − ‖k‖²/2)`` and the coordinates of ``ω``
    are independent, so the expectation is a product of one-dimensional Gaussian integrals
    ``E[e^{ωc}] = ∫ e^{ωc} e^{−ω²/2}/√(2π) dω``, which SymPy evaluates once for a symbol
    ``c`` and then at ``c = q_i + k_i``.

    Examples:
        >>> from attention_math.derivations.linear import performer_expectation
        >>> performer_expectation(1)
        (exp(k_1*q_1), True)
    """
    q = sp.symbols(f"q_1:{dim + 1}", real=True)
    k = sp.symbols(f"k_1:{dim + 1}", real=True)
    omega, c = sp.symbols("omega c", real=True)  # one coordinate of the direction ω
    density = sp.exp(-(omega**2) / 2) / sp.sqrt(2 * sp.pi)  # N(0, 1)
    mgf = sp.simplify(sp.integrate(sp.exp(omega * c) * density, (omega, -sp.oo, sp.oo)))  # e^{c²/2}
    value = sp.Integer(1)
    for qi, ki in zip(q, k, strict=True):
        value *= mgf.subs(c, qi + ki) * sp.exp(-(qi**2) / 2 - ki**2 / 2)
    value = sp.simplify(sp.powsimp(sp.expand(value), force=True))
    target = sp.exp(sum(qi * ki for qi, ki in zip(q, k, strict=True)))
    return value, sp.simplify(value - target) == 0


def performer_relative_variance(dim: int = 2) -> tuple[sp.Expr, bool]:
    """The relative variance ``Var[X] / E[X]²`` of one feature's estimate
    ``X = φ_ω(q) φ_ω(k)``, exactly, and whether it equals ``exp(‖q + k‖²) − 1``.

    ``X² = exp(ω·2(q + k)) · exp(−‖q‖² − ‖k‖²)``, so ``E[X²]`` is the same product of
    one-dimensional Gaussian integrals as `performer_expectation`, at ``c = 2(q_i + k_i)``.
    Averaging ``r`` features divides it by ``r``: the relative error is
    ``√((e^{‖q+k‖²} − 1)/r)``, large where ``q + k`` is long.

    Examples:
        >>> from attention_math.derivations.linear import performer_relative_variance
        >>> performer_relative_variance(1)
        (exp(k_1**2 + 2*k_1*q_1 + q_1**2) - 1, True)
    """
    q = sp.symbols(f"q_1:{dim + 1}", real=True)
    k = sp.symbols(f"k_1:{dim + 1}", real=True)
    omega, c = sp.symbols("omega c", real=True)  # one coordinate of the direction ω
    density = sp.exp(-(omega**2) / 2) / sp.sqrt(2 * sp.pi)  # N(0, 1)
    mgf = sp.simplify(sp.integrate(sp.exp(omega * c) * density, (omega, -sp.oo, sp.oo)))  # e^{c²/2}
    second = sp.Integer(1)  # E[X²]
    for qi, ki in zip(q, k, strict=True):
        second *= mgf.subs(c, 2 * (qi + ki)) * sp.exp(-(qi**2) - ki**2)
    mean, _ = performer_expectation(dim)
    value = sp.simplify(sp.powsimp(sp.expand(second / mean**2), force=True)) - 1
    target = sp.exp(sum((qi + ki) ** 2 for qi, ki in zip(q, k, strict=True))) - 1
    return value, sp.simplify(sp.expand(value - target)) == 0


def _pair(rng: np.random.Generator) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    q = rng.normal(size=8) / 8**0.25  # d = 8, scaled as for exp(q·k/√d)
    k = rng.normal(size=8) / 8**0.25
    return q, k


def monte_carlo_pair(seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The query and key `monte_carlo_errors` estimates ``e^{q·k}`` for, with the same
    ``seed``: ``d = 8`` standard normal coordinates each, scaled by ``d^{−1/4}``.

    Examples:
        >>> from attention_math.derivations.linear import monte_carlo_pair
        >>> q, k = monte_carlo_pair()
        >>> q.shape, k.shape
        ((8,), (8,))
    """
    return _pair(np.random.default_rng(seed))


@derived_once
def monte_carlo_errors(
    ms: tuple[int, ...] = (16, 64, 256, 1024, 4096), trials: int = 200, seed: int = 0
) -> tuple[NDArray[np.float64], float]:
    """Root-mean-square relative error of ``φ_Ω(q)·φ_Ω(k)`` against ``e^{q·k}`` for each
    number of features ``r`` in ``ms`` (``trials`` independent draws of ``Ω`` each), and the
    fitted slope of log error against log r (−1/2 for a ``1/√r`` law).

    Examples:
        >>> from attention_math.derivations.linear import monte_carlo_errors
        >>> errs, slope = monte_carlo_errors((64, 4096), trials=100)
        >>> bool(errs[0] > errs[1]) and -0.6 < slope < -0.4
        True
    """
    from attention_math.linear import random_features  # NumPy: imported only when run

    rng = np.random.default_rng(seed)
    q, k = _pair(rng)  # (8,) each: `monte_carlo_pair`
    exact = float(np.exp(q @ k))
    errs = []
    for r in ms:
        est = np.empty(trials)
        for t in range(trials):
            omega = rng.standard_normal((r, 8))  # (r, d): r directions ω, stacked as Ω
            est[t] = random_features(q, omega) @ random_features(k, omega)
        errs.append(float(np.sqrt(np.mean((est / exact - 1) ** 2))))
    errs_a = np.array(errs)
    slope = float(np.polyfit(np.log(np.array(ms, dtype=float)), np.log(errs_a), 1)[0])
    return errs_a, slope
