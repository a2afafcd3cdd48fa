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
from fractions import Fraction
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_count

__all__ = [
    "alibi_bias",
    "alibi_exponents",
    "alibi_slopes",
    "rope",
    "rope_frequencies",
    "sinusoidal",
]


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


def rope_frequencies(d: int, *, base: float = 10000.0) -> NDArray[np.float64]:
    """The angular frequencies ``θ_i = base^(−2i/d)``, ``i = 0 … d/2 − 1`` (float64).

    The same frequencies serve the sinusoidal encoding (with ``d = d_model``) and RoPE.

    Examples:
        >>> from attention_math.positional import rope_frequencies
        >>> rope_frequencies(4, base=100.0)
        array([1. , 0.1])
    """
    d = _even_width("d", check_count("d", d))
    b = _check_base(base)
    # math.pow, not NumPy's vectorised power: NumPy picks a SIMD kernel per CPU (its AVX-512
    # power is not correctly rounded), and a θ_i one ulp off moves every angle p·θ_i, so the
    # same call gave different results on different machines
    return np.array([math.pow(b, -k / d) for k in range(0, d, 2)], dtype=np.float64)  # (d/2,)


def sinusoidal(n_positions: int, d_model: int, *, base: float = 10000.0) -> NDArray[np.float64]:
    """The sinusoidal position encoding of "Attention Is All You Need", ``(n_positions, d_model)``.

    ``PE[p, 2i] = sin(p / base^(2i/d_model))`` and ``PE[p, 2i+1] = cos(p / base^(2i/d_model))``.

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

    Returns:
        The rotated ``x``, same shape and dtype (float32 stays float32; integers become
            float64). The angles are computed in float64, then rounded to the dtype.

    Examples:
        >>> import numpy as np
        >>> from attention_math.positional import rope
        >>> x = np.array([[1.0, 0.0], [1.0, 0.0]])   # two tokens, d = 2: one pair
        >>> rope(x).round(4)                         # token 1 turned by 1 radian
        array([[1.    , 0.    ],
               [0.5403, 0.8415]])
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
    p = _check_positions(positions, length)
    angle = p[:, None].astype(np.float64) * rope_frequencies(d, base=base)[None, :]  # (L, d/2)
    cos, sin = np.cos(angle).astype(a.dtype), np.sin(angle).astype(a.dtype)  # (L, d/2)
    if interleaved:
        x1, x2 = a[..., 0::2], a[..., 1::2]  # (..., L, d/2) each
    else:
        x1, x2 = a[..., : d // 2], a[..., d // 2 :]  # (..., L, d/2) each
    r1 = x1 * cos - x2 * sin  # (..., L, d/2): the rotated first coordinates
    r2 = x2 * cos + x1 * sin  # (..., L, d/2): the rotated second coordinates
    out = np.empty_like(a)  # (..., L, d)
    if interleaved:
        out[..., 0::2], out[..., 1::2] = r1, r2
    else:
        out[..., : d // 2], out[..., d // 2 :] = r1, r2
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
