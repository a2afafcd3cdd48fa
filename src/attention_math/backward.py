"""The backward pass of ``softmax(q kᵀ · scale + mask) · v`` in NumPy.

For an upstream gradient ``d_out = ∂ℓ/∂O`` of a scalar loss ℓ, with ``P`` the attention
weights and ``O = P v``:

- ``dv = Pᵀ d_out``
- ``dP = d_out vᵀ``
- ``dS = P ∘ (dP − rowsum(d_out ∘ O))`` (the softmax Jacobian ``diag(p) − p pᵀ``, row by row)
- ``dq = scale · dS k`` and ``dk = scale · dSᵀ q``.

[`attention_math.derivations.gradients`][] derives and verifies each line exactly in SymPy.
Masked positions have weight 0, so they get ``dS = 0``; a fully masked row gets zero
gradients everywhere. Inputs that were broadcast get their gradients summed back to their
own shape, as autograd frameworks do.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math import tiled
from attention_math._checks import (
    CausalAlignment,
    as_float,
    causal_offset,
    check_flag,
    check_mask,
    check_qkv,
    check_scale,
    work_dtype,
)
from attention_math.numeric import _softmax_inplace
from attention_math.tiled_backward import tiled_backward

__all__ = [
    "AttentionGrads",
    "AttentionGradsDMask",
    "attention_backward",
    "attention_backward_with_dmask",
    "relative_bias",
    "relative_bias_grad",
]


def _sum_to(g: NDArray[np.floating], shape: tuple[int, ...]) -> NDArray[np.floating]:
    """Sum ``g`` over the axes that broadcasting added to or stretched in ``shape``."""
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if stretched:
        g = g.sum(axis=stretched, keepdims=True)
    return g


class AttentionGrads(NamedTuple):
    """The gradients of a scalar loss with respect to ``q``, ``k`` and ``v``.

    What [`attention_backward`][attention_math.backward.attention_backward] returns; it unpacks
    as ``dq, dk, dv = attention_backward(q, k, v, d_out)``.
    """

    dq: NDArray[np.floating]
    """``∂ℓ/∂q``, the shape of ``q``."""
    dk: NDArray[np.floating]
    """``∂ℓ/∂k``, the shape of ``k``."""
    dv: NDArray[np.floating]
    """``∂ℓ/∂v``, the shape of ``v``."""


class AttentionGradsDMask(NamedTuple):
    """The gradients with respect to ``q``, ``k``, ``v`` and an additive mask (a learned bias).

    What [`attention_backward_with_dmask`][attention_math.backward.attention_backward_with_dmask]
    returns; it unpacks as ``dq, dk, dv, dmask = attention_backward_with_dmask(...)``.
    """

    dq: NDArray[np.floating]
    """``∂ℓ/∂q``, the shape of ``q``."""
    dk: NDArray[np.floating]
    """``∂ℓ/∂k``, the shape of ``k``."""
    dv: NDArray[np.floating]
    """``∂ℓ/∂v``, the shape of ``v``."""
    dmask: NDArray[np.floating]
    """``∂ℓ/∂mask``, the shape of ``mask``: the scores' gradient ``dS`` summed back to it."""


def attention_backward(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    d_out: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
    block_size: int | tuple[int, int] | None = None,
) -> AttentionGrads:
    """Gradients ``(dq, dk, dv)`` of a scalar loss through scaled dot-product attention.

    The forward pass is [`attention`][attention_math.numeric.attention] with the same ``q``, ``k``,
    ``v``, ``mask`` and ``scale``; it is recomputed here (nothing is cached). The gradient of an
    additive mask (a learned bias) comes from
    [`attention_backward_with_dmask`][attention_math.backward.attention_backward_with_dmask].

    Args:
        q: queries, ``(..., L_q, d_k)``.
        k: keys, ``(..., L_k, d_k)``.
        v: values, ``(..., L_k, d_v)``.
        d_out: the upstream gradient ``∂ℓ/∂O``, exactly the shape of the forward output,
            ``(..., L_q, d_v)`` with the batch dimensions of ``q``, ``k``, ``v`` and
            ``mask`` broadcast together.
        mask: boolean (True = may attend) or additive float mask broadcastable to
            ``(..., L_q, L_k)``, as in [`attention`][attention_math.numeric.attention].
        scale: factor on the scores; default ``1/√d_k`` (finite and ``≥ 0``).
        is_causal: the forward pass had ``is_causal=True``; combined with ``mask``.
        causal_alignment: ``"top-left"`` (default) or ``"bottom-right"``, as in
            [`attention`][attention_math.numeric.attention].
        block_size: compute tile by tile, as FlashAttention-2's backward
            ([`attention_math.tiled_backward`][]): an int, or ``(block_q, block_k)``.
            The weights are recomputed per tile from the saved log-sum-exp, so the extra
            memory is O(L·d) plus a few tiles instead of ``L_q × L_k``; the result equals the
            untiled one to a few ε. ``None`` (default): untiled.

    Returns:
        ``AttentionGrads(dq, dk, dv)``, with the shapes of ``q``, ``k`` and ``v`` (gradients
            of broadcast inputs are summed back). Their dtype is the common dtype of ``q``,
            ``k``, ``v`` and ``d_out`` (NumPy's promotion): float32 stays float32, float64
            stays float64, integers become float64; float16 and bfloat16 are computed in
            float32 and returned in their own format.

    Raises:
        TypeError: an input is not real-valued, or ``scale`` is not a real number.
        ValueError: shapes do not fit together, an input holds NaN or ±inf, or the
            gradients overflow.

    Examples:
        >>> import numpy as np
        >>> from attention_math.backward import attention_backward
        >>> q = k = np.eye(2)
        >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> dq, dk, dv = attention_backward(q, k, v, d_out=np.eye(2))  # loss = trace(O)
        >>> dv.round(4)                                                  # = Pᵀ
        array([[0.6698, 0.3302],
               [0.3302, 0.6698]])
        >>> dq.round(4)
        array([[-0.3128,  0.3128],
               [-0.3128,  0.3128]])
        >>> dq.sum(axis=-1)  # k = I here, so dq = dS/√2, whose rows sum to 0
        array([0., 0.])

        A fully masked row (query 0 here) contributes nothing:

        >>> mask = np.array([[False, False], [True, True]])
        >>> grads = attention_backward(q, k, v, np.ones((2, 2)), mask=mask)
        >>> grads.dq[0]
        array([0., 0.])

        Tile by tile (one query × one key per tile here), the same gradients:

        >>> tiles = attention_backward(q, k, v, np.ones((2, 2)), mask=mask, block_size=1)
        >>> all(np.allclose(a, b) for a, b in zip(tiles, grads))
        True

    See Also:
        - [`attention`][attention_math.numeric.attention]: the forward pass.
        - [`attention_backward_with_dmask`][attention_math.backward.attention_backward_with_dmask]:
          the same gradients and that of an additive mask.
        - [`tiled_backward`][attention_math.tiled_backward.tiled_backward]: the tiled path.
        - [`derivations.gradients`][attention_math.derivations.gradients]: each line derived
          and verified exactly.

    References:
        - [Dao et al., 2022](https://arxiv.org/abs/2205.14135), FlashAttention: the backward
          pass from the saved log-sum-exp.
        - [Dao, 2023](https://arxiv.org/abs/2307.08691), FlashAttention-2: its loop order.
    """
    block = None if block_size is None else tiled.block_sizes(block_size)
    dq, dk, dv = _backward(
        q, k, v, d_out, mask, scale, is_causal, causal_alignment, block=block, dmask=False
    )
    return AttentionGrads(dq, dk, dv)


def attention_backward_with_dmask(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    d_out: ArrayLike,
    mask: ArrayLike,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
) -> AttentionGradsDMask:
    """[`attention_backward`][attention_math.backward.attention_backward] and ``∂ℓ/∂mask``.

    For an additive float mask, a learned bias on the scores as in ALiBi or T5's relative
    positions. The mask is added to the scores after scaling, so its gradient is ``dS``
    itself, summed back to the mask's shape; it is 0 wherever the weight is 0 (blocked
    entries included). The arguments are those of ``attention_backward``, with ``mask``
    required and no tiled path: this gradient *is* ``L_q × L_k``.

    Returns:
        ``AttentionGradsDMask(dq, dk, dv, dmask)``: the gradients ``attention_backward``
            returns, and ``dmask`` with the shape of ``mask``, in the same dtype.

    Raises:
        TypeError: ``mask`` is boolean or ``None`` (it has no gradient), or as in
            ``attention_backward``.
        ValueError: as in ``attention_backward``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.backward import attention_backward_with_dmask
        >>> q = k = np.eye(2)
        >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> grads = attention_backward_with_dmask(q, k, v, np.eye(2), np.zeros((2, 2)))
        >>> grads.dmask.round(4)  # = dS; here dq = dS k · scale, k = I
        array([[-0.4424,  0.4424],
               [-0.4424,  0.4424]])
        >>> grads.dmask.sum(axis=-1)  # the softmax ignores a constant added to a row
        array([0., 0.])
        >>> attention_backward_with_dmask(q, k, v, np.eye(2), np.eye(2, dtype=bool))
        Traceback (most recent call last):
        ...
        TypeError: attention_backward_with_dmask needs an additive float mask ... a boolean mask

    See Also:
        - [`attention_backward`][attention_math.backward.attention_backward]: ``dq``, ``dk``,
          ``dv`` alone, and the tiled path.
        - [`relative_bias_grad`][attention_math.backward.relative_bias_grad]: from ``dmask``
          to the gradient of a table of one bias per offset.
        - [`derivations.bias_gradients`][attention_math.derivations.bias_gradients]: this
          gradient derived exactly.

    References:
        - [Press et al., 2021](https://arxiv.org/abs/2108.12409), ALiBi: a fixed bias.
        - [Raffel et al., 2019](https://arxiv.org/abs/1910.10683), T5: a learned one.
    """
    if mask is None:
        raise TypeError(
            "attention_backward_with_dmask needs an additive float mask (a bias on the scores), "
            "got no mask"
        )
    dq, dk, dv, dmask = _backward(
        q, k, v, d_out, mask, scale, is_causal, causal_alignment, block=None, dmask=True
    )
    return AttentionGradsDMask(dq, dk, dv, dmask)


def _backward(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    d_out: ArrayLike,
    mask: ArrayLike | None,
    scale: float | None,
    is_causal: bool,
    causal_alignment: CausalAlignment,
    *,
    block: tuple[int, int] | None,
    dmask: bool,
) -> tuple[NDArray[np.floating], ...]:
    """The checks and the computation behind both public functions: ``(dq, dk, dv)``, then
    ``dmask`` if asked (never with ``block``)."""
    q, k, v, batch = check_qkv(q, k, v)
    d_out = as_float("d_out", d_out, min_ndim=2, allow_empty=True)
    is_causal = check_flag("is_causal", is_causal)
    scores_shape = (*batch, q.shape[-2], k.shape[-2])
    offset = causal_offset(q.shape[-2], k.shape[-2], causal_alignment)
    m = None
    if mask is not None:
        m, scores_shape = check_mask(mask, scores_shape)
    if dmask and (m is None or m.dtype == np.bool_):
        got = "no mask" if m is None else "a boolean mask"
        raise TypeError(
            "attention_backward_with_dmask needs an additive float mask (a bias on the "
            f"scores), got {got}"
        )
    out_shape = (*scores_shape[:-2], q.shape[-2], v.shape[-1])
    if d_out.shape != out_shape:
        raise ValueError(
            f"d_out must have the forward output's shape (..., L_q, d_v) = {out_shape}, "
            f"got {d_out.shape}"
        )
    dtype, work = work_dtype(q, k, v, d_out)  # as in attention()
    shapes: tuple[tuple[int, ...], ...] = (q.shape, k.shape, v.shape)
    q, k, v, d_out = (a.astype(work, copy=False) for a in (q, k, v, d_out))
    s = work.type(check_scale(scale, q.shape[-1]))
    if block is not None:
        dq, dk, dv = tiled_backward(
            q,
            k,
            v,
            d_out,
            m,
            scale=s,
            is_causal=is_causal,
            causal_alignment=causal_alignment,
            block_size=block,
        )
        return _finish(["dq", "dk", "dv"], [dq, dk, dv], shapes, dtype)

    # Forward, as attention() computes it.
    p = q @ np.swapaxes(k, -1, -2)  # (..., L_q, L_k)
    p *= s
    if m is not None:
        if scores_shape != p.shape:
            p = np.broadcast_to(p, scores_shape).copy()
        if m.dtype == np.bool_:
            np.copyto(p, -np.inf, where=np.logical_not(m))
        else:
            p += m.astype(work, copy=False)
    if is_causal:
        np.copyto(p, -np.inf, where=~np.tri(p.shape[-2], p.shape[-1], k=offset, dtype=np.bool_))
    if p.shape[-1]:  # no keys (L_k = 0): no weights, every gradient is 0
        _softmax_inplace(p, axis=-1)  # P; masked entries are exactly 0
    # Overflow is reported below as a ValueError naming the gradient, not as a warning.
    with np.errstate(over="ignore", invalid="ignore"):
        out = p @ v  # (..., L_q, d_v)

        # Backward.
        dv = np.swapaxes(p, -1, -2) @ d_out  # (..., L_k, d_v)
        ds = d_out @ np.swapaxes(v, -1, -2)  # dP, (..., L_q, L_k)
        # rowsum(dO ∘ O) = rowsum(P ∘ dP) = pᵀ dp: the ppᵀ part of the Jacobian, per row.
        ds -= np.sum(d_out * out, axis=-1, keepdims=True)
        ds *= p  # dS; zero wherever P is zero, so masked rows and entries drop out
        dq = ds @ k  # (..., L_q, d_k)
        dq *= s
        dk = np.swapaxes(ds, -1, -2) @ q  # (..., L_k, d_k)
        dk *= s

    names, values = ["dq", "dk", "dv"], [dq, dk, dv]
    if dmask:
        assert m is not None
        names.append("dmask")
        values.append(ds)  # S = q kᵀ · scale + mask: ∂S/∂mask = 1
        shapes = (*shapes, m.shape)
    return _finish(names, values, shapes, dtype)


def _finish(
    names: list[str],
    values: list[NDArray[np.floating]],
    shapes: tuple[tuple[int, ...], ...],
    dtype: np.dtype[Any],
) -> tuple[NDArray[np.floating], ...]:
    """Sum broadcast gradients back to the inputs' shapes, cast, and refuse overflow."""
    grads = []
    for name, g, shape in zip(names, values, shapes, strict=True):
        with np.errstate(over="ignore"):
            g = _sum_to(g, shape).astype(dtype, copy=False)
        if not np.isfinite(g).all():  # checked after the cast: float16 has a small range
            raise ValueError(
                f"{name} overflows the {dtype.name} range; rescale the inputs or d_out"
            )
        grads.append(g)
    return tuple(grads)


def relative_bias(table: ArrayLike, n_q: int, n_k: int) -> NDArray[np.floating]:
    """The ``(..., n_q, n_k)`` bias ``B_ij = table[..., i − j + n_k − 1]``: one learned number per
    offset ``i − j`` (from ``−(n_k − 1)`` to ``n_q − 1``), shared by every query and key at that
    offset, as in T5's relative position bias (before its buckets).

    Raises:
        ValueError: ``table``'s last axis is not ``n_q + n_k − 1`` long, or a size is not a
            positive integer.

    Examples:
        >>> import numpy as np
        >>> from attention_math.backward import relative_bias
        >>> relative_bias(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), 3, 3)  # offsets -2 … 2
        array([[ 0., -1., -2.],
               [ 1.,  0., -1.],
               [ 2.,  1.,  0.]])
    """
    for name, n in (("n_q", n_q), ("n_k", n_k)):
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    t = as_float("table", table)
    if t.shape[-1] != n_q + n_k - 1:
        raise ValueError(
            f"table must hold one entry per offset i - j, n_q + n_k - 1 = {n_q + n_k - 1} on its "
            f"last axis, got shape {t.shape}"
        )
    offset = np.arange(n_q)[:, None] - np.arange(n_k)[None, :] + n_k - 1  # (n_q, n_k) indices
    out: NDArray[np.floating] = t[..., offset]  # (..., n_q, n_k)
    return out


def relative_bias_grad(d_bias: ArrayLike) -> NDArray[np.floating]:
    """The gradient of the offset table from the gradient of the bias it fills: entry
    ``i − j + n_k − 1`` is the sum of ``d_bias`` over the diagonal ``i − j`` (every query and key
    at that offset used the same number, so each adds its share).

    With ``d_bias = dS`` (the gradient of an additive bias is the scores' gradient, see
    [`attention_backward_with_dmask`][attention_math.backward.attention_backward_with_dmask]),
    this is the learned bias's gradient.

    Raises:
        ValueError: ``d_bias`` has fewer than two axes.

    Examples:
        >>> import numpy as np
        >>> from attention_math.backward import relative_bias_grad
        >>> relative_bias_grad(np.arange(9.0).reshape(3, 3))  # offsets -2 … 2
        array([ 2.,  6., 12., 10.,  6.])
    """
    g = as_float("d_bias", d_bias, min_ndim=2)
    n_q, n_k = g.shape[-2:]
    offset = (np.arange(n_q)[:, None] - np.arange(n_k)[None, :] + n_k - 1).ravel()  # (n_q·n_k,)
    flat = g.reshape(*g.shape[:-2], n_q * n_k)  # (..., n_q·n_k)
    out = np.zeros((*g.shape[:-2], n_q + n_k - 1), dtype=g.dtype)  # (..., offsets)
    for o in range(n_q + n_k - 1):  # one diagonal at a time: a sum of its entries
        out[..., o] = flat[..., offset == o].sum(axis=-1)
    return out
