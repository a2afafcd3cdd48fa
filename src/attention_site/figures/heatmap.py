"""A matrix as a heatmap: attention weights, a mask or scores, one coloured cell per entry."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

from attention_site.figures.style import style, svg
from attention_site.render import sci_text

__all__ = ["heatmap"]


def _numbers(n: int) -> list[str]:
    """Tick labels ``1 … n`` (rows and columns are numbered from 1, as in the papers)."""
    return [str(i) for i in range(1, n + 1)]


def heatmap(
    weights: ArrayLike,
    *,
    title: str,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    xlabel: str = "key",
    ylabel: str = "query",
    annotate: bool = True,
    digits: int = 3,
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    row_sums: bool = False,
    figsize: tuple[float, float] | None = None,
) -> str:
    """An attention-weights (or mask, or scores) heatmap as SVG text.

    ``vmin``/``vmax`` fix the colour scale (two heatmaps to be compared share one);
    ``colorbar=False`` drops the colour bar (a 0/1 mask needs none); ``row_sums`` writes each
    row's sum on the right, under the heading "row sum" (softmax rows sum to one);
    ``figsize`` (inches) overrides the size that grows with the matrix: a small figure shown
    in a narrow box keeps its labels readable.

    Examples:
        >>> import numpy as np
        >>> from attention_site.figures.heatmap import heatmap
        >>> "<svg" in heatmap(np.eye(2), title="identity")
        True
        >>> "row sum" in heatmap(np.full((2, 2), 0.25), title="w", row_sums=True, vmin=0, vmax=1)
        True
    """

    a = np.asarray(weights, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D array, got shape {a.shape}")
    n, m = a.shape
    with style():
        size = figsize if figsize is not None else (1.2 + 0.7 * m, 1.0 + 0.6 * n)
        fig, ax = plt.subplots(figsize=size)
        shown = np.where(np.isfinite(a), a, np.nan)
        im = ax.imshow(shown, cmap="viridis", aspect="auto", vmin=vmin, vmax=vmax)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_xticks(range(m), col_labels if col_labels is not None else _numbers(m))
        ax.set_yticks(range(n), row_labels if row_labels is not None else _numbers(n))
        if annotate and n * m <= 100:
            lo = np.nanmin(shown) if vmin is None else vmin
            hi = np.nanmax(shown) if vmax is None else vmax
            for i in range(n):
                for j in range(m):
                    val = a[i, j]
                    text = "−∞" if np.isneginf(val) else sci_text(val, digits)
                    light = np.isfinite(val) and hi > lo and (val - lo) / (hi - lo) < 0.6
                    ax.text(
                        j,
                        i,
                        text,
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="white" if light else "black",
                    )
        if row_sums:
            sums = np.where(np.isfinite(a), a, 0.0).sum(axis=1)  # (n,)
            right = ax.secondary_yaxis("right")
            right.set_yticks(range(n), [sci_text(x, digits) for x in sums])
            ax.annotate(  # a column heading over the sums
                "row sum",
                xy=(1.0, 1.0),
                xycoords="axes fraction",
                xytext=(3, 2),
                textcoords="offset points",
                ha="left",
                va="bottom",
                fontsize=8,
            )
        if colorbar:
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.3 if row_sums else 0.04)
        return svg(fig)
