"""RoPE for long contexts, exactly: the frequencies of every ``rope_scaling`` type in SymPy,
and RoFormer's long-term decay by summation by parts.

`exact_frequencies` follows the formulas of each method (position interpolation, NTK-aware
"dynamic" scaling, YaRN, Llama 3) with exact numbers: ``θ_i = base^(−2i/d)`` as an algebraic
number, ``π`` and ``ln`` symbolic, YaRN's ``⌊·⌋``/``⌈·⌉`` and Llama 3's comparisons decided
exactly. `check_frequencies` compares it with the float64
[`positional.rope_frequencies`][attention_math.positional.rope_frequencies], entry by entry
(each relative to itself: the frequencies span many orders of magnitude), and raises on
disagreement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy as sp

from attention_math.crosscheck import CrossCheck, CrossCheckError, crosscheck
from attention_math.derivations._once import derived_once

__all__ = [
    "abel_summation_holds",
    "check_frequencies",
    "complex_score_holds",
    "exact_frequencies",
    "exact_yarn_ramp",
]


def _rational(x: object) -> sp.Expr:
    return sp.nsimplify(x, rational=True)


def exact_yarn_ramp(
    d: int,
    *,
    base: object,
    original_max_position_embeddings: int,
    beta_fast: object = 32,
    beta_slow: object = 1,
    truncate: bool = True,
) -> list[sp.Expr]:
    """YaRN's ramp ``γ_i`` exactly (see `positional.yarn_ramp`).

    Examples:
        >>> from attention_math.derivations.rope_scaling import exact_yarn_ramp
        >>> exact_yarn_ramp(16, base=10000, original_max_position_embeddings=2048)
        [0, 0, 0, 1/4, 1/2, 3/4, 1, 1]
    """
    b, n = _rational(base), sp.Integer(original_max_position_embeddings)

    def pair(turns: object) -> sp.Expr:
        return d * sp.log(n / (_rational(turns) * 2 * sp.pi)) / (2 * sp.log(b))

    low, high = pair(beta_fast), pair(beta_slow)
    if truncate:
        low, high = sp.floor(low), sp.ceiling(high)
    low, high = sp.Max(low, 0), sp.Min(high, d - 1)
    if sp.simplify(low - high) == 0:
        high = high + sp.Rational(1, 1000)
    return [sp.Min(sp.Max((i - low) / (high - low), 0), 1) for i in range(d // 2)]


@derived_once
def exact_frequencies(
    d: int,
    *,
    base: object = 10000,
    scaling: Mapping[str, Any] | None = None,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
) -> tuple[list[sp.Expr], sp.Expr]:
    """The inverse frequencies of a ``rope_scaling`` dictionary and its attention factor,
    exactly (the float fields read as the rationals they denote).

    Examples:
        >>> from attention_math.derivations.rope_scaling import exact_frequencies
        >>> exact_frequencies(4, base=100, scaling={"rope_type": "linear", "factor": 4.0})
        ([1/4, 1/40], 1)
        >>> theta, t = exact_frequencies(
        ...     4, base=100, scaling={"rope_type": "yarn", "factor": 4.0,
        ...                           "original_max_position_embeddings": 64})
        >>> theta, t
        ([1, 1/16], log(4)/10 + 1)
    """
    b = _rational(base)
    theta = [b ** sp.Rational(-k, d) for k in range(0, d, 2)]
    sc = dict(scaling or {})
    kind = sc.get("rope_type", sc.get("type", "default"))
    one = sp.Integer(1)
    if kind == "default":
        return theta, one
    if kind == "linear":
        return [t / _rational(sc["factor"]) for t in theta], one
    if kind == "dynamic":
        factor, big_n = _rational(sc["factor"]), sp.Integer(max_position_embeddings or 0)
        n = big_n if seq_len is None else sp.Max(seq_len, big_n)
        new_base = b * (factor * n / big_n - (factor - 1)) ** sp.Rational(d, d - 2)
        return [new_base ** sp.Rational(-k, d) for k in range(0, d, 2)], one
    if kind == "yarn":
        original = sc.get("original_max_position_embeddings", max_position_embeddings)
        if original is None:
            raise ValueError("yarn needs original_max_position_embeddings")
        factor = _rational(sc["factor"])
        ramp = exact_yarn_ramp(
            d,
            base=b,
            original_max_position_embeddings=int(original),
            beta_fast=sc.get("beta_fast") or 32,
            beta_slow=sc.get("beta_slow") or 1,
            truncate=bool(sc.get("truncate", True)),
        )

        def mscale(m: object = 1) -> sp.Expr:
            return one if factor <= 1 else _rational(m) * sp.log(factor) / 10 + 1

        if sc.get("attention_factor") is not None:
            att = _rational(sc["attention_factor"])
        elif sc.get("mscale") and sc.get("mscale_all_dim"):
            att = mscale(sc["mscale"]) / mscale(sc["mscale_all_dim"])
        else:
            att = mscale()
        inv = [t / factor * g + t * (1 - g) for t, g in zip(theta, ramp, strict=True)]
        return inv, att
    if kind == "llama3":
        factor = _rational(sc["factor"])
        low, high = _rational(sc["low_freq_factor"]), _rational(sc["high_freq_factor"])
        n0 = _rational(sc["original_max_position_embeddings"])
        out = []
        for t in theta:
            wavelen = 2 * sp.pi / t
            if bool(wavelen < n0 / high):
                out.append(t)  # short wavelengths: kept
            elif bool(wavelen > n0 / low):
                out.append(t / factor)  # long wavelengths: interpolated
            else:
                smooth = (n0 / wavelen - low) / (high - low)
                out.append((1 - smooth) * t / factor + smooth * t)
        return out, one
    raise ValueError(f"unknown rope_type {kind!r}")


@derived_once
def check_frequencies(
    d: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
    bound_eps: float = 8.0,
) -> CrossCheck:
    """`positional.rope_frequencies` against `exact_frequencies`, each frequency relative to
    its own size; the worst as one `CrossCheck`.

    Raises:
        CrossCheckError: a frequency or the attention factor is off by more than ``bound_eps``.

    Examples:
        >>> from attention_math.derivations.rope_scaling import check_frequencies
        >>> llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
        ...           "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
        >>> check_frequencies(128, base=500000.0, scaling=llama3).error_eps < 8
        True
    """
    import numpy as np

    from attention_math.positional import rope_frequencies

    kw: dict[str, Any] = {"max_position_embeddings": max_position_embeddings, "seq_len": seq_len}
    exact, att = exact_frequencies(d, base=base, scaling=scaling, **kw)
    if scaling is None:
        got, got_att = rope_frequencies(d, base=base, **kw), 1.0
    else:
        got, got_att = rope_frequencies(d, base=base, scaling=scaling, **kw)
    kind = (scaling or {}).get("rope_type", "default")
    worst = crosscheck(att, np.float64(got_att), bound_eps=bound_eps, label=f"{kind} factor")
    for i, (e, g) in enumerate(zip(exact, got, strict=True)):
        c = crosscheck(e, np.float64(g), bound_eps=bound_eps, label=f"{kind} θ_{i}")
        worst = max(worst, c, key=lambda r: r.error_eps)
    if not worst.passed:  # pragma: no cover - crosscheck raised already
        raise CrossCheckError(str(worst))
    return CrossCheck(
        f"{kind} frequencies (d = {d})", "float64", worst.error_eps, bound_eps, (d // 2,)
    )


@derived_once
def complex_score_holds(pairs: int = 2) -> bool:
    """The rotated score ``⟨R(m)q, R(n)k⟩`` equals ``Re Σ_i h_i e^{i(m−n)θ_i}`` with
    ``h_i = (q_{2i} + i q_{2i+1}) · conj(k_{2i} + i k_{2i+1})`` (the interleaved layout),
    for symbolic ``q``, ``k``, positions and frequencies: RoFormer's complex form.

    Examples:
        >>> from attention_math.derivations.rope_scaling import complex_score_holds
        >>> complex_score_holds(2)
        True
    """
    from attention_math.derivations.positional import rotation

    m, n = sp.symbols("m n", real=True)
    thetas = sp.symbols(f"theta_0:{pairs}", positive=True)
    q = sp.symbols(f"q_0:{2 * pairs}", real=True)
    k = sp.symbols(f"k_0:{2 * pairs}", real=True)
    real, cplx = sp.Integer(0), sp.Integer(0)
    for i, t in enumerate(thetas):
        qi, ki = sp.Matrix([q[2 * i], q[2 * i + 1]]), sp.Matrix([k[2 * i], k[2 * i + 1]])
        real += ((rotation(m * t) * qi).T * (rotation(n * t) * ki))[0, 0]
        h = (q[2 * i] + sp.I * q[2 * i + 1]) * (k[2 * i] - sp.I * k[2 * i + 1])
        cplx += h * sp.exp(sp.I * (m - n) * t)
    diff = sp.expand(sp.expand_trig(sp.expand(real - sp.re(sp.expand_complex(cplx)))))
    return bool(sp.simplify(diff) == 0)


def abel_summation_holds(terms: int = 4) -> bool:
    """Summation by parts, RoFormer's step to the decay bound: with ``S_j = Σ_{k<j} z_k`` and
    ``h_terms = 0``, ``Σ_k h_k z_k = Σ_k (h_k − h_{k+1}) S_{k+1}``, for symbolic ``h``, ``z``.

    Examples:
        >>> from attention_math.derivations.rope_scaling import abel_summation_holds
        >>> abel_summation_holds(4)
        True
    """
    h = [*sp.symbols(f"h_0:{terms}"), sp.Integer(0)]
    z = sp.symbols(f"z_0:{terms}")
    partial = [sp.Add(*z[:j]) for j in range(terms + 1)]  # S_0 … S_terms
    lhs = sp.Add(*(h[k] * z[k] for k in range(terms)))
    rhs = sp.Add(*((h[k] - h[k + 1]) * partial[k + 1] for k in range(terms)))
    return bool(sp.expand(lhs - rhs) == 0)
