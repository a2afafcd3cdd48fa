"""The lesson's figures: pictures drawn from the package's own results at build time.

Each function returns inline SVG text ([`svg`][attention_math.plots.svg]): deterministic,
labelled, drawn in the page's text colour.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import ConnectionPatch
from numpy.typing import ArrayLike, NDArray

from attention_math.plots import fluid, style, svg
from attention_math.render import shows_exactly

__all__ = [
    "pipeline",
    "running_hull",
    "running_pipeline",
    "score_spread",
    "softmax_pair",
    "tile_grid",
    "value_hull",
]

XY = tuple[float, float]
_GREY = "#808080"  # the placeholder svg() turns into the page's text colour


def _two_places(x: float) -> str:
    """``x`` to two decimal places; the zeros dropped only when that is ``x`` exactly.

    Examples:
        >>> from attention_math.figures import _two_places
        >>> _two_places(2.0), _two_places(0.5), _two_places(0.70004), _two_places(-0.731)
        ('2', '0.5', '0.70', '−0.73')
    """
    text = f"{x:.2f}"
    if shows_exactly(text, x):
        text = text.rstrip("0").rstrip(".")
    return text.replace("-", "−")


def _panel(ax: Axes, a: NDArray[np.float64], title: str, xlabel: str, ylabel: str) -> None:
    """One matrix as a small annotated heatmap; −∞ cells are left blank and marked."""
    shown = np.where(np.isfinite(a), a, np.nan)
    lim = 1.8 * (float(np.nanmax(np.abs(shown))) or 1.0)  # pale colours: the numbers stay legible
    ax.imshow(shown, cmap="coolwarm", vmin=-lim, vmax=lim, aspect="auto")
    for (i, j), val in np.ndenumerate(a):
        text = "−∞" if np.isneginf(val) else _two_places(val)
        ax.text(j, i, text, ha="center", va="center", fontsize=8.5, color="black")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def _arrow(fig: Figure, a: Axes, b: Axes, xy_a: XY, xy_b: XY, bend: float = 0.0) -> None:
    """An arrow from point ``xy_a`` of ``a`` to ``xy_b`` of ``b`` (axes fractions)."""
    fig.add_artist(
        ConnectionPatch(
            xyA=xy_a,
            coordsA="axes fraction",
            axesA=a,
            xyB=xy_b,
            coordsB="axes fraction",
            axesB=b,
            arrowstyle="-|>",
            connectionstyle=f"arc3,rad={bend}",
            color=_GREY,
            lw=1.2,
        )
    )


def pipeline(
    x: ArrayLike,
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    raw: ArrayLike,
    s: ArrayLike,
    p: ArrayLike,
    o: ArrayLike,
    *,
    narrow: bool = False,
) -> str:
    """The forward pass as a picture: every matrix, with its shape, and what feeds what.

    Top row: the input ``x`` and its three projections; bottom row: the scaled scores
    ``raw``, the masked scores ``s``, the weights ``p`` and the output ``o``. Arrows follow
    the data: ``X`` feeds ``Q, K, V``; ``Q`` and ``K`` the scores; ``P`` and ``V`` the output.
    ``narrow=True`` stacks the same panels three to a row at most, top to bottom, for a phone
    (the wide figure shrunk to a phone has labels a few pixels tall).

    Examples:
        >>> import numpy as np
        >>> from attention_math import numeric
        >>> from attention_math.figures import pipeline
        >>> x = np.eye(2)
        >>> o, p = numeric.attention(x, x, x, return_weights=True)
        >>> text = pipeline(x, x, x, x, x / np.sqrt(2), x / np.sqrt(2), p, o)
        >>> text.startswith("<svg") and "2×2" in text
        True
    """
    names = ("X", "Q", "K", "V", "raw", "S", "P", "O")
    mats = [np.asarray(m, dtype=np.float64) for m in (x, q, k, v, raw, s, p, o)]
    for name, m in zip(names, mats, strict=True):
        if m.ndim != 2:
            raise ValueError(f"{name} must be a matrix, got shape {m.shape}")
    titles = (
        "input $X$",
        "queries $Q = XW_Q$",
        "keys $K = XW_K$",
        "values $V = XW_V$",
        "scores $S = QK^T$ / √$d_k$",
        "masked $S + M$",
        "weights $P$ = softmax($S + M$)",
        "output $O = PV$",
    )
    labels = [("feature", "token")] * 4 + [("key", "query")] * 3 + [("feature", "query")]
    # (column, row) of each panel: X feeds Q, K, V (column 1); Q and K the scores, which
    # run right to S and P; P and V (the bottom row) meet in O.
    where = ((0, 1), (1, 0), (1, 1), (1, 2), (2, 0.5), (3, 0.5), (4, 0.5), (4, 2))
    if narrow:
        return _pipeline_narrow(mats, titles, labels)
    with style():
        fig = plt.figure(figsize=(10.0, 6.0))
        flat = []
        for (col, row), title, (xl, yl), m in zip(where, titles, labels, mats, strict=True):
            ax = fig.add_axes((col / 5 + 0.03, 1 - (row + 1) / 3 + 0.07, 0.13, 0.19))
            _panel(ax, m, f"{title}\n{m.shape[0]}×{m.shape[1]}", xl, yl)
            flat.append(ax)
        right, left, top, bottom = (1.03, 0.5), (-0.28, 0.5), (0.5, 1.4), (0.5, -0.3)
        for n in (1, 2, 3):
            _arrow(fig, flat[0], flat[n], right, left)  # X → Q, K, V
        _arrow(fig, flat[1], flat[4], right, (-0.28, 0.8))  # Q → scores
        _arrow(fig, flat[2], flat[4], right, (-0.28, 0.2))  # K → scores
        for n in (4, 5):
            _arrow(fig, flat[n], flat[n + 1], right, left)  # scores → S → P
        _arrow(fig, flat[6], flat[7], bottom, top)  # P → O
        _arrow(fig, flat[3], flat[7], right, left)  # V → O
        return svg(fig)


def _pipeline_narrow(
    mats: list[NDArray[np.float64]], titles: tuple[str, ...], labels: list[tuple[str, str]]
) -> str:
    """`pipeline` three panels to a row at most: X / Q, K, V / scores, S / P, O."""
    # (column, row) of X, Q, K, V, raw, S, P, O in thirds of the width; the data run down
    where = ((1, 0), (0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (1, 3), (2, 3))
    rows = 4
    with style():
        fig = plt.figure(figsize=(3.9, 8.8))
        flat = []
        # the two long titles on two lines: a third of a phone's width is narrow
        titles = tuple(
            t.replace(" = softmax", " =\nsoftmax").replace("s $S", "s\n$S") for t in titles
        )
        for (col, row), title, (xl, yl), m in zip(where, titles, labels, mats, strict=True):
            ax = fig.add_axes((col / 3 + 0.06, 1 - (row + 1) / rows + 0.05, 0.26, 0.105))
            _panel(ax, m, f"{title}\n{m.shape[0]}×{m.shape[1]}", xl, yl)
            flat.append(ax)
        right, left, top, bottom = (1.03, 0.5), (-0.2, 0.5), (0.5, 1.5), (0.5, -0.28)
        for n in (1, 2, 3):
            _arrow(fig, flat[0], flat[n], bottom, top)  # X → Q, K, V
        _arrow(fig, flat[1], flat[4], bottom, (0.5, 1.9))  # Q → scores, above its title
        _arrow(fig, flat[2], flat[4], bottom, (0.85, 1.9))  # K → scores
        _arrow(fig, flat[4], flat[5], right, left)  # scores → S
        _arrow(fig, flat[5], flat[6], bottom, (0.5, 1.9))  # S → P
        _arrow(fig, flat[6], flat[7], right, left)  # P → O
        _arrow(fig, flat[3], flat[7], bottom, top)  # V → O, straight down
        return svg(fig)


def running_pipeline(causal: bool = True, *, narrow: bool = False) -> str:
    """`pipeline` for the running example (`attention_math.running`), causal by
    default, every matrix cross-checked against the exact result first; as wide as its box.

    Examples:
        >>> from attention_math.figures import running_pipeline
        >>> "3×4" in running_pipeline() and "3×4" in running_pipeline(narrow=True)
        True
    """
    from attention_math.running import numeric_forward

    f = numeric_forward(causal)
    mats = (f[n] for n in ("X", "Q", "K", "V", "raw", "S", "P", "O"))
    return fluid(pipeline(*mats, narrow=narrow))


def _hull(points: NDArray[np.float64]) -> NDArray[np.float64]:
    """The vertices of the convex hull of 2-D ``points``, counter-clockwise (monotone chain)."""
    pts = sorted({(float(x), float(y)) for x, y in points})
    if len(pts) < 3:
        return np.array(pts)

    def half(seq: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        for pt in seq:
            while (
                len(out) >= 2
                and (
                    (out[-1][0] - out[-2][0]) * (pt[1] - out[-2][1])
                    - (out[-1][1] - out[-2][1]) * (pt[0] - out[-2][0])
                )
                <= 0
            ):
                out.pop()
            out.append(pt)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def value_hull(v: ArrayLike, outputs: dict[str, ArrayLike], *, title: str) -> str:
    """Value vectors (``d_v = 2``), their convex hull, and output rows drawn inside it.

    ``outputs`` maps a legend label to an ``L_q × 2`` array of output rows.

    Examples:
        >>> import numpy as np
        >>> from attention_math.figures import value_hull
        >>> v = np.array([[0.0, 0], [1, 0], [0, 1]])
        >>> "<svg" in value_hull(v, {"outputs": [[0.2, 0.2]]}, title="t")
        True
    """
    vals = np.asarray(v, dtype=np.float64)
    if vals.ndim != 2 or vals.shape[1] != 2:
        raise ValueError(f"v must be L_k × 2 (points in the plane), got shape {vals.shape}")
    with style():
        fig, ax = plt.subplots(figsize=(4.6, 4.0))
        hull = _hull(vals)
        ax.fill(
            hull[:, 0], hull[:, 1], color="#4c72b0", alpha=0.15, label="convex hull of the values"
        )
        ax.scatter(vals[:, 0], vals[:, 1], s=40, color="#4c72b0", zorder=3, label="values $v_j$")
        for j, (x, y) in enumerate(vals, start=1):
            ax.annotate(f"$v_{j}$", (x, y), textcoords="offset points", xytext=(6, 4))
        for (label, rows), marker in zip(outputs.items(), ("o", "s", "^", "D"), strict=False):
            o = np.asarray(rows, dtype=np.float64)
            if o.ndim != 2 or o.shape[1] != 2:
                raise ValueError(f"outputs[{label!r}] must be L_q × 2, got shape {o.shape}")
            ax.scatter(o[:, 0], o[:, 1], s=36, marker=marker, facecolors="none",
                       edgecolors="#dd8452", linewidths=1.5, zorder=4, label=label)  # fmt: skip
            for i, (x, y) in enumerate(o, start=1):
                ax.annotate(f"$o_{i}$", (x, y), textcoords="offset points", xytext=(5, -11),
                            fontsize=8)  # fmt: skip
        pad = 0.25 * float(np.ptp(vals)) or 1.0
        ax.set_xlim(vals[:, 0].min() - pad, vals[:, 0].max() + pad)
        ax.set_ylim(vals[:, 1].min() - pad, vals[:, 1].max() + pad)
        ax.set_aspect("equal")
        ax.set(title=title, xlabel="first coordinate", ylabel="second coordinate")
        ax.legend(
            fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, framealpha=0.0
        )
        return fluid(svg(fig), max_width="26rem")


def running_hull() -> str:
    """`value_hull` for the running example, without and with the causal mask.

    Examples:
        >>> from attention_math.figures import running_hull
        >>> running_hull().startswith("<svg")
        True
    """
    from attention_math.running import numeric_forward

    plain, causal = numeric_forward(), numeric_forward(causal=True)
    return value_hull(
        plain["V"],
        {"outputs, no mask": plain["O"], "outputs, causal mask": causal["O"]},
        title="every output is a weighted average of the values",
    )


def softmax_pair(mark: float) -> str:
    """The softmax of two scores ``(a, 0)`` against ``a``: both weights, ``mark`` marked.

    Examples:
        >>> from attention_math.figures import softmax_pair
        >>> "<svg" in softmax_pair(0.5)
        True
    """
    from attention_math import numeric

    a = np.linspace(-6.0, 6.0, 241)  # the first score; the second is 0
    p = numeric.softmax(np.stack([a, np.zeros_like(a)], axis=-1))  # 241 × 2
    at = numeric.softmax(np.array([mark, 0.0]))  # 2
    with style():
        fig, ax = plt.subplots(figsize=(5.6, 3.4))
        ax.plot(a, p[:, 0], color="#4c72b0", label="weight of score $a$: $\\sigma(a)$")
        ax.plot(a, p[:, 1], color="#dd8452", ls="--", label="weight of score 0: $1 - \\sigma(a)$")
        ax.axhline(0.5, color=_GREY, lw=0.6, ls=":")
        ax.scatter([mark, mark], at, color=_GREY, zorder=3)
        for y in at:
            ax.annotate(
                f"{y:.4f}", (mark, y), textcoords="offset points", xytext=(6, -3), fontsize=8
            )
        ax.set(title="softmax of the two scores $(a, 0)$", xlabel="score $a$", ylabel="weight")
        ax.legend(fontsize=8, framealpha=0.0)
        return fluid(svg(fig), max_width="32rem")


def score_spread(widths: tuple[int, ...] = (4, 256), n: int = 20_000, seed: int = 0) -> str:
    """Histograms of ``q·k`` for random unit-variance ``q, k`` of each width ``d_k``,
    unscaled (left) and divided by ``√d_k`` (right).

    Examples:
        >>> from attention_math.figures import score_spread
        >>> "<svg" in score_spread((4, 16), n=200)
        True
    """
    rng = np.random.default_rng(seed)
    with style():
        fig, (raw, scaled) = plt.subplots(1, 2, figsize=(8.0, 3.2), sharey=True)
        for d_k, color in zip(widths, ("#4c72b0", "#dd8452", "#55a868"), strict=False):
            # float32 as a model's activations; half the time of float64 to draw
            q = rng.standard_normal((n, d_k), dtype=np.float32)  # n × d_k
            k = rng.standard_normal((n, d_k), dtype=np.float32)  # n × d_k
            dots = np.einsum("nd,nd->n", q, k)  # n
            kw = {"bins": 60, "histtype": "step", "density": True, "color": color, "lw": 1.4}
            # three digits, zeros kept: a sample must not read as the exact value
            raw.hist(dots, label=f"$d_k = {d_k}$, std {dots.std():#.3g}", **kw)
            s = dots / np.sqrt(d_k)  # n
            scaled.hist(s, label=f"$d_k = {d_k}$, std {s.std():#.3g}", **kw)
        raw.set(title="scores $q \\cdot k$", xlabel="score", ylabel="density")
        scaled.set(title="scores $q \\cdot k$ / √$d_k$", xlabel="score", ylabel="density")
        for ax in (raw, scaled):
            ax.legend(fontsize=8, framealpha=0.0)
        fig.tight_layout()
        return fluid(svg(fig))


def tile_grid(length: int = 8, block: int = 2, d: int = 4, seed: int = 0) -> str:
    """The causal online softmax as a grid of score tiles, queries down, keys across.

    Tiles wholly below the diagonal are computed in full, diagonal tiles are computed and
    masked in part, tiles wholly above it are skipped (never computed). The last query's
    running state ``(m, λ)`` after each tile of its row is written in that tile, from
    [`numeric_trace`][attention_math.derivations.online_softmax.numeric_trace] on seeded inputs; its
    final ``o / λ`` is checked against [`attention`][attention_math.numeric.attention] (a
    disagreement raises ``AssertionError``, also under ``python -O``).

    Examples:
        >>> from attention_math.figures import tile_grid
        >>> text = tile_grid()
        >>> "<svg" in text and "skipped" in text
        True
    """
    from matplotlib.patches import Rectangle

    from attention_math import numeric
    from attention_math.derivations.online_softmax import numeric_trace

    if length % block:
        raise ValueError(f"length {length} must be a multiple of block {block}")
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((length, d)) for _ in range(3))  # each L × d
    s = q @ k.T / np.sqrt(d)  # L × L scores
    last = length - 1  # the last query attends to every key: its row visits every tile
    trace = numeric_trace(s[last], v, block)  # one (m, λ, o) per key tile
    _, ell_end, o_end = trace[-1]
    want = numeric.attention(q, k, v, mask=numeric.causal_mask(length))[last]  # d
    if not np.allclose(o_end / ell_end, want, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"online softmax o/λ = {o_end / ell_end} ≠ attention {want}")
    n = length // block
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
            [f"keys {j * block + 1}–{(j + 1) * block}" for j in range(n)],
            fontsize=7,
        )
        ax.set_yticks(
            [i + 0.5 for i in range(n)],
            [f"queries {i * block + 1}–{(i + 1) * block}" for i in range(n)],
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
            f"causal tiles of {block} × {block} scores: computed, masked in part, skipped",
            fontsize=9,
        )
        fig.tight_layout()
        return fluid(svg(fig), max_width="30rem")
