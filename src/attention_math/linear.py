"""Linear attention and the positive random features of Performer.

Softmax attention computes ``softmax(Q Kᵀ) V``: the ``L_q × L_k`` weights come first. Replace
``exp(q·k)`` by a product of features ``φ(q)·φ(k)`` and the product can be regrouped,
``(φ(Q) φ(K)ᵀ) V = φ(Q) (φ(K)ᵀ V)``: the ``m × d_v`` matrix ``φ(K)ᵀ V`` (``m`` features) is
formed once and
the cost grows linearly in the length (Katharopoulos et al., 2020, "Transformers are RNNs").
With a causal mask, query ``t`` needs the sums over keys ``0..t`` only, which a running
state ``U_t = U_{t−1} + φ(k_t) v_tᵀ``, ``z_t = z_{t−1} + φ(k_t)`` provides: an RNN.

Performer (Choromanski et al., 2021) picks random features whose dot product *estimates*
``exp(q·k)`` without bias, so that linear attention approximates softmax attention.
[`attention_math.derivations.linear`][] proves both statements exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_flag, check_qkv

__all__ = ["elu_feature_map", "linear_attention", "random_features"]

FeatureMap = Callable[[NDArray[np.floating]], NDArray[np.floating]]


def elu_feature_map(x: NDArray[np.floating]) -> NDArray[np.floating]:
    """``φ(x) = elu(x) + 1``: ``x + 1`` for ``x > 0``, ``eˣ`` otherwise; ``> 0`` in exact
    arithmetic (in float64 ``eˣ`` underflows to 0 below about ``x = −745``).

    Examples:
        >>> import numpy as np
        >>> from attention_math.linear import elu_feature_map
        >>> elu_feature_map(np.array([-1.0, 0.0, 2.0])).round(4)
        array([0.3679, 1.    , 3.    ])
    """
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def _feature_map(feature_map: str | FeatureMap) -> FeatureMap:
    if callable(feature_map):
        return feature_map
    if feature_map == "elu":
        return elu_feature_map
    raise ValueError(f'feature_map must be "elu" or a callable, got {feature_map!r}')


def _features(name: str, phi: FeatureMap, x: NDArray[np.floating]) -> NDArray[np.floating]:
    f = np.asarray(phi(x))
    if f.shape[:-1] != x.shape[:-1] or not np.issubdtype(f.dtype, np.floating):
        raise ValueError(
            f"feature_map({name}) must return floats of shape (..., L, m) for {name} of shape "
            f"{x.shape}, got dtype {f.dtype} and shape {f.shape}"
        )
    if not np.isfinite(f).all() or (f < 0).any():
        raise ValueError(f"feature_map({name}) must return finite values ≥ 0")
    return f


def linear_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    feature_map: str | FeatureMap = "elu",
    is_causal: bool = False,
) -> NDArray[np.floating]:
    """Linear attention ``φ(Q)(φ(K)ᵀ V) / φ(Q)(φ(K)ᵀ 1)``, row by row.

    Args:
        q: queries, ``(..., L_q, d_k)``.
        k: keys, ``(..., L_k, d_k)``.
        v: values, ``(..., L_k, d_v)``.
        feature_map: ``"elu"`` (``φ = elu + 1``, Katharopoulos et al.) or a function from
            ``(..., L, d_k)`` to non-negative features ``(..., L, m)`` (for example
            ``lambda x: random_features(x, w)``).
        is_causal: query ``t`` sees keys ``0..t`` only, computed by the running sums
            ``U_t = U_{t−1} + φ(k_t) v_tᵀ`` and ``z_t = z_{t−1} + φ(k_t)``: memory
            O(L·d) plus one ``m × d_v`` state, never ``L × L``. Needs ``L_q = L_k``.

    Returns:
        ``(..., L_q, d_v)``, in the dtype of the inputs (integers become float64).

    Raises:
        TypeError: an input is not real-valued.
        ValueError: shapes do not fit, ``is_causal`` with ``L_q ≠ L_k``, the feature map
            returns the wrong shape or negative values, or a row's normaliser is 0.

    Examples:
        >>> import numpy as np
        >>> from attention_math.linear import linear_attention
        >>> q = k = np.zeros((2, 1))                     # φ(0) = 1: every weight equal
        >>> v = np.array([[1.0], [3.0]])
        >>> linear_attention(q, k, v)
        array([[2.],
               [2.]])
        >>> linear_attention(q, k, v, is_causal=True)    # row 0 sees only key 0
        array([[1.],
               [2.]])
    """
    qa, ka, va, _ = check_qkv(q, k, v)
    if check_flag("is_causal", is_causal) and qa.shape[-2] != ka.shape[-2]:
        raise ValueError(
            f"is_causal=True needs L_q = L_k, got q of shape {qa.shape} and k of shape {ka.shape}"
        )
    phi = _feature_map(feature_map)
    dtype = np.result_type(qa, ka, va)
    fq = _features("q", phi, qa.astype(dtype, copy=False))  # (..., L_q, m)
    fk = _features("k", phi, ka.astype(dtype, copy=False))  # (..., L_k, m)
    if fq.shape[-1] != fk.shape[-1]:
        raise ValueError(
            f"feature_map gives {fq.shape[-1]} features for q but {fk.shape[-1]} for k"
        )
    va = va.astype(dtype, copy=False)
    if is_causal:
        num, den = _causal_sums(fq, fk, va)
    else:
        kv = np.swapaxes(fk, -1, -2) @ va  # (..., m, d_v): φ(K)ᵀ V, formed once
        num = fq @ kv  # (..., L_q, d_v)
        den = fq @ np.sum(fk, axis=-2)[..., None]  # (..., L_q, 1): φ(Q) φ(K)ᵀ 1
    if (den <= 0).any():
        raise ValueError(
            "a query's features are orthogonal to every visible key's (normaliser φ(q)·Σφ(k) "
            "is 0): the weights are undefined; use a strictly positive feature map"
        )
    return (num / den).astype(dtype, copy=False)


def _causal_sums(
    fq: NDArray[np.floating], fk: NDArray[np.floating], v: NDArray[np.floating]
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """Numerators ``φ(q_t)ᵀ U_t`` and normalisers ``φ(q_t)ᵀ z_t`` by the recurrence."""
    batch = np.broadcast_shapes(fq.shape[:-2], fk.shape[:-2], v.shape[:-2])
    n, m, d_v = fq.shape[-2], fq.shape[-1], v.shape[-1]
    s = np.zeros((*batch, m, d_v), dtype=v.dtype)  # U_t = Σ_{j≤t} φ(k_j) v_jᵀ
    z = np.zeros((*batch, m), dtype=v.dtype)  # z_t = Σ_{j≤t} φ(k_j)
    num = np.empty((*batch, n, d_v), dtype=v.dtype)
    den = np.empty((*batch, n, 1), dtype=v.dtype)
    for t in range(n):
        fk_t = fk[..., t, :]  # (..., m)
        s += fk_t[..., :, None] * v[..., t, None, :]  # outer product φ(k_t) v_tᵀ
        z += fk_t
        fq_t = fq[..., t, None, :]  # (..., 1, m)
        num[..., t, :] = (fq_t @ s)[..., 0, :]  # (..., d_v)
        den[..., t, 0] = np.sum(fq[..., t, :] * z, axis=-1)
    return num, den


def random_features(x: ArrayLike, w: ArrayLike) -> NDArray[np.floating]:
    """Performer's positive random features ``φ_w(x) = exp(W x − ‖x‖²/2) / √m``.

    For ``w`` with i.i.d. standard normal entries, ``E[φ_w(q)·φ_w(k)] = exp(q·k)``: the dot
    product of two feature vectors is an unbiased estimate of the softmax kernel, whose
    error shrinks like ``1/√m``. (Scale ``q`` and ``k`` by ``d^{−1/4}`` first to estimate
    ``exp(q·k/√d)``.)

    Args:
        x: ``(..., d)`` (queries or keys, one per row).
        w: ``(m, d)``, one random direction per row.

    Returns:
        ``(..., m)``, all entries > 0 (unless they underflow).

    Raises:
        ValueError: ``w`` is not ``(m, d)`` with the ``d`` of ``x``, or the features overflow.

    Examples:
        >>> import numpy as np
        >>> from attention_math.linear import random_features
        >>> rng = np.random.default_rng(0)
        >>> w = rng.standard_normal((100_000, 2))
        >>> q, k = np.array([0.5, 0.0]), np.array([0.3, 0.4])
        >>> est = random_features(q, w) @ random_features(k, w)
        >>> bool(abs(est / np.exp(q @ k) - 1) < 0.02)  # exp(q·k) = exp(0.15)
        True
    """
    xa = as_float("x", x, min_ndim=1)
    wa = as_float("w", w, min_ndim=2)
    if wa.ndim != 2 or wa.shape[1] != xa.shape[-1]:
        raise ValueError(
            f"w must have shape (m, d) with d = {xa.shape[-1]} (the last axis of x, shape "
            f"{xa.shape}), got {wa.shape}"
        )
    dtype = np.result_type(xa, wa)
    xa, wa = xa.astype(dtype, copy=False), wa.astype(dtype, copy=False)
    with np.errstate(over="ignore"):
        expo = xa @ wa.T - 0.5 * np.sum(xa * xa, axis=-1, keepdims=True)  # (..., m)
        feats = np.exp(expo) / np.sqrt(dtype.type(wa.shape[0]))
    if not np.isfinite(feats).all():
        raise ValueError(
            f"the random features exp(W x − ‖x‖²/2) overflow the {dtype.name} range; rescale x"
        )
    out: NDArray[np.floating] = feats.astype(dtype, copy=False)
    return out
