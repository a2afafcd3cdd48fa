"""The causal online softmax as a grid of score tiles: computed, masked in part, skipped."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from attention_site.figures.style import fluid, style, svg

__all__ = ["tile_grid"]

_GREY = "#808080"  # the placeholder svg() turns into the page's text colour


def tile_grid(length: int = 8, block_size: int = 2, d: int = 4, seed: int = 0) -> str:
    """The causal online softmax as a grid of score tiles, queries down, keys across.

    Tiles wholly below the diagonal are computed in full, diagonal tiles are computed and
    masked in part, tiles wholly above it are skipped (never computed). The last query's
    running state ``(m, λ)`` after each tile of its row is written in that tile, from
    [`numeric_trace`][attention_math.derivations.online_softmax.numeric_trace] on seeded inputs; its
    final ``o / λ`` is checked against [`attention`][attention_math.numeric.attention] (a
    disagreement raises ``AssertionError``, also under ``python -O``).

    Examples:
        >>> from attention_site.figures.tiles import tile_grid
        >>> text = tile_grid()
        >>> "<svg" in text and "skipped" in text
        True
    """
    from matplotlib.patches import Rectangle

    from attention_math import numeric
    from attention_math.derivations.online_softmax import numeric_trace

    if length % block_size:
        raise ValueError(f"length {length} must be a multiple of block_size {block_size}")
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((length, d)) for _ in range(3))  # each L × d
    s = q @ k.T / np.sqrt(d)  # L × L scores
    last = length - 1  # the last query attends to every key: its row visits every tile
    trace = numeric_trace(s[last], v, block_size)  # one (m, λ, o) per key tile
    _, ell_end, o_end = trace[-1]
    want = numeric.attention(q, k, v, mask=numeric.causal_mask(length))[last]  # d
    if not np.allclose(o_end / ell_end, want, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"online softmax o/λ = {o_end / ell_end} ≠ attention {want}")
    n = length // block_size
    colours = {"computed": "#c6dbef", "masked in part": "#fdd0a2", "skipped": "none"}
    with style():
        fig, ax = plt.subplots(figsize=(5.4, 5.0))
        for bi in range(n):
            for bj in range(n):
                kind = "skipped" if bj > bi else "masked in part" if bj == bi else "computed"
                ax.add_patch(
                    Rectangle(
                        (bj, bi),
                        1,
                        1,
                        facecolor=colours[kind],
                        edgecolor=_GREY,
                        hatch="///" if kind == "skipped" else None,
                        lw=0.8,
                    )
                )
                if kind != "computed":
                    ax.text(
                        bj + 0.5,
                        bi + 0.5 if kind == "skipped" else bi + 0.2,
                        kind,
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="black",
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0}
                        if kind == "skipped"
                        else None,
                    )
        for bj, (m, ell, _) in enumerate(trace):  # the last query's state after each tile
            ax.text(
                bj + 0.5,
                n - 0.5,
                f"m = {m:.2f}\nλ = {ell:.2f}".replace("-", "−"),
                ha="center",
                va="center",
                fontsize=8,
                color="black",
            )
        ax.annotate(
            "",
            xy=(n - 0.05, n + 0.25),
            xytext=(0.05, n + 0.25),
            arrowprops={"arrowstyle": "-|>", "color": _GREY},
            annotation_clip=False,
        )
        ax.text(
            n / 2,
            n + 0.55,
            f"query {length}'s state (m, λ, o) after each tile, carried left to right;\n"
            "its final o / λ is the attention output (checked)",
            ha="center",
            va="top",
            fontsize=8,
        )
        ax.set_xlim(0, n)
        ax.set_ylim(n + 1.0, 0)
        ax.set_xticks(
            [j + 0.5 for j in range(n)],
            [f"keys {j * block_size + 1}–{(j + 1) * block_size}" for j in range(n)],
            fontsize=7,
        )
        ax.set_yticks(
            [i + 0.5 for i in range(n)],
            [f"queries {i * block_size + 1}–{(i + 1) * block_size}" for i in range(n)],
            fontsize=7,
        )
        ax.xaxis.tick_top()
        ax.xaxis.set_label_position("top")
        ax.set_xlabel("key tile", fontsize=8)
        ax.set_ylabel("query tile", fontsize=8)
        ax.set_aspect("equal")
        for side in ("top", "right", "bottom", "left"):
            ax.spines[side].set_visible(False)
        ax.set_title(
            f"causal tiles of {block_size} × {block_size} scores: "
            "computed, masked in part, skipped",
            fontsize=9,
        )
        fig.tight_layout()
        return fluid(svg(fig), max_width="30rem")
