"""Figures for the site, drawn by matplotlib as SVG text at build time.

Every figure is deterministic (fixed SVG hash salt, no date in the metadata), so two
builds of the same commit give the same bytes, and uses ``currentColor`` for text and
axes so that it reads in both the light and the dark colour scheme.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

__all__ = ["heatmap", "style", "svg"]

_FG = "#808080"  # replaced by currentColor in the SVG text, see svg()


def style() -> matplotlib.rc_context:
    """The site's matplotlib style; draw every figure inside ``with style():``.

    Text and axes use a placeholder grey that `svg` turns into ``currentColor``.
    """
    return matplotlib.rc_context(
        {
            "svg.hashsalt": "attention-math",
            "svg.fonttype": "none",  # text stays text: smaller, selectable, themable
            "font.size": 10,
            "text.color": _FG,
            "axes.edgecolor": _FG,
            "axes.labelcolor": _FG,
            "xtick.color": _FG,
            "ytick.color": _FG,
            "axes.facecolor": "none",
            "figure.facecolor": "none",
            "savefig.facecolor": "none",
        }
    )


def svg(fig: plt.Figure) -> str:
    """The figure as inline SVG text (deterministic), then closed.

    Examples:
        >>> import matplotlib.pyplot as plt
        >>> from attention_math.plots import svg
        >>> from attention_math.plots import style
        >>> with style():
        ...     fig, ax = plt.subplots()
        ...     _ = ax.set_title("a title")
        ...     text = svg(fig)
        >>> text.startswith("<svg") and "currentColor" in text
        True
    """
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "attention-math"}):
        fig.savefig(
            buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight"
        )
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and doctype: inline in HTML
    return text.replace(_FG, "currentColor").replace(_FG.upper(), "currentColor")


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
        >>> from attention_math.plots import heatmap
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
        ax.set_xticks(range(m), col_labels if col_labels is not None else range(1, m + 1))
        ax.set_yticks(range(n), row_labels if row_labels is not None else range(1, n + 1))
        if annotate and n * m <= 100:
            lo, hi = np.nanmin(shown), np.nanmax(shown)
            for i in range(n):
                for j in range(m):
                    val = a[i, j]
                    text = "−∞" if np.isneginf(val) else f"{val:.{digits}g}"
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
