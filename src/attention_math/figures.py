"""The lesson's figures: pictures drawn from the package's own results at build time.

Each function returns inline SVG text (:func:`attention_math.plots.svg`): deterministic,
labelled, drawn in the page's text colour.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import ConnectionPatch
from numpy.typing import ArrayLike, NDArray

from attention_math.plots import fluid, style, svg

__all__ = ["pipeline", "running_pipeline"]

XY = tuple[float, float]
_GREY = "#808080"  # the placeholder svg() turns into the page's text colour


def _panel(ax: Axes, a: NDArray[np.float64], title: str, xlabel: str, ylabel: str) -> None:
    """One matrix as a small annotated heatmap; −∞ cells are left blank and marked."""
    shown = np.where(np.isfinite(a), a, np.nan)
    lim = 1.8 * (float(np.nanmax(np.abs(shown))) or 1.0)  # pale colours: the numbers stay legible
    ax.imshow(shown, cmap="coolwarm", vmin=-lim, vmax=lim, aspect="auto")
    for (i, j), val in np.ndenumerate(a):
        text = "−∞" if np.isneginf(val) else f"{val:.2f}".rstrip("0").rstrip(".")
        ax.text(j, i, text, ha="center", va="center", fontsize=8.5, color="black")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def _arrow(fig: Figure, a: Axes, b: Axes, xy_a: XY, xy_b: XY, bend: float = 0.0) -> None:
    """An arrow from point ``xy_a`` of ``a`` to ``xy_b`` of ``b`` (axes fractions)."""
    fig.add_artist(
        ConnectionPatch(
            xyA=xy_a,
            coordsA="axes fraction",
            axesA=a,
            xyB=xy_b,
            coordsB="axes fraction",
            axesB=b,
            arrowstyle="-|>",
            connectionstyle=f"arc3,rad={bend}",
            color=_GREY,
            lw=1.2,
        )
    )


def pipeline(
    x: ArrayLike,
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    raw: ArrayLike,
    s: ArrayLike,
    p: ArrayLike,
    o: ArrayLike,
) -> str:
    """The forward pass as a picture: every matrix, with its shape, and what feeds what.

    Top row: the input ``x`` and its three projections; bottom row: the scaled scores
    ``raw``, the masked scores ``s``, the weights ``p`` and the output ``o``. Arrows follow
    the data: ``X`` feeds ``Q, K, V``; ``Q`` and ``K`` the scores; ``P`` and ``V`` the output.

    Examples:
        >>> import numpy as np
        >>> from attention_math import numeric
        >>> from attention_math.figures import pipeline
        >>> x = np.eye(2)
        >>> o, p = numeric.attention(x, x, x, return_weights=True)
        >>> text = pipeline(x, x, x, x, x / np.sqrt(2), x / np.sqrt(2), p, o)
        >>> text.startswith("<svg") and "2×2" in text
        True
    """
    names = ("X", "Q", "K", "V", "raw", "S", "P", "O")
    mats = [np.asarray(m, dtype=np.float64) for m in (x, q, k, v, raw, s, p, o)]
    for name, m in zip(names, mats, strict=True):
        if m.ndim != 2:
            raise ValueError(f"{name} must be a matrix, got shape {m.shape}")
    titles = (
        "input $X$",
        "queries $Q = XW_Q$",
        "keys $K = XW_K$",
        "values $V = XW_V$",
        "scores $QK^T$ / √$d_k$",
        "masked $S$ = scores + $M$",
        "weights $P$ = softmax($S$)",
        "output $O = PV$",
    )
    labels = [("feature", "token")] * 4 + [("key", "query")] * 3 + [("feature", "query")]
    # (column, row) of each panel: X feeds Q, K, V (column 1); Q and K the scores, which
    # run right to S and P; P and V (the bottom row) meet in O.
    where = ((0, 1), (1, 0), (1, 1), (1, 2), (2, 0.5), (3, 0.5), (4, 0.5), (4, 2))
    with style():
        fig = plt.figure(figsize=(10.0, 6.0))
        flat = []
        for (col, row), title, (xl, yl), m in zip(where, titles, labels, mats, strict=True):
            ax = fig.add_axes((col / 5 + 0.03, 1 - (row + 1) / 3 + 0.07, 0.13, 0.19))
            _panel(ax, m, f"{title}\n{m.shape[0]}×{m.shape[1]}", xl, yl)
            flat.append(ax)
        right, left, top, bottom = (1.03, 0.5), (-0.28, 0.5), (0.5, 1.4), (0.5, -0.3)
        for n in (1, 2, 3):
            _arrow(fig, flat[0], flat[n], right, left)  # X → Q, K, V
        _arrow(fig, flat[1], flat[4], right, (-0.28, 0.8))  # Q → scores
        _arrow(fig, flat[2], flat[4], right, (-0.28, 0.2))  # K → scores
        for n in (4, 5):
            _arrow(fig, flat[n], flat[n + 1], right, left)  # scores → S → P
        _arrow(fig, flat[6], flat[7], bottom, top)  # P → O
        _arrow(fig, flat[3], flat[7], right, left)  # V → O
        return svg(fig)


def running_pipeline(causal: bool = True) -> str:
    """:func:`pipeline` for the running example (:mod:`attention_math.running`), causal by
    default, every matrix cross-checked against the exact result first; as wide as its box.

    Examples:
        >>> from attention_math.figures import running_pipeline
        >>> "3×4" in running_pipeline()
        True
    """
    from attention_math.running import numeric_forward

    f = numeric_forward(causal)
    return fluid(pipeline(*(f[n] for n in ("X", "Q", "K", "V", "raw", "S", "P", "O"))))
