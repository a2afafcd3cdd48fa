"""Sliding-window attention, exactly: the receptive field grows by ``w − 1`` per layer.

One layer under `sliding_window_mask` lets token ``i`` read tokens ``i − w + 1 … i``.
Stacking ``n_layers`` layers composes the masks: token ``i`` is influenced by token ``j``
when there is a path ``j → … → i`` through ``n_layers`` allowed steps, i.e. when entry
``(i, j)`` of the ``n_layers``-th boolean power of the mask is True. Its last row counts
``n_layers (w − 1) + 1`` tokens (while that fits in the sequence). The mask has
``w L − w(w − 1)/2`` allowed entries, so a kernel that skips blocked scores does O(L·w) work.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from attention_math.derivations._once import derived_once
from attention_math.numeric import sliding_window_mask

__all__ = [
    "band_entries",
    "band_entries_formula",
    "edge_conventions",
    "reach",
    "receptive_field",
    "receptive_field_formula",
    "receptive_field_holds",
    "receptive_field_latex",
]

w, L = sp.symbols("w L", positive=True, integer=True)
n_layers = sp.Symbol("n_layers", positive=True, integer=True)  # the glossary's n_layers
_TEX_NAMES = {n_layers: r"n_{\text{layers}}"}


@derived_once
def reach(length: int, window: int, n_layers: int) -> sp.Matrix:
    """The 0/1 matrix of who-influences-whom after ``n_layers`` layers: the ``n_layers``-th
    power of the mask in exact integer arithmetic, then every positive count set to 1.

    Examples:
        >>> from attention_math.derivations.sliding_window import reach
        >>> reach(4, 2, 2)
        Matrix([
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [1, 1, 1, 0],
        [0, 1, 1, 1]])
    """
    a = sp.Matrix(sliding_window_mask(length, window=window).astype(int).tolist())
    paths = a**n_layers  # entry (i, j): the number of allowed paths from j to i
    return paths.applyfunc(lambda x: sp.Integer(1) if x > 0 else sp.Integer(0))


def receptive_field(length: int, window: int, n_layers: int) -> int:
    """How many tokens the last token reads after ``n_layers`` layers (counted exactly)."""
    return int(sum(reach(length, window, n_layers).row(length - 1)))


def receptive_field_formula() -> sp.Expr:
    """``n_layers (w − 1) + 1``: each layer reaches ``w − 1`` tokens further back.

    Examples:
        >>> from attention_math.derivations.sliding_window import receptive_field_formula
        >>> receptive_field_formula()
        n_layers*(w - 1) + 1
    """
    return n_layers * (w - 1) + 1


def receptive_field_latex() -> str:
    r"""`receptive_field_formula` in LaTeX, with the glossary's name for the layer count.

    Examples:
        >>> from attention_math.derivations.sliding_window import receptive_field_latex
        >>> print(receptive_field_latex())
        n_{\text{layers}} \left(w - 1\right) + 1
    """
    return str(sp.latex(receptive_field_formula(), symbol_names=_TEX_NAMES))


def receptive_field_holds(max_layers: int = 4, windows: tuple[int, ...] = (1, 2, 3, 4)) -> bool:
    """True when the counted receptive field equals ``min(L, n_layers (w − 1) + 1)`` for
    every ``n_layers ≤ max_layers`` and window, with ``L`` long enough for the formula and
    one short.

    Examples:
        >>> from attention_math.derivations.sliding_window import receptive_field_holds
        >>> receptive_field_holds(3, (2, 3))
        True
    """
    for win in windows:
        for layers in range(1, max_layers + 1):
            formula = int(receptive_field_formula().subs({n_layers: layers, w: win}))
            for length in (formula + 2, max(1, formula - 1)):
                if receptive_field(length, win, layers) != min(length, formula):
                    return False
    return True


def band_entries(length: int, window: int) -> int:
    """The number of allowed (query, key) pairs of the mask, counted."""
    return int(sliding_window_mask(length, window=window).sum())


def band_entries_formula() -> sp.Expr:
    """``Σ_{i=1}^{L} min(i, w)`` for ``L ≥ w``, summed by SymPy: ``w L − w(w − 1)/2``.

    Examples:
        >>> from attention_math.derivations.sliding_window import band_entries_formula
        >>> band_entries_formula()
        L*w - w**2/2 + w/2
    """
    i = sp.Symbol("i", positive=True, integer=True)
    ramp = sp.summation(i, (i, 1, w))  # rows 1 … w see 1 … w keys
    flat = sp.summation(w, (i, w + 1, L))  # the rest see w keys each
    return sp.expand(ramp + flat)


def edge_conventions(length: int, window: int) -> dict[str, NDArray[np.bool_]]:
    """The sliding-window mask as each source words it, written from its own rule
    (True = may attend; query ``i``, key ``j``, window ``w``, positions from 0):

    * this package's ``sliding_window_mask`` and Hugging Face's eager mask
      (``kv_idx > q_idx − sliding_window`` on top of causal): ``i − w < j ≤ i``, ``w`` keys;
    * the Mistral 7B paper ("positions between ``i − W`` and ``i``", its ``W`` our ``w``), and
      FlashAttention's ``window_size=(w, 0)`` ("keys between ``[i − window_size[0], i]``
      inclusive"): ``i − w ≤ j ≤ i``, ``w + 1`` keys.

    Examples:
        >>> from attention_math.derivations.sliding_window import edge_conventions
        >>> masks = edge_conventions(5, 2)
        >>> [int(m[4].sum()) for m in masks.values()]
        [2, 3]
    """
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    ours = sliding_window_mask(length, window=window)  # (L, L); checks length
    i, j = np.indices(ours.shape)  # (L, L) each: query and key positions
    hf_eager: NDArray[np.bool_] = np.asarray((j <= i) & (j > i - window))  # (L, L)
    inclusive: NDArray[np.bool_] = np.asarray((j <= i) & (j >= i - window))  # (L, L)
    if not (hf_eager == ours).all():
        raise AssertionError("sliding_window_mask is not i − W < j ≤ i")
    return {
        "i − w < j ≤ i: `sliding_window_mask`, Hugging Face's eager mask": hf_eager,
        "i − w ≤ j ≤ i: Mistral 7B's wording, FlashAttention `window_size=(w, 0)`": inclusive,
    }
