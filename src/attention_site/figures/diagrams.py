"""Diagrams: shapes, text and arrows rather than data on axes. The toy model as boxes with the
shape each step makes, and the causal online softmax as a grid of score tiles (computed, masked
in part, skipped).

Matrices drawn with their numbers and joined by arrows (the forward pass, the heads, the
backward graph) are in [`panels`][attention_math.plot.panels].
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyBboxPatch

from attention_math.plot.style import fluid, style, svg
from attention_math.toy.model import ToyModel

__all__ = ["model_diagram", "tile_grid"]

_GREY = "#808080"  # the placeholder svg() turns into the page's text colour


def model_diagram(model: ToyModel) -> str:
    """The model as boxes, each with the shape of what it holds or makes.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> from attention_site.figures.diagrams import model_diagram
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> "<svg" in model_diagram(m)
        True
    """
    c = model.config
    d, v, h, dh = c.d_model, c.vocab, c.n_heads, c.d_head
    rows = [
        ("tokens", "L token ids", "(L,)"),
        (
            "embed",
            f"onehot · W_E + W_pos   (W_E {v}×{d}; W_pos {c.n_ctx}×{d}, fixed)",
            f"(L, {d})",
        ),
        (
            "layer 1",
            f"{h} causal heads (W_Q, W_K, W_V {d}×{h}·{dh}; W_O {h}·{dh}×{d}); x += out",
            f"(L, {d})",
        ),
        (
            "layer 2",
            f"{h} causal heads, reading what layer 1 wrote; x += out",
            f"(L, {d})",
        ),
        ("unembed", f"logits = x · W_U   (W_U {d}×{v})", f"(L, {v})"),
    ]
    with style():
        fig, ax = plt.subplots(figsize=(7.6, 3.6))
        ax.set_axis_off()
        n = len(rows)
        for i, (name, what, shape) in enumerate(rows):
            y = n - 1 - i
            box = FancyBboxPatch(
                (0, y * 1.2), 10, 0.8, boxstyle="round,pad=0.05", fc="none", ec="#808080"
            )
            ax.add_patch(box)
            ax.text(0.25, y * 1.2 + 0.4, name, va="center", fontweight="bold")
            ax.text(1.9, y * 1.2 + 0.4, what, va="center", fontsize=8.5)
            ax.text(9.75, y * 1.2 + 0.4, shape, va="center", ha="right", fontsize=9)
            if i + 1 < n:
                ax.annotate(
                    "",
                    xy=(5, (y - 1) * 1.2 + 0.85),
                    xytext=(5, y * 1.2 - 0.05),
                    arrowprops={"arrowstyle": "->", "color": "#808080"},
                )
        ax.set_xlim(-0.2, 10.2)
        ax.set_ylim(-0.2, n * 1.2)
        # labels for the text alternative; the axes themselves are hidden
        ax.set(xlabel="what each step computes", ylabel="step")
        fig.suptitle("The model, top to bottom, with the shape each step makes")
        return fluid(svg(fig), max_width="42rem")


@functools.cache  # a pure function of its arguments: drawn once per process
def tile_grid(length: int = 8, block_size: int = 2, d: int = 4, seed: int = 0) -> str:
    """The causal online softmax as a grid of score tiles, queries down, keys across.

    Tiles wholly below the diagonal are computed in full, diagonal tiles are computed and
    masked in part, tiles wholly above it are skipped (never computed). The last query's
    running state ``(m, λ)`` after each tile of its row is written in that tile, from
    [`numeric_trace`][attention_math.derivations.online_softmax.numeric_trace] on seeded inputs; its
    final ``o / λ`` is checked against [`attention`][attention_math.numeric.attention] (a
    disagreement raises ``AssertionError``, also under ``python -O``).

    Examples:
        >>> from attention_site.figures.diagrams import tile_grid
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
