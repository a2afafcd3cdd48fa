"""Matrices as heatmaps, one coloured cell per entry: attention weights, a mask or scores, the
weights of several heads side by side, a circuit of the toy model, the sinusoidal encoding,
ALiBi's bias and the reach of a sliding window.

Two of them put beside the matrix the curve read off it: the frequencies of the encoding
(`frequencies_figure`) and each ALiBi head's weights (`alibi_figure`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math import positional
from attention_math.derivations import sliding_window
from attention_math.display import sci_text
from attention_math.plot.style import drawn_once, fluid, style, svg

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.image import AxesImage

__all__ = [
    "alibi_figure",
    "circuit_heatmap",
    "frequencies_figure",
    "heatmap",
    "reach_figure",
    "weight_panels",
]


def _numbers(n: int) -> list[str]:
    """Tick labels ``1 … n`` (rows and columns are numbered from 1, as in the papers)."""
    return [str(i) for i in range(1, n + 1)]


@drawn_once  # kept in memory by its arguments' content: drawn once per process
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
    in a narrow box keeps its labels readable. A NaN entry is a blank cell, without a number.

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.heatmap import heatmap
        >>> "<svg" in heatmap(np.eye(2), title="identity")
        True
        >>> "row sum" in heatmap(np.full((2, 2), 0.25), title="w", row_sums=True, vmin=0, vmax=1)
        True
        >>> "nan" in heatmap(np.array([[1.0, np.nan]]), title="a blank cell")
        False
    """

    a = np.asarray(weights, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D array, got shape {a.shape}")
    n, m = a.shape
    with style():
        size = figsize if figsize is not None else (1.2 + 0.7 * m, 1.0 + 0.6 * n)
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=size)
        im = _cells(
            ax,
            a,
            title=title,
            row_labels=row_labels,
            col_labels=col_labels,
            xlabel=xlabel,
            ylabel=ylabel,
            annotate=annotate,
            digits=digits,
            vmin=vmin,
            vmax=vmax,
            row_sums=row_sums,
        )
        if colorbar:
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.3 if row_sums else 0.04)
        return svg(fig)


def _cells(
    ax: Axes,
    a: NDArray[np.float64],
    *,
    title: str,
    row_labels: Sequence[str] | None,
    col_labels: Sequence[str] | None,
    xlabel: str,
    ylabel: str,
    annotate: bool,
    digits: int,
    vmin: float | None,
    vmax: float | None,
    row_sums: bool,
) -> AxesImage:
    """[`heatmap`][attention_math.plot.heatmap.heatmap]'s drawing on the axes ``ax`` (all
    but the colour bar): the one way a matrix is drawn as a heatmap, whole figure or panel."""
    n, m = a.shape
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
                if np.isnan(val):
                    continue  # a blank cell (as a masked weight): no number
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
    return im


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def weight_panels(panels: Sequence[tuple[str, ArrayLike]], *, title: str) -> str:
    """Heatmaps of attention weights side by side (one panel per head, on one colour scale,
    each drawn as [`heatmap`][attention_math.plot.heatmap.heatmap] draws), as SVG text.

    Masked entries (weight exactly 0 above the diagonal) are left blank, so that what a head
    *could* read stands apart from what it reads with a small weight.

    Raises:
        ValueError: no panels, or a panel that is not a 2-D array.

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.heatmap import weight_panels
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
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, axes = plt.subplots(
            1, len(panels), figsize=(3.0 * len(panels) + 0.6, 3.3), squeeze=False
        )
        for ax, (name, _), a in zip(axes[0], panels, arrays, strict=True):
            blank = np.triu(np.ones(a.shape, dtype=bool), k=1) & (a == 0)  # the causal mask
            # NaN: a blank cell without a number; one colour scale, so equal colours are
            # equal weights; no colour bar, since every cell carries its number
            _cells(
                ax,
                np.where(blank, np.nan, a),
                title=name,
                row_labels=None,
                col_labels=None,
                xlabel="key (token)",
                ylabel="query (token)",
                annotate=True,
                digits=2,
                vmin=0.0,
                vmax=1.0,
                row_sums=False,
            )
        fig.suptitle(title)
        fig.tight_layout()
        return svg(fig)


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def circuit_heatmap(
    matrix: ArrayLike,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    diverging: bool = True,
) -> str:
    """A circuit (a ``vocab × vocab`` or ``positions × positions`` matrix) as a heatmap.

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.heatmap import circuit_heatmap
        >>> circuit_heatmap(np.eye(4), title="t", xlabel="x", ylabel="y").startswith("<svg")
        True
    """
    a = np.asarray(matrix, dtype=float)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(4.2, 3.6))
        if diverging:
            top = float(np.abs(a).max()) or 1.0
            im = ax.imshow(a, cmap="RdBu_r", vmin=-top, vmax=top, interpolation="nearest")
        else:
            im = ax.imshow(a, cmap="viridis", interpolation="nearest")
        fig.colorbar(im, ax=ax, shrink=0.85)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        text = fluid(svg(fig), max_width="24rem")
    # the cells are a raster <image> inside the figure, whose text alternative (role="img",
    # aria-label) describes it: the raster is decoration, not an image of its own
    return text.replace("<image ", '<image aria-hidden="true" ')


@functools.cache  # a pure function of its arguments: drawn once per process
def frequencies_figure(n_positions: int = 64, d_model: int = 64) -> str:
    """The sinusoidal encoding as a heatmap, and the frequencies ``θ_i`` it uses (also RoPE's).

    Examples:
        >>> from attention_math.plot.heatmap import frequencies_figure
        >>> frequencies_figure(8, 8).startswith("<svg")
        True
    """
    pe = positional.sinusoidal(n_positions, d_model)  # (n, d_model)
    theta = positional.rope_frequencies(d_model)  # (d_model/2,)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4), width_ratios=(1.4, 1))
        im = a.imshow(pe, cmap="RdBu", aspect="auto", vmin=-1, vmax=1)
        a.set(title="sinusoidal encoding PE[j, ·]", xlabel="dimension", ylabel="position j")
        fig.colorbar(im, ax=a, fraction=0.046, pad=0.04)
        b.semilogy(np.arange(theta.size), theta, "o", ms=3)
        b.set(
            title="frequencies θᵢ = 10000^(−2i/d)",
            xlabel="pair i",
            ylabel="radians per position",
        )
        fig.tight_layout()
        return svg(fig)


@functools.cache  # a pure function of its arguments: drawn once per process
def alibi_figure(n_heads: int = 8, length: int = 24) -> str:
    """ALiBi: one head's bias matrix, and each head's weights over past keys when the
    content scores are equal (a causal row).

    Examples:
        >>> from attention_math.plot.heatmap import alibi_figure
        >>> alibi_figure(4, 6).startswith("<svg")
        True
    """
    bias = positional.alibi_bias(n_heads, length)  # (h, L, L)
    causal = np.tri(length, dtype=bool)  # (L, L)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
        shown = np.where(causal, bias[0], np.nan)  # (L, L): the blocked half left blank
        im = a.imshow(shown, cmap="viridis", aspect="auto")
        a.set(title="bias −β₁·(i − j), head 1, causal", xlabel="key j", ylabel="query i")
        fig.colorbar(im, ax=a, fraction=0.046, pad=0.04)
        for head in range(n_heads):
            row = bias[head, -1]  # (L,): the last query
            w = np.exp(row - row.max())
            b.plot(length - 1 - np.arange(length), w / w.sum(), label=f"head {head + 1}")
        b.set(
            title="weights of the last query, equal content",
            xlabel="distance i − j",
            ylabel="weight",
        )
        b.legend(frameon=False, fontsize=7, ncol=2)
        fig.tight_layout()
        return svg(fig)


@functools.cache  # a pure function of its arguments: drawn once per process
def reach_figure(length: int = 16, window: int = 3, layers: tuple[int, ...] = (1, 2, 3)) -> str:
    """Who can influence whom after 1, 2, 3 layers of sliding-window attention (boolean
    matrix powers, computed exactly).

    Examples:
        >>> from attention_math.plot.heatmap import reach_figure
        >>> reach_figure(6, 2, (1, 2)).startswith("<svg")
        True
    """
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, axes = plt.subplots(1, len(layers), figsize=(3.1 * len(layers), 3.2))
        for ax, n in zip(np.atleast_1d(axes), layers, strict=True):
            r = np.array(sliding_window.reach(length, window, n), dtype=float)  # (L, L)
            ax.imshow(r, cmap="Blues", vmin=0, vmax=1.3)
            ax.set(
                title=f"{n} layer{'s' if n > 1 else ''}: last row {int(r[-1].sum())} tokens",
                xlabel="key (source) j",
                ylabel="query i",
            )
        fig.suptitle(f"reach of a sliding window w = {window}")
        fig.tight_layout()
        return svg(fig)
