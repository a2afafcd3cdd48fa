"""Positions: the sinusoidal encoding, rotary embeddings (RoPE) and ALiBi biases.

Attention by itself is permutation-equivariant (see the *Why it works* chapter): it needs
positions from outside. Three ways in use:

* **sinusoidal** (Vaswani et al. 2017): a fixed vector added to each token's input;
* **RoPE** (Su et al., RoFormer): queries and keys rotated by an angle proportional to
  their position, so that their dot product depends only on the *difference* of positions;
* **ALiBi** (Press et al. 2022): a bias ``−m_k·|i − j|`` added to the scores of head ``k``.

The exact statements behind each are in
[`derivations.positional`][attention_math.derivations.positional].
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from numbers import Real
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_count

__all__ = [
    "ROPE_TYPES",
    "alibi_bias",
    "alibi_exponents",
    "alibi_far_weight",
    "alibi_slopes",
    "rope",
    "rope_decay_bound",
    "rope_frequencies",
    "sinusoidal",
    "t5_relative_bucket",
    "unseen_angle_pairs",
    "yarn_ramp",
]

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3")
"""The ``rope_type`` values of a Hugging Face ``rope_scaling`` dictionary that
`rope_frequencies` understands."""


def _even_width(name: str, d: int) -> int:
    if d % 2:
        raise ValueError(f"{name} must be even (positions are encoded in pairs), got {d}")
    return d


def _check_base(base: object) -> float:
    if isinstance(base, bool) or not isinstance(base, Real):
        raise TypeError(f"base must be a real number, got {type(base).__name__} {base!r}")
    b = float(base)
    if not math.isfinite(b) or b <= 1:
        raise ValueError(f"base must be finite and > 1, got {base!r}")
    return b


def _powers(b: float, d: int) -> NDArray[np.float64]:
    """``b^(−2i/d)``, ``i = 0 … d/2 − 1``, each correctly rounded."""
    # math.pow, not NumPy's vectorised power: NumPy picks a SIMD kernel per CPU (its AVX-512
    # power is not correctly rounded), and a θ_i one ulp off moves every angle p·θ_i, so the
    # same call gave different results on different machines
    return np.array([math.pow(b, -k / d) for k in range(0, d, 2)], dtype=np.float64)  # (d/2,)


def _number(scaling: Mapping[str, Any], key: str, default: float | None = None) -> float:
    value = scaling.get(key, default)
    if value is None:
        raise ValueError(f"scaling[{key!r}] is required for rope_type {_kind(scaling)!r}")
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"scaling[{key!r}] must be a finite number, got {value!r}")
    return float(value)


def _kind(scaling: Mapping[str, Any]) -> str:
    kind = scaling.get("rope_type", scaling.get("type", "default"))  # "type": older configs
    if kind not in ROPE_TYPES:
        raise ValueError(f"scaling['rope_type'] must be one of {ROPE_TYPES}, got {kind!r}")
    return str(kind)


def yarn_ramp(
    d: int,
    *,
    base: float,
    original_max_position_embeddings: int,
    beta_fast: float = 32,
    beta_slow: float = 1,
    truncate: bool = True,
) -> NDArray[np.float64]:
    """YaRN's ramp ``γ_i ∈ [0, 1]`` per frequency pair (Peng et al. 2023): 0 where the pair
    turns more than ``beta_fast`` times over the original context (kept as is), 1 where it
    turns fewer than ``beta_slow`` times (interpolated), linear in ``i`` between.

    The pair that turns ``r`` times in ``L`` positions is ``i(r) = d·ln(L/(2πr)) / (2 ln base)``;
    the ramp runs from ``low = ⌊i(beta_fast)⌋`` to ``high = ⌈i(beta_slow)⌉`` (without
    rounding if ``truncate=False``), clipped to ``[0, d − 1]``, as Hugging Face does.

    Examples:
        >>> from attention_math.positional import yarn_ramp
        >>> yarn_ramp(16, base=10000.0, original_max_position_embeddings=2048)
        array([0.  , 0.  , 0.  , 0.25, 0.5 , 0.75, 1.  , 1.  ])
    """
    d = _even_width("d", check_count("d", d))
    b = _check_base(base)
    n = check_count("original_max_position_embeddings", original_max_position_embeddings)

    def pair(turns: float) -> float:  # the (fractional) pair index that turns `turns` times
        return d * math.log(n / (turns * 2 * math.pi)) / (2 * math.log(b))

    low, high = pair(float(beta_fast)), pair(float(beta_slow))
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001  # as Hugging Face: no division by zero
    ramp = (np.arange(d // 2, dtype=np.float64) - low) / (high - low)  # (d/2,)
    out: NDArray[np.float64] = np.clip(ramp, 0.0, 1.0)
    return out


@overload
def rope_frequencies(
    d: int,
    *,
    base: float = ...,
    scaling: None = None,
    max_position_embeddings: int | None = ...,
    seq_len: int | None = ...,
) -> NDArray[np.float64]: ...
@overload
def rope_frequencies(
    d: int,
    *,
    base: float = ...,
    scaling: Mapping[str, Any],
    max_position_embeddings: int | None = ...,
    seq_len: int | None = ...,
) -> tuple[NDArray[np.float64], float]: ...
def rope_frequencies(
    d: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
) -> NDArray[np.float64] | tuple[NDArray[np.float64], float]:
    """The angular frequencies ``θ_i = base^(−2i/d)``, ``i = 0 … d/2 − 1`` (float64), or,
    with ``scaling``, the frequencies of a context-extension method and its attention factor.

    The same frequencies serve the sinusoidal encoding (with ``d = d_model``) and RoPE.
    ``scaling`` is the ``rope_scaling`` dictionary of a Hugging Face config, by ``rope_type``
    (``"type"`` in older configs):

    * ``"linear"`` (position interpolation, Chen et al. 2023): ``θ_i / factor``;
    * ``"dynamic"`` (NTK-aware, bloc97 2023): ``θ_i`` of the base
      ``base · (factor·n/N − factor + 1)^(d/(d−2))`` with ``N = max_position_embeddings``
      and ``n = max(seq_len, N)``;
    * ``"yarn"`` (Peng et al. 2023): ``(1 − γ_i) θ_i + γ_i θ_i / factor`` with `yarn_ramp`'s
      ``γ_i``, and the attention factor ``0.1 ln(factor) + 1`` (or ``attention_factor``,
      or the ratio of the ``mscale``/``mscale_all_dim`` factors when both are given);
      ``original_max_position_embeddings`` (or ``max_position_embeddings``), ``beta_fast``
      (32), ``beta_slow`` (1), ``truncate`` (True);
    * ``"llama3"`` (Grattafiori et al. 2024): wavelengths ``2π/θ_i`` shorter than
      ``N₀/high_freq_factor`` kept, longer than ``N₀/low_freq_factor`` divided by ``factor``,
      smoothly blended between, ``N₀ = original_max_position_embeddings``.

    Args:
        d: the rotated width (even): ``head_dim · partial_rotary_factor``.
        base: ``rope_theta``.
        scaling: the ``rope_scaling`` dictionary, or ``None``.
        max_position_embeddings: the config's field of that name (``"dynamic"``, and
            ``"yarn"`` without ``original_max_position_embeddings``).
        seq_len: the current length (``"dynamic"`` only).

    Returns:
        ``θ`` ``(d/2,)`` without ``scaling``; ``(θ, attention_factor)`` with it (the
            factor multiplies cos and sin, so every score by its square; 1 but for YaRN).

    Raises:
        ValueError: an unknown ``rope_type``, or a field missing or not a number.

    Examples:
        >>> from attention_math.positional import rope_frequencies
        >>> rope_frequencies(4, base=100.0)
        array([1. , 0.1])
        >>> rope_frequencies(4, base=100.0, scaling={"rope_type": "linear", "factor": 4.0})
        (array([0.25 , 0.025]), 1.0)
        >>> rope_frequencies(4, scaling={"rope_type": "longrope"})
        Traceback (most recent call last):
        ...
        ValueError: scaling['rope_type'] must be one of ('default', 'linear', 'dynamic', \
'yarn', 'llama3'), got 'longrope'
    """
    d = _even_width("d", check_count("d", d))
    b = _check_base(base)
    theta = _powers(b, d)  # (d/2,)
    if scaling is None:
        return theta
    if not isinstance(scaling, Mapping):
        raise TypeError(f"scaling must be a dictionary or None, got {type(scaling).__name__}")
    kind = _kind(scaling)
    if kind == "default":
        return theta, 1.0
    if kind == "linear":
        return theta / _number(scaling, "factor"), 1.0
    if kind == "dynamic":
        factor = _number(scaling, "factor")
        if max_position_embeddings is None:
            raise ValueError("rope_type 'dynamic' needs max_position_embeddings")
        big_n = check_count("max_position_embeddings", max_position_embeddings)
        n = big_n if seq_len is None else max(check_count("seq_len", seq_len), big_n)
        if d == 2:
            raise ValueError("rope_type 'dynamic' needs d > 2 (its exponent is d/(d − 2))")
        new_base = b * ((factor * n / big_n) - (factor - 1)) ** (d / (d - 2))
        return _powers(new_base, d), 1.0
    if kind == "yarn":
        return _yarn(theta, d, b, scaling, max_position_embeddings)
    return _llama3(theta, scaling), 1.0


def _yarn(
    theta: NDArray[np.float64],
    d: int,
    b: float,
    scaling: Mapping[str, Any],
    max_position_embeddings: int | None,
) -> tuple[NDArray[np.float64], float]:
    original = scaling.get("original_max_position_embeddings", max_position_embeddings)
    if original is None:
        raise ValueError(
            "rope_type 'yarn' needs scaling['original_max_position_embeddings'] or "
            "max_position_embeddings"
        )
    if scaling.get("factor") is None and max_position_embeddings is not None:
        factor = max_position_embeddings / original  # as Hugging Face, for a missing factor
    else:
        factor = _number(scaling, "factor")

    def mscale(scale: float, m: float = 1.0) -> float:  # YaRN's √(1/t) = 0.1 ln s + 1
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        m, m_all = scaling.get("mscale"), scaling.get("mscale_all_dim")
        attention_factor = (
            mscale(factor, m) / mscale(factor, m_all) if m and m_all else mscale(factor)
        )
    ramp = yarn_ramp(
        d,
        base=b,
        original_max_position_embeddings=original,
        beta_fast=scaling.get("beta_fast") or 32,
        beta_slow=scaling.get("beta_slow") or 1,
        truncate=bool(scaling.get("truncate", True)),
    )  # (d/2,)
    # γ = 0: the pair turns many times within the original context, keep it (extrapolate);
    # γ = 1: it turns less than once, interpolate it like position interpolation
    inv: NDArray[np.float64] = theta / factor * ramp + theta * (1 - ramp)  # (d/2,)
    return inv, float(attention_factor)


def _llama3(theta: NDArray[np.float64], scaling: Mapping[str, Any]) -> NDArray[np.float64]:
    factor = _number(scaling, "factor")
    low, high = _number(scaling, "low_freq_factor"), _number(scaling, "high_freq_factor")
    n0 = _number(scaling, "original_max_position_embeddings")
    wavelen = 2 * math.pi / theta  # (d/2,): positions per full turn of pair i
    scaled = np.where(wavelen > n0 / low, theta / factor, theta)  # long wavelengths: ÷ factor
    smooth = (n0 / wavelen - low) / (high - low)  # (d/2,): 0 at N₀/low, 1 at N₀/high
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < n0 / high) & ~(wavelen > n0 / low)
    out: NDArray[np.float64] = np.where(medium, blended, scaled)
    return out


def sinusoidal(n_positions: int, d_model: int, *, base: float = 10000.0) -> NDArray[np.float64]:
    """The sinusoidal position encoding of "Attention Is All You Need", ``(n_positions, d_model)``.

    ``PE[p, 2i] = sin(p / base^(2i/d_model))`` and ``PE[p, 2i+1] = cos(p / base^(2i/d_model))``.

    See Also:
        - [`rope`][attention_math.positional.rope]: positions as rotations of queries and keys.
        - [`alibi_bias`][attention_math.positional.alibi_bias]: positions as a bias on the scores.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3.5: sinusoidal positional
          encoding.

    Examples:
        >>> from attention_math.positional import sinusoidal
        >>> sinusoidal(2, 4).round(4)
        array([[0.    , 1.    , 0.    , 1.    ],
               [0.8415, 0.5403, 0.01  , 1.    ]])
        >>> sinusoidal(2, 3)
        Traceback (most recent call last):
        ...
        ValueError: d_model must be even (positions are encoded in pairs), got 3
    """
    n = check_count("n_positions", n_positions)
    d = _even_width("d_model", check_count("d_model", d_model))
    theta = rope_frequencies(d, base=base)  # (d/2,)
    angle = np.arange(n, dtype=np.float64)[:, None] * theta[None, :]  # (n, d/2)
    pe = np.empty((n, 2 * theta.size))  # (n, d_model)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def _check_positions(positions: ArrayLike | None, length: int) -> NDArray[np.int64]:
    if positions is None:
        return np.arange(length, dtype=np.int64)
    p = np.asarray(positions)
    if p.dtype == np.bool_ or not np.issubdtype(p.dtype, np.integer):
        raise TypeError(f"positions must be integers, got dtype {p.dtype}")
    if p.shape != (length,):
        raise ValueError(f"positions must have shape (L,) = ({length},) to match x, got {p.shape}")
    return p.astype(np.int64)


def rope(
    x: ArrayLike,
    positions: ArrayLike | None = None,
    *,
    base: float = 10000.0,
    interleaved: bool = False,
    partial_rotary_factor: float = 1.0,
    scaling: Mapping[str, Any] | None = None,
    max_position_embeddings: int | None = None,
) -> NDArray[np.floating]:
    """Rotary position embedding of ``x``, ``(..., L, d)`` with ``d`` even.

    Token ``t`` at position ``p_t`` has each of its ``d/2`` pairs of coordinates rotated by
    the angle ``p_t · θ_i`` with ``θ_i = base^(−2i/d)``. Which coordinates form pair ``i``:

    * ``interleaved=False`` (default): ``(x[i], x[i + d/2])``, the GPT-NeoX / Hugging Face
      ``rotate_half`` layout;
    * ``interleaved=True``: ``(x[2i], x[2i+1])``, the RoFormer / GPT-J layout.

    The two are the same map up to a fixed permutation of the ``d`` coordinates; weights
    trained with one layout give wrong scores under the other.

    Args:
        x: queries or keys, ``(..., L, d)``.
        positions: integer positions ``(L,)``; default ``0 … L − 1``.
        base: the base of the frequencies.
        interleaved: the pair layout (see above).
        partial_rotary_factor: rotate only the first ``r = int(d · factor)`` coordinates
            (``r`` even), with frequencies ``base^(−2i/r)``, and pass the rest through
            unchanged (GPT-NeoX, Phi): those coordinates carry content with no position.
        scaling: a Hugging Face ``rope_scaling`` dictionary (see `rope_frequencies`): its
            frequencies, and cos and sin multiplied by its attention factor.
        max_position_embeddings: for ``scaling`` (the ``"dynamic"`` type uses the largest
            position + 1 as the current length).

    Returns:
        The rotated ``x``, same shape and dtype (float32 stays float32; integers become
            float64). The angles are computed in float64, then rounded to the dtype.

    See Also:
        - [`rope_frequencies`][attention_math.positional.rope_frequencies]: the angles, with the
          long-context scalings.
        - [`sinusoidal`][attention_math.positional.sinusoidal]: positions added to the input
          instead.

    References:
        - [Su et al., 2021](https://arxiv.org/abs/2104.09864) (RoFormer): rotary position embedding.

    Examples:
        >>> import numpy as np
        >>> from attention_math.positional import rope
        >>> x = np.array([[1.0, 0.0], [1.0, 0.0]])   # two tokens, d = 2: one pair
        >>> rope(x).round(4)                         # token 1 turned by 1 radian
        array([[1.    , 0.    ],
               [0.5403, 0.8415]])
        >>> rope(np.ones((2, 4)), partial_rotary_factor=0.5).round(4)  # only (x0, x1) turn
        array([[ 1.    ,  1.    ,  1.    ,  1.    ],
               [-0.3012,  1.3818,  1.    ,  1.    ]])
        >>> rope(np.ones((2, 3)))
        Traceback (most recent call last):
        ...
        ValueError: the last axis of x (d = 3) must be even: RoPE rotates pairs of coordinates
    """
    a = as_float("x", x, min_ndim=2)
    length, d = a.shape[-2], a.shape[-1]
    if d % 2:
        raise ValueError(
            f"the last axis of x (d = {d}) must be even: RoPE rotates pairs of coordinates"
        )
    if not isinstance(interleaved, bool | np.bool_):
        raise TypeError(f"interleaved must be True or False, got {interleaved!r}")
    f: object = partial_rotary_factor
    if isinstance(f, bool) or not isinstance(f, Real) or not 0 < float(f) <= 1:
        raise ValueError(f"partial_rotary_factor must be in (0, 1], got {f!r}")
    r = int(d * float(f))  # the rotated width, as Hugging Face: int(head_dim · factor)
    if r < 2 or r % 2:
        raise ValueError(
            f"partial_rotary_factor = {f} rotates int({d} · {f}) = {r} coordinates: "
            "that must be a positive even number"
        )
    p = _check_positions(positions, length)
    if scaling is None:
        theta, factor = rope_frequencies(r, base=base), 1.0  # (r/2,)
    else:
        seq_len = int(p.max()) + 1 if p.size and p.max() >= 0 else None
        theta, factor = rope_frequencies(
            r,
            base=base,
            scaling=scaling,
            max_position_embeddings=max_position_embeddings,
            seq_len=seq_len,
        )
    angle = p[:, None].astype(np.float64) * theta[None, :]  # (L, r/2)
    cos = (np.cos(angle) * factor).astype(a.dtype)  # (L, r/2)
    sin = (np.sin(angle) * factor).astype(a.dtype)  # (L, r/2)
    head = a[..., :r]  # (..., L, r): the rotated coordinates
    if interleaved:
        x1, x2 = head[..., 0::2], head[..., 1::2]  # (..., L, r/2) each
    else:
        x1, x2 = head[..., : r // 2], head[..., r // 2 :]  # (..., L, r/2) each
    r1 = x1 * cos - x2 * sin  # (..., L, r/2): the rotated first coordinates
    r2 = x2 * cos + x1 * sin  # (..., L, r/2): the rotated second coordinates
    out = np.array(a, copy=True)  # (..., L, d): coordinates r … d − 1 pass through
    if interleaved:
        out[..., 0:r:2], out[..., 1:r:2] = r1, r2
    else:
        out[..., : r // 2], out[..., r // 2 : r] = r1, r2
    return out


def rope_decay_bound(distances: ArrayLike, *, d: int, base: float = 10000.0) -> NDArray[np.float64]:
    """RoFormer's long-term decay: ``(2/d) Σ_{j=1}^{d/2} |S_j(r)|`` at each distance ``r``,
    with ``S_j(r) = Σ_{k<j} e^{i r θ_k}`` (Su et al., §3.4.3).

    Writing pair ``k`` of ``q`` and ``k`` as complex numbers, the rotated score is
    ``Re Σ_k h_k e^{i r θ_k}``; summation by parts (Abel) bounds its size by
    ``max_k |h_{k+1} − h_k| · Σ_j |S_j(r)|``. This returns the second factor per pair
    (``(d/2 + 1)/2`` at ``r = 0``), which falls as ``r`` grows (on the whole, not step by
    step): far tokens can score less.

    Examples:
        >>> from attention_math.positional import rope_decay_bound
        >>> rope_decay_bound([0, 10, 100], d=8, base=100.0).round(3)
        array([2.5  , 1.234, 1.26 ])
    """
    d = _even_width("d", check_count("d", d))
    r = np.asarray(distances, dtype=np.float64)  # (n,)
    theta = rope_frequencies(d, base=base)  # (d/2,)
    z = np.exp(1j * r[..., None] * theta)  # (n, d/2): e^{i r θ_k}
    partial = np.cumsum(z, axis=-1)  # (n, d/2): S_1 … S_{d/2}
    out: NDArray[np.float64] = np.abs(partial).mean(axis=-1)  # (n,)
    return out


def t5_relative_bucket(
    relative_position: ArrayLike,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> NDArray[np.int64]:
    """T5's bucket of each relative position ``key − query`` (Raffel et al. 2020).

    With ``bidirectional`` the buckets are halved between keys before and after the query
    (those after get the upper half). Of the ``n`` buckets left, the first ``n/2`` hold one
    distance each (0, 1, …); the rest cover distances ``n/2 … max_distance`` in
    logarithmically growing bins, and every longer distance shares the last bucket. Without
    ``bidirectional`` a key after the query (a future token) is at distance 0.

    The logarithmic bin is ``n/2 + ⌊ln(δ/(n/2)) / ln(max_distance/(n/2)) · (n − n/2)⌋``,
    evaluated in float32 as the T5 code (Mesh TensorFlow, and Hugging Face's
    ``_relative_position_bucket``) does; `derivations.positions_compared.exact_t5_bucket`
    decides the same floor in integer arithmetic.

    Examples:
        >>> from attention_math.positional import t5_relative_bucket
        >>> t5_relative_bucket([-3, 0, 3, 20, 200], bidirectional=True, num_buckets=32,
        ...                    max_distance=128)
        array([ 3,  0, 19, 26, 31])
        >>> t5_relative_bucket([-200, -20, 5], bidirectional=False)
        array([31, 17,  0])
    """
    rel = np.asarray(relative_position)
    if rel.dtype == np.bool_ or not np.issubdtype(rel.dtype, np.integer):
        raise TypeError(f"relative_position must be integers, got dtype {rel.dtype}")
    if not isinstance(bidirectional, bool | np.bool_):
        raise TypeError(f"bidirectional must be True or False, got {bidirectional!r}")
    n = check_count("num_buckets", num_buckets)
    far = check_count("max_distance", max_distance)
    rel = rel.astype(np.int64)
    out = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        n //= 2
        out += (rel > 0) * n  # keys after the query: the upper half
        dist = np.abs(rel)
    else:
        dist = np.maximum(-rel, 0)  # a future key counts as distance 0
    exact = n // 2
    if exact < 1 or far <= exact:
        raise ValueError(
            f"num_buckets = {num_buckets} and max_distance = {max_distance} leave no "
            "logarithmic range: need num_buckets ≥ 4 (2 one-sided) and max_distance > num_buckets/4"
        )
    f32 = np.float32
    # float32 throughout, as T5: the ratio, a correctly rounded log, then two float32 products
    ratio = dist.astype(f32) / f32(exact)
    with np.errstate(divide="ignore"):  # log 0 for distance 0, which takes the exact branch
        log = np.log(ratio.astype(np.float64)).astype(f32)
    scaled = log / f32(math.log(far / exact)) * f32(n - exact)  # float32
    with np.errstate(invalid="ignore"):
        large = exact + np.trunc(np.where(dist >= exact, scaled, 0)).astype(np.int64)
    out += np.where(dist < exact, dist, np.minimum(large, n - 1))
    return out


def alibi_exponents(n_heads: int) -> list[Fraction]:
    """The exact exponents ``e_k`` of the ALiBi slopes ``m_k = 2^(−e_k)``, head by head.

    For ``n`` a power of two the slopes form the geometric sequence ``2^(−8k/n)``,
    ``k = 1 … n``. Otherwise (the paper's rule, as in its reference code): take the
    ``n' = 2^⌊log₂ n⌋`` slopes of the power of two below ``n``, then the first missing ones
    from every other slope of the power of two above (``2^(−8k/(2n'))`` for odd ``k``).

    Examples:
        >>> from attention_math.positional import alibi_exponents
        >>> [str(e) for e in alibi_exponents(4)]
        ['2', '4', '6', '8']
        >>> [str(e) for e in alibi_exponents(6)]
        ['2', '4', '6', '8', '1', '3']
    """
    n = check_count("n_heads", n_heads)
    below = 1 << (n.bit_length() - 1)  # the largest power of two ≤ n
    out = [Fraction(8 * h, below) for h in range(1, below + 1)]
    out += [Fraction(8 * h, 2 * below) for h in range(1, 2 * below + 1, 2)][: n - below]
    return out


def alibi_slopes(n_heads: int) -> NDArray[np.float64]:
    """The ALiBi slope ``m_k`` of each head ``k``, ``(n_heads,)``: ``2^(−8k/n)`` for ``n`` a
    power of two, the paper's interleaving rule otherwise (see `alibi_exponents`).

    Examples:
        >>> from attention_math.positional import alibi_slopes
        >>> alibi_slopes(8)
        array([0.5       , 0.25      , 0.125     , 0.0625    , 0.03125   ,
               0.015625  , 0.0078125 , 0.00390625])
    """
    return np.array([2.0 ** -float(e) for e in alibi_exponents(n_heads)])


def alibi_bias(n_heads: int, n_q: int, n_k: int | None = None) -> NDArray[np.float64]:
    """The ALiBi additive mask ``(n_heads, n_q, n_k)`` with entry ``−m_k · |i − j|``.

    Add it to the scores (``mask=`` of ``numeric.attention``), combined with a causal mask
    for a decoder. Queries and keys are both counted from position 0.

    See Also:
        - [`alibi_slopes`][attention_math.positional.alibi_slopes]: the slope of each head.
        - [`attention`][attention_math.numeric.attention]: takes the bias as its float ``mask``.

    References:
        - [Press et al., 2022](https://arxiv.org/abs/2108.12409) (ALiBi): attention with linear
          biases.

    Examples:
        >>> from attention_math.positional import alibi_bias
        >>> alibi_bias(2, 3)[0]     # head 1 of 2: slope 2^(-4) = 1/16
        array([[ 0.    , -0.0625, -0.125 ],
               [-0.0625,  0.    , -0.0625],
               [-0.125 , -0.0625,  0.    ]])
    """
    n_q = check_count("n_q", n_q)
    n_k = n_q if n_k is None else check_count("n_k", n_k)
    distance = np.abs(np.arange(n_q)[:, None] - np.arange(n_k)[None, :])  # (n_q, n_k)
    # 0 - m·|i-j| rather than -(m·|i-j|): no negative zeros on the diagonal
    bias: NDArray[np.float64] = 0.0 - alibi_slopes(n_heads)[:, None, None] * distance[None]
    return bias  # (h, n_q, n_k)


def alibi_far_weight(n_heads: int, train_len: int, test_len: int) -> NDArray[np.float64]:
    """Per ALiBi head, the weight that the last query of a ``test_len``-token sequence puts on
    keys ``train_len`` or more positions back, when every content score is equal.

    With slope ``m`` the weights fall as ``e^(−m r)`` with the distance ``r``, so the share
    beyond ``train_len`` is the geometric tail ``(e^(−mL) − e^(−mT)) / (1 − e^(−mT))``: what
    ALiBi attends to past the training length is mostly what it attended to within it.

    Examples:
        >>> from attention_math.positional import alibi_far_weight
        >>> alibi_far_weight(8, 512, 2048)[[0, 7]].round(4)
        array([0.   , 0.135])
    """
    big_l = check_count("train_len", train_len)
    big_t = check_count("test_len", test_len)
    if big_t <= big_l:
        raise ValueError(f"test_len = {big_t} must exceed train_len = {big_l}")
    m = alibi_slopes(n_heads)  # (h,)
    # −expm1 for 1 − e^(−x): exact to the last bit even for a tiny slope·length
    tail = np.exp(-m * big_l) - np.exp(-m * big_t)  # (h,)
    out: NDArray[np.float64] = tail / -np.expm1(-m * big_t)
    return out


def unseen_angle_pairs(
    d: int,
    *,
    train_len: int,
    test_len: int,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
) -> NDArray[np.bool_]:
    """Which rotary pairs turn through angles at ``test_len`` that training never showed.

    Pair ``i`` covered the angles ``[0, train_len · θ_i)`` in training; if that is less than
    a full turn and the (possibly ``scaling``-ed) frequency ``θ'_i`` reaches further at the
    test length, ``test_len · θ'_i > train_len · θ_i``, the pair produces rotations the model
    never saw. Fast pairs (a full turn within training) repeat what they showed.

    Examples:
        >>> from attention_math.positional import unseen_angle_pairs
        >>> unseen_angle_pairs(128, train_len=4096, test_len=16384).sum()
        np.int64(18)
        >>> unseen_angle_pairs(128, train_len=4096, test_len=16384,
        ...                    scaling={"rope_type": "linear", "factor": 4.0}).sum()
        np.int64(0)
    """
    big_l = check_count("train_len", train_len)
    big_t = check_count("test_len", test_len)
    theta = rope_frequencies(d, base=base)  # (d/2,): the trained frequencies
    if scaling is None:
        new = theta
    else:
        new, _ = rope_frequencies(
            d, base=base, scaling=scaling, max_position_embeddings=big_l, seq_len=big_t
        )
    seen = big_l * theta  # (d/2,): the angle range of training
    # a relative margin of 1e-12: θ/factor · factor·L is L·θ up to rounding, not beyond it
    out: NDArray[np.bool_] = (seen < 2 * math.pi) & (big_t * new > seen * (1 + 1e-12))
    return out
