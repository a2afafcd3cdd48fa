"""Attention in NumPy, ``softmax(q kᵀ · scale + mask) · v``: what all else is checked against.

Every other part of the project (the exact SymPy derivation, the worked examples, the
exercises, the site) is checked against the functions in this module, so they validate
their input strictly and never return a silent NaN.

This is the tuned path (one score buffer written in place, tiles for long sequences);
[`attention_math.reference`][] is the same formula on one screen, written to be read, and the
tests check [`attention`][attention_math.numeric.attention] against it.

Shapes follow the paper: ``q`` is ``(..., L_q, d_k)``, ``k`` is ``(..., L_k, d_k)``,
``v`` is ``(..., L_k, d_v)`` and the output is ``(..., L_q, d_v)``; leading ``...``
dimensions broadcast like NumPy's ``matmul``.
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math import default_path, tiled
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
from attention_math.tiled import _Head

__all__ = [
    "attention",
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
    """Row softmax of ``s`` written into ``s`` itself (no L×L temporaries)."""
    m = np.max(s, axis=axis, keepdims=True)
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


@overload
def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    return_weights: Literal[False] = False,
    block_size: int | tuple[int, int] | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    return_lse: Literal[False] = False,
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.floating]: ...
@overload
def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    return_weights: Literal[True],
    block_size: int | tuple[int, int] | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    return_lse: Literal[False] = False,
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
) -> tuple[NDArray[np.floating], NDArray[np.floating]]: ...
@overload
def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    return_weights: Literal[False] = False,
    block_size: int | tuple[int, int] | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    return_lse: Literal[True],
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
) -> tuple[NDArray[np.floating], NDArray[np.floating]]: ...
@overload
def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    return_weights: Literal[True],
    block_size: int | tuple[int, int] | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    return_lse: Literal[True],
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
) -> tuple[NDArray[np.floating], NDArray[np.floating], NDArray[np.floating]]: ...
@overload
def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    return_weights: bool = False,
    block_size: int | tuple[int, int] | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    return_lse: bool = False,
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.floating] | tuple[NDArray[np.floating], ...]: ...
def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    return_weights: bool = False,
    block_size: int | tuple[int, int] | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    return_lse: bool = False,
    dropout_p: float = 0.0,
    rng: np.random.Generator | int | None = None,
) -> Any:
    """Scaled dot-product attention ``softmax(q kᵀ · scale + mask) v``.

    Args:
        q: queries, ``(..., L_q, d_k)``.
        k: keys, ``(..., L_k, d_k)``.
        v: values, ``(..., L_k, d_v)``.
        mask: boolean (True = may attend) or additive float (added to the scores, ``-inf``
            blocks), broadcastable to ``(..., L_q, L_k)``: the semantics of PyTorch's
            ``scaled_dot_product_attention``. A fully masked row gives zero weights and a
            zero output row. The mask may not enlarge the batch dimensions of ``q``, ``k``,
            ``v`` (a ``ValueError`` names both shapes, as PyTorch raises).
        scale: factor on the scores; default ``1/√d_k``. It must be finite and ``≥ 0``: a
            negative scale would turn attention into "attend to the least similar key"
            and is refused with a ``ValueError`` (0 gives uniform weights).
        return_weights: also return the attention weights ``(..., L_q, L_k)``.
        block_size: compute tile by tile with the online softmax
            ([`attention_math.tiled`][]): an int, or ``(block_q, block_k)`` query rows ×
            key columns per tile. Extra memory is O(L·d) plus one tile instead of the
            ``L_q × L_k`` scores. ``None`` (default): the faster path for this size on this
            machine ([`tiles_pay`][attention_math.default_path.tiles_pay]: tiled whenever all the
            scores together exceed ``default_path.SCORES_BUDGET_BYTES``; otherwise untiled below
            1024² scores per head, and above that where a one-off timing found tiles faster),
            tiles sized by ``default_path.default_block`` (the L2 cache).
            Cannot be combined with ``return_weights`` (the weights *are* ``L_q × L_k``).
        is_causal: query ``i`` sees keys ``0..i`` only, as ``mask=causal_mask(L_q, L_k)``
            (and combined with ``mask`` if both are given) but without building the
            ``L_q × L_k`` mask; the tiled path skips the tiles above the diagonal instead of
            computing and masking them. (The tiled path also skips any tile in which a
            boolean ``mask`` is all False, so ``mask=causal_mask(L)`` skips them too.)
        causal_alignment: with ``is_causal``, where the diagonal sits when
            ``L_q ≠ L_k``, as in [`causal_mask`][attention_math.numeric.causal_mask]: ``"top-left"``
            (default, PyTorch's ``is_causal=True``) or ``"bottom-right"`` (PyTorch's
            ``causal_lower_right``: the queries are the last ``L_q`` positions, as when decoding
            with a cache).
        return_lse: also return the log-sum-exp of each row of scores,
            ``lse = log Σ_j exp(q_i·k_j · scale + mask_ij)``, shape ``(..., L_q)``, what
            FlashAttention saves for its backward pass (``P = exp(S − lse)``). A fully
            masked row has ``lse = -inf`` (the log of an empty sum). Computed in both the
            untiled and the tiled path.
        dropout_p: PyTorch's ``dropout_p``: each weight is dropped (set to 0) with this
            probability, independently, after the softmax, and the kept ones are divided by
            ``1 − dropout_p`` (inverted dropout), so that the expected output is the undropped
            one. In ``[0, 1)``; 0 (default) is no dropout. Needs the untiled path
            (``block_size=None``).
        rng: the random source of the dropout masks: a ``numpy.random.Generator`` or a seed
            (``None``: fresh entropy). A weight is kept where ``rng.random() >= dropout_p``,
            drawn for the whole ``(..., L_q, L_k)`` array at once.

    Returns:
        The output ``(..., L_q, d_v)``, followed by the weights if ``return_weights`` and
            by ``lse`` if ``return_lse`` (``out``, ``(out, w)``, ``(out, lse)`` or
            ``(out, w, lse)``). float32 stays float32, float64 stays float64, integers are
            promoted to float64. Mixed dtypes promote as NumPy does (float16 with float32
            gives float32). float16 and bfloat16 (an ``ml_dtypes`` array) are computed in
            float32 and returned in their own format. A zero-length sequence (``L_q = 0``,
            ``L_k = 0``) or an empty batch gives PyTorch's result: an empty output, or zeros
            when there are queries but no keys. Tiled and untiled results agree to rounding:
            a few ε normwise per row for scores of order one, growing in proportion to the
            size of the scores (rounding a score s moves its weight by about ε·|s|, in either
            path).

            With ``dropout_p > 0`` the weights returned are those that multiplied ``v``: the
            dropped ones 0, the kept ones divided by ``1 − dropout_p``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> q = k = np.eye(2)
        >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> out, w = attention(q, k, v, return_weights=True)
        >>> w.round(4)
        array([[0.6698, 0.3302],
               [0.3302, 0.6698]])
        >>> w.sum(axis=-1)
        array([1., 1.])
        >>> attention(q, k, v, mask=np.array([[True, False], [True, True]]))[0]
        array([1., 2.])
        >>> attention(q, k, v, is_causal=True, block_size=1)[0]  # tile by tile
        array([1., 2.])
        >>> out, lse = attention(q, k, v, return_lse=True)
        >>> lse.round(4)  # log(e^{1/√2} + e^0)
        array([1.1079, 1.1079])
        >>> attention(q[1:], k, v, is_causal=True)  # top-left: the query sees key 0 only
        array([[1., 2.]])
        >>> attention(q[1:], k, v, is_causal=True, causal_alignment="bottom-right").round(4)
        array([[2.3395, 3.3395]])
        >>> out, w = attention(q, k, v, return_weights=True, dropout_p=0.5, rng=1)
        >>> (w * 0.5).round(4)   # kept weights were doubled, dropped ones are 0
        array([[0.6698, 0.3302],
               [0.    , 0.6698]])
    """
    q, k, v, batch = check_qkv(q, k, v)
    dtype, work = work_dtype(q, k, v)
    q, k, v = (a.astype(work, copy=False) for a in (q, k, v))
    s = work.type(check_scale(scale, q.shape[-1]))  # a NumPy scalar: float32 stays float32

    is_causal = check_flag("is_causal", is_causal)
    return_weights = check_flag("return_weights", return_weights)
    return_lse = check_flag("return_lse", return_lse)
    drop = _check_dropout(dropout_p)
    n_q, n_k = q.shape[-2], k.shape[-2]
    offset = causal_offset(n_q, n_k, causal_alignment)  # checks the name even if not causal
    scores_shape = (*batch, n_q, n_k)
    m, full = (None, scores_shape) if mask is None else check_mask(mask, scores_shape)
    if block_size is not None:
        block = tiled.block_sizes(block_size)
        if drop:
            raise ValueError(
                f"dropout_p = {dropout_p} needs the weights, which the tiled path never forms: "
                f"use block_size=None (got block_size={block_size!r})"
            )
        if return_weights:
            raise ValueError(
                "return_weights=True needs the L_q × L_k weights, which the tiled path "
                f"never forms: use block_size=None (got block_size={block_size!r})"
            )
    elif not return_weights and not drop and default_path.tiles_pay(full, work, _untiled_reference):
        block = default_path.default_block(work)  # faster here, or the scores would not fit
    else:
        block = None

    att: NDArray[np.floating] | None = None  # (..., L_q, L_k) weights; never formed when tiled
    lse: NDArray[np.floating] | None = None  # (..., L_q)
    if 0 in full:  # no scores at all: PyTorch returns an empty output, or zeros if no keys
        out = np.zeros((*full[:-2], n_q, v.shape[-1]), dtype=work)  # (..., L_q, d_v)
        att = np.zeros(full, dtype=work)  # (..., L_q, L_k)
        lse = np.full(full[:-1], -np.inf, dtype=work)  # (..., L_q): log of an empty sum
    elif block is not None:  # an additive mask is cast tile by tile, never as a whole
        tiled_out = tiled.tiled_attention(
            q,
            k,
            v,
            m,
            scale=s,
            is_causal=is_causal,
            causal_alignment=causal_alignment,
            block_size=block,
            return_lse=return_lse,
        )
        out, lse = tiled_out if isinstance(tiled_out, tuple) else (tiled_out, None)
    else:
        # the untiled path is one tile of all the scores (L_q × L_k, every head at once)
        causal = offset if is_causal else None
        whole = _Head(q=q, k=k, v=v, scale=s, mask=m, causal=causal, bq=n_q, bk=n_k)
        att, lse = _scores(whole, return_lse)
        _softmax_inplace(att, axis=-1)
        if drop:
            _dropout_inplace(att, drop, rng)
        out = att @ v  # (..., L_q, d_v)

    results = [out.astype(dtype, copy=False)]
    if return_weights:
        assert att is not None
        results.append(att.astype(dtype, copy=False))
    if return_lse:
        assert lse is not None
        results.append(lse.astype(dtype, copy=False))
    return results[0] if len(results) == 1 else tuple(results)


def _check_dropout(dropout_p: object) -> float:
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, int | float | np.floating):
        raise TypeError(f"dropout_p must be a number in [0, 1), got {dropout_p!r}")
    if not 0 <= dropout_p < 1:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p!r}")
    return float(dropout_p)


def _dropout_inplace(
    att: NDArray[np.floating], p: float, rng: np.random.Generator | int | None
) -> None:
    """Inverted dropout on the weights ``att`` ``(..., L_q, L_k)``, in place: each weight kept
    with probability ``1 − p`` and divided by it, so that its expectation is unchanged."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    keep = gen.random(att.shape) >= p  # (..., L_q, L_k): True with probability 1 − p
    att *= keep
    att /= att.dtype.type(1 - p)


def _scores(
    whole: _Head, return_lse: bool
) -> tuple[NDArray[np.floating], NDArray[np.floating] | None]:
    """The masked scores ``q kᵀ · scale + mask`` in one L×L buffer, and their row lse.

    ``whole`` holds every head at once: ``q`` is ``(..., L_q, d_k)``, ``k`` ``(..., L_k, d_k)``.
    """
    m, causal = whole.mask, whole.causal
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is caught below, with a reason
        att = whole.q @ np.swapaxes(whole.k, -1, -2)  # (..., L_q, L_k): the one L×L buffer
        att *= whole.scale
    if m is not None:
        full = np.broadcast_shapes(att.shape, m.shape)  # the mask may add batch dimensions
        if full != att.shape:  # the mask has v's batch dimensions: grow the buffer once
            att = np.broadcast_to(att, full).copy()
        if m.dtype == np.bool_:
            np.copyto(att, -np.inf, where=np.logical_not(m))
        else:
            with np.errstate(invalid="ignore"):  # +inf + -inf is NaN: caught below
                np.add(att, m, out=att, casting="same_kind")  # cast in chunks, no L×L copy
    if causal is not None:  # one L×L bool (a quarter of a float32 buffer), not a 2nd float one
        above = np.tri(att.shape[-2], att.shape[-1], k=causal, dtype=np.bool_)
        np.logical_not(above, out=above)
        np.copyto(att, -np.inf, where=above)
    if not return_lse:
        return att, None
    mx = np.max(att, axis=-1)  # (..., L_q)
    if np.isnan(mx).any() or np.isposinf(mx).any():
        _softmax_inplace(att, axis=-1)  # raises the overflow error with its message
    shift = np.where(np.isneginf(mx), 0, mx)[..., None]  # (..., L_q, 1)
    with np.errstate(divide="ignore"):  # a fully masked row: log 0 = -inf, on purpose
        lse = np.log(np.sum(np.exp(att - shift), axis=-1)) + shift[..., 0]  # (..., L_q)
    return att, lse


def _untiled_reference(q: NDArray[Any], k: NDArray[Any], v: NDArray[Any]) -> object:
    """The untiled path, for [`tiles_pay`][attention_math.default_path.tiles_pay] to time
    against tiles."""
    return attention(q, k, v, return_weights=True)  # the weights need the untiled path
