"""Attention in NumPy, ``softmax(q kᵀ · scale + mask) · v``: what all else is checked against.

Every other part of the project (the exact SymPy derivation, the worked examples, the
exercises, the site) is checked against the functions in this module, so they validate
their input strictly and never return a silent NaN.

[`attention`][attention_math.numeric.attention] returns the output only; the weights and the
log-sum-exp come from [`attention_weights`][attention_math.numeric.attention_weights] and
[`attention_with_lse`][attention_math.numeric.attention_with_lse]. It writes its one score
buffer in place and takes tiles for long sequences; [`attention_math.reference`][] is the same
formula on one screen, written to be read, and the tests check it against that.

Shapes follow the paper: ``q`` is ``(..., L_q, d_k)``, ``k`` is ``(..., L_k, d_k)``,
``v`` is ``(..., L_k, d_v)`` and the output is ``(..., L_q, d_v)``; leading ``...``
dimensions broadcast like NumPy's ``matmul``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math import tiled
from attention_math._checks import (
    OVERFLOW,
    CausalAlignment,
    as_float,
    causal_offset,
    check_count,
    check_flag,
    check_mask,
    check_qkv,
    check_scale,
    check_weight,
    is_real_dtype,
    work_dtype,
)

__all__ = [
    "AttentionLSE",
    "attention",
    "attention_weights",
    "attention_with_lse",
    "causal_mask",
    "causal_offset",
    "compute_qkv",
    "log_softmax",
    "padding_mask",
    "sliding_window_mask",
    "softmax",
]


def softmax(x: ArrayLike, axis: int = -1) -> NDArray[np.floating]:
    """Softmax along ``axis``, shifted by the maximum so that ``exp`` never overflows.

    ``-inf`` entries (masked positions) get weight exactly 0; a slice that is all
    ``-inf`` becomes all zeros (the project's convention for a fully masked row).
    An empty ``axis`` has nothing to normalise and is refused.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import softmax
        >>> softmax([0.0, 0.0])
        array([0.5, 0.5])
        >>> softmax([1000.0, 0.0])          # the naive exp(1000) would overflow
        array([1., 0.])
        >>> softmax([[0.0, -np.inf], [-np.inf, -np.inf]])
        array([[1., 0.],
               [0., 0.]])
        >>> softmax([])
        Traceback (most recent call last):
        ...
        ValueError: softmax input has no entries along axis -1 (shape (0,)): nothing to normalise

    See Also:
        - [`log_softmax`][attention_math.numeric.log_softmax]: its log, without the underflow.
        - [`symbolic.softmax`][attention_math.symbolic.softmax]: exact, in SymPy.
        - [`attention_weights`][attention_math.numeric.attention_weights]: the softmax of the
          scores.

    References:
        - [Milakov and Gimelshein, 2018](https://arxiv.org/abs/1805.02867): the shift by the
          maximum, and how to compute it in one pass (the online softmax).
    """
    out, dtype = _softmax_input("softmax", x, axis)
    return _softmax_inplace(out, axis).astype(dtype, copy=False)


def log_softmax(x: ArrayLike, axis: int = -1) -> NDArray[np.floating]:
    """``log(softmax(x))`` along ``axis``, computed as ``x − max − log Σ exp(x − max)``.

    Taking the log of [`softmax`][attention_math.numeric.softmax] loses every weight that underflows
    to 0: ``log(softmax([0, −1000]))`` is ``[0, −inf]``, while the log-probability of the second
    entry is −1000. Here no exponential is taken of a large number and no log of 0, except
    for masked (``-inf``) entries, whose log-weight is ``-inf``; a fully masked slice is all
    ``-inf`` (the log of the zero row that [`softmax`][attention_math.numeric.softmax] returns).

    See Also:
        - [`softmax`][attention_math.numeric.softmax]: its exponential.
        - [`attention_with_lse`][attention_math.numeric.attention_with_lse]: the log-sum-exp of each
          row of scores, the same normaliser.

    References:
        - [Milakov & Gimelshein, 2018](https://arxiv.org/abs/1805.02867): the running maximum that
          keeps the log-sum-exp finite.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import log_softmax
        >>> log_softmax([0.0, -1000.0])
        array([    0., -1000.])
        >>> np.exp(log_softmax([0.0, 0.0]))
        array([0.5, 0.5])
        >>> log_softmax([0.0, -np.inf])
        array([  0., -inf])
    """
    a, dtype = _softmax_input("log_softmax", x, axis)
    m = np.max(a, axis=axis, keepdims=True)
    m[np.isneginf(m)] = 0  # a fully masked slice: shift by 0, the log below gives -inf
    a -= m
    with np.errstate(divide="ignore"):  # log 0 = -inf for a fully masked slice
        lse = np.log(np.sum(np.exp(a), axis=axis, keepdims=True))
    lse[np.isneginf(lse)] = 0  # a fully masked slice stays all -inf (not -inf − -inf = NaN)
    a -= lse
    return a.astype(dtype, copy=False)


def _softmax_input(
    name: str, x: ArrayLike, axis: int
) -> tuple[NDArray[np.floating], np.dtype[Any]]:
    """``x`` as a fresh float array to compute in, and the dtype to return; refused with a
    message naming ``name`` if unusable. bfloat16 is computed in float32."""
    a = np.asarray(x)
    if not is_real_dtype(a.dtype):
        raise TypeError(f"{name} input must hold real numbers, got dtype {a.dtype}")
    if a.ndim == 0:
        raise ValueError(f"{name} input must have at least one dimension, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"axis must be an integer, got {axis!r}")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"axis {axis} is out of range for {name} input of shape {a.shape}")
    if a.shape[axis] == 0:
        raise ValueError(
            f"{name} input has no entries along axis {axis} (shape {a.shape}): nothing to normalise"
        )
    dtype = np.dtype(np.float64) if np.issubdtype(a.dtype, np.integer) else a.dtype
    if a.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    if np.isnan(a).any() or np.isposinf(a).any():
        raise ValueError(f"{name} input contains NaN or +inf; only finite values and -inf allowed")
    return np.array(a, dtype=np.float64 if np.issubdtype(a.dtype, np.integer) else a.dtype), dtype


def _softmax_inplace(s: NDArray[np.floating], axis: int = -1) -> NDArray[np.floating]:
    """Row softmax of ``s`` written into ``s`` itself (no L×L temporaries); an empty row
    (no keys) stays empty, and its output row ``s @ v`` is zeros, as PyTorch gives."""
    m = np.max(s, axis=axis, keepdims=True, initial=-np.inf)
    if np.isnan(m).any() or np.isposinf(m).any():  # max propagates NaN: one cheap check per row
        raise ValueError(OVERFLOW.format(s.dtype.name))
    # A row that is all -inf has max -inf; shifting by 0 keeps exp(-inf) = 0 instead of NaN.
    m[np.isneginf(m)] = 0
    s -= m
    np.exp(s, out=s)
    total = np.sum(s, axis=axis, keepdims=True)
    total[total == 0] = 1  # only fully masked rows sum to 0 (the max term is exp(0) = 1)
    s /= total
    return s


def causal_mask(
    n_q: int, n_k: int | None = None, *, causal_alignment: CausalAlignment = "top-left"
) -> NDArray[np.bool_]:
    """Boolean causal mask of shape ``(n_q, n_k)``: True where query ``i`` may see key ``j``.

    Args:
        n_q: number of queries (0 gives an empty mask).
        n_k: number of keys; default ``n_q``.
        causal_alignment: where the diagonal sits when ``n_q ≠ n_k``.
            ``"top-left"`` (default, PyTorch's ``is_causal=True`` and
            ``torch.nn.attention.bias.causal_upper_left``): query ``i`` sees keys
            ``0..i``. ``"bottom-right"`` (``causal_lower_right``, the decoding convention:
            the ``n_q`` queries are the *last* ``n_q`` positions of a sequence of
            ``n_k``): query ``i`` sees keys ``0..i + n_k − n_q``, so the last query sees
            every key. With ``n_q > n_k`` the first ``n_q − n_k`` queries of a
            bottom-right mask see no key (a fully masked row: zero output here).

    Examples:
        >>> from attention_math.numeric import causal_mask
        >>> causal_mask(3).astype(int)
        array([[1, 0, 0],
               [1, 1, 0],
               [1, 1, 1]])
        >>> causal_mask(2, 3).astype(int)
        array([[1, 0, 0],
               [1, 1, 0]])
        >>> causal_mask(2, 3, causal_alignment="bottom-right").astype(int)
        array([[1, 1, 0],
               [1, 1, 1]])

    See Also:
        - [`attention`][attention_math.numeric.attention] with ``is_causal=True``: the same
          mask, never built.
        - [`sliding_window_mask`][attention_math.numeric.sliding_window_mask]: a causal band.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3.2.3: the decoder's
          masking of the positions a query may not see.
    """
    n_q = check_count("n_q", n_q, minimum=0)
    n_k = n_q if n_k is None else check_count("n_k", n_k, minimum=0)
    return np.tri(n_q, n_k, k=causal_offset(n_q, n_k, causal_alignment), dtype=bool)


def padding_mask(valid_lens: ArrayLike, n_k: int) -> NDArray[np.bool_]:
    """Boolean key-padding mask from d2l's ``valid_lens``: True = may attend.

    Sequence ``b`` has ``valid_lens[b]`` real keys, the rest is padding. Lengths of shape
    ``(B,)`` give a mask ``(B, 1, n_k)`` whose singleton axis broadcasts over the queries;
    lengths of shape ``(B, L_q)`` (one length per query, as d2l's ``masked_softmax``
    accepts) give ``(B, L_q, n_k)``. Either is ready for
    [`attention`][attention_math.numeric.attention] with ``(B, L, d)`` inputs. (PyTorch's
    ``key_padding_mask`` is the opposite, True = padding: it is
    ``~padding_mask(valid_lens, n_k)[:, 0]``.)

    Args:
        valid_lens: integers in ``[0, n_k]``, shape ``(B,)`` or ``(B, L_q)``.
        n_k: number of keys, a non-negative integer.

    See Also:
        - [`causal_mask`][attention_math.numeric.causal_mask]: the other mask a batch needs.
        - [`multihead.from_key_padding_mask`][attention_math.multihead.from_key_padding_mask]:
          PyTorch's opposite convention (True = padding) turned into this one.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), §3.2.3: masking by setting
          scores to −∞.

    Examples:
        >>> from attention_math.numeric import padding_mask
        >>> padding_mask([3, 1], 4).astype(int)
        array([[[1, 1, 1, 0]],
        <BLANKLINE>
               [[1, 0, 0, 0]]])
        >>> padding_mask([[1, 2]], 3).astype(int)
        array([[[1, 0, 0],
                [1, 1, 0]]])
    """
    n_k = check_count("n_k", n_k, minimum=0)
    lens = np.asarray(valid_lens)
    if lens.ndim not in (1, 2) or not np.issubdtype(lens.dtype, np.integer):
        raise ValueError(
            "valid_lens must be integers of shape (B,) or (B, L_q), "
            f"got dtype {lens.dtype} and shape {lens.shape}"
        )
    if (lens < 0).any() or (lens > n_k).any():
        raise ValueError(f"valid_lens must lie in [0, n_k = {n_k}], got {lens.tolist()}")
    if lens.ndim == 1:
        lens = lens[:, None]  # (B, 1): one length for every query
    return np.arange(n_k) < lens[..., None]  # (B, 1 or L_q, n_k)


def sliding_window_mask(n_q: int, n_k: int | None = None, *, window: int) -> NDArray[np.bool_]:
    """Boolean causal band ``(n_q, n_k)``: query ``i`` sees keys ``i − window + 1 … i``.

    True = may attend, top-left aligned like `causal_mask`; ``window ≥ n_q`` gives
    `causal_mask` itself. Each row holds at most ``window`` True entries, so attention
    under this mask costs O(L·window) instead of O(L²) when only the band is computed.

    See Also:
        - [`causal_mask`][attention_math.numeric.causal_mask]: the window as wide as the sequence.
        - [`decoding.KVCache`][attention_math.decoding.KVCache] with ``window=``: the same band when
          decoding.

    References:
        - [Beltagy et al., 2020](https://arxiv.org/abs/2004.05150) (Longformer): sliding-window
          attention.
        - [Jiang et al., 2023](https://arxiv.org/abs/2310.06825) (Mistral 7B): a 4,096-token window.

    Examples:
        >>> from attention_math.numeric import sliding_window_mask
        >>> sliding_window_mask(4, window=2).astype(int)
        array([[1, 0, 0, 0],
               [1, 1, 0, 0],
               [0, 1, 1, 0],
               [0, 0, 1, 1]])
        >>> sliding_window_mask(3, window=0)
        Traceback (most recent call last):
        ...
        ValueError: window must be a positive integer, got 0
    """
    window = check_count("window", window)
    causal = causal_mask(n_q, n_k)  # (n_q, n_k): j ≤ i
    rows, cols = causal.shape
    too_old = np.tri(rows, cols, k=-int(window), dtype=np.bool_)  # (n_q, n_k): j ≤ i − window
    return causal & ~too_old


def compute_qkv(
    x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike
) -> tuple[NDArray[np.floating], NDArray[np.floating], NDArray[np.floating]]:
    """Project the inputs: ``q = x w_q``, ``k = x w_k``, ``v = x w_v``.

    ``x`` is ``(..., L, d_model)``; ``w_q`` and ``w_k`` are ``(d_model, d_k)``;
    ``w_v`` is ``(d_model, d_v)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import compute_qkv
        >>> x = np.eye(2)
        >>> q, k, v = compute_qkv(x, np.eye(2), np.eye(2), [[1, 2], [3, 4]])
        >>> v
        array([[1., 2.],
               [3., 4.]])
    """
    x = as_float("x", x, min_ndim=2)
    d_model = x.shape[-1]
    out = []
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        w = check_weight(name, w, d_model, "d")
        out.append(x @ w.astype(np.result_type(x, w), copy=False))  # (..., L, d)
    q, k, v = out
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"w_q and w_k must give the same d_k, got {q.shape[-1]} and {k.shape[-1]}")
    return q, k, v


class AttentionLSE(NamedTuple):
    """The output of attention and the log-sum-exp of each row of its scores.

    What [`attention_with_lse`][attention_math.numeric.attention_with_lse] returns; it unpacks
    as ``out, lse = attention_with_lse(q, k, v)``.
    """

    out: NDArray[np.floating]
    """The output ``(..., L_q, d_v)``, as from [`attention`][attention_math.numeric.attention]."""
    lse: NDArray[np.floating]
    """``log Σ_j exp(q_i·k_j · scale + mask_ij)`` of each query row, ``(..., L_q)``:
    FlashAttention's ``softmax_lse``; ``-inf`` (the log of an empty sum) for a fully masked row."""


def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
    block_size: int | tuple[int, int] | None = None,
) -> NDArray[np.floating]:
    """Scaled dot-product attention ``softmax(q kᵀ · scale + mask) v``, PyTorch's semantics.

    Equivalent to [`reference.attention`][attention_math.reference.attention], the same formula
    on one screen, plus dropout; long inputs are computed tile by tile
    ([`tiled_attention`][attention_math.tiled.tiled_attention]), which agrees with it to
    rounding. The exact sibling, in SymPy, is
    [`symbolic.attention`][attention_math.symbolic.attention].

    Args:
        q: queries, ``(..., L_q, d_k)``.
        k: keys, ``(..., L_k, d_k)``.
        v: values, ``(..., L_k, d_v)``. Leading ``...`` dimensions broadcast as in ``matmul``.
        mask: boolean (True = may attend) or additive float (added to the scores, ``-inf``
            blocks), broadcastable to ``(..., L_q, L_k)`` without adding batch dimensions
            (a ``ValueError`` names both shapes, as PyTorch raises). A fully masked row gives
            a zero output row.
        scale: factor on the scores; default ``1/√d_k``. Finite and ``≥ 0`` (0 gives uniform
            weights; a negative scale is refused).
        is_causal: query ``i`` sees keys ``0..i`` only, as ``mask=causal_mask(L_q, L_k)``
            (combined with ``mask`` if both are given) without building that mask.
        causal_alignment: with ``is_causal`` and ``L_q ≠ L_k``, where the diagonal sits, as in
            [`causal_mask`][attention_math.numeric.causal_mask]: ``"top-left"`` (default,
            PyTorch's ``is_causal=True``) or ``"bottom-right"`` (the queries are the last
            ``L_q`` positions, as when decoding with a cache).
        dropout_p: PyTorch's inverted dropout on the weights: each is set to 0 with this
            probability and the kept ones are divided by ``1 − dropout_p``. In ``[0, 1)``;
            needs the untiled path.
        rng: the dropout's random source, a ``numpy.random.Generator`` or a seed (``None``:
            fresh entropy). A weight is kept where ``rng.random() >= dropout_p``, drawn for
            the whole ``(..., L_q, L_k)`` array at once.
        block_size: compute tile by tile, an int or ``(block_q, block_k)`` query rows × keys
            per tile: memory O(L·d) plus one tile instead of ``L_q × L_k``. ``None``
            (default): the fixed rule [`takes_tiles`][attention_math.tiled.takes_tiles]
            chooses (see Notes).

    Returns:
        The output ``(..., L_q, d_v)``. float32 stays float32 and float64 float64; integers
            become float64, mixed dtypes promote as NumPy does, and float16 and bfloat16 are
            computed in float32 and returned in their own format. Empty inputs give
            PyTorch's result (an empty output, or zeros when there are queries but no keys).

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> q = k = np.eye(2)
        >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> attention(q, k, v).round(4)
        array([[1.6605, 2.6605],
               [2.3395, 3.3395]])
        >>> attention(q, k, v, is_causal=True)[0]  # query 0 sees key 0 only
        array([1., 2.])
        >>> attention(q, k, v, is_causal=True, block_size=1)[0]  # tile by tile
        array([1., 2.])
        >>> attention(q[1:], k, v, is_causal=True, causal_alignment="bottom-right").round(4)
        array([[2.3395, 3.3395]])

    See Also:
        - [`reference.attention`][attention_math.reference.attention]: the same formula on one
          screen, every score formed.
        - [`symbolic.attention`][attention_math.symbolic.attention]: exact, in SymPy.
        - [`tiled.tiled_attention`][attention_math.tiled.tiled_attention]: the tiled path.
        - [`attention_weights`][attention_math.numeric.attention_weights] and
          [`attention_with_lse`][attention_math.numeric.attention_with_lse]: the weights, and
          the output with its log-sum-exp.
        - [`backward.attention_backward`][attention_math.backward.attention_backward]: the
          gradients.

    Notes:
        With ``block_size=None`` the path depends on the shapes and the dtype only (no
        timing, nothing stored): tiled, with the tile ``tiled.DEFAULT_BLOCK``, when one head
        has at least ``tiled.TILED_FROM_SCORES`` scores ``L_q · L_k`` or when all the scores
        together would exceed ``tiled.SCORES_BUDGET_BYTES``, unless ``dropout_p > 0``;
        otherwise one ``L_q × L_k`` score buffer, written in place. The two paths agree to a
        few ε normwise per row for scores of order one, not bit for bit.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), "Attention Is All You
          Need", eq. (1).
        - [Milakov and Gimelshein, 2018](https://arxiv.org/abs/1805.02867), the online softmax
          the tiled path runs.
        - [Dao et al., 2022](https://arxiv.org/abs/2205.14135), FlashAttention: the tiling.
    """
    c = _checked(q, k, v, mask, scale, is_causal, causal_alignment, dropout_p, block_size)
    if c.block is not None:  # the online softmax, tile by tile: the scores are never whole
        out = tiled.tiled_attention(c.q, c.k, c.v, c.mask, **c.tiling)  # (..., L_q, d_v)
        return out.astype(c.dtype, copy=False)
    att = _masked_scores(c)  # (..., L_q, L_k): q kᵀ · scale, -inf where a key is hidden
    _softmax_inplace(att)  # (..., L_q, L_k): the weights, each row summing to 1 (or 0)
    if c.dropout_p:
        _dropout_inplace(att, c.dropout_p, rng)  # (..., L_q, L_k)
    out = att @ c.v  # (..., L_q, d_v)
    return out.astype(c.dtype, copy=False)


def attention_weights(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.floating]:
    """The attention weights ``softmax(q kᵀ · scale + mask)``, ``(..., L_q, L_k)``.

    The arguments are those of [`attention`][attention_math.numeric.attention] (``v`` is
    checked against ``k`` and the mask against the output's batch shape, so one argument
    list serves both), and ``attention_weights(q, k, v) @ v`` is ``attention(q, k, v)`` to
    rounding. The weights are always formed whole: there is no tiled path. With the same
    seed and ``dropout_p``, the weights are those that ``attention`` multiplied ``v`` by:
    the dropped ones 0, the kept ones divided by ``1 − dropout_p``.

    Returns:
        The weights ``(..., L_q, L_k)``, each row summing to 1 (0 for a fully masked row),
            in the dtype ``attention`` returns.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention, attention_weights
        >>> q = k = np.eye(2)
        >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> w = attention_weights(q, k, v)
        >>> w.round(4)
        array([[0.6698, 0.3302],
               [0.3302, 0.6698]])
        >>> np.allclose(w @ v, attention(q, k, v))
        True
        >>> (attention_weights(q, k, v, dropout_p=0.5, rng=1) * 0.5).round(4)  # 0 or doubled
        array([[0.6698, 0.3302],
               [0.    , 0.6698]])

    See Also:
        - [`attention`][attention_math.numeric.attention]: the output these weights give.
        - [`softmax`][attention_math.numeric.softmax]: the row normalisation on its own.

    References:
        - [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), eq. (1).
    """
    c = _checked(q, k, v, mask, scale, is_causal, causal_alignment, dropout_p, None, tiles=False)
    att = _masked_scores(c)  # (..., L_q, L_k): q kᵀ · scale, -inf where a key is hidden
    _softmax_inplace(att)  # (..., L_q, L_k): the weights
    if c.dropout_p:
        _dropout_inplace(att, c.dropout_p, rng)  # (..., L_q, L_k)
    return att.astype(c.dtype, copy=False)


def attention_with_lse(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
    block_size: int | tuple[int, int] | None = None,
) -> AttentionLSE:
    """[`attention`][attention_math.numeric.attention] and the log-sum-exp of each row of scores.

    The arguments, the output and the choice of path are those of ``attention``. The
    log-sum-exp ``lse_i = log Σ_j exp(q_i·k_j · scale + mask_ij)`` is what FlashAttention
    saves for its backward pass (``P = exp(S − lse)``); both paths compute it, the tiled one
    from its running state. With dropout it is that of the scores before dropout.

    Returns:
        ``AttentionLSE(out, lse)``: the output ``(..., L_q, d_v)`` and ``lse`` ``(..., L_q)``,
            both in the dtype ``attention`` returns; ``lse = -inf`` for a fully masked row.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention_with_lse
        >>> q = k = np.eye(2)
        >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> out, lse = attention_with_lse(q, k, v)
        >>> lse.round(4)  # log(e^{1/√2} + e^0)
        array([1.1079, 1.1079])
        >>> attention_with_lse(q, k, v, block_size=1).lse.round(4)  # tile by tile
        array([1.1079, 1.1079])

    See Also:
        - [`tiled.tiled_attention_with_lse`][attention_math.tiled.tiled_attention_with_lse]:
          the tiled path's loop.
        - [`log_softmax`][attention_math.numeric.log_softmax]: ``s − lse`` row by row.

    References:
        - [Milakov and Gimelshein, 2018](https://arxiv.org/abs/1805.02867), the online softmax.
        - [Dao et al., 2022](https://arxiv.org/abs/2205.14135), FlashAttention, which keeps
          the log-sum-exp for the backward pass.
    """
    c = _checked(q, k, v, mask, scale, is_causal, causal_alignment, dropout_p, block_size)
    if c.block is not None:
        out, lse = tiled.tiled_attention_with_lse(c.q, c.k, c.v, c.mask, **c.tiling)
    else:
        att = _masked_scores(c)  # (..., L_q, L_k): q kᵀ · scale, -inf where a key is hidden
        lse = _logsumexp(att)  # (..., L_q)
        _softmax_inplace(att)  # (..., L_q, L_k): the weights
        if c.dropout_p:
            _dropout_inplace(att, c.dropout_p, rng)  # (..., L_q, L_k)
        out = att @ c.v  # (..., L_q, d_v)
    lse = np.broadcast_to(lse, out.shape[:-1])  # (..., L_q): the output's batch shape
    return AttentionLSE(out.astype(c.dtype, copy=False), lse.astype(c.dtype))


_Mask = NDArray[np.bool_] | NDArray[np.floating] | None  # boolean (True = may attend) or additive


@dataclass(frozen=True, slots=True)
class _Inputs:
    """The arguments of one call, checked, with ``q``, ``k``, ``v`` in the working dtype."""

    q: NDArray[np.floating]  # (..., L_q, d_k)
    k: NDArray[np.floating]  # (..., L_k, d_k)
    v: NDArray[np.floating]  # (..., L_k, d_v)
    mask: _Mask  # broadcastable to the scores (..., L_q, L_k), or None
    scale: np.floating  # in the working dtype: float32 stays float32
    causal: int | None  # the diagonal's offset, query i sees keys 0..i + causal; None: no mask
    alignment: CausalAlignment  # where the diagonal sits, as given
    dtype: np.dtype[Any]  # the dtype returned
    block: tuple[int, int] | None  # the tile, or None: the untiled path
    dropout_p: float

    @property
    def tiling(self) -> dict[str, Any]:
        """The keywords of the tiled path (``tiled_attention`` and its ``_with_lse``)."""
        return {
            "scale": self.scale,
            "is_causal": self.causal is not None,
            "causal_alignment": self.alignment,
            "block_size": self.block,
        }


def _checked(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None,
    scale: object,
    is_causal: object,
    causal_alignment: CausalAlignment,
    dropout_p: object,
    block_size: object,
    *,
    tiles: bool = True,
) -> _Inputs:
    """Every argument checked (a clear error naming the one at fault), and the path chosen:
    ``block_size``, else [`takes_tiles`][attention_math.tiled.takes_tiles] if ``tiles``."""
    q, k, v, batch = check_qkv(q, k, v)
    dtype, work = work_dtype(q, k, v)
    q, k, v = (a.astype(work, copy=False) for a in (q, k, v))
    n_q, n_k = q.shape[-2], k.shape[-2]
    offset = causal_offset(n_q, n_k, causal_alignment)  # checks the name even if not causal
    causal = offset if check_flag("is_causal", is_causal) else None
    drop = _check_dropout(dropout_p)
    scores_shape = (*batch, n_q, n_k)
    m = None if mask is None else check_mask(mask, scores_shape)[0]
    block = None
    if block_size is not None:
        block = tiled.block_sizes(block_size)
        if drop:
            raise ValueError(
                f"dropout_p = {dropout_p} needs the weights, which the tiled path never forms: "
                f"use block_size=None (got block_size={block_size!r})"
            )
    elif tiles and not drop and tiled.takes_tiles(scores_shape, work):
        block = tiled.DEFAULT_BLOCK
    s = work.type(check_scale(scale, q.shape[-1]))
    return _Inputs(q, k, v, m, s, causal, causal_alignment, dtype, block, drop)


def _check_dropout(dropout_p: object) -> float:
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, int | float | np.floating):
        raise TypeError(f"dropout_p must be a number in [0, 1), got {dropout_p!r}")
    if not 0 <= dropout_p < 1:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p!r}")
    return float(dropout_p)


def _masked_scores(c: _Inputs) -> NDArray[np.floating]:
    """``q kᵀ · scale``, ``-inf`` where the mask or the causal diagonal hides a key and the
    additive mask added, in one ``(..., L_q, L_k)`` buffer written in place.

    Overflow is not a warning here: it leaves NaN or ``+inf`` in a row, and the softmax (or
    the log-sum-exp) raises a ``ValueError`` that says so.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        att = c.q @ np.swapaxes(c.k, -1, -2)  # (..., L_q, L_k): the one L×L buffer
        att *= c.scale
        if c.mask is not None:
            full = np.broadcast_shapes(att.shape, c.mask.shape)  # the mask may add batch dims
            if full != att.shape:  # it has v's batch dimensions: grow the buffer once
                att = np.broadcast_to(att, full).copy()  # (..., L_q, L_k)
            if c.mask.dtype == np.bool_:
                np.copyto(att, -np.inf, where=np.logical_not(c.mask))
            else:  # +inf + -inf is NaN: caught by the softmax
                np.add(att, c.mask, out=att, casting="same_kind")  # cast in chunks, no L×L copy
    if c.causal is not None:  # one L×L bool (a quarter of a float32 buffer), no 2nd float one
        hidden = np.tri(att.shape[-2], att.shape[-1], k=c.causal, dtype=np.bool_)  # (L_q, L_k)
        np.logical_not(hidden, out=hidden)  # True above the diagonal: a future key
        np.copyto(att, -np.inf, where=hidden)
    return att


def _logsumexp(att: NDArray[np.floating]) -> NDArray[np.floating]:
    """``log Σ_j exp(att_ij)`` of each row of the masked scores ``(..., L_q, L_k)``, shifted by
    the row's max so that nothing overflows: ``(..., L_q)``, ``-inf`` for a row all ``-inf``."""
    mx = np.max(att, axis=-1, initial=-np.inf)  # (..., L_q)
    if np.isnan(mx).any() or np.isposinf(mx).any():
        raise ValueError(OVERFLOW.format(att.dtype.name))
    shift = np.where(np.isneginf(mx), 0, mx)[..., None]  # (..., L_q, 1): 0 if all masked
    with np.errstate(divide="ignore"):  # a fully masked row: log 0 = -inf, on purpose
        lse: NDArray[np.floating] = np.log(np.sum(np.exp(att - shift), axis=-1)) + shift[..., 0]
    return lse


def _dropout_inplace(
    att: NDArray[np.floating], p: float, rng: np.random.Generator | int | None
) -> None:
    """Inverted dropout on the weights ``att`` ``(..., L_q, L_k)``, in place: each weight kept
    with probability ``1 − p`` and divided by it, so that its expectation is unchanged."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    keep = gen.random(att.shape) >= p  # (..., L_q, L_k): True with probability 1 − p
    att *= keep
    att /= att.dtype.type(1 - p)
