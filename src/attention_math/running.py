"""The running example of the forward pages: three tokens, ``W_Q ≠ W_K``, ``d_k = 4``.

Chosen so that every exact form teaches: the entries are small integers, ``√d_k = 2``
turns the raw scores (all even) into integer scores, so each weight is a power of ``e``
divided by a sum of powers of ``e``, read by eye, and ``W_Q ≠ W_K`` makes the scores
non-symmetric (token 1 attends most to token 3, token 3 most to token 2). ``d_v = 2``
makes every value and every output a point in the plane. The 2×2 identity example
([`IDENTITY_2X2`][attention_math.examples.IDENTITY_2X2]) is a worked example of its own.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from attention_math.examples import Example

__all__ = ["RUNNING", "forward", "numeric_forward"]

RUNNING = Example(
    id="running",
    title="The running example",
    seed="",
    tokens=("token 1", "token 2", "token 3"),
    x=((0, 0, 1, 0), (0, 0, 0, 1), (1, 1, 0, 0)),  # L × d_model = 3 × 4
    w_q=((0, -1, 0, -1), (0, 1, -1, -1), (1, -1, -1, 0), (-1, -1, 0, 0)),  # d_model × d_k
    w_k=((1, 0, 0, 0), (1, 0, 0, 1), (-1, -1, 0, 0), (0, 0, 0, -1)),  # d_model × d_k
    w_v=((1, 0), (1, 2), (2, 0), (0, 2)),  # d_model × d_v = 4 × 2
    notes="d_k = 4, so the scores are divided by √4 = 2",
)
"""The running example followed through the forward-pass pages (exact inputs)."""


def forward(is_causal: bool = False) -> dict[str, sp.Matrix]:
    """Every intermediate of the running example, exactly: ``X, Q, K, V, S, P, O``.

    ``S`` holds the scaled scores, with ``-oo`` above the diagonal when ``is_causal``.

    Examples:
        >>> from attention_math.running import forward
        >>> f = forward()
        >>> f["S"]
        Matrix([
        [0, 0,  1],
        [1, 0, -1],
        [0, 1, -1]])
        >>> forward(is_causal=True)["P"][0, :]
        Matrix([[1, 0, 0]])
    """
    return {name: m.as_mutable() for name, m in _forward(bool(is_causal), repr(RUNNING)).items()}


@cache
def _forward(causal: bool, example: str) -> dict[str, sp.ImmutableMatrix]:
    """`forward`, derived once per process (the pages ask for it again and again) and
    keyed on the example's whole value; immutable, so no caller can change what the next
    one gets."""
    from attention_math import symbolic

    x = RUNNING.exact("x")  # L × d_model
    q, k, v = (x * RUNNING.exact(w) for w in ("w_q", "w_k", "w_v"))  # L×d_k, L×d_k, L×d_v
    n = x.rows
    mask = [[j <= i for j in range(n)] for i in range(n)] if causal else None
    out = symbolic.attention(q, k, v, mask=mask)  # L × d_v
    p = symbolic.attention_weights(q, k, v, mask=mask)  # L × L
    p = p.applyfunc(sp.cancel)  # e^{-1}/(e^{-1} + 1 + e) → 1/(1 + e + e²): no negative powers
    s = symbolic.scores(q, k)  # L × L
    if causal:
        s = sp.Matrix(n, n, lambda i, j: s[i, j] if j <= i else -sp.oo)  # L × L
    found = {"X": x, "Q": q, "K": k, "V": v, "S": s, "P": p, "O": out}
    return {name: sp.ImmutableMatrix(m) for name, m in found.items()}


def numeric_forward(is_causal: bool = False) -> dict[str, NDArray[np.float64]]:
    """The same intermediates in float64 with [`attention_math.numeric`][], each one
    cross-checked against `forward` (a disagreement raises ``CrossCheckError``).

    ``"raw"`` holds the scaled scores before the mask.

    Examples:
        >>> from attention_math.running import numeric_forward
        >>> numeric_forward(is_causal=True)["P"].round(3)
        array([[1.   , 0.   , 0.   ],
               [0.731, 0.269, 0.   ],
               [0.245, 0.665, 0.09 ]])
    """
    found = _numeric_forward(bool(is_causal), repr(RUNNING))
    return {name: a.copy() for name, a in found.items()}


@cache
def _numeric_forward(causal: bool, example: str) -> dict[str, NDArray[np.float64]]:
    """`numeric_forward`, computed and cross-checked once per process and example
    (callers get copies)."""
    from attention_math import numeric
    from attention_math.crosscheck import crosscheck

    x = RUNNING.numeric("x")  # L × d_model
    q, k, v = numeric.compute_qkv(x, *(RUNNING.numeric(w) for w in ("w_q", "w_k", "w_v")))
    n = x.shape[0]
    mask = numeric.causal_mask(n) if causal else np.ones((n, n), dtype=bool)  # L × L
    raw = q @ k.T / np.sqrt(k.shape[-1])  # L × L, the scores before the mask
    p = numeric.attention_weights(q, k, v, mask)  # L × L
    o = numeric.attention(q, k, v, mask)  # L × d_v
    out = {"X": x, "Q": q, "K": k, "V": v, "raw": raw, "P": p, "O": o}
    out["S"] = np.where(mask, raw, -np.inf)  # L × L
    exact = forward(causal)
    for name in ("Q", "K", "V", "P", "O"):
        crosscheck(exact[name], out[name], label=f"running example, {name}")
    crosscheck(forward()["S"], raw, label="running example, scores")
    return out
