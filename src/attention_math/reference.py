"""Attention on one screen: ``softmax(q kᵀ · scale + mask) v``, line by line.

[`numeric.attention`][attention_math.numeric.attention] is the tuned path: it writes the scores
into one buffer in place, picks tiles or no tiles by speed, threads the tiles and returns
what PyTorch returns for empty inputs. This module is the same formula written to be read,
in the paper's names (``q``, ``k``, ``v``, ``att``) with each array's shape beside it; the
tests check the tuned path against it over random shapes, masks and dtypes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import (
    CausalAlignment,
    causal_offset,
    check_flag,
    check_mask,
    check_qkv,
    check_scale,
)

__all__ = ["attention"]


def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    causal_alignment: CausalAlignment = "top-left",
) -> NDArray[np.floating]:
    """Scaled dot-product attention, the plain way: every score formed, then the softmax.

    The arguments mean what they mean in [`numeric.attention`][attention_math.numeric.attention]
    (a boolean mask is True where a query may attend, a float mask is added to the scores; a
    fully masked row gives a zero output row). Inputs are checked the same way; the result
    has NumPy's promotion of the inputs' dtypes.

    Raises:
        TypeError: an input is not real-valued, or ``scale`` is not a real number.
        ValueError: the shapes do not fit together, ``scale`` is negative or not finite, or
            ``causal_alignment`` is unknown.

    Examples:
        >>> import numpy as np
        >>> from attention_math import reference
        >>> q = k = np.eye(2)
        >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> reference.attention(q, k, v).round(4)
        array([[1.6605, 2.6605],
               [2.3395, 3.3395]])
        >>> reference.attention(q, k, v, is_causal=True)[0]  # query 0 sees key 0 only
        array([1., 2.])
    """
    q, k, v, batch = check_qkv(q, k, v)
    L_q, L_k, d_k = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = check_scale(scale, d_k)  # 1/√d_k unless given
    att = q @ np.swapaxes(k, -1, -2) * scale  # (..., L_q, L_k): scores
    if mask is not None:
        mask, _ = check_mask(mask, (*batch, L_q, L_k))
        if mask.dtype == np.bool_:
            att = np.where(mask, att, -np.inf)  # (..., L_q, L_k)
        else:
            att = att + mask  # (..., L_q, L_k): a bias on the scores
    if check_flag("is_causal", is_causal):
        off = causal_offset(L_q, L_k, causal_alignment)
        seen = np.tri(L_q, L_k, k=off, dtype=bool)  # (L_q, L_k): j ≤ i + off
        att = np.where(seen, att, -np.inf)  # (..., L_q, L_k): no future
    top = att.max(axis=-1, keepdims=True)  # (..., L_q, 1): row max
    top = np.where(np.isneginf(top), 0, top)  # (..., L_q, 1): 0 if all masked
    att = np.exp(att - top)  # (..., L_q, L_k): ≤ 1, cannot overflow
    total = att.sum(axis=-1, keepdims=True)  # (..., L_q, 1): 0 if all masked
    att = att / np.where(total == 0, 1, total)  # (..., L_q, L_k): weights
    out: NDArray[np.floating] = att @ v  # (..., L_q, d_v)
    return out
