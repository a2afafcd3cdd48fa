"""Exercises: Low precision (bfloat16 and FP8 grids, rounding to nearest even, the error of
the scores, the Hadamard rotation, integer KV caches). Reference answers are computed by
`attention_math.precision`'s exact side (fractions and SymPy), never typed.

This module imports no NumPy (the checker also runs without it): the NumPy references are
looked up when they are called, at build time.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from attention_math import precision
from attention_math._lazy import np
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]


def _q(x: Fraction | float) -> sp.Rational:
    """An exact value of the package (a `Fraction`) as a SymPy rational."""
    if not isinstance(x, Fraction):
        raise ValueError(f"expected a finite exact value, got {x!r}")
    return sp.Rational(x.numerator, x.denominator)


def _rounded_ref(x: float, fmt: str) -> np.ndarray:
    from attention_math.precision import round_to_format  # NumPy: build time only

    return np.asarray(round_to_format(np.array(x), fmt))


def _hadamard_ref() -> np.ndarray:
    from attention_math.precision import hadamard_matrix  # the exact H, applied in NumPy

    h = np.array(hadamard_matrix(4).tolist(), dtype=float)  # (4, 4)
    out: np.ndarray = np.array([[4.0, 0.0, 0.0, 0.0]]) @ h / 2  # (1, 4)
    return out


def _int4_ref() -> np.ndarray:
    from attention_math.precision import quantize_int  # NumPy: build time only

    return np.asarray(quantize_int([[0.0], [1.625], [3.75]], 4, per="channel")[1, 0])


def _score_bound() -> sp.Rational:
    """``c Σ_t |q_t||k_t| ((1 + u)² − 1)`` for q = k = (1, 1, 1, 1), c = 1/2, E4M3."""
    u = _q(precision.FLOAT8_E4M3.unit_roundoff)
    return sp.Rational(1, 2) * 4 * ((1 + u) ** 2 - 1)


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    e4, e5, bf = precision.FLOAT8_E4M3, precision.FLOAT8_E5M2, precision.BFLOAT16
    u_bf = _q(bf.unit_roundoff)
    out = [
        Exercise(
            id="precision-u-bf16",
            chapter="precision",
            title="The unit roundoff of bfloat16",
            statement=(
                "bfloat16 stores 8 exponent bits and 7 fraction bits. Rounding to nearest, "
                "its unit roundoff $u$ is half the distance from $1$ to the next bfloat16 "
                "value. Give $1/u$."
            ),
            answer=1 / u_bf,
            mistakes=(Mistake("no_implicit_bit", 1 / (2 * u_bf)),),
            kind="scalar",
            explanation=(
                "With the implicit leading one, a normal bfloat16 has $p = 7 + 1 = 8$ "
                "significand bits: the values in $[1, 2)$ are spaced $2^{-7}$ apart, and half "
                "of that is $u = 2^{-8}$, so $1/u = 256$."
            ),
            solution=_solve_precision_u_bf16,
        ),
        Exercise(
            id="precision-e4m3-max",
            chapter="precision",
            title="The largest E4M3 value",
            statement=(
                "FP8 E4M3 in its `fn` layout (PyTorch's `float8_e4m3fn`): 4 exponent bits with "
                "bias $7$, 3 fraction bits, no infinities; the top exponent field holds "
                "ordinary numbers, except that the all-ones fraction there is NaN. What is the "
                "largest finite value?"
            ),
            answer=_q(e4.max_finite),
            mistakes=(
                Mistake(
                    "ieee_max",
                    _q(precision.FloatFormat("ieee e4m3", 4, 3, True, False).max_finite),
                ),
            ),
            numeric=lambda: _rounded_ref(1e6, "e4m3"),
            kind="scalar",
            explanation=(
                "The top exponent field $1111_2 = 15$ means $2^{15 - 7} = 2^8$; the largest "
                "fraction that is not NaN is $110_2$, so the value is $1.110_2 \\times 2^8 = "
                "1.75 \\times 256$. (The numeric reference is what the package's cast makes "
                "of $10^6$: it saturates to this value.)"
            ),
            solution=_solve_precision_e4m3_max,
        ),
        Exercise(
            id="precision-e5m2-max",
            chapter="precision",
            title="The largest E5M2 value",
            statement=(
                "FP8 E5M2 follows IEEE 754: 5 exponent bits with bias $15$, 2 fraction bits, "
                "and the all-ones exponent field is reserved for $\\pm\\infty$ and NaN. What "
                "is the largest finite value?"
            ),
            answer=_q(e5.max_finite),
            kind="scalar",
            explanation=(
                "The largest ordinary exponent field is $11110_2 = 30$, that is $2^{30-15} = "
                "2^{15}$, and the largest fraction is $11_2$: $1.11_2 \\times 2^{15} = 1.75 "
                "\\times 32768$."
            ),
            solution=_solve_precision_e5m2_max,
        ),
        Exercise(
            id="precision-e4m3-tie",
            chapter="precision",
            title="A tie in E4M3",
            statement=(
                "Between $256$ and $512$ the E4M3 values are $256 (1 + f/8)$ for $f = 0, "
                "\\ldots, 7$. Rounding to nearest with ties to even, which E4M3 value does "
                "$304$ become?"
            ),
            answer=_q(precision.round_exact(304, e4)),
            mistakes=(Mistake("truncated", _q(precision.neighbours(304, e4)[0])),),
            numeric=lambda: _rounded_ref(304.0, "e4m3"),
            kind="scalar",
            explanation=(
                "The spacing there is $256/8 = 32$, so $304$ lies exactly halfway between "
                "$288 = 1.001_2 \\times 2^8$ and $320 = 1.010_2 \\times 2^8$. Ties go to the "
                "even last fraction bit: $010_2$, so $320$."
            ),
            solution=_solve_precision_e4m3_tie,
        ),
        Exercise(
            id="precision-bf16-third",
            chapter="precision",
            title="A third of 1000 in bfloat16",
            statement=(
                "Round $1000/3$ to bfloat16 (8 significand bits, round to nearest even). What "
                "is the bfloat16 value?"
            ),
            answer=_q(precision.round_exact(sp.Rational(1000, 3), bf)),
            mistakes=(Mistake("truncated", _q(precision.neighbours(Fraction(1000, 3), bf)[0])),),
            numeric=lambda: _rounded_ref(1000 / 3, "bfloat16"),
            kind="scalar",
            explanation=(
                "$1000/3 = 333.3\\ldots$ lies in $[256, 512)$, where 8 significand bits are "
                "spaced $2^{8} \\cdot 2^{-7} = 2$ apart. $333.3/2 = 166.67$ rounds to $167$, so "
                "the bfloat16 value is $334$."
            ),
            solution=_solve_precision_bf16_third,
        ),
        Exercise(
            id="precision-e4m3-subnormal",
            chapter="precision",
            title="The smallest positive E4M3 value",
            statement=(
                "E4M3 (bias $7$, 3 fraction bits) has subnormals: exponent field $0$ means "
                "$0.f_2 \\times 2^{1 - 7}$. What is the smallest positive value? (A weight of "
                "$P$ below half of it is rounded to zero.)"
            ),
            answer=_q(e4.min_subnormal),
            mistakes=(Mistake("min_normal", _q(e4.min_normal)),),
            numeric=lambda: _rounded_ref(0.0019, "e4m3"),
            kind="scalar",
            explanation=(
                "The smallest normal value is $2^{1-7} = 2^{-6}$; the subnormals below it are "
                "$f/8 \\times 2^{-6}$, and the smallest positive one has $f = 1$: $2^{-9}$."
            ),
            solution=_solve_precision_e4m3_subnormal,
        ),
        Exercise(
            id="precision-worst-relative",
            chapter="precision",
            title="The worst relative error of E5M2",
            statement=(
                "For E5M2 (2 fraction bits, $u = 1/8$), what is the largest relative error "
                "$|\\mathrm{fl}(x) - x|/|x|$ of rounding to nearest over the normal range? "
                "(It is attained, so it is a maximum, not a supremum.)"
            ),
            answer=_q(precision.max_relative_error(e5)),
            mistakes=(Mistake("u_not_attained", _q(e5.unit_roundoff)),),
            kind="scalar",
            explanation=(
                "In $[1, 2)$ the values are $1, 1.25, 1.5, 1.75$; the error $1/8$ is largest "
                "at a midpoint and relative to the smallest midpoint, $1.125$: "
                "$(1/8)/(9/8) = 1/9 = u/(1+u)$, just below $u$."
            ),
            solution=_solve_precision_worst_relative,
        ),
        Exercise(
            id="precision-hadamard",
            chapter="precision",
            title="Spreading an outlier",
            statement=(
                "Incoherent processing multiplies queries and keys by $R = H/2$, with $H$ "
                "Sylvester's Hadamard matrix below (all signs $+1$). What is $qR$ for the query "
                "$q$ below, whose one large entry is an outlier?"
            ),
            inputs={"H": precision.hadamard_matrix(4), "q": sp.Matrix([[4, 0, 0, 0]])},
            answer=sp.Matrix([[4, 0, 0, 0]]) * precision.hadamard_matrix(4) / 2,
            numeric=_hadamard_ref,
            explanation=(
                "$qR$ is $4/2 = 2$ times the first row of $H$: $(2, 2, 2, 2)$. The largest "
                "entry halves ($\\sqrt{d} = 2$), the length stays $4$ (R is orthogonal), and "
                "$qR \\cdot kR = q \\cdot k$ for every key."
            ),
            solution=_solve_precision_hadamard,
        ),
        Exercise(
            id="precision-int4-tie",
            chapter="precision",
            title="An int4 key channel",
            statement=(
                "A key channel holds $0$, $13/8$ and $15/4$ over three tokens. It is quantised per "
                "channel to 4-bit integers, asymmetrically: step $(\\max - \\min)/15$, code "
                "the integer nearest $(x - \\min)/\\text{step}$, ties to even, then "
                "$\\min + \\text{code} \\cdot \\text{step}$. What does $13/8$ come back as?"
            ),
            answer=6 * sp.Rational(15, 4) / 15,
            mistakes=(Mistake("tie_not_even", 7 * sp.Rational(15, 4) / 15),),
            numeric=_int4_ref,
            bound_eps=4.0,
            kind="scalar",
            explanation=(
                "The step is $(15/4)/15 = 1/4$, and $(13/8 - 0)/(1/4) = 6.5$: a tie between "
                "codes $6$ and $7$, which goes to the even $6$. Back: $0 + 6/4 = 3/2$."
            ),
            solution=_solve_precision_int4_tie,
        ),
        Exercise(
            id="precision-score-bound",
            chapter="precision",
            title="How far an E4M3 score can move",
            statement=(
                "$q = k = (1, 1, 1, 1)$, scale $c = 1/2$. Both are rounded to E4M3 "
                "($u = 1/16$), each entry by a relative error of at most $u$, and the product "
                "is then computed exactly. What is the worst-case bound "
                "$|\\hat s - s| \\le c \\sum_t |q_t||k_t|\\,((1+u)^2 - 1)$?"
            ),
            answer=_score_bound(),
            mistakes=(Mistake("first_order", sp.Rational(1, 2) * 4 * 2 * sp.Rational(1, 16)),),
            kind="scalar",
            explanation=(
                "$\\hat q_t \\hat k_t = q_t k_t (1 + \\delta)(1 + \\delta')$ with "
                "$|\\delta|, |\\delta'| \\le u$, so each product moves by at most "
                "$|q_t k_t|(2u + u^2)$; four products of size $1$ and the scale $1/2$ give "
                "$2 (2/16 + 1/256) = 33/128$. (Here $1$ is on the E4M3 grid, so the actual "
                "error is $0$: a bound is a worst case.)"
            ),
            solution=_solve_precision_score_bound,
        ),
    ]
    return out


def _solve_precision_u_bf16(ex: Exercise) -> object:
    p = 7 + 1  # stored fraction bits and the implicit one
    u = sp.Rational(1, 2**p)
    return 1 / u


def _solve_precision_e4m3_max(ex: Exercise) -> object:
    fraction = sp.Rational(0b110, 8)  # 111 at the top exponent is NaN
    return (1 + fraction) * 2 ** (15 - 7)


def _solve_precision_e5m2_max(ex: Exercise) -> object:
    fraction = sp.Rational(0b11, 4)
    return (1 + fraction) * 2 ** (30 - 15)  # exponent field 11111 is inf/NaN


def _solve_precision_e4m3_tie(ex: Exercise) -> object:
    step = sp.Integer(256) / 8
    n = sp.Integer(304) / step  # 9.5: a tie
    lo, hi = sp.floor(n), sp.ceiling(n)
    f = lo if (lo - 8) % 2 == 0 else hi  # the even fraction 256 (1 + f/8)
    return f * step


def _solve_precision_bf16_third(ex: Exercise) -> object:
    step = sp.Integer(2) ** (8 - 7)  # in [256, 512): 2^8 · 2^-7
    return sp.Integer(round(sp.Rational(1000, 3) / step)) * step  # 166.67 -> 167


def _solve_precision_e4m3_subnormal(ex: Exercise) -> object:
    return sp.Rational(1, 8) * sp.Integer(2) ** (1 - 7)


def _solve_precision_worst_relative(ex: Exercise) -> object:
    u = sp.Rational(1, 8)
    return u / (1 + u)  # the error u at the midpoint 1 + u


def _solve_precision_hadamard(ex: Exercise) -> object:
    h = sp.Matrix([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]])
    return sp.Matrix([[4, 0, 0, 0]]) * h / 2


def _solve_precision_int4_tie(ex: Exercise) -> object:
    step = sp.Rational(15, 4) / 15
    code = 6  # (13/8 - 0)/step = 6.5, a tie: to the even code 6
    return 0 + code * step


def _solve_precision_score_bound(ex: Exercise) -> object:
    u = sp.Rational(1, 16)
    return sp.Rational(1, 2) * 4 * ((1 + u) ** 2 - 1)
