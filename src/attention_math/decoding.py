"""Decoding one token at a time: the key/value cache.

A causal model computes position ``t`` from tokens ``0 … t`` (and from it predicts token
``t + 1``). Its keys and values for the
earlier tokens do not change when a new token arrives (the causal mask hides the future),
so they are kept in a cache and only the new token's query, key and value are computed:
one decode step is one query row attending to the cached keys. With a sliding window of
``w`` tokens, the cache is a rolling buffer that keeps the last ``w`` keys and values.
The exact statements are in [`derivations.decoding`][attention_math.derivations.decoding].
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_qkv
from attention_math.numeric import attention

__all__ = ["KVCache", "incremental_attention"]


class KVCache:
    """Keys and values appended one token at a time, optionally only the last ``window``.

    Each `append` takes one token's key ``(..., d_k)`` and value ``(..., d_v)`` (leading
    axes: batch, heads). Without a window the buffer grows (doubling, so that ``L`` appends
    copy O(L) entries in all); with one it is a ring of ``window`` slots and the oldest token
    is overwritten. Attention does not depend on the order of the keys, so the ring is never
    reordered for `attend`; `keys` and `values` return the tokens oldest first.

    See Also:
        - [`incremental_attention`][attention_math.decoding.incremental_attention]: a whole sequence
          decoded through the cache.
        - [`attention`][attention_math.numeric.attention] with ``is_causal=True``: the same outputs
          at once.

    References:
        - [Pope et al., 2022](https://arxiv.org/abs/2211.05102): the key/value cache in inference.
        - [Jiang et al., 2023](https://arxiv.org/abs/2310.06825) (Mistral 7B): the rolling buffer of
          a sliding window.

    Examples:
        >>> import numpy as np
        >>> from attention_math.decoding import KVCache
        >>> cache = KVCache(window=2)
        >>> for t in range(3):
        ...     cache.append(np.array([float(t)]), np.array([10.0 * t]))
        >>> len(cache), cache.n_seen, cache.positions
        (2, 3, array([1, 2]))
        >>> cache.values
        array([[10.],
               [20.]])
        >>> cache.attend(np.array([0.0]))   # equal scores: the mean of the kept values
        array([15.])
    """

    def __init__(self, window: int | None = None) -> None:
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, int | np.integer) or window < 1
        ):
            raise ValueError(f"window must be a positive integer or None, got {window!r}")
        self.window: int | None = None if window is None else int(window)
        self.n_seen = 0  # tokens appended so far (also the position of the next one)
        self._k: NDArray[np.floating] | None = None  # (..., capacity, d_k)
        self._v: NDArray[np.floating] | None = None  # (..., capacity, d_v)

    def __len__(self) -> int:
        """The number of tokens held (``≤ window``)."""
        return self.n_seen if self.window is None else min(self.n_seen, self.window)

    def append(self, k: ArrayLike, v: ArrayLike) -> None:
        """Add one token's key ``(..., d_k)`` and value ``(..., d_v)``."""
        ka = as_float("k", k, min_ndim=1)
        va = as_float("v", v, min_ndim=1)
        if ka.shape[:-1] != va.shape[:-1]:
            raise ValueError(
                f"k and v must share their leading axes: k has shape {ka.shape}, v {va.shape}"
            )
        if self._k is None or self._v is None:
            capacity = self.window if self.window is not None else 16
            dtype = np.result_type(ka, va)
            self._k = np.zeros((*ka.shape[:-1], capacity, ka.shape[-1]), dtype)  # (..., C, d_k)
            self._v = np.zeros((*va.shape[:-1], capacity, va.shape[-1]), dtype)  # (..., C, d_v)
        expect_k = (*self._k.shape[:-2], self._k.shape[-1])
        expect_v = (*self._v.shape[:-2], self._v.shape[-1])
        if ka.shape != expect_k or va.shape != expect_v:
            raise ValueError(
                f"this cache holds keys of shape {expect_k} and values of shape {expect_v} "
                f"per token, got k {ka.shape} and v {va.shape}"
            )
        capacity = self._k.shape[-2]
        if self.window is None and self.n_seen == capacity:  # full: double the buffer
            self._k = np.concatenate([self._k, np.zeros_like(self._k)], axis=-2)
            self._v = np.concatenate([self._v, np.zeros_like(self._v)], axis=-2)
            capacity *= 2
        slot = self.n_seen % capacity  # without a window, slot = n_seen
        self._k[..., slot, :] = ka
        self._v[..., slot, :] = va
        self.n_seen += 1

    def _order(self) -> NDArray[np.intp]:
        """Slots of the held tokens, oldest first."""
        n = len(self)
        if self.window is None or self.n_seen <= self.window:
            return np.arange(n)
        start = self.n_seen % self.window  # the slot written longest ago
        return (start + np.arange(n)) % self.window

    @property
    def keys(self) -> NDArray[np.floating]:
        """The held keys, oldest first, ``(..., len(self), d_k)``."""
        if self._k is None:
            raise ValueError("the cache is empty: append a token first")
        return self._k[..., self._order(), :]

    @property
    def values(self) -> NDArray[np.floating]:
        """The held values, oldest first, ``(..., len(self), d_v)``."""
        if self._v is None:
            raise ValueError("the cache is empty: append a token first")
        return self._v[..., self._order(), :]

    @property
    def positions(self) -> NDArray[np.intp]:
        """The positions of the held tokens, oldest first, ``(len(self),)``."""
        return np.arange(self.n_seen - len(self), self.n_seen)

    def attend(self, q: ArrayLike, *, scale: float | None = None) -> NDArray[np.floating]:
        """One query ``(..., d_k)`` attending to every held token: ``(..., d_v)``."""
        if self._k is None or self._v is None:
            raise ValueError("the cache is empty: append a token first")
        qa = as_float("q", q, min_ndim=1)
        n = len(self)
        # slots in storage order: attention is invariant to the order of the keys
        k = self._k[..., :n, :]  # (..., n, d_k)
        v = self._v[..., :n, :]  # (..., n, d_v)
        out = attention(qa[..., None, :], k, v, scale=scale)  # (..., 1, d_v)
        assert isinstance(out, np.ndarray)  # no weights were asked for
        return out[..., 0, :]  # (..., d_v)


def incremental_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    window: int | None = None,
    scale: float | None = None,
) -> NDArray[np.floating]:
    """Causal self-attention computed token by token through a `KVCache`.

    Step ``t`` appends key ``t`` and value ``t`` to the cache, then query ``t`` attends to
    what the cache holds. The result equals
    ``attention(q, k, v, mask=causal_mask(L))`` (with ``window``:
    ``mask=sliding_window_mask(L, window=window)``) to a few ε.

    Args:
        q: queries ``(..., L, d_k)``.
        k: keys ``(..., L, d_k)``.
        v: values ``(..., L, d_v)``.
        window: keep only the last ``window`` tokens (a rolling cache); ``None``: all.
        scale: factor on the scores; default ``1/√d_k``.

    Returns:
        ``(..., L, d_v)``, in the dtype of the inputs.

    See Also:
        - [`KVCache`][attention_math.decoding.KVCache]: one step at a time.
        - [`attention`][attention_math.numeric.attention] with ``is_causal=True``: the outputs it
          equals.

    References:
        - [Pope et al., 2022](https://arxiv.org/abs/2211.05102): the key/value cache in inference.

    Examples:
        >>> import numpy as np
        >>> from attention_math.decoding import incremental_attention
        >>> from attention_math.numeric import attention, causal_mask
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = (rng.standard_normal((5, 4)) for _ in range(3))
        >>> full = attention(q, k, v, mask=causal_mask(5))
        >>> bool(np.allclose(incremental_attention(q, k, v), full, rtol=0, atol=1e-15))
        True
    """
    qa, ka, va, batch = check_qkv(q, k, v)
    if qa.shape[-2] != ka.shape[-2]:
        raise ValueError(
            "incremental_attention needs L_q = L_k (decoding is self-attention), "
            f"got q of shape {qa.shape} and k of shape {ka.shape}"
        )
    dtype = np.result_type(qa, ka, va)
    qa, ka, va = (np.broadcast_to(a, (*batch, *a.shape[-2:])) for a in (qa, ka, va))
    cache = KVCache(window)
    out = np.empty((*batch, qa.shape[-2], va.shape[-1]), dtype=dtype)  # (..., L, d_v)
    for t in range(qa.shape[-2]):
        cache.append(ka[..., t, :], va[..., t, :])
        out[..., t, :] = cache.attend(qa[..., t, :], scale=scale)
    return out
