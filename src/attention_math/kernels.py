"""Attention seen as kernel regression, and other scoring functions than ``q·k/√d``.

Nadaraya (1964) and Watson (1964) estimated ``y`` at a point ``x`` as an average of the
observed ``y_i``, weighted by a kernel of the distance ``x − x_i``. With a Gaussian kernel
those weights are exactly a softmax of the scores ``−‖q − k‖² / (2·bandwidth²)``: attention
whose queries are the points asked about, whose keys are the observed points and whose
values are the observations ([`attention_math.derivations.kernels`][] proves it is
dot-product attention plus a key bias).

Two other scores from the attention literature are here too, for every query/key pair:
Bahdanau's additive score ``w_vᵀ tanh(W_q q + W_k k)`` and the bilinear ``q W kᵀ``
(Luong's "general" score; ``W = W_Q W_Kᵀ`` gives the usual projected dot product).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float
from attention_math.numeric import softmax

__all__ = ["additive_scores", "bilinear_scores", "nadaraya_watson"]


def _check_bandwidth(bandwidth: object) -> float:
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, Real):
        raise TypeError(
            f"bandwidth must be a real number, got {type(bandwidth).__name__} {bandwidth!r}"
        )
    b = float(bandwidth)
    if not math.isfinite(b) or b <= 0:
        raise ValueError(f"bandwidth must be finite and > 0, got {bandwidth!r}")
    return b


def _as_points(name: str, x: ArrayLike) -> NDArray[np.floating]:
    """``(n,)`` scalars or ``(n, d)`` points, as ``(n, d)``."""
    a = as_float(name, x, min_ndim=1)
    if a.ndim > 2:
        raise ValueError(f"{name} must be 1-D (n,) or 2-D (n, d), got shape {a.shape}")
    return a[:, None] if a.ndim == 1 else a


def nadaraya_watson(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, *, bandwidth: float
) -> NDArray[np.floating]:
    """Gaussian-kernel regression: ``ŷ(q) = Σ_i softmax_i(−‖q − k_i‖² / (2τ²)) · v_i``.

    In the statisticians' words, ``q`` are the points ``x`` where ``y`` is estimated,
    ``k`` the points ``x_i`` where it was observed and ``v`` the observations ``y_i``.

    Args:
        q: the queries, where to estimate: ``(n,)`` scalars or ``(n, d)`` points.
        k: the keys, where ``y`` was observed: ``(m,)`` or ``(m, d)``.
        v: the values, the observations: ``(m,)`` or ``(m, d_v)``.
        bandwidth: ``τ > 0``, the kernel's width. ``τ → 0`` gives the nearest key's value
            (ties share it equally), ``τ → ∞`` the plain mean of ``v``.

    Returns:
        ``(n,)`` if ``v`` is 1-D, else ``(n, d_v)``.

    Raises:
        TypeError: an input is not real-valued, or ``bandwidth`` is not a real number.
        ValueError: ``bandwidth ≤ 0`` (or not finite), the shapes do not fit together, or
            the scores overflow (a bandwidth too small for the distances).

    Examples:
        >>> import numpy as np
        >>> from attention_math.kernels import nadaraya_watson
        >>> k, v = np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 4.0])
        >>> nadaraya_watson([1.0], k, v, bandwidth=1e-3)  # nearest neighbour
        array([1.])
        >>> nadaraya_watson([1.0], k, v, bandwidth=1e3).round(6)  # the mean of v
        array([1.666667])
    """
    h = _check_bandwidth(bandwidth)
    qa = _as_points("q", q)  # (n, d)
    ka = _as_points("k", k)  # (m, d)
    va = as_float("v", v, min_ndim=1)  # (m,) or (m, d_v)
    if qa.shape[1] != ka.shape[1]:
        raise ValueError(
            f"q and k must share d (last axis): q has shape {qa.shape}, k has shape {ka.shape}"
        )
    if va.ndim > 2 or va.shape[0] != ka.shape[0]:
        raise ValueError(
            f"k and v must share L_k (first axis): k has shape {ka.shape}, v has shape {va.shape}"
        )
    diff = qa[:, None, :] - ka[None, :, :]  # (n, m, d): exact differences, no cancellation
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # checked below
        scores = -np.sum(diff * diff, axis=-1) / (2 * h * h)  # (n, m)
    if not np.isfinite(scores).all():
        raise ValueError(
            f"the scores −‖q − k‖²/(2τ²) overflow the {scores.dtype.name} range for bandwidth = "
            f"{bandwidth!r}; use a larger bandwidth or rescale q and k"
        )
    att = softmax(scores, axis=-1)  # (n, m): the kernel weights, each row sums to 1
    return att @ va.astype(att.dtype, copy=False)  # (n,) or (n, d_v)


def additive_scores(
    q: ArrayLike, k: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike
) -> NDArray[np.floating]:
    """Bahdanau's additive scores ``w_vᵀ tanh(W_q q_i + W_k k_j)`` for every pair ``(i, j)``.

    In the row convention of this project: ``tanh(q_i w_q + k_j w_k) · w_v``.

    Args:
        q: queries, ``(..., L_q, d_q)``.
        k: keys, ``(..., L_k, d_k)`` (``d_k`` may differ from ``d_q``).
        w_q: ``(d_q, h)``, ``h`` the hidden width.
        w_k: ``(d_k, h)``.
        w_v: ``(h,)``.

    Returns:
        The scores ``(..., L_q, L_k)``, ready for a softmax over the last axis.

    Examples:
        >>> import numpy as np
        >>> from attention_math.kernels import additive_scores
        >>> q, k = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 1.0]])
        >>> additive_scores(q, k, np.eye(2), np.eye(2), np.ones(2)).round(4)
        array([[1.5232, 1.7256]])
    """
    qa = as_float("q", q, min_ndim=2)
    ka = as_float("k", k, min_ndim=2)
    wq = as_float("w_q", w_q, min_ndim=2)
    wk = as_float("w_k", w_k, min_ndim=2)
    wv = as_float("w_v", w_v, min_ndim=1)
    if wq.ndim != 2 or wq.shape[0] != qa.shape[-1]:
        raise ValueError(f"w_q must have shape (d_q, h) with d_q = {qa.shape[-1]}, got {wq.shape}")
    hidden = wq.shape[1]
    if wk.shape != (ka.shape[-1], hidden):
        raise ValueError(
            f"w_k must have shape (d_k, h) = {(ka.shape[-1], hidden)} (h from w_q), got {wk.shape}"
        )
    if wv.shape != (hidden,):
        raise ValueError(f"w_v must have shape (h,) = ({hidden},) (h from w_q), got {wv.shape}")
    qh = qa @ wq  # (..., L_q, h)
    kh = ka @ wk  # (..., L_k, h)
    feats = np.tanh(qh[..., :, None, :] + kh[..., None, :, :])  # (..., L_q, L_k, h)
    scores: NDArray[np.floating] = feats @ wv  # (..., L_q, L_k)
    return scores


def bilinear_scores(q: ArrayLike, k: ArrayLike, w: ArrayLike) -> NDArray[np.floating]:
    """Bilinear scores ``q W kᵀ``: entry ``(i, j)`` is ``q_i W k_jᵀ``.

    With ``W = W_Q W_Kᵀ`` and ``q = k = X`` these are the (unscaled) scores of
    dot-product attention, ``(X W_Q)(X W_K)ᵀ``; such a ``W`` has rank at most the number
    of columns of ``W_Q`` (the head width), however large ``d_q`` and ``d_k`` are.

    Args:
        q: queries, ``(..., L_q, d_q)``.
        k: keys, ``(..., L_k, d_k)``.
        w: ``(d_q, d_k)``.

    Returns:
        The scores ``(..., L_q, L_k)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.kernels import bilinear_scores
        >>> q = k = np.array([[1.0, 0.0], [0.0, 1.0]])
        >>> bilinear_scores(q, k, [[0.0, 2.0], [3.0, 0.0]])
        array([[0., 2.],
               [3., 0.]])
    """
    qa = as_float("q", q, min_ndim=2)
    ka = as_float("k", k, min_ndim=2)
    wa = as_float("w", w, min_ndim=2)
    if wa.shape != (qa.shape[-1], ka.shape[-1]):
        raise ValueError(
            f"w must have shape (d_q, d_k) = {(qa.shape[-1], ka.shape[-1])} "
            f"(from q {qa.shape} and k {ka.shape}), got {wa.shape}"
        )
    scores: NDArray[np.floating] = (qa @ wa) @ np.swapaxes(ka, -1, -2)  # (..., L_q, L_k)
    return scores
