"""State-space duality (Mamba-2): one sequence map computed as a scan and as masked attention.

Per head, with a scalar decay ``a_t`` (Mamba-2: ``a_t = exp(Δ_t A)``), input and output
projections ``b_t, c_t ∈ ℝᴺ`` and the values ``x_t ∈ ℝᴾ``, the selective state space model is
the recurrence

    h_t = a_t h_{t−1} + b_t x_tᵀ          (h_t: N × P, h_{−1} = 0)
    y_t = h_tᵀ c_t                        (y_t: P)

Unrolled, ``y_t = Σ_{j≤t} (c_t·b_j) (a_{j+1} ⋯ a_t) x_j``: the output is masked linear
attention ``Y = (𝐋 ∘ C Bᵀ) X`` with the *1-semiseparable* mask ``𝐋_{ij} = a_{j+1} ⋯ a_i``
for ``i ≥ j`` and ``0`` above the diagonal (Dao & Gu, 2024, "Transformers are SSMs").
``C`` plays the queries, ``B`` the keys and ``X`` the values. The chunked algorithm cuts
that matrix into blocks: the diagonal blocks are small masked attentions, the blocks below
them have rank ≤ N and pass through the states at the chunk boundaries.

[`attention_math.derivations.ssd`][] proves the equalities exactly; `ssd_check` computes
all three forms and raises if they disagree.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_count

__all__ = [
    "semiseparable_mask",
    "ssd_attention",
    "ssd_check",
    "ssd_chunked",
    "ssd_recurrence",
    "state_space_dual",
]

SSDMethod = Literal["recurrence", "attention", "chunked"]
"""The three ways `state_space_dual` computes the same output."""

_REFERENCES = "https://arxiv.org/abs/2405.21060"

Floats = NDArray[np.floating]


def _inputs(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> tuple[Floats, ...]:
    """The four inputs as float arrays with one broadcast batch shape, or a clear error."""
    aa = as_float("a", a, min_ndim=1)
    ba = as_float("b", b, min_ndim=2)
    ca = as_float("c", c, min_ndim=2)
    xa = as_float("x", x, min_ndim=2)
    length = aa.shape[-1]
    if not (ba.shape[-2] == ca.shape[-2] == xa.shape[-2] == length):
        raise ValueError(
            "a (..., L), b (..., L, N), c (..., L, N) and x (..., L, P) need one length L, "
            f"got a {aa.shape}, b {ba.shape}, c {ca.shape}, x {xa.shape}"
        )
    if ba.shape[-1] != ca.shape[-1]:
        raise ValueError(f"b and c need the same state size N, got b {ba.shape} and c {ca.shape}")
    try:
        batch = np.broadcast_shapes(aa.shape[:-1], ba.shape[:-2], ca.shape[:-2], xa.shape[:-2])
    except ValueError:
        raise ValueError(
            "the leading (batch, head) axes of a, b, c and x do not broadcast: "
            f"a {aa.shape}, b {ba.shape}, c {ca.shape}, x {xa.shape}"
        ) from None
    dtype = np.result_type(aa, ba, ca, xa)
    n, p = ba.shape[-1], xa.shape[-1]
    return (
        np.broadcast_to(aa, (*batch, length)).astype(dtype),  # (..., L)
        np.broadcast_to(ba, (*batch, length, n)).astype(dtype),  # (..., L, N)
        np.broadcast_to(ca, (*batch, length, n)).astype(dtype),  # (..., L, N)
        np.broadcast_to(xa, (*batch, length, p)).astype(dtype),  # (..., L, P)
    )


def semiseparable_mask(a: ArrayLike) -> Floats:
    """The 1-semiseparable decay mask ``𝐋_{ij} = a_{j+1} ⋯ a_i`` (``i ≥ j``; 1 on the diagonal,
    0 above it).

    Every square submatrix taken on or below the diagonal has rank ≤ 1: row ``i`` is
    ``(a_1⋯a_i) / (a_1⋯a_j)`` when no decay is 0, a product of a column and a row. Each entry
    is a product of decays, formed column by column from the diagonal (no logarithm: a decay
    may be 0 or negative).

    Args:
        a: decays ``(..., L)``.

    Returns:
        ``(..., L, L)``, lower triangular.

    Raises:
        TypeError: ``a`` is not real-valued.
        ValueError: ``a`` has no axis.

    Examples:
        >>> from attention_math.ssd import semiseparable_mask
        >>> semiseparable_mask([0.5, 0.5, 0.25])
        array([[1.   , 0.   , 0.   ],
               [0.5  , 1.   , 0.   ],
               [0.125, 0.25 , 1.   ]])

    See Also:
        ssd_attention: ``Y = (𝐋 ∘ C Bᵀ) X`` with this mask.
        attention_math.causal_mask: the mask when every ``a_t = 1`` (ones on and below the
            diagonal), as linear attention uses it.

    References:
        Dao & Gu (2024), "Transformers are SSMs", §3 (semiseparable matrices):
        https://arxiv.org/abs/2405.21060
    """
    aa = as_float("a", a, min_ndim=1)
    length = aa.shape[-1]
    mask = np.zeros((*aa.shape, length), dtype=aa.dtype)  # (..., L, L)
    if length == 0:
        return mask
    mask[..., length - 1, length - 1] = 1
    for j in range(length - 2, -1, -1):
        # column j is column j+1 times a_{j+1}: 𝐋_{ij} = a_{j+1} 𝐋_{i,j+1} for i > j
        mask[..., :, j] = mask[..., :, j + 1] * aa[..., j + 1, None]  # (..., L)
        mask[..., j, j] = 1
    return mask


def ssd_recurrence(
    a: ArrayLike,
    b: ArrayLike,
    c: ArrayLike,
    x: ArrayLike,
    *,
    state: ArrayLike | None = None,
    return_state: bool = False,
) -> Floats | tuple[Floats, Floats]:
    """The scan: ``h_t = a_t h_{t−1} + b_t x_tᵀ``, ``y_t = h_tᵀ c_t``; memory O(N·P), time
    O(L·N·P).

    Args:
        a: decays ``(..., L)`` (Mamba-2: ``exp(Δ_t A)``).
        b: input projections ``(..., L, N)`` (the keys of the dual form).
        c: output projections ``(..., L, N)`` (the queries).
        x: inputs ``(..., L, P)`` (the values; Mamba-2 scales them by ``Δ_t`` first).
        state: ``h_{−1}``, shape ``(..., N, P)``; zero when not given.
        return_state: also return the last state ``h_{L−1}``.

    Returns:
        ``y`` of shape ``(..., L, P)``, and with ``return_state`` the pair ``(y, h_{L−1})``.

    Raises:
        TypeError: an input is not real-valued.
        ValueError: the shapes do not fit (the message names them).

    Examples:
        >>> import numpy as np
        >>> from attention_math.ssd import ssd_recurrence
        >>> a = np.array([1.0, 0.5])
        >>> b = c = np.ones((2, 1))
        >>> ssd_recurrence(a, b, c, np.array([[2.0], [4.0]]))  # y_2 = 0.5·2 + 4
        array([[2.],
               [5.]])

    See Also:
        ssd_attention: the same output as one masked matrix product.
        ssd_chunked: blocks of that matrix, states passed between chunks.
        attention_math.linear.linear_attention: the case ``a_t = 1``, normalised.

    References:
        Dao & Gu (2024), "Transformers are SSMs", §2 and §3: https://arxiv.org/abs/2405.21060
    """
    aa, ba, ca, xa = _inputs(a, b, c, x)
    length, n, p = xa.shape[-2], ba.shape[-1], xa.shape[-1]
    batch = aa.shape[:-1]
    h = _initial_state(state, batch, n, p, xa.dtype)  # (..., N, P)
    y = np.empty_like(xa)  # (..., L, P)
    for t in range(length):
        outer = ba[..., t, :, None] * xa[..., t, None, :]  # (..., N, P): b_t x_tᵀ
        h = aa[..., t, None, None] * h + outer  # (..., N, P)
        y[..., t, :] = np.einsum("...n,...np->...p", ca[..., t, :], h)  # (..., P): h_tᵀ c_t
    return (y, h) if return_state else y


def _initial_state(
    state: ArrayLike | None, batch: tuple[int, ...], n: int, p: int, dtype: np.dtype
) -> Floats:
    if state is None:
        return np.zeros((*batch, n, p), dtype=dtype)
    s = as_float("state", state, min_ndim=2)
    try:
        return np.broadcast_to(s, (*batch, n, p)).astype(np.result_type(s, dtype))
    except ValueError:
        raise ValueError(
            f"state must have shape (..., N, P) = {(*batch, n, p)}, got {s.shape}"
        ) from None


def ssd_attention(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> Floats:
    """The dual form: masked linear attention ``Y = (𝐋 ∘ C Bᵀ) X``; time O(L²·(N + P)).

    Args:
        a: decays ``(..., L)``.
        b: input projections ``(..., L, N)`` (the keys).
        c: output projections ``(..., L, N)`` (the queries).
        x: inputs ``(..., L, P)`` (the values).

    Returns:
        ``(..., L, P)``.

    Raises:
        TypeError: an input is not real-valued.
        ValueError: the shapes do not fit (the message names them).

    Examples:
        >>> import numpy as np
        >>> from attention_math.ssd import ssd_attention
        >>> a = np.array([1.0, 0.5])
        >>> b = c = np.ones((2, 1))
        >>> ssd_attention(a, b, c, np.array([[2.0], [4.0]]))
        array([[2.],
               [5.]])

    See Also:
        semiseparable_mask: the mask 𝐋.
        ssd_recurrence: the same output as a scan.
        attention_math.attention: softmax attention, whose weights are normalised scores.

    References:
        Dao & Gu (2024), "Transformers are SSMs", §4–5 (masked attention, the duality):
        https://arxiv.org/abs/2405.21060
    """
    aa, ba, ca, xa = _inputs(a, b, c, x)
    scores = ca @ np.swapaxes(ba, -1, -2)  # (..., L, L): C Bᵀ, query i against key j
    weights = semiseparable_mask(aa) * scores  # (..., L, L): 𝐋 ∘ C Bᵀ
    out: Floats = weights @ xa  # (..., L, P)
    return out


def ssd_chunked(
    a: ArrayLike,
    b: ArrayLike,
    c: ArrayLike,
    x: ArrayLike,
    chunk_size: int,
    *,
    state: ArrayLike | None = None,
    return_state: bool = False,
) -> Floats | tuple[Floats, Floats]:
    """The chunked algorithm: ``(𝐋 ∘ C Bᵀ)`` cut into ``Q × Q`` blocks.

    For chunk ``k`` (positions ``s … e−1``): the diagonal block is ``ssd_attention`` of the
    chunk alone; the blocks left of it reach row ``i`` through the state ``h_{s−1}`` at the
    chunk's start, decayed by ``a_s ⋯ a_i``: ``y_i += (a_s ⋯ a_i) h_{s−1}ᵀ c_i``. The next
    chunk's state is ``h_{e−1} = (a_s ⋯ a_{e−1}) h_{s−1} + Σ_{j=s}^{e−1} (a_{j+1} ⋯ a_{e−1})
    b_j x_jᵀ``. Time O(L·Q·(N + P) + L·N·P): the attention form inside chunks, the scan
    between them (``Q = 1`` is the recurrence, ``Q = L`` the attention form).

    Args:
        a: decays ``(..., L)``.
        b: input projections ``(..., L, N)``.
        c: output projections ``(..., L, N)``.
        x: inputs ``(..., L, P)``.
        chunk_size: ``Q ≥ 1``; the last chunk may be shorter.
        state: ``h_{−1}``, shape ``(..., N, P)``; zero when not given.
        return_state: also return the last state ``h_{L−1}``.

    Returns:
        ``y`` of shape ``(..., L, P)``, and with ``return_state`` the pair ``(y, h_{L−1})``.

    Raises:
        TypeError: an input is not real-valued, or ``chunk_size`` is not an integer.
        ValueError: the shapes do not fit, or ``chunk_size < 1``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.ssd import ssd_attention, ssd_chunked
        >>> rng = np.random.default_rng(0)
        >>> a = rng.uniform(0.5, 1.0, 7)
        >>> b, c, x = rng.standard_normal((3, 7, 2))
        >>> bool(np.allclose(ssd_chunked(a, b, c, x, 3), ssd_attention(a, b, c, x)))
        True

    See Also:
        ssd_attention: one block, ``Q ≥ L``.
        ssd_recurrence: ``Q = 1``.

    References:
        Dao & Gu (2024), "Transformers are SSMs", §6 (the hardware-efficient SSD algorithm):
        https://arxiv.org/abs/2405.21060
    """
    q = check_count("chunk_size", chunk_size)
    aa, ba, ca, xa = _inputs(a, b, c, x)
    length, n, p = xa.shape[-2], ba.shape[-1], xa.shape[-1]
    h = _initial_state(state, aa.shape[:-1], n, p, xa.dtype)  # (..., N, P): h_{s−1}
    y = np.empty_like(xa)  # (..., L, P)
    for s in range(0, length, q):
        e = min(s + q, length)
        ak, bk, ck, xk = aa[..., s:e], ba[..., s:e, :], ca[..., s:e, :], xa[..., s:e, :]
        mask = semiseparable_mask(ak)  # (..., Q, Q): the diagonal block's decays
        scores = ck @ np.swapaxes(bk, -1, -2)  # (..., Q, Q)
        y_diag = (mask * scores) @ xk  # (..., Q, P): the diagonal block, as attention
        into = mask[..., :, 0] * ak[..., 0, None]  # (..., Q): a_s ⋯ a_i, row i
        y_off = into[..., None] * (ck @ h)  # (..., Q, P): (a_s⋯a_i) c_iᵀ h_{s−1}
        y[..., s:e, :] = y_diag + y_off
        out_of = mask[..., -1, :]  # (..., Q): a_{j+1} ⋯ a_{e−1}, column j
        h = into[..., -1, None, None] * h + np.einsum(
            "...l,...ln,...lp->...np", out_of, bk, xk
        )  # (..., N, P): h_{e−1}
    return (y, h) if return_state else y


def state_space_dual(
    a: ArrayLike,
    b: ArrayLike,
    c: ArrayLike,
    x: ArrayLike,
    *,
    method: SSDMethod = "chunked",
    chunk_size: int = 64,
) -> Floats:
    """The SSD output ``Y = (𝐋 ∘ C Bᵀ) X``, by ``method``: ``"recurrence"``, ``"attention"``
    or ``"chunked"`` (blocks of ``chunk_size``).

    Args:
        a: decays ``(..., L)``.
        b: input projections ``(..., L, N)``.
        c: output projections ``(..., L, N)``.
        x: inputs ``(..., L, P)``.
        method: which of the three equal computations.
        chunk_size: the block size of ``"chunked"``.

    Returns:
        ``(..., L, P)``.

    Raises:
        TypeError: an input is not real-valued.
        ValueError: unknown ``method``, or shapes that do not fit.

    Examples:
        >>> import numpy as np
        >>> import attention_math as am
        >>> a, b, c = np.full(3, 0.5), np.ones((3, 1)), np.ones((3, 1))
        >>> x = np.ones((3, 1))
        >>> am.state_space_dual(a, b, c, x, method="recurrence").ravel()  # 1, 1 + ½, 1 + ½ + ¼
        array([1.  , 1.5 , 1.75])

    See Also:
        ssd_recurrence, ssd_attention, ssd_chunked: the three methods.
        ssd_check: all three, compared.

    References:
        Dao & Gu (2024), "Transformers are SSMs": https://arxiv.org/abs/2405.21060
    """
    if method == "recurrence":
        out = ssd_recurrence(a, b, c, x)
    elif method == "attention":
        out = ssd_attention(a, b, c, x)
    elif method == "chunked":
        out = ssd_chunked(a, b, c, x, chunk_size)
    else:
        raise ValueError(f'method must be "recurrence", "attention" or "chunked", got {method!r}')
    assert isinstance(out, np.ndarray)
    return out


def ssd_check(
    a: ArrayLike,
    b: ArrayLike,
    c: ArrayLike,
    x: ArrayLike,
    *,
    chunk_size: int,
    bound_eps: float = 64.0,
) -> dict[str, float]:
    """Compute the three forms and compare: the relative deviation of ``"attention"`` and
    ``"chunked"`` from ``"recurrence"`` (max abs difference / max abs output), in machine
    epsilons; raises if one exceeds ``bound_eps · L``.

    Returns:
        ``{"attention": ε, "chunked": ε}`` in units of the dtype's epsilon.

    Raises:
        ArithmeticError: the forms disagree beyond the bound.

    Examples:
        >>> import numpy as np
        >>> from attention_math.ssd import ssd_check
        >>> rng = np.random.default_rng(1)
        >>> a = rng.uniform(0.5, 1.0, (2, 9))
        >>> b, c = rng.standard_normal((2, 2, 9, 4))
        >>> x = rng.standard_normal((2, 9, 3))
        >>> sorted(ssd_check(a, b, c, x, chunk_size=4))
        ['attention', 'chunked']

    See Also:
        state_space_dual: one form.
        attention_math.derivations.ssd.recurrence_equals_masked_attention: the exact proof.

    References:
        Dao & Gu (2024), "Transformers are SSMs": https://arxiv.org/abs/2405.21060
    """
    ref = ssd_recurrence(a, b, c, x)
    assert isinstance(ref, np.ndarray)
    eps = float(np.finfo(ref.dtype).eps)
    scale = max(float(np.abs(ref).max(initial=0.0)), float(np.finfo(ref.dtype).tiny))
    length = ref.shape[-2]
    out: dict[str, float] = {}
    for name, y in (
        ("attention", ssd_attention(a, b, c, x)),
        ("chunked", ssd_chunked(a, b, c, x, chunk_size)),
    ):
        assert isinstance(y, np.ndarray)
        dev = float(np.abs(y - ref).max(initial=0.0)) / scale / eps
        if not dev <= bound_eps * max(length, 1):
            raise ArithmeticError(
                f"SSD forms disagree: {name} differs from the recurrence by {dev:.3g} ε "
                f"(bound {bound_eps}·L = {bound_eps * length:g} ε)"
            )
        out[name] = dev
    return out
