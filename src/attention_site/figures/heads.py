"""The figure of "Why several heads": the weights of two narrow heads beside one wide head."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # no display: figures are written as SVG text

import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

from attention_site.figures.style import style, svg

__all__ = ["weight_panels"]


def weight_panels(panels: Sequence[tuple[str, ArrayLike]], *, title: str) -> str:
    """Heatmaps of attention weights side by side (one panel per head), as SVG text.

    Masked entries (weight exactly 0 above the diagonal) are left blank, so that what a head
    *could* read stands apart from what it reads with a small weight.

    Raises:
        ValueError: no panels, or a panel that is not a 2-D array.

    Examples:
        >>> import numpy as np
        >>> from attention_site.figures.heads import weight_panels
        >>> "<svg" in weight_panels([("a", np.eye(2)), ("b", np.eye(2))], title="two heads")
        True
    """
    if not panels:
        raise ValueError("panels must hold at least one (title, weights) pair")
    arrays = [np.asarray(a, dtype=float) for _, a in panels]
    for (name, _), a in zip(panels, arrays, strict=True):
        if a.ndim != 2:
            raise ValueError(f"panel {name!r} must be a 2-D array, got shape {a.shape}")
    with style():
        fig, axes = plt.subplots(
            1, len(panels), figsize=(2.6 * len(panels) + 0.6, 2.9), squeeze=False
        )
        for ax, (name, _), a in zip(axes[0], panels, arrays, strict=True):
            n, m = a.shape
            blank = np.triu(np.ones((n, m), dtype=bool), k=1) & (a == 0)  # the causal mask
            shown = np.where(blank, np.nan, a)
            ax.imshow(shown, cmap="viridis", vmin=0.0, vmax=1.0)
            for i in range(n):
                for j in range(m):
                    if not blank[i, j]:
                        ax.text(
                            j,
                            i,
                            f"{a[i, j]:.2f}",
                            ha="center",
                            va="center",
                            fontsize=7,
                            color="black" if a[i, j] > 0.6 else "white",
                        )
            ax.set_title(name, fontsize=9)
            ax.set_xlabel("key (token)")
            ax.set_ylabel("query (token)")
            ax.set_xticks(range(m), [str(j + 1) for j in range(m)])
            ax.set_yticks(range(n), [str(i + 1) for i in range(n)])
        fig.suptitle(title)
        fig.tight_layout()
        return svg(fig)
