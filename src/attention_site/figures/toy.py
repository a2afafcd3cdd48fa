"""Figures of the page "A model that learned" (``attention_math.toy``), drawn by matplotlib.

The loss curve, the model's shapes and the circuits, as SVG text (``attention_site.figures.style``).
The live heads, which the reader redraws in the page, are hand-written SVG:
``attention_site.figures.toy_heads``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyBboxPatch
from numpy.typing import ArrayLike

from attention_math.toy.model import ToyModel
from attention_site.figures.style import fluid, style, svg

__all__ = ["circuit_heatmap", "loss_curve", "model_diagram"]


def loss_curve(model: ToyModel, window: int = 50) -> str:
    """The training loss, step by step (a moving mean over ``window`` steps), on the copied
    tokens and on the others, with ``log vocab`` (a uniform guess) for reference.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy import Config, Hyper
        >>> from attention_math.toy.train import train
        >>> from attention_site.figures.toy import loss_curve
        >>> m = train(Config(vocab=8, d_model=8, n_ctx=12), Hyper(steps=60, batch=2, length=12))
        >>> loss_curve(m, window=10).startswith("<svg")
        True
    """
    h = model.history
    kernel = np.ones(window) / window
    with style():
        fig, ax = plt.subplots(figsize=(7, 3.4))
        for key, label, colour in (
            ("loss_other", "fresh random tokens", "#d08770"),
            ("loss_repeat", "tokens inside the copy", "#5e81ac"),
        ):
            smooth = np.convolve(h[key], kernel, mode="valid")  # (steps − window + 1,)
            ax.plot(np.arange(window, len(h[key]) + 1), smooth, color=colour, label=label)
        ax.axhline(np.log(model.config.vocab), color="#808080", lw=0.8, ls=":")
        ax.text(0, np.log(model.config.vocab) + 0.05, "log vocab (a uniform guess)", fontsize=8)
        ax.set(
            title=f"Training loss (mean over {window} steps)",
            xlabel="Adam step",
            ylabel="cross-entropy (nats)",
        )
        ax.set_ylim(bottom=0)
        ax.legend(frameon=False, loc="lower left")
        return fluid(svg(fig), max_width="40rem")


def model_diagram(model: ToyModel) -> str:
    """The model as boxes, each with the shape of what it holds or makes.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> from attention_site.figures.toy import model_diagram
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
        >>> from attention_site.figures.toy import circuit_heatmap
        >>> circuit_heatmap(np.eye(4), title="t", xlabel="x", ylabel="y").startswith("<svg")
        True
    """
    a = np.asarray(matrix, dtype=float)
    with style():
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
