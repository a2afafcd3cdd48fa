"""Matrices as panels joined by arrows: the forward pass, the heads through ``W_O``, the
backward graph.

Each function draws the package's own results at build time and returns inline SVG text
([`svg`][attention_math.plot.style.svg]), after checking what it draws against the
function the page is about ([`attention`][attention_math.numeric.attention],
[`multi_head_attention`][attention_math.multihead.multi_head_attention],
[`attention_backward`][attention_math.backward.attention_backward]). A disagreement raises
``AssertionError`` (an explicit ``raise``: it also holds under ``python -O``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math.display import shows_exactly
from attention_math.plot.style import fluid, style, svg

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "HEADS_W_O",
    "backward_graph",
    "heads_through_w_o",
    "identity_backward_graph",
    "pipeline",
    "running_heads",
    "running_pipeline",
]

XY = tuple[float, float]
_GREY = "#808080"  # the placeholder svg() turns into the page's text colour


def _two_places(x: float) -> str:
    """``x`` to two decimal places; the zeros dropped only when that is ``x`` exactly.

    Examples:
        >>> from attention_math.plot.panels import _two_places
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
    from matplotlib.patches import ConnectionPatch

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
        >>> from attention_math.plot.panels import pipeline
        >>> x = np.eye(2)
        >>> o, p = numeric.attention(x, x, x), numeric.attention_weights(x, x, x)
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
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

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
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

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


@functools.cache  # a pure function of its arguments: drawn once per process
def running_pipeline(is_causal: bool = True, *, narrow: bool = False) -> str:
    """`pipeline` for the running example (`attention_math.running`), causal by
    default, every matrix cross-checked against the exact result first; as wide as its box.

    Examples:
        >>> from attention_math.plot.panels import running_pipeline
        >>> "3×4" in running_pipeline() and "3×4" in running_pipeline(narrow=True)
        True
    """
    from attention_math.running import numeric_forward

    f = numeric_forward(is_causal)
    mats = (f[n] for n in ("X", "Q", "K", "V", "raw", "S", "P", "O"))
    return fluid(pipeline(*mats, narrow=narrow))


HEADS_W_O = ((1, 1), (1, -1))
"""The output projection of the two-head example (``h·d_v × d_out`` = 2 × 2): the output's first
column is head 1 + head 2, its second head 1 − head 2."""

Floats = NDArray[np.float64]

_DS = "$dS = P \\circ$\n$(dP - \\mathrm{rowsum}(dP \\circ P))$"  # on two lines: it is wide


def _check(name: str, drawn: Floats, want: Any) -> None:
    """Raise AssertionError unless the drawn matrix equals the package's result."""
    if not np.allclose(drawn, want, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"the figure's {name} {drawn.tolist()} ≠ the package's {want}")


def _shape(m: Floats) -> str:
    return f"{m.shape[0]}×{m.shape[1]}"


def heads_through_w_o(
    x: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    *,
    narrow: bool = False,
) -> str:
    """Self-attention with ``n_heads`` heads as a picture: ``X`` is projected once, the
    projections are cut into per-head column blocks ``Q_h, K_h, V_h``, each head attends on
    its own, and the heads' outputs are concatenated and multiplied by ``W_O``.

    Arrows run from ``X`` to every head's ``Q``, ``K`` and ``V``, and from every head into
    ``Concat``. The first half of the heads sit on one side of ``X`` (above it; left of it
    when ``narrow``), the rest on the other. ``narrow=True`` turns the picture a quarter
    turn for a phone: each head a column of panels read downwards, ``X`` between the
    columns, and the recombination along the bottom.

    Every panel is computed here head by head and checked against
    [`multi_head_attention`][attention_math.multihead.multi_head_attention].

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.panels import heads_through_w_o
        >>> x = np.eye(4)[:3]
        >>> text = heads_through_w_o(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2)
        >>> "3×2" in text and "Concat" in text
        True
        >>> phone = heads_through_w_o(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2, narrow=True)
        >>> "3×2" in phone and "Concat" in phone
        True
    """
    from attention_math.multihead import AttentionParams, multi_head_attention
    from attention_math.numeric import attention, attention_weights

    xs, wq, wk, wv, wo = (np.asarray(a, dtype=np.float64) for a in (x, w_q, w_k, w_v, w_o))
    want = multi_head_attention(xs, xs, AttentionParams(wq, wk, wv, wo), n_heads)  # validates
    d_k, d_v = wq.shape[1] // n_heads, wv.shape[1] // n_heads
    per_head = []
    for i in range(n_heads):
        q = xs @ wq[:, i * d_k : (i + 1) * d_k]  # L × d_k: head i's block of columns
        k = xs @ wk[:, i * d_k : (i + 1) * d_k]  # L × d_k
        v = xs @ wv[:, i * d_v : (i + 1) * d_v]  # L × d_v
        o, p = attention(q, k, v), attention_weights(q, k, v)  # L × d_v, L × L
        per_head.append((q, k, v, np.asarray(p, np.float64), np.asarray(o, np.float64)))
    concat = np.hstack([h[4] for h in per_head])  # L × h·d_v
    out = concat @ wo  # L × d_out
    _check("output Concat · W_O", out, want)
    # grid places (step, lane): a head's steps Q, K, P, V, head run along its lane; X and the
    # recombination sit in the middle lane, between the heads before and after it
    before = (n_heads + 1) // 2  # heads on X's first side
    lanes = n_heads + 1
    mid = before  # the middle lane

    def lane(i: int) -> int:
        return i if i < before else i + 1

    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        if narrow:  # steps run down the page, lanes across; the recombination is the last row
            fig = plt.figure(figsize=(1.3 * lanes, 10.5))
            steps = 6

            def box(step: float, ln: float) -> tuple[float, float, float, float]:
                return (ln / lanes + 0.06, 1 - (step + 1) / steps + 0.03, 0.26 * 3 / lanes, 0.08)

        else:
            fig = plt.figure(figsize=(8.4, 2.4 * lanes))
            steps = 7  # X shares the first column with the heads' Q, in the lane between

            def box(step: float, ln: float) -> tuple[float, float, float, float]:
                return (step / steps + 0.03, 1 - (ln + 1) / lanes + 0.3 / lanes, 0.105, 0.4 / lanes)

        def panel(step: float, ln: float, m: Floats, title: str, xl: str, yl: str) -> Axes:
            ax = fig.add_axes(box(step, ln))
            _panel(ax, m, f"{title}\n{_shape(m)}", xl, yl)
            return ax

        # where an arrow leaves a panel and enters the next, in axes fractions
        if narrow:
            after, into = (0.5, -0.25), (0.5, 1.45)  # down the lane
            side = {True: ((-0.3, 0.5), (1.04, 0.5)), False: ((1.04, 0.5), (-0.3, 0.5))}
        else:
            after, into = (1.03, 0.5), (-0.3, 0.5)  # along the lane
            side = {True: ((0.5, 1.55), (0.5, -0.35)), False: ((0.5, -0.35), (0.5, 1.6))}
        if narrow:
            ax_x = panel(1.5, mid, xs, "input $X$", "feature", "token")
        else:
            ax_x = panel(0, mid, xs, "input $X$", "feature", "token")
        heads = []
        for i, (q, k, v, p, o) in enumerate(per_head):
            h, ln = i + 1, lane(i)
            first = i < before  # on X's first side: arrows leave X there
            start = 0
            # head h's matrices carry a superscript (h), as W_Q^(h) and the glossary's P^(i) do
            sup = f"^{{({h})}}"
            a_q = panel(start, ln, q, f"$Q{sup} = X W_Q{sup}$", "feature", "token")
            a_k = panel(start + 1, ln, k, f"$K{sup} = X W_K{sup}$", "feature", "token")
            title = f"$P{sup}$ = softmax\n($Q{sup} K{sup}{{}}^\\top$ / √{d_k})"  # Kᵀ of head h
            a_p = panel(start + 2, ln, p, title, "key", "query")
            a_v = panel(start + 3, ln, v, f"$V{sup} = X W_V{sup}$", "feature", "token")
            a_h = panel(start + 4, ln, o, f"head$_{h} = P{sup} V{sup}$", "feature", "token")
            leave, enter = side[first]
            for a in (a_q, a_k, a_v):
                _arrow(fig, ax_x, a, leave, enter)  # X → the head's Q, K and V
            above_p = (0.5, 1.75) if narrow else into  # over P's three lines of title
            _arrow(fig, a_k, a_p, after, above_p)  # Q^(h), K^(h) → P^(h)
            _arrow(fig, a_v, a_h, after, into)  # P^(h), V^(h) → head_h
            heads.append((a_h, first))
        names = ", ".join(f"head$_{h}$" for h in range(1, n_heads + 1))
        if narrow:  # Concat between the heads, then the bottom row: × W_O = output
            a_c = panel(
                4, mid, concat, f"Concat({names})".replace(", ", ",\n", 1), "column", "token"
            )
            panel(5, mid - 0.5, wo, "× $W_O$", "output feature", "column")
            panel(5, mid + 0.5, out, "= output", "output feature", "token")
            for a_h, first in heads:  # head_h → Concat, from the left or the right
                leave, enter = ((1.04, 0.5), (-0.3, 0.5)) if first else ((-0.3, 0.5), (1.04, 0.5))
                _arrow(fig, a_h, a_c, leave, enter)
        else:  # the middle lane, after the heads: Concat · W_O = output
            a_c = panel(4, mid, concat, f"Concat({names})", "column", "token")
            panel(5, mid, wo, "× $W_O$", "output feature", "column")
            panel(6, mid, out, "= output", "output feature", "token")
            for a_h, first in heads:  # head_h → Concat, down from above or up from below
                leave, enter = ((0.5, -0.35), (0.5, 1.6)) if first else ((0.5, 1.55), (0.5, -0.35))
                _arrow(fig, a_h, a_c, leave, enter)

        fig.suptitle(
            f"{n_heads} heads: $X$ projected, cut into column blocks,\nattended head by head, "
            "concatenated, times $W_O$",
            fontsize=10,
            y=1.06 if narrow else 1.07,
        )
        return svg(fig)


@functools.cache  # a pure function of its arguments: drawn once per process
def running_heads(n_heads: int = 2, *, narrow: bool = False) -> str:
    """[`heads_through_w_o`][attention_math.plot.panels.heads_through_w_o] for the running
    example (``attention_math.running.RUNNING``) cut into ``n_heads`` heads (two: ``d_k = 2``,
    ``d_v = 1`` each) with [`HEADS_W_O`][attention_math.plot.panels.HEADS_W_O];
    as wide as its box (``narrow=True``: the layout for a phone).

    Examples:
        >>> from attention_math.plot.panels import running_heads
        >>> "3×4" in running_heads() and "3×4" in running_heads(narrow=True)
        True
    """
    from attention_math.running import RUNNING

    x, w_q, w_k, w_v = (RUNNING.numeric(n) for n in ("x", "w_q", "w_k", "w_v"))
    w_o = np.array(HEADS_W_O, dtype=np.float64)  # h·d_v × d_out
    return fluid(heads_through_w_o(x, w_q, w_k, w_v, w_o, n_heads, narrow=narrow))


def backward_graph(q: ArrayLike, k: ArrayLike, v: ArrayLike, d_out: ArrayLike) -> str:
    """The backward pass of ``O = softmax(α Q Kᵀ) V`` as a graph: from the upstream gradient
    ``dO`` to ``dV`` and ``dP``, through the softmax to ``dS``, and on to ``dQ`` and ``dK``.

    Each edge is labelled with what it multiplies by (``P``, ``V``, ``K``, ``Q``: saved from
    the forward pass); each node shows its matrix for the given inputs with its shape, in
    symbols and in numbers. The matrices are computed here step by step, as the graph
    reads, and ``dQ``, ``dK``, ``dV`` are checked against
    [`attention_backward`][attention_math.backward.attention_backward].

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.panels import backward_graph
        >>> text = backward_graph(np.eye(2), np.eye(2), np.eye(2), np.eye(2))
        >>> "dS" in text and "2×2" in text
        True
    """
    from attention_math.backward import attention_backward
    from attention_math.numeric import attention_weights

    qs, ks, vs, g = (np.asarray(a, dtype=np.float64) for a in (q, k, v, d_out))
    alpha = 1 / np.sqrt(qs.shape[-1])  # the default scale α = 1/√d_k
    p = attention_weights(qs, ks, vs)  # L_q × L_k
    dv = p.T @ g  # L_k × d_v
    dp = g @ vs.T  # L_q × L_k
    ds = p * (dp - np.sum(dp * p, axis=-1, keepdims=True))  # L_q × L_k
    dq = alpha * ds @ ks  # L_q × d_k
    dk = alpha * ds.T @ qs  # L_k × d_k
    for name, mine, theirs in zip(
        ("dQ", "dK", "dV"), (dq, dk, dv), attention_backward(qs, ks, vs, g), strict=True
    ):
        _check(name, mine, theirs)
    nodes = {  # name: (column, row, matrix, formula, symbolic shape, axis labels)
        "dO": (0, 1, g, "$dO = \\partial\\ell/\\partial O$", "$L_q \\times d_v$", "query"),
        "dV": (1, 0, dv, "$dV = P^T dO$", "$L_k \\times d_v$", "key"),
        "dP": (1, 1, dp, "$dP = dO\\, V^T$", "$L_q \\times L_k$", "query"),
        "dS": (2, 1, ds, _DS, "$L_q \\times L_k$", "query"),
        "dQ": (3, 0, dq, "$dQ = \\alpha\\, dS\\, K$", "$L_q \\times d_k$", "query"),
        "dK": (3, 1, dk, "$dK = \\alpha\\, dS^T Q$", "$L_k \\times d_k$", "key"),
    }
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig = plt.figure(figsize=(8.4, 4.6))
        axes: dict[str, Axes] = {}
        for name, (col, row, m, formula, shape, rows) in nodes.items():
            ax = fig.add_axes((col / 4 + 0.07, 1 - (row + 1) / 2 + 0.1, 0.13, 0.25))
            cols = "key" if name in ("dP", "dS") else "feature"
            _panel(ax, m, f"{formula}\n{shape} = {_shape(m)}", cols, rows)
            axes[name] = ax
        edges = (  # from, to, what the step multiplies by
            ("dO", "dV", "$P^T$ · …"),
            ("dO", "dP", "… · $V^T$"),
            # in maths: the site's abbreviations would wrap a plain "softmax" in <abbr>,
            # which SVG does not draw
            ("dP", "dS", "$\\mathrm{softmax}$\nJacobian,\nrow by row"),
            ("dS", "dQ", "$\\alpha$ · … · $K$"),
            ("dS", "dK", "$\\alpha$ · …$^T$ · $Q$"),
        )
        for a, b, label in edges:
            (ca, ra), (cb, rb) = nodes[a][:2], nodes[b][:2]
            _arrow(fig, axes[a], axes[b], (1.05, 0.5), (-0.32, 0.5 if ra == rb else 0.05))
            x = (ca / 4 + 0.2 + cb / 4 + 0.07) / 2  # the gap between the two panels
            y = 1 - (ra + rb + 2) / 4 + 0.225  # halfway between their centres
            if ra == rb:  # a horizontal arrow: the label just above it
                fig.text(x, y + 0.02, label, fontsize=8.5, ha="center", va="bottom")
            else:  # a diagonal one: the label to its left
                fig.text(x - 0.015, y, label, fontsize=8.5, ha="right", va="center")
        fig.suptitle("the backward pass from $dO$: each gradient, its formula and its shape",
                     fontsize=10, y=1.04)  # fmt: skip
        return fluid(svg(fig))


@functools.cache  # a pure function of its arguments: drawn once per process
def identity_backward_graph() -> str:
    """[`backward_graph`][attention_math.plot.panels.backward_graph] for the gradients page's
    worked example: the 2×2 identity example with ``ℓ = tr(O)``, so ``dO = I``.

    Examples:
        >>> from attention_math.plot.panels import identity_backward_graph
        >>> "0.67" in identity_backward_graph()  # P = softmax of (1/√2, 0), as dV = Pᵀ
        True
    """
    from attention_math.derivations.gradients import IDENTITY_LOSS_D_OUT
    from attention_math.examples import IDENTITY_2X2 as ex
    from attention_math.numeric import compute_qkv

    q, k, v = compute_qkv(*(ex.numeric(n) for n in ("x", "w_q", "w_k", "w_v")))
    d_out = np.array(IDENTITY_LOSS_D_OUT.tolist(), dtype=np.float64)  # L_q × d_v
    return backward_graph(q, k, v, d_out)
