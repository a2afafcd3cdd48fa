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
) -> str:
    """An attention-weights (or mask, or scores) heatmap as SVG text.

    Examples:
        >>> import numpy as np
        >>> from attention_site.figures.heatmap import heatmap
        >>> "<svg" in heatmap(np.eye(2), title="identity")
        True
    """

    a = np.asarray(weights, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D array, got shape {a.shape}")
    n, m = a.shape
    with style():
        fig, ax = plt.subplots(figsize=(1.2 + 0.7 * m, 1.0 + 0.6 * n))
        shown = np.where(np.isfinite(a), a, np.nan)
        im = ax.imshow(shown, cmap="viridis", aspect="auto")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_xticks(range(m), col_labels if col_labels is not None else _numbers(m))
        ax.set_yticks(range(n), row_labels if row_labels is not None else _numbers(n))
        if annotate and n * m <= 100:
            lo, hi = np.nanmin(shown), np.nanmax(shown)
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
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        return svg(fig)
