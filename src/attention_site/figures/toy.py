"""Figures and the live widget of the page "A model that learned" (``attention_math.toy``).

Matplotlib figures (SVG text, via ``attention_site.figures.style``) for the loss curve, the model's
shapes and the circuits; hand-written SVG for the heads' patterns, the same markup the page's
script draws when the reader changes the tokens (``docs/javascripts/live/toy.js``), so the
first paint and every redraw look alike.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyBboxPatch
from numpy.typing import ArrayLike, NDArray

from attention_math.toy.export import weights_json
from attention_math.toy.model import ToyModel
from attention_site.figures.style import fluid, style, svg

__all__ = [
    "WEIGHTS_PATH",
    "circuit_heatmap",
    "head_svg",
    "heads_widget",
    "loss_curve",
    "model_diagram",
    "viridis",
    "weights_file",
    "weights_url",
]

WEIGHTS_PATH = "assets/toy/weights.json"
"""Where the site keeps the trained weights (written by ``hooks/toy_weights.py``)."""


def weights_file(model: ToyModel) -> bytes:
    """The weights file's bytes: ``attention_math.toy.export.weights_json``, compact JSON.

    Examples:
        >>> import json
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> from attention_site.figures.toy import weights_file
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> json.loads(weights_file(m))["config"]["n_ctx"]
        40
    """
    return json.dumps(weights_json(model), separators=(",", ":"), sort_keys=True).encode()


def weights_url(model: ToyModel, page_depth: int = 1) -> str:
    """The weights file's address relative to a page ``page_depth`` folders deep, with a
    ``?v=`` of its content (a browser never keeps stale weights).

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> from attention_site.figures.toy import weights_url
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> weights_url(m).startswith("../assets/toy/weights.json?v=")
        True
    """
    digest = hashlib.sha256(weights_file(model)).hexdigest()[:16]
    return "../" * page_depth + f"{WEIGHTS_PATH}?v={digest}"


# viridis at 0, 1/8, …, 1: the page's script interpolates the same nine anchors
_VIRIDIS = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
]


def viridis(p: float) -> str:
    """The colour of a weight ``p`` in ``[0, 1]`` as ``#rrggbb`` (viridis, linear between
    nine anchors; ``toy.js`` computes the same).

    Examples:
        >>> from attention_site.figures.toy import viridis
        >>> viridis(0.0), viridis(1.0)
        ('#440154', '#fde725')
    """
    x = min(max(float(p), 0.0), 1.0) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    t = x - i
    rgb = (round(a + (b - a) * t) for a, b in zip(_VIRIDIS[i], _VIRIDIS[i + 1], strict=True))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _pattern_json(pattern: NDArray[np.floating]) -> str:
    """The rows as JSON, every float written in full (``repr``: it reads back exactly)."""
    return json.dumps([[float(p) for p in row] for row in pattern], separators=(",", ":"))


def head_svg(pattern: ArrayLike, layer: int, head: int, *, role: str = "") -> str:
    """One head's pattern as an SVG grid: row = query (top to bottom), column = key.

    The ``<figure>`` carries ``data-layer``, ``data-head`` (from 0, as in
    ``attention_patterns``) and the pattern as JSON in ``data-pattern``.

    Examples:
        >>> import numpy as np
        >>> from attention_site.figures.toy import head_svg
        >>> text = head_svg(np.tril(np.ones((3, 3))) / [[1], [2], [3]], 0, 1)
        >>> 'data-layer="0"' in text and 'data-head="1"' in text and "<rect" in text
        True
    """
    p = np.asarray(pattern, dtype=float)
    n = p.shape[0]
    cell = 6
    side = n * cell
    title = f"Layer {layer + 1}, head {head + 1}" + (f" ({role})" if role else "")
    cells = "".join(
        f'<rect x="{j * cell}" y="{i * cell}" width="{cell}" height="{cell}" '
        f'fill="{viridis(p[i, j])}"/>'
        for i in range(n)
        for j in range(i + 1)  # the causal mask: keys after the query stay blank
    )
    label = html.escape(f"{title}: attention weights, query rows against key columns")
    return (
        f'<figure class="toy-head" data-layer="{layer}" data-head="{head}" '
        f"data-pattern='{_pattern_json(p)}'>"
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="-1 -1 {side + 2} {side + 2}" '
        'shape-rendering="crispEdges" '
        f'role="img" aria-label="{label}">'
        f'<rect x="-1" y="-1" width="{side + 2}" height="{side + 2}" fill="none" '
        f'stroke="currentColor" stroke-width="0.5"/>{cells}</svg>'
        f"<figcaption>{html.escape(title)}"
        ' <button type="submit" class="toy-csv">CSV</button>'
        ' <button type="submit" class="toy-svg">SVG</button></figcaption></figure>'
    )


def heads_widget(
    model: ToyModel,
    tokens: Sequence[int],
    roles: dict[tuple[int, int], str],
    weights_url: str,
) -> str:
    """The live form and every head's pattern on ``tokens``, drawn at build time.

    The reader edits the tokens (or draws a random repeated sequence from a seed) and
    ``toy.js`` redraws every head from the weights at ``weights_url``, in the page.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> from attention_site.figures.toy import heads_widget
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> text = heads_widget(m, [1, 2, 1, 2], {(0, 0): "previous token"}, "w.json")
        >>> "data-toy-tokens" in text and text.count('class="toy-head"') == 4
        True
    """
    c = model.config
    pat = model.attention_patterns(list(tokens))  # (layers, heads, L, L)
    text = " ".join(str(t) for t in tokens)
    heads = "".join(
        head_svg(pat[layer, head], layer, head, role=roles.get((layer, head), ""))
        for layer in range(c.n_layers)
        for head in range(c.n_heads)
    )
    return (
        f'<form class="toy-live" data-weights="{html.escape(weights_url)}" '
        f'data-vocab="{c.vocab}" data-n-ctx="{c.n_ctx}">'
        f'<label for="toy-tokens">Tokens (integers 0 … {c.vocab - 1}, at most {c.n_ctx}, '
        "separated by spaces)</label>"
        f'<input id="toy-tokens" type="text" inputmode="numeric" spellcheck="false" '
        f'value="{text}" data-toy-tokens="{text}">'
        '<div class="toy-live__buttons">'
        '<button type="submit" class="md-button md-button--primary">Redraw</button>'
        '<label for="toy-seed">seed</label>'
        '<input id="toy-seed" type="number" min="0" value="1" class="toy-live__seed">'
        '<button type="submit" class="md-button toy-random">Random repeated sequence</button>'
        "</div>"
        '<span class="exercise-check__progress" aria-live="polite"></span>'
        '<span class="exercise-check__verdict" role="status" aria-live="polite"></span>'
        f'<div class="toy-heads" data-toy-heads data-state="ready" '
        f'style="--toy-cols: {c.n_heads}">{heads}</div>'
        "</form>"
    )


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
