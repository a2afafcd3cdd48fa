"""The SSD matrix ``𝐋 ∘ C Bᵀ`` as blocks: what the chunked algorithm computes where."""

from __future__ import annotations

import functools

import numpy as np

from attention_math import ssd
from attention_math.display import Svg
from attention_math.plot.style import fluid, style, svg

__all__ = ["ssd_blocks_figure"]


@functools.cache  # a pure function of its arguments: drawn once per process
def ssd_blocks_figure(length: int = 12, chunk_size: int = 4, n: int = 2, seed: int = 0) -> Svg:
    """``|𝐋 ∘ C Bᵀ|`` for random decays and projections, cut into chunks, each block named by
    how the chunked algorithm computes it (diagonal: attention; below: through the states,
    rank ≤ N, checked here; above: zero).

    Examples:
        >>> from attention_math.plot.semiseparable import ssd_blocks_figure
        >>> str(ssd_blocks_figure(6, 3, 1)).startswith("<svg")
        True
    """
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.6, 1.0, length)  # (L,)
    b, c = rng.standard_normal((2, length, n))  # (L, N) each
    mask = ssd.semiseparable_mask(a)  # (L, L)
    matrix = np.abs(mask * (c @ b.T))  # (L, L)
    starts = range(0, length, chunk_size)
    for s in starts:  # the blocks below the diagonal ones have rank ≤ N: the states carry them
        for s2 in range(0, s, chunk_size):
            block = (mask * (c @ b.T))[s : s + chunk_size, s2 : s2 + chunk_size]
            if np.linalg.matrix_rank(block) > n:
                raise ArithmeticError(f"block ({s}, {s2}) has rank above N = {n}")
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(5.2, 4.9))
        ax.imshow(np.where(matrix > 0, matrix, np.nan), cmap="Blues", vmin=0)
        ax.set(
            title=rf"$|\mathbf{{L}} \circ C B^\top|$, L = {length}, N = {n}, Q = {chunk_size}",
            xlabel="key (source) j",
            ylabel="query (output) i",
        )
        ticks = list(range(0, length, chunk_size))
        ax.set_xticks(ticks, [str(s + 1) for s in ticks])
        ax.set_yticks(ticks, [str(s + 1) for s in ticks])
        for s in ticks[1:]:
            ax.axhline(s - 0.5, color="black", lw=1.2)
            ax.axvline(s - 0.5, color="black", lw=1.2)
        half = (chunk_size - 1) / 2
        for s in ticks:
            for s2 in ticks:
                label = "attention" if s == s2 else (f"rank ≤ {n}:\nstates" if s > s2 else "0")
                colour = "#b3001b" if s == s2 else "black"
                box = {"facecolor": "white", "alpha": 0.85, "edgecolor": "none"}
                ax.text(s2 + half, s + half, label, ha="center", va="center", fontsize=10,
                        color=colour, fontweight="bold", bbox=box)  # fmt: skip
        fig.tight_layout()
        return fluid(svg(fig), "30rem")
