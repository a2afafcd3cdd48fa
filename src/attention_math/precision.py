"""Attention in low precision: bfloat16 and FP8 rounding, the error it causes and its bound,
FlashAttention-3's random Hadamard rotation, and KV-cache quantisation to int8 and int4.

Everything here is done by the package, not borrowed from a library's dtype:

- **Rounding.** A binary floating-point format is its bit counts (`FloatFormat`): ``e``
  exponent bits and ``m`` stored fraction bits, so ``p = m + 1`` significand bits with the
  implicit one. From those the module computes the bias, the largest finite value, the
  smallest normal and subnormal, the unit roundoff ``u = 2^-p`` and the whole grid, exactly
  (`fractions.Fraction`). `round_exact` rounds a rational to the nearest grid point, ties to
  the even significand (IEEE 754's default); `round_to_format` does the same for a NumPy
  array, exactly (a float64 is split into its binade, scaled by a power of two, rounded half
  to even and scaled back: no step of it rounds). Overflow follows PyTorch's casts: FP8 E4M3
  (the ``fn`` variant: no infinity, ``S.1111.111`` is NaN) *saturates* to ``±448``; bfloat16
  and FP8 E5M2 overflow to ``±inf`` (a value at or past the midpoint between the largest
  finite value and the next power of two). ``overflow="saturate"`` clamps any format, as FP8
  kernels' ``satfinite`` conversions do.
- **Attention as a low-precision kernel computes it** (`low_precision_attention`): ``Q``,
  ``K``, ``V`` rounded to the format (FP8 formats first scaled per tensor by a power of two
  that brings the largest entry just under the format's maximum, undone in float32
  afterwards, as the kernels' descale factors are); ``S = QKᵀ`` accumulated in float32; the
  row maximum subtracted, ``P̃ = exp(S − m)`` and the row sum ``ℓ = Σ P̃`` in float32; ``P̃``
  rounded to the format before ``P̃V`` (FlashAttention-3 in FP8); ``P̃V`` accumulated in
  float32 and divided by ``ℓ`` in float32.
- **The bound** (`low_precision_error_bound`): an entrywise bound on the output's error
  against exact attention, derived step by step from the format's ``u`` and its subnormal
  spacing ``α`` (``|fl(x) − x| ≤ u|x| + α/2``), float32's ``u₃₂ = 2^-24`` for the
  accumulations (``γ_n = n u₃₂ / (1 − n u₃₂)``), and the softmax's sensitivity to its scores
  (a perturbation of at most ``E`` in every score changes every weight by a factor within
  ``e^{±2E}``). It assumes no float32 underflow or overflow.
- **Incoherent processing** (`hadamard_rotation`): ``R = D H / √d`` with ``H`` Sylvester's
  Hadamard matrix and ``D`` random signs is orthogonal, so ``(QR)(KR)ᵀ = QKᵀ`` exactly
  (`rotation_keeps_scores` proves it in SymPy); it spreads an outlier feature over all ``d``
  coordinates before the rounding.
- **KV-cache quantisation** (`quantize_int`, `kv_quantized_attention`): asymmetric
  min–max integer quantisation, keys per channel and values per token as KIVI does.

The exact side (formats, `round_exact`, `grid`, `neighbours`, `decode`, the SymPy proof)
imports no NumPy.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational
from typing import TYPE_CHECKING, Literal

import sympy as sp

from attention_math._lazy import np
from attention_math._once import derived_once

if TYPE_CHECKING:  # NumPy's types only: the exact side imports without NumPy
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "BFLOAT16",
    "FLOAT8_E4M3",
    "FLOAT8_E5M2",
    "FLOAT32",
    "FORMATS",
    "FloatFormat",
    "OutlierErrors",
    "decode",
    "grid",
    "hadamard_matrix",
    "hadamard_rotation",
    "kv_quantized_attention",
    "kv_quantized_error_bound",
    "low_precision_attention",
    "low_precision_error_bound",
    "max_relative_error",
    "neighbours",
    "outlier_errors",
    "outlier_features",
    "quantize_int",
    "quantize_per_tensor",
    "rotation_keeps_scores",
    "round_exact",
    "round_to_format",
]

Overflow = Literal["saturate", "inf"]
Per = Literal["channel", "token"]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format, given by its bit counts; everything else is computed.

    ``infinities`` is IEEE 754's layout (the top exponent field holds ±inf and the NaNs);
    without it (FP8 E4M3's ``fn`` variant) the top exponent field holds ordinary numbers and
    only the all-ones fraction there is NaN. ``saturates`` is what a cast does past the
    largest finite value: clamp to it (E4M3 in PyTorch) or give ±inf.

    See Also:
        - [`round_to_format`][attention_math.precision.round_to_format]: round an array to it.
        - [`round_exact`][attention_math.precision.round_exact]: round a rational exactly.
        - [`grid`][attention_math.precision.grid]: every non-negative finite value.

    References:
        - [Micikevicius et al., 2022](https://arxiv.org/abs/2209.05433), "FP8 Formats for
          Deep Learning": E4M3 and E5M2.
        - [IEEE 754-2019](https://doi.org/10.1109/IEEESTD.2019.8766229): binary formats,
          round to nearest, ties to even.

    Examples:
        >>> from attention_math.precision import FLOAT8_E4M3, FLOAT8_E5M2, BFLOAT16
        >>> FLOAT8_E4M3.max_finite, FLOAT8_E5M2.max_finite
        (Fraction(448, 1), Fraction(57344, 1))
        >>> FLOAT8_E4M3.unit_roundoff, FLOAT8_E5M2.unit_roundoff, BFLOAT16.unit_roundoff
        (Fraction(1, 16), Fraction(1, 8), Fraction(1, 256))
        >>> FLOAT8_E4M3.min_subnormal, FLOAT8_E4M3.min_normal
        (Fraction(1, 512), Fraction(1, 64))
    """

    name: str
    exponent_bits: int
    fraction_bits: int
    infinities: bool
    saturates: bool

    def __post_init__(self) -> None:
        for field_name in ("exponent_bits", "fraction_bits"):
            n = getattr(self, field_name)
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"{field_name} must be a positive integer, got {n!r}")
        if not self.infinities and self.fraction_bits < 2:
            raise ValueError("a format without infinities needs at least 2 fraction bits")

    @property
    def bits(self) -> int:
        """Sign, exponent and fraction bits together."""
        return 1 + self.exponent_bits + self.fraction_bits

    @property
    def bias(self) -> int:
        """The exponent bias, ``2^(e−1) − 1``."""
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def precision(self) -> int:
        """Significand bits ``p``, the implicit leading one included: ``m + 1``."""
        return self.fraction_bits + 1

    @property
    def unit_roundoff(self) -> Fraction:
        """``u = 2^-p``: half the spacing of the grid just above 1."""
        return Fraction(1, 2**self.precision)

    @property
    def emin(self) -> int:
        """The smallest normal exponent, ``1 − bias``."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """The largest exponent of a finite value."""
        top = (1 << self.exponent_bits) - 1  # the all-ones exponent field
        return (top - 1 if self.infinities else top) - self.bias

    @property
    def max_finite(self) -> Fraction:
        """The largest finite value: all-ones fraction (one less without infinities)."""
        m = self.fraction_bits
        frac = 2**m - 1 if self.infinities else 2**m - 2  # all ones is NaN in the fn layout
        return Fraction(2**m + frac, 2**m) * _pow2(self.emax)

    @property
    def finite_values(self) -> int:
        """How many non-negative finite values there are (zero included): every pattern
        with the sign bit clear but those of ±inf and NaN."""
        patterns = 1 << (self.exponent_bits + self.fraction_bits)
        special = (1 << self.fraction_bits) if self.infinities else 1  # top exponent, or S.1…1.1…1
        return patterns - special

    @property
    def min_normal(self) -> Fraction:
        """The smallest positive normal value, ``2^emin``."""
        return _pow2(self.emin)

    @property
    def min_subnormal(self) -> Fraction:
        """The smallest positive value, ``2^(emin − m)``: the spacing ``α`` of the subnormals."""
        return _pow2(self.emin - self.fraction_bits)


FLOAT32 = FloatFormat("float32", 8, 23, infinities=True, saturates=False)
"""IEEE single precision: the kernels' accumulator."""
BFLOAT16 = FloatFormat("bfloat16", 8, 7, infinities=True, saturates=False)
"""bfloat16: float32's exponent, 7 fraction bits."""
FLOAT8_E4M3 = FloatFormat("float8_e4m3fn", 4, 3, infinities=False, saturates=True)
"""FP8 E4M3 (the ``fn`` variant: finite, NaN only): PyTorch's ``float8_e4m3fn``."""
FLOAT8_E5M2 = FloatFormat("float8_e5m2", 5, 2, infinities=True, saturates=False)
"""FP8 E5M2 (IEEE layout, with ±inf): PyTorch's ``float8_e5m2``."""

FORMATS: dict[str, FloatFormat] = {
    "bfloat16": BFLOAT16,
    "e4m3": FLOAT8_E4M3,
    "e5m2": FLOAT8_E5M2,
    "float32": FLOAT32,
}
"""The formats by short name (the ``fmt`` argument takes a name or a `FloatFormat`)."""


def _pow2(n: int) -> Fraction:
    """``2^n`` exactly, for any integer ``n``."""
    return Fraction(1 << n) if n >= 0 else Fraction(1, 1 << -n)


def _format(fmt: FloatFormat | str) -> FloatFormat:
    if isinstance(fmt, FloatFormat):
        return fmt
    if isinstance(fmt, str) and fmt in FORMATS:
        return FORMATS[fmt]
    raise ValueError(f"unknown format {fmt!r}; give a FloatFormat or one of {sorted(FORMATS)}")


def _overflow(fmt: FloatFormat, overflow: Overflow | None) -> Overflow:
    if overflow is None:
        return "saturate" if fmt.saturates else "inf"
    if overflow not in ("saturate", "inf"):
        raise ValueError(f"overflow must be 'saturate' or 'inf', got {overflow!r}")
    if overflow == "inf" and not fmt.infinities:
        raise ValueError(f"{fmt.name} has no infinity: overflow must be 'saturate'")
    return overflow


def _rational(name: str, x: object) -> Fraction:
    if isinstance(x, bool):
        raise TypeError(f"{name} must be a rational number, got bool {x!r}")
    if isinstance(x, sp.Rational):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"{name} must be finite, got {x!r}")
        return Fraction(x)
    raise TypeError(
        f"{name} must be a rational number (int, Fraction, SymPy Rational or float), "
        f"got {type(x).__name__} {x!r}"
    )


def round_exact(
    x: object, fmt: FloatFormat | str, *, overflow: Overflow | None = None
) -> Fraction | float:
    """``x`` rounded to the nearest value of ``fmt``, ties to the even significand, exactly.

    Args:
        x: a rational number (int, `Fraction`, SymPy `Rational`, or a finite float, taken
            exactly).
        fmt: a `FloatFormat` or its short name (``"bfloat16"``, ``"e4m3"``, ``"e5m2"``,
            ``"float32"``).
        overflow: ``"saturate"`` (clamp to ±max) or ``"inf"``; ``None``: the format's own
            (PyTorch's cast: E4M3 saturates, bfloat16 and E5M2 give ±inf).

    Returns:
        The rounded value as a `Fraction`, or ``±inf`` (a float) on overflow to infinity.

    See Also:
        - [`round_to_format`][attention_math.precision.round_to_format]: the same on arrays.
        - [`neighbours`][attention_math.precision.neighbours]: the grid points around ``x``.

    References:
        - [Micikevicius et al., 2022](https://arxiv.org/abs/2209.05433), §3: FP8 rounding
          and saturation.

    Examples:
        >>> from fractions import Fraction
        >>> from attention_math.precision import round_exact
        >>> round_exact(300, "e4m3"), round_exact(304, "e4m3")   # 304: a tie, to even
        (Fraction(288, 1), Fraction(320, 1))
        >>> round_exact(Fraction(1, 3), "bfloat16")
        Fraction(171, 512)
        >>> round_exact(1000, "e4m3"), round_exact(61440, "e5m2")
        (Fraction(448, 1), inf)
    """
    f = _format(fmt)
    mode = _overflow(f, overflow)
    r = _rational("x", x)
    if r == 0:
        return Fraction(0)
    sign, a = (1 if r > 0 else -1), abs(r)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e ≤ a < 2^(e+1), after fixing
    if _pow2(e) > a:
        e -= 1
    quantum = _pow2(max(e, f.emin) - f.fraction_bits)
    y = round(a / quantum) * quantum  # Fraction's round: half to even
    if y > f.max_finite:
        return sign * f.max_finite if mode == "saturate" else sign * math.inf
    return sign * y


def decode(code: int, fmt: FloatFormat | str) -> Fraction | float:
    """The value of the bit pattern ``code`` (an unsigned integer of ``fmt.bits`` bits).

    Returns a `Fraction`, or ``±inf`` / ``nan`` (floats) for those patterns.

    See Also:
        - [`grid`][attention_math.precision.grid]: the values of every pattern, in order.

    References:
        - [Micikevicius et al., 2022](https://arxiv.org/abs/2209.05433), Table 1: the two
          FP8 encodings.

    Examples:
        >>> from attention_math.precision import decode
        >>> decode(0x7E, "e4m3"), decode(0x7F, "e4m3"), decode(0x7C, "e5m2")
        (Fraction(448, 1), nan, inf)
        >>> decode(0x01, "e4m3")     # the smallest subnormal, 2^-9
        Fraction(1, 512)
    """
    f = _format(fmt)
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < 2**f.bits:
        raise ValueError(f"code must be an integer in [0, 2^{f.bits}), got {code!r}")
    m, e = f.fraction_bits, f.exponent_bits
    sign = -1 if code >> (e + m) else 1
    field, frac = (code >> m) & (2**e - 1), code & (2**m - 1)
    top = 2**e - 1
    if f.infinities and field == top:
        return sign * math.inf if frac == 0 else math.nan
    if not f.infinities and field == top and frac == 2**m - 1:
        return math.nan
    if field == 0:  # subnormal: 0.frac × 2^emin
        return sign * Fraction(frac, 2**m) * f.min_normal
    value: Fraction = sign * Fraction(2**m + frac, 2**m) * _pow2(field - f.bias)
    return value


def grid(fmt: FloatFormat | str) -> list[Fraction]:
    """Every non-negative finite value of ``fmt``, increasing, computed from its bit patterns.

    See Also:
        - [`decode`][attention_math.precision.decode]: one pattern's value.
        - [`neighbours`][attention_math.precision.neighbours]: the two around a number.

    References:
        - [Micikevicius et al., 2022](https://arxiv.org/abs/2209.05433): E4M3 and E5M2.

    Examples:
        >>> from attention_math.precision import grid
        >>> g = grid("e4m3")
        >>> len(g), [str(x) for x in g[:3]], [str(x) for x in g[-2:]]
        (127, ['0', '1/512', '1/256'], ['416', '448'])
    """
    f = _format(fmt)
    out = []
    for code in range(2 ** (f.bits - 1)):  # the sign bit clear
        value = decode(code, f)
        if isinstance(value, Fraction):
            out.append(value)
    return out


def neighbours(x: object, fmt: FloatFormat | str) -> tuple[Fraction, Fraction]:
    """The largest value of ``fmt`` at most ``x`` and the smallest at least ``x``, exactly.

    ``x`` must lie within ``±max_finite``. Both are ``x`` when ``x`` is on the grid.

    See Also:
        - [`round_exact`][attention_math.precision.round_exact]: which of the two it rounds to.

    References:
        - [Micikevicius et al., 2022](https://arxiv.org/abs/2209.05433): FP8 formats.

    Examples:
        >>> from attention_math.precision import neighbours
        >>> neighbours(300, "e4m3")
        (Fraction(288, 1), Fraction(320, 1))
        >>> neighbours(-1, "e5m2")
        (Fraction(-1, 1), Fraction(-1, 1))
    """
    f = _format(fmt)
    r = _rational("x", x)
    if abs(r) > f.max_finite:
        raise ValueError(f"x = {r} lies outside ±{f.max_finite}, the range of {f.name}")
    if r == 0:
        return Fraction(0), Fraction(0)
    a = abs(r)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if _pow2(e) > a:
        e -= 1
    quantum = _pow2(max(e, f.emin) - f.fraction_bits)
    lo, hi = math.floor(a / quantum) * quantum, math.ceil(a / quantum) * quantum
    return (lo, hi) if r > 0 else (-hi, -lo)


def max_relative_error(fmt: FloatFormat | str) -> Fraction:
    """The largest ``|fl(x) − x| / |x|`` over the normal range, found on the grid: at the
    midpoint just above a power of two, ``u / (1 + u)``.

    Every midpoint between neighbours in one binade is examined (the binade of 1: the
    ratio is the same in every normal binade, scaling by a power of two).

    See Also:
        - [`FloatFormat.unit_roundoff`][attention_math.precision.FloatFormat]: ``u``, the
          bound it stays under.

    References:
        - [Higham, 2002](https://doi.org/10.1137/1.9780898718027), *Accuracy and Stability
          of Numerical Algorithms*, Thm 2.2.

    Examples:
        >>> from attention_math.precision import max_relative_error
        >>> max_relative_error("e4m3"), max_relative_error("e5m2")
        (Fraction(1, 17), Fraction(1, 9))
    """
    f = _format(fmt)
    step = Fraction(1, 2**f.fraction_bits)
    points = [1 + i * step for i in range(2**f.fraction_bits + 1)]
    worst = max((b - a) / 2 / ((a + b) / 2) for a, b in itertools.pairwise(points))
    if worst != f.unit_roundoff / (1 + f.unit_roundoff):
        raise AssertionError(f"{f.name}: worst relative error {worst} is not u/(1+u)")
    return worst


# --- arrays -----------------------------------------------------------------------------


def _as_array(name: str, x: ArrayLike, *, min_ndim: int = 0) -> NDArray[np.float64]:
    """``x`` as float64 (±inf allowed: it overflows like any large value); NaN refused."""
    from attention_math._checks import is_real_dtype  # NumPy: the array side only

    try:
        a = np.asarray(x)
    except ValueError:
        raise ValueError(f"{name} is ragged (rows of different lengths)") from None
    if not is_real_dtype(a.dtype):
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if a.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {a.shape}")
    a = a.astype(np.float64)
    if np.isnan(a).any():
        raise ValueError(
            f"{name} has NaN entries (first at {np.argwhere(np.isnan(a))[0].tolist()})"
        )
    return a


def round_to_format(
    x: ArrayLike, fmt: FloatFormat | str, *, overflow: Overflow | None = None
) -> NDArray[np.float64]:
    """Every entry of ``x`` rounded to ``fmt`` (ties to even), returned as float64 (exact).

    Each float64 ``a`` is taken exactly: its binade ``2^e ≤ |a| < 2^(e+1)`` (``e`` at least
    ``emin``: below it the spacing is the subnormals' ``α``), divided by the spacing
    ``2^(e−m)`` (a power of two: exact), rounded half to even to an integer, multiplied
    back. ±inf inputs overflow like any value past the maximum.

    Args:
        x: the values (float64; other float dtypes are converted exactly).
        fmt: a `FloatFormat` or its short name.
        overflow: as in [`round_exact`][attention_math.precision.round_exact].

    Returns:
        The rounded values, float64, shape of ``x``.

    Raises:
        ValueError: NaN entries, an unknown format, ``overflow="inf"`` for E4M3.

    See Also:
        - [`round_exact`][attention_math.precision.round_exact]: one rational, exactly.
        - [`low_precision_attention`][attention_math.precision.low_precision_attention]:
          where a kernel rounds.

    References:
        - [Micikevicius et al., 2022](https://arxiv.org/abs/2209.05433): FP8 formats.
        - [Kalamkar et al., 2019](https://arxiv.org/abs/1905.12322): bfloat16 for training.

    Examples:
        >>> from attention_math.precision import round_to_format
        >>> round_to_format([300.0, 304.0, 1e4, -0.0009], "e4m3").tolist()
        [288.0, 320.0, 448.0, -0.0]
        >>> round_to_format([1 / 3, 61440.0], "e5m2").tolist()
        [0.3125, inf]
    """
    f = _format(fmt)
    mode = _overflow(f, overflow)
    a = _as_array("x", x)
    mag = np.abs(a)
    _, big_e = np.frexp(np.where(np.isfinite(mag), mag, 1.0))  # mag = frac · 2^E, frac ∈ [½, 1)
    e = np.maximum(big_e - 1, f.emin)  # the binade, or emin for the subnormals
    quantum = np.ldexp(1.0, e - f.fraction_bits)  # the spacing of the grid there
    y = np.round(a / quantum) * quantum  # half to even; both products exact
    big = np.abs(y) > float(f.max_finite)
    if mode == "saturate":
        y = np.where(big, np.copysign(float(f.max_finite), a), y)
    else:
        y = np.where(big, np.copysign(np.inf, a), y)
    out: NDArray[np.float64] = y.astype(np.float64)
    return out


def _pow2_scale(x: NDArray[np.float64], fmt: FloatFormat) -> float:
    """The power of two ``s`` that brings ``max |x|`` into ``(max_finite/2, max_finite]``."""
    amax = float(np.max(np.abs(x))) if x.size else 0.0
    if amax == 0.0:
        return 1.0
    return float(2.0 ** math.floor(math.log2(float(fmt.max_finite) / amax)))


def _qkv(
    q: ArrayLike, k: ArrayLike, v: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    qa, ka, va = (
        _as_array("q", q, min_ndim=2),
        _as_array("k", k, min_ndim=2),
        _as_array("v", v, min_ndim=2),
    )
    for name, a in (("q", qa), ("k", ka), ("v", va)):
        if a.ndim != 2 or 0 in a.shape:
            raise ValueError(
                f"{name} must be a non-empty matrix (tokens, features), got shape {a.shape}"
            )
        if not np.isfinite(a).all():
            raise ValueError(f"{name} has infinite entries")
    if qa.shape[1] != ka.shape[1]:
        raise ValueError(f"q and k must share d_k: q has shape {qa.shape}, k has shape {ka.shape}")
    if ka.shape[0] != va.shape[0]:
        raise ValueError(f"k and v must share L_k: k has shape {ka.shape}, v has shape {va.shape}")
    return qa, ka, va


def _scale(scale: object, d: int) -> float:
    from attention_math._checks import check_scale  # NumPy: the array side only

    return check_scale(scale, d)


def _rotation(rotation: ArrayLike | None, d: int) -> NDArray[np.float64] | None:
    if rotation is None:
        return None
    r = _as_array("rotation", rotation, min_ndim=2)
    if r.shape != (d, d):
        raise ValueError(f"rotation must have shape (d_k, d_k) = ({d}, {d}), got {r.shape}")
    if not np.allclose(r @ r.T, np.eye(d), atol=1e-12):
        raise ValueError("rotation must be orthogonal (R Rᵀ = I to 1e-12)")
    return r


def low_precision_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    fmt: FloatFormat | str,
    *,
    scale: float | None = None,
    round_inputs: bool = True,
    round_p: bool = True,
    scaling: bool | None = None,
    rotation: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Attention computed as a low-precision kernel computes it, rounding where it rounds.

    1. (``rotation``) ``Q ← QR``, ``K ← KR`` in float64, before any rounding (FlashAttention-3's
       incoherent processing; ``R`` orthogonal, so the exact scores are unchanged).
    2. (``scaling``: default for the 8-bit formats) each of ``Q``, ``K``, ``V`` multiplied
       by a power of two ``s`` that brings its largest entry into ``(max/2, max]``.
    3. (``round_inputs``) ``Q``, ``K``, ``V`` rounded to ``fmt`` (else to float32).
    4. ``S = fl₃₂(Q Kᵀ)`` accumulated in float32; ``S ← fl₃₂(S · fl₃₂(scale / (s_Q s_K)))``.
    5. ``P̃ = fl₃₂(exp(fl₃₂(S − m)))`` with ``m`` the row maximum; ``ℓ = fl₃₂(Σ_j P̃_j)``.
    6. (``round_p``) ``P̃`` rounded to ``fmt`` (it lies in ``[0, 1]``: no scaling).
    7. ``O = fl₃₂(fl₃₂(P̃ V) / ℓ) / s_V``.

    Args:
        q: queries, ``(n_q, d_k)``.
        k: keys, ``(n_k, d_k)``.
        v: values, ``(n_k, d_v)``.
        fmt: a `FloatFormat` or its short name.
        scale: the factor on the scores; ``None``: ``1/√d_k``.
        round_inputs: round ``Q``, ``K``, ``V`` to ``fmt`` (else float32).
        round_p: round ``P̃`` to ``fmt`` before ``P̃V`` (else it stays float32).
        scaling: per-tensor power-of-two scaling; ``None``: on for formats of 8 bits.
        rotation: an orthogonal ``(d_k, d_k)`` matrix applied to ``Q`` and ``K`` first.

    Returns:
        The output ``(n_q, d_v)``, float64 holding the float32 result.

    See Also:
        - [`low_precision_error_bound`][attention_math.precision.low_precision_error_bound]:
          how far this can be from exact attention.
        - [`hadamard_rotation`][attention_math.precision.hadamard_rotation]: the ``R`` of
          incoherent processing.
        - [`attention`][attention_math.numeric.attention]: the float64 reference.

    References:
        - [Shah et al., 2024](https://arxiv.org/abs/2407.08608) (FlashAttention-3), §3.3:
          FP8 attention, incoherent processing.
        - [Micikevicius et al., 2022](https://arxiv.org/abs/2209.05433): FP8 formats.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> from attention_math.precision import low_precision_attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.standard_normal((3, 4, 8))
        >>> err = np.abs(low_precision_attention(q, k, v, "e4m3") - attention(q, k, v)).max()
        >>> bool(0 < err < 0.2)
        True
    """
    return _kernel(q, k, v, fmt, scale, round_inputs, round_p, scaling, rotation)[0]


@dataclass(frozen=True)
class _Steps:
    """What the kernel rounded, for the bound: inputs after rotation, scales, formats."""

    q: NDArray[np.float64]
    k: NDArray[np.float64]
    v: NDArray[np.float64]
    scales: tuple[float, float, float]
    inputs: FloatFormat
    p: FloatFormat | None
    scale: float


def _kernel(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    fmt: FloatFormat | str,
    scale: float | None,
    round_inputs: bool,
    round_p: bool,
    scaling: bool | None,
    rotation: ArrayLike | None,
) -> tuple[NDArray[np.float64], _Steps]:
    f = _format(fmt)
    qa, ka, va = _qkv(q, k, v)
    for name, flag in (("round_inputs", round_inputs), ("round_p", round_p)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    sc = _scale(scale, qa.shape[1])
    r = _rotation(rotation, qa.shape[1])
    if r is not None:
        qa, ka = qa @ r, ka @ r  # (n_q, d), (n_k, d): exact scores unchanged
    on = (f.bits <= 8 if scaling is None else scaling) and round_inputs
    inputs = f if round_inputs else FLOAT32
    s = (
        _pow2_scale(qa, inputs) if on else 1.0,
        _pow2_scale(ka, inputs) if on else 1.0,
        _pow2_scale(va, inputs) if on else 1.0,
    )
    q8, k8, v8 = (
        round_to_format(a * si, inputs, overflow="saturate").astype(np.float32)
        for a, si in zip((qa, ka, va), s, strict=True)
    )  # each exact in float32
    raw = q8 @ k8.T  # (n_q, n_k) float32 accumulation
    descale = np.float32(sc / (s[0] * s[1]))
    scores = (raw * descale).astype(np.float32)  # (n_q, n_k)
    shifted = scores - scores.max(axis=1, keepdims=True)  # (n_q, n_k), float32; 0 at the max
    p_tilde = np.exp(shifted.astype(np.float64)).astype(np.float32)  # (n_q, n_k) in (0, 1]
    ell = p_tilde.sum(axis=1, keepdims=True, dtype=np.float32)  # (n_q, 1) float32
    if round_p:
        p_tilde = round_to_format(p_tilde, f, overflow="saturate").astype(np.float32)
    out = ((p_tilde @ v8) / ell).astype(np.float32)  # (n_q, d_v) float32
    result: NDArray[np.float64] = out.astype(np.float64) / s[2]
    return result, _Steps(qa, ka, va, s, inputs, f if round_p else None, sc)


def _gamma(n: int, u: float) -> float:
    """``γ_n = n u / (1 − n u)``: the relative error of a sum of ``n`` terms (Higham §3.1)."""
    if n * u >= 1:
        raise ValueError(f"n u = {n * u} ≥ 1: the sum is too long for the bound")
    return n * u / (1 - n * u)


def _softmax_rows(s: NDArray[np.float64]) -> NDArray[np.float64]:
    e = np.exp(s - s.max(axis=1, keepdims=True))  # (n_q, n_k)
    out: NDArray[np.float64] = e / e.sum(axis=1, keepdims=True)
    return out


def _bound(
    q: NDArray[np.float64],
    k: NDArray[np.float64],
    v: NDArray[np.float64],
    eq: NDArray[np.float64],
    ek: NDArray[np.float64],
    ev: NDArray[np.float64],
    scale: float,
    u_acc: float,
    u_p: float,
    alpha_p: float,
) -> NDArray[np.float64]:
    """The entrywise bound, from input errors ``|x̂ − x| ≤ e_x`` (see the module docstring)."""
    n_k, d = k.shape
    aq, ak, av = np.abs(q), np.abs(k), np.abs(v)
    qh, kh, vh = aq + eq, ak + ek, av + ev  # bounds on |q̂|, |k̂|, |v̂|
    acc_s = (1 + u_acc) ** 2 * (1 + _gamma(d + 1, u_acc)) - 1  # the sum, the descale, its factor
    s = scale * (q @ k.T)  # (n_q, n_k) exact scores (float64)
    eps = scale * (eq @ ak.T + aq @ ek.T + eq @ ek.T) + scale * acc_s * (qh @ kh.T)  # (n_q, n_k)
    s_hat = np.abs(s) + eps  # bound on |Ŝ|
    shift = u_acc * (s_hat + s_hat.max(axis=1, keepdims=True))  # rounding S − m
    big_e = (eps + shift).max(axis=1, keepdims=True) + 2.01 * u_acc  # (n_q, 1), exp rounding too
    p = _softmax_rows(s)  # (n_q, n_k) exact weights (float64)
    a = p @ vh  # (n_q, d_v): Σ p |v̂|
    with np.errstate(over="ignore", invalid="ignore"):  # e^{2E} may overflow: an inf bound
        grow = np.expm1(2 * big_e)  # e^{2E} − 1

        def times(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
            prod: NDArray[np.float64] = np.where(y == 0, 0.0, x * y)  # inf · 0 is 0 here
            return prod

        a_prime = a + times(grow, a)  # Σ p' |v̂|
        col = vh.sum(axis=0, keepdims=True)  # (1, d_v): Σ_j |v̂_j|, ℓ ≥ 1
        gn = _gamma(n_k + 1, u_acc)
        r1 = u_p * a_prime + alpha_p / 2 * col  # rounding P̃
        r2 = gn * ((1 + u_p) * a_prime + alpha_p / 2 * col)  # accumulating P̃V
        kappa = (1 + u_acc) / (1 - gn) - 1  # dividing by ℓ, itself a float32 sum
        reference = (n_k + d + 16) * 2.0**-53 * (p @ av)  # the float64 reference's own error
        out: NDArray[np.float64] = (
            kappa * (a_prime + r1 + r2) + r1 + r2 + times(grow, a) + p @ ev + reference
        )
    # a 0 · inf left (a zero weight times an overflowed factor) is bounded by inf, honestly
    bound: NDArray[np.float64] = np.where(np.isnan(out), np.inf, out)
    return bound


def _input_error(a: NDArray[np.float64], fmt: FloatFormat, s: float) -> NDArray[np.float64]:
    """``|fl(a s)/s − a| ≤ u|a| + α/(2s)`` (no overflow: the scaling saw to it)."""
    return float(fmt.unit_roundoff) * np.abs(a) + float(fmt.min_subnormal) / (2 * s)


def low_precision_error_bound(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    fmt: FloatFormat | str,
    *,
    scale: float | None = None,
    round_inputs: bool = True,
    round_p: bool = True,
    scaling: bool | None = None,
    rotation: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """An entrywise bound on ``|low_precision_attention(...) − attention(q, k, v)|``.

    The derivation, one rounding at a time (``u``, ``α``: the format's unit roundoff and
    subnormal spacing; ``u₃₂ = 2^-24``; ``γ_n = n u₃₂/(1 − n u₃₂)``):

    - inputs: ``|q̂ − q| ≤ u|q| + α/(2 s_Q)`` entrywise, the same for ``K`` and ``V``;
    - scores: ``|Ŝ_ij − s_ij| ≤ ε_ij = c Σ_t (e_q|k| + |q|e_k + e_q e_k)
      + c((1+u₃₂)²(1+γ_(d+1)) − 1) Σ_t |q̂||k̂|`` (``c`` the scale);
    - ``P̃_j = exp(s_j − m + δ_j)`` with ``|δ_j| ≤ E = max_j ε_ij + u₃₂(|Ŝ_j| + max|Ŝ|) + 2.01 u₃₂``
      (rounding ``S − m`` and ``exp``), so ``p'_j = P̃_j/ΣP̃`` is the softmax of ``s + δ``
      and ``|p'_j − p_j| ≤ (e^{2E} − 1) p_j``;
    - rounding ``P̃``: ``|fl(P̃_j) − P̃_j| ≤ u P̃_j + α/2``, divided by ``ℓ ≥ 1`` (the row's
      maximum contributes ``exp(0) = 1`` exactly);
    - ``P̃V`` accumulated: ``γ_(n+1) Σ_j fl(P̃_j)|v̂_j|``; the division by ``ℓ`` (a float32
      sum): a factor within ``(1 + u₃₂)/(1 − γ_(n+1))``.

    The sum of these terms is returned, plus ``(n + d + 16)·2^-53 Σ p|v|`` for the float64
    reference's own rounding. It assumes float32 neither underflows nor overflows. It is a
    worst case: rounding errors of random data partly cancel, and the measured error is
    smaller.

    Args:
        q: queries, ``(n_q, d_k)``.
        k: keys, ``(n_k, d_k)``.
        v: values, ``(n_k, d_v)``.
        fmt: a `FloatFormat` or its short name.
        scale: the factor on the scores; ``None``: ``1/√d_k``.
        round_inputs: as in
            [`low_precision_attention`][attention_math.precision.low_precision_attention].
        round_p: as there.
        scaling: as there.
        rotation: as there.

    Returns:
        The bound, ``(n_q, d_v)``.

    See Also:
        - [`low_precision_attention`][attention_math.precision.low_precision_attention]: the
          computation bounded.
        - [`kv_quantized_error_bound`][attention_math.precision.kv_quantized_error_bound]:
          the same argument for an integer KV cache.

    References:
        - [Higham, 2002](https://doi.org/10.1137/1.9780898718027), *Accuracy and Stability
          of Numerical Algorithms*, §2.2 and §3.1: the rounding model and ``γ_n``.
        - [Shah et al., 2024](https://arxiv.org/abs/2407.08608) (FlashAttention-3): where
          the FP8 kernel rounds.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> from attention_math.precision import low_precision_attention as lpa
        >>> from attention_math.precision import low_precision_error_bound as bound
        >>> rng = np.random.default_rng(1)
        >>> q, k, v = rng.standard_normal((3, 4, 8))
        >>> err = np.abs(lpa(q, k, v, "bfloat16") - attention(q, k, v))
        >>> bool((err <= bound(q, k, v, "bfloat16")).all())
        True
    """
    _, st = _kernel(q, k, v, fmt, scale, round_inputs, round_p, scaling, rotation)
    eq, ek, ev = (
        _input_error(a, st.inputs, s) for a, s in zip((st.q, st.k, st.v), st.scales, strict=True)
    )
    u_p = float(st.p.unit_roundoff) if st.p else 0.0
    alpha_p = float(st.p.min_subnormal) if st.p else 0.0
    u32 = float(FLOAT32.unit_roundoff)
    return _bound(st.q, st.k, st.v, eq, ek, ev, st.scale, u32, u_p, alpha_p)


# --- incoherent processing ---------------------------------------------------------------


def _power_of_two(d: object) -> int:
    if isinstance(d, bool) or not isinstance(d, int) or d < 1 or d & (d - 1):
        raise ValueError(f"d must be a power of two (Sylvester's construction), got {d!r}")
    return d


def hadamard_matrix(d: int) -> sp.Matrix:
    """Sylvester's Hadamard matrix of order ``d`` (a power of two): entries ±1, ``H Hᵀ = d I``.

    See Also:
        - [`hadamard_rotation`][attention_math.precision.hadamard_rotation]: the random
          orthogonal ``D H / √d`` built from it.

    References:
        - [Sylvester, 1867](https://doi.org/10.1080/14786446708639914): the doubling
          construction ``H_(2d) = [[H, H], [H, −H]]``.

    Examples:
        >>> from attention_math.precision import hadamard_matrix
        >>> hadamard_matrix(2)
        Matrix([
        [1,  1],
        [1, -1]])
    """
    n = _power_of_two(d)
    h = sp.Matrix([[1]])
    while h.shape[0] < n:
        h = sp.Matrix(sp.BlockMatrix([[h, h], [h, -h]]))
    return h


def hadamard_rotation(d: int, rng: np.random.Generator | int | None = 0) -> NDArray[np.float64]:
    """A random orthogonal ``R = D H / √d``: ``D`` a diagonal of random signs, ``H``
    Sylvester's Hadamard matrix. ``x ↦ xR`` spreads any one coordinate over all ``d``.

    Args:
        d: the head dimension, a power of two.
        rng: a NumPy ``Generator`` or a seed for the signs.

    Returns:
        ``R``, ``(d, d)`` float64, with ``R Rᵀ = I`` up to float64 rounding.

    See Also:
        - [`rotation_keeps_scores`][attention_math.precision.rotation_keeps_scores]: the
          exact proof that the scores are unchanged.
        - [`low_precision_attention`][attention_math.precision.low_precision_attention]: its
          ``rotation`` argument.

    References:
        - [Shah et al., 2024](https://arxiv.org/abs/2407.08608) (FlashAttention-3), §3.3:
          incoherent processing.
        - [Chee et al., 2023](https://arxiv.org/abs/2307.13304) (QuIP): incoherence processing
          with random orthogonal matrices.

    Examples:
        >>> import numpy as np
        >>> from attention_math.precision import hadamard_rotation
        >>> r = hadamard_rotation(4, rng=0)
        >>> np.allclose(r @ r.T, np.eye(4)), np.abs(np.array([[8.0, 0, 0, 0]]) @ r).tolist()
        (True, [[4.0, 4.0, 4.0, 4.0]])
    """
    n = _power_of_two(d)
    gen = np.random.default_rng(rng)
    signs = gen.choice([-1.0, 1.0], size=n)  # (d,)
    h = np.ones((1, 1))
    while h.shape[0] < n:  # Sylvester's doubling, as hadamard_matrix (the tests compare)
        h = np.block([[h, h], [h, -h]])  # (2k, 2k)
    r: NDArray[np.float64] = signs[:, None] * h / math.sqrt(n)  # (d, d): D H / √d
    return r


@derived_once
def rotation_keeps_scores(d: int) -> bool:
    """Prove in SymPy that ``(QR)(KR)ᵀ = QKᵀ`` for ``R = D H/√d``, any signs and any ``Q``, ``K``.

    The signs are symbols ``σ_i`` with ``σ_i² = 1``; ``Q`` and ``K`` are ``2 × d`` matrices
    of symbols. Returns ``True`` or raises ``AssertionError``.

    See Also:
        - [`hadamard_rotation`][attention_math.precision.hadamard_rotation]: the numeric ``R``.

    References:
        - [Shah et al., 2024](https://arxiv.org/abs/2407.08608) (FlashAttention-3), §3.3.

    Examples:
        >>> from attention_math.precision import rotation_keeps_scores
        >>> rotation_keeps_scores(4)
        True
    """
    n = _power_of_two(d)
    sigma = sp.symbols(f"sigma0:{n}")
    r = sp.diag(*sigma) * hadamard_matrix(n) / sp.sqrt(n)
    square = {s**2: 1 for s in sigma}
    gram = (r * r.T).applyfunc(lambda x: sp.expand(x).subs(square))
    if gram != sp.eye(n):
        raise AssertionError(f"R Rᵀ is not I for d = {d}: {gram}")
    q = sp.Matrix(2, n, sp.symbols(f"q0:{2 * n}"))
    k = sp.Matrix(2, n, sp.symbols(f"k0:{2 * n}"))
    diff = ((q * r) * (k * r).T - q * k.T).applyfunc(lambda x: sp.expand(x).subs(square))
    if diff != sp.zeros(2, 2):
        raise AssertionError(f"(QR)(KR)ᵀ ≠ QKᵀ for d = {d}: {diff}")
    return True


def outlier_features(
    n: int,
    d: int,
    outlier: float,
    rng: np.random.Generator | int | None = 0,
    *,
    fraction: float = 0.01,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Standard normal ``Q`` and ``K`` ``(n, d)`` in which a random ``fraction`` of the
    entries is multiplied by ``outlier``: a few entries of large magnitude among normal ones,
    swept in size. FlashAttention-3's own test (§4.3) instead draws
    ``N(0, 1) + N(0, 100) · Bernoulli(0.001)``: an outlier of standard deviation 10 added to
    about 0.1 % of the entries.

    See Also:
        - [`outlier_errors`][attention_math.precision.outlier_errors]: the rounding error on them.

    References:
        - [Shah et al., 2024](https://arxiv.org/abs/2407.08608) (FlashAttention-3), §4.3.
        - [Sun et al., 2024](https://arxiv.org/abs/2402.17762): massive activations.

    Examples:
        >>> from attention_math.precision import outlier_features
        >>> q, k = outlier_features(64, 64, 100.0)
        >>> q.shape, bool(abs(q).max() > 50)
        ((64, 64), True)
    """
    gen = np.random.default_rng(rng)
    q, k = gen.standard_normal((2, n, d))  # (n, d) each
    for x in (q, k):
        x[gen.random(x.shape) < fraction] *= outlier
    return q, k


def quantize_per_tensor(x: ArrayLike, grid_: FloatFormat | str | int) -> NDArray[np.float64]:
    """``x`` rounded to a format with one scale for the whole tensor, and scaled back.

    A `FloatFormat` (or its name): scaled by the power of two that brings ``max |x|`` into
    ``(max/2, max]``, rounded, scaled back. An integer ``b``: symmetric ``b``-bit integers,
    step ``max |x| / (2^(b−1) − 1)`` (ties to even).

    See Also:
        - [`round_to_format`][attention_math.precision.round_to_format]: the rounding.
        - [`quantize_int`][attention_math.precision.quantize_int]: per channel or per token.

    References:
        - [Micikevicius et al., 2022](https://arxiv.org/abs/2209.05433), §4: per-tensor
          scaling.

    Examples:
        >>> from attention_math.precision import quantize_per_tensor
        >>> quantize_per_tensor([1000.0, 3.0, 0.3], "e4m3").tolist()
        [1024.0, 3.0, 0.3125]
        >>> quantize_per_tensor([1000.0, 3.0, 0.3], 8).tolist()
        [1000.0, 0.0, 0.0]
    """
    a = _as_array("x", x)
    if not np.isfinite(a).all():
        raise ValueError("x has infinite entries")
    amax = float(np.abs(a).max()) if a.size else 0.0
    if isinstance(grid_, bool):
        raise TypeError(f"grid_ must be a format or integer bits, got {grid_!r}")
    if isinstance(grid_, int):
        if not 2 <= grid_ <= 16:
            raise ValueError(f"integer bits must be from 2 to 16, got {grid_}")
        step = amax / (2 ** (grid_ - 1) - 1) if amax > 0 else 1.0
        out: NDArray[np.float64] = np.round(a / step) * step
        return out
    f = _format(grid_)
    s = _pow2_scale(a, f)
    return round_to_format(a * s, f, overflow="saturate") / s


@dataclass(frozen=True)
class OutlierErrors:
    """The relative RMS error of the scores ``QKᵀ``, with and without the rotation, for each
    outlier size."""

    outliers: tuple[float, ...]
    plain: tuple[float, ...]
    rotated: tuple[float, ...]


def outlier_errors(
    grid_: FloatFormat | str | int,
    outliers: Sequence[float],
    *,
    n: int = 64,
    d: int = 64,
    seeds: int = 4,
) -> OutlierErrors:
    """The rounding error of the scores ``Q̂K̂ᵀ`` (relative RMS: ``‖Q̂K̂ᵀ − QKᵀ‖/‖QKᵀ‖``,
    Frobenius) as outliers grow, without and with a random Hadamard rotation applied to
    ``Q`` and ``K`` before the rounding; the mean over ``seeds`` draws of
    [`outlier_features`][attention_math.precision.outlier_features].

    ``Q`` and ``K`` are quantised per tensor by
    [`quantize_per_tensor`][attention_math.precision.quantize_per_tensor] (a format or integer
    bits) and multiplied in float64, so the error is the rounding's alone.

    See Also:
        - [`hadamard_rotation`][attention_math.precision.hadamard_rotation]: the rotation.

    References:
        - [Shah et al., 2024](https://arxiv.org/abs/2407.08608) (FlashAttention-3), §3.3
          and §4.3.
        - [Chee et al., 2023](https://arxiv.org/abs/2307.13304) (QuIP): incoherence.

    Examples:
        >>> from attention_math.precision import outlier_errors
        >>> e = outlier_errors(8, [1.0, 100.0], seeds=1)   # int8: the rotation helps
        >>> e.plain[1] > 3 * e.rotated[1]
        True
    """
    plain, rotated = [], []
    for size in outliers:
        a, b = 0.0, 0.0
        for seed in range(seeds):
            q, k = outlier_features(n, d, float(size), seed)
            exact = q @ k.T  # (n, n) float64
            norm = float(np.linalg.norm(exact))
            r = hadamard_rotation(d, 1000 + seed)
            a += (
                float(
                    np.linalg.norm(
                        quantize_per_tensor(q, grid_) @ quantize_per_tensor(k, grid_).T - exact
                    )
                )
                / norm
            )
            b += (
                float(
                    np.linalg.norm(
                        quantize_per_tensor(q @ r, grid_) @ quantize_per_tensor(k @ r, grid_).T
                        - exact
                    )
                )
                / norm
            )
        plain.append(a / seeds)
        rotated.append(b / seeds)
    return OutlierErrors(tuple(float(x) for x in outliers), tuple(plain), tuple(rotated))


# --- KV-cache quantisation ---------------------------------------------------------------


def _int_quantize(
    x: NDArray[np.float64], bits: int, per: Per
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if isinstance(bits, bool) or not isinstance(bits, int) or not 2 <= bits <= 16:
        raise ValueError(f"bits must be an integer from 2 to 16, got {bits!r}")
    if per not in ("channel", "token"):
        raise ValueError(f"per must be 'channel' or 'token', got {per!r}")
    axis = 0 if per == "channel" else 1  # channel: statistics over the tokens of each feature
    lo = x.min(axis=axis, keepdims=True)
    step = (x.max(axis=axis, keepdims=True) - lo) / (2**bits - 1)  # the grid's spacing
    safe = np.where(step > 0, step, 1.0)
    codes = np.clip(np.round((x - lo) / safe), 0, 2**bits - 1)  # integers 0 … 2^b − 1
    out: NDArray[np.float64] = codes * step + lo
    return out, np.broadcast_to(step, x.shape)


def quantize_int(x: ArrayLike, bits: int, *, per: Per) -> NDArray[np.float64]:
    """``x`` ``(tokens, features)`` quantised to ``bits``-bit integers and back (asymmetric
    min–max): per ``"channel"`` (each feature its own range over the tokens: keys in KIVI) or
    per ``"token"`` (each token its own range over the features: values). Ties to even.

    Each entry moves by at most half its group's step ``(max − min)/(2^b − 1)``.

    See Also:
        - [`kv_quantized_attention`][attention_math.precision.kv_quantized_attention]:
          attention over a cache quantised this way.

    References:
        - [Liu et al., 2024](https://arxiv.org/abs/2402.02750) (KIVI): keys per channel,
          values per token.

    Examples:
        >>> from attention_math.precision import quantize_int
        >>> quantize_int([[-1.0], [0.5], [2.0]], 4, per="channel").ravel().tolist()
        [-1.0, 0.6000000000000001, 2.0]
    """
    a = _as_array("x", x, min_ndim=2)
    if a.ndim != 2 or 0 in a.shape or not np.isfinite(a).all():
        raise ValueError(f"x must be a finite non-empty (tokens, features) matrix, shape {a.shape}")
    return _int_quantize(a, bits, per)[0]


def kv_quantized_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    bits: int,
    *,
    key_per: Per = "channel",
    value_per: Per = "token",
    scale: float | None = None,
) -> NDArray[np.float64]:
    """Attention (float64) over a cache whose keys and values were quantised to ``bits``-bit
    integers by [`quantize_int`][attention_math.precision.quantize_int].

    See Also:
        - [`kv_quantized_error_bound`][attention_math.precision.kv_quantized_error_bound]:
          the bound on its error.
        - [`KVCache`][attention_math.decoding.KVCache]: the cache itself.

    References:
        - [Liu et al., 2024](https://arxiv.org/abs/2402.02750) (KIVI): 2-bit asymmetric KV
          cache quantisation, keys per channel, values per token.
        - [Hooper et al., 2024](https://arxiv.org/abs/2401.18079) (KVQuant): per-channel keys.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> from attention_math.precision import kv_quantized_attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.standard_normal((3, 4, 8))
        >>> e8 = np.abs(kv_quantized_attention(q, k, v, 8) - attention(q, k, v)).max()
        >>> e4 = np.abs(kv_quantized_attention(q, k, v, 4) - attention(q, k, v)).max()
        >>> bool(e8 < e4 < 0.5)
        True
    """
    from attention_math.numeric import attention  # NumPy: the array side only

    qa, ka, va = _qkv(q, k, v)
    sc = _scale(scale, qa.shape[1])
    kq, _ = _int_quantize(ka, bits, key_per)
    vq, _ = _int_quantize(va, bits, value_per)
    return np.asarray(attention(qa, kq, vq, scale=sc), dtype=np.float64)


def kv_quantized_error_bound(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    bits: int,
    *,
    key_per: Per = "channel",
    value_per: Per = "token",
    scale: float | None = None,
) -> NDArray[np.float64]:
    """An entrywise bound on ``|kv_quantized_attention(...) − attention(q, k, v)|``.

    The argument of
    [`low_precision_error_bound`][attention_math.precision.low_precision_error_bound] with the
    input errors of the integer grids (``|k̂ − k| ≤ step/2``, plus float64's rounding of the
    quantiser's arithmetic), float64 arithmetic (``u = 2^-53``) and ``Q`` and ``P`` unrounded:
    ``|ΔO_i| ≤ (e^{2E_i} − 1) Σ_j p_ij |v̂_j| + Σ_j p_ij step_j^V / 2`` with
    ``E_i = c max_j Σ_t |q_it| step_t^K / 2``, to first order.

    See Also:
        - [`kv_quantized_attention`][attention_math.precision.kv_quantized_attention]: what
          is bounded.

    References:
        - [Liu et al., 2024](https://arxiv.org/abs/2402.02750) (KIVI).

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> from attention_math.precision import kv_quantized_attention, kv_quantized_error_bound
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.standard_normal((3, 4, 8))
        >>> err = np.abs(kv_quantized_attention(q, k, v, 4) - attention(q, k, v))
        >>> bool((err <= kv_quantized_error_bound(q, k, v, 4)).all())
        True
    """
    qa, ka, va = _qkv(q, k, v)
    sc = _scale(scale, qa.shape[1])
    u64 = 2.0**-53
    errs = []
    for a, per in ((ka, key_per), (va, value_per)):
        _, step = _int_quantize(a, bits, per)
        span = np.abs(a).max()  # the quantiser's own float64 rounding, generously
        errs.append(step / 2 * (1 + 8 * u64) + 8 * u64 * span)
    return _bound(qa, ka, va, np.zeros_like(qa), errs[0], errs[1], sc, u64, 0.0, 0.0)
