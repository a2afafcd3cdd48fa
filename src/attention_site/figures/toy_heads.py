"""The live heads of the page "A model that learned": each head's pattern as hand-written SVG,
and the weights file from which the page's script redraws them (``docs/javascripts/live/toy.js``
draws the same markup when the reader changes the tokens, so the first paint and every redraw
look alike).

No matplotlib here: ``attention_site.prepare`` writes the weights file from this
module, and a restarted ``mkdocs serve`` that runs no figure then never imports matplotlib.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math.toy.export import weights_json
from attention_math.toy.model import ToyModel

__all__ = ["WEIGHTS_PATH", "head_svg", "heads_widget", "viridis", "weights_file", "weights_url"]

WEIGHTS_PATH = "assets/toy/weights.json"
"""Where the site keeps the trained weights (written by ``attention_site.prepare``)."""


def weights_file(model: ToyModel) -> bytes:
    """The weights file's bytes: ``attention_math.toy.export.weights_json``, compact JSON.

    Examples:
        >>> import json
        >>> import numpy as np
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> from attention_site.figures.toy_heads import weights_file
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
        >>> from attention_site.figures.toy_heads import weights_url
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
        >>> from attention_site.figures.toy_heads import viridis
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
        >>> from attention_site.figures.toy_heads import head_svg
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
        >>> from attention_site.figures.toy_heads import heads_widget
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
