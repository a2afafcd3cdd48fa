"""Three more of the lesson's figures: heads through ``W_O``, the backward graph, the cost.

Like ``attention_math.figures``, each draws the package's own results at build time and
returns inline SVG text ([`svg`][attention_math.plots.svg]), after checking what it draws
against the function the page is about:
[`multi_head_attention`][attention_math.multihead.multi_head_attention],
[`attention_backward`][attention_math.backward.attention_backward] and the FLOP counts of
[`attention_math.derivations.linear`][]. A disagreement raises ``AssertionError`` (an
explicit ``raise``: it also holds under ``python -O``).
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from attention_math.figures import _arrow, _panel
from attention_math.plots import fluid, style, svg

__all__ = [
    "HEADS_W_O",
    "backward_graph",
    "cost_crossover",
    "crossover_axes",
    "heads_through_w_o",
    "identity_backward_graph",
    "running_heads",
]

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
    x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike, w_o: ArrayLike, n_heads: int
) -> str:
    """Self-attention with ``n_heads`` heads as a picture: ``X`` is projected once, the
    projections are cut into per-head column blocks ``Q_h, K_h, V_h``, each head attends on
    its own, and the heads' outputs are concatenated and multiplied by ``W_O``.

    Every panel is computed here head by head and checked against
    [`multi_head_attention`][attention_math.multihead.multi_head_attention].

    Examples:
        >>> import numpy as np
        >>> from attention_math.diagrams import heads_through_w_o
        >>> x = np.eye(4)[:3]
        >>> text = heads_through_w_o(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2)
        >>> "3×2" in text and "Concat" in text
        True
    """
    from attention_math.multihead import multi_head_attention
    from attention_math.numeric import attention

    xs, wq, wk, wv, wo = (np.asarray(a, dtype=np.float64) for a in (x, w_q, w_k, w_v, w_o))
    want = multi_head_attention(xs, xs, wq, wk, wv, wo, n_heads)  # L × d_out; validates
    d_k, d_v = wq.shape[1] // n_heads, wv.shape[1] // n_heads
    per_head = []
    for i in range(n_heads):
        q = xs @ wq[:, i * d_k : (i + 1) * d_k]  # L × d_k: head i's block of columns
        k = xs @ wk[:, i * d_k : (i + 1) * d_k]  # L × d_k
        v = xs @ wv[:, i * d_v : (i + 1) * d_v]  # L × d_v
        o, p = attention(q, k, v, return_weights=True)  # L × d_v, L × L
        per_head.append((q, k, v, np.asarray(p, np.float64), np.asarray(o, np.float64)))
    concat = np.hstack([h[4] for h in per_head])  # L × h·d_v
    out = concat @ wo  # L × d_out
    _check("output Concat · W_O", out, want)
    cols, rows = 6, n_heads + 1  # one row per head, then the recombination
    with style():
        fig = plt.figure(figsize=(8.4, 2.3 * rows))

        def panel(col: float, row: float, m: Floats, title: str, xl: str, yl: str) -> Axes:
            box = (col / cols + 0.04, 1 - (row + 1) / rows + 0.3 / rows, 0.105, 0.45 / rows)
            ax = fig.add_axes(box)
            _panel(ax, m, f"{title}\n{_shape(m)}", xl, yl)
            return ax

        ax_x = panel(0, (n_heads - 1) / 2, xs, "input $X$", "feature", "token")
        for i, (q, k, v, p, o) in enumerate(per_head):
            h = i + 1
            # head h's matrices carry a superscript (h), as W_Q^(h) and the glossary's P^(i) do
            sup = f"^{{({h})}}"
            a_q = panel(1, i, q, f"$Q{sup} = X W_Q{sup}$", "feature", "token")
            a_k = panel(2, i, k, f"$K{sup} = X W_K{sup}$", "feature", "token")
            title = f"$P{sup}$ = softmax\n($Q{sup} K{sup}{{}}^\\top$ / √{d_k})"  # Kᵀ of head h
            a_p = panel(3, i, p, title, "key", "query")
            a_v = panel(4, i, v, f"$V{sup} = X W_V{sup}$", "feature", "token")
            a_h = panel(5, i, o, f"head$_{h} = P{sup} V{sup}$", "feature", "token")
            _arrow(fig, ax_x, a_q, (1.05, 0.5), (-0.3, 0.5))  # X → the head's projections
            _arrow(fig, a_k, a_p, (1.03, 0.5), (-0.3, 0.5))  # Q^(h), K^(h) → P^(h)
            _arrow(fig, a_v, a_h, (1.03, 0.5), (-0.3, 0.5))  # P^(h), V^(h) → head_h
        last = n_heads  # the bottom row: Concat(heads) · W_O = output
        names = ", ".join(f"head$_{h}$" for h in range(1, n_heads + 1))
        panel(3, last, concat, f"Concat({names})", "column", "token")
        panel(4, last, wo, "× $W_O$", "output feature", "column")
        panel(5, last, out, "= output", "output feature", "token")

        fig.suptitle(
            f"{n_heads} heads: $X$ projected, cut into column blocks, attended head by head,\n"
            "concatenated, times $W_O$",
            fontsize=10,
            y=1.07,
        )
        return svg(fig)


def running_heads(n_heads: int = 2) -> str:
    """[`heads_through_w_o`][attention_math.diagrams.heads_through_w_o] for the running
    example (``attention_math.running.RUNNING``) cut into ``n_heads`` heads (two: ``d_k = 2``,
    ``d_v = 1`` each) with [`HEADS_W_O`][attention_math.diagrams.HEADS_W_O]; as wide as its box.

    Examples:
        >>> from attention_math.diagrams import running_heads
        >>> "3×4" in running_heads()
        True
    """
    from attention_math.running import RUNNING

    x, w_q, w_k, w_v = (RUNNING.numeric(n) for n in ("x", "w_q", "w_k", "w_v"))
    w_o = np.array(HEADS_W_O, dtype=np.float64)  # h·d_v × d_out
    return fluid(heads_through_w_o(x, w_q, w_k, w_v, w_o, n_heads))


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
        >>> from attention_math.diagrams import backward_graph
        >>> text = backward_graph(np.eye(2), np.eye(2), np.eye(2), np.eye(2))
        >>> "dS" in text and "2×2" in text
        True
    """
    from attention_math.backward import attention_backward
    from attention_math.numeric import attention

    qs, ks, vs, g = (np.asarray(a, dtype=np.float64) for a in (q, k, v, d_out))
    alpha = 1 / np.sqrt(qs.shape[-1])  # the default scale α = 1/√d_k
    _, p = attention(qs, ks, vs, return_weights=True)  # L_q × L_k
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


def identity_backward_graph() -> str:
    """[`backward_graph`][attention_math.diagrams.backward_graph] for the gradients page's
    worked example: the 2×2 identity example with ``ℓ = tr(O)``, so ``dO = I``.

    Examples:
        >>> from attention_math.diagrams import identity_backward_graph
        >>> "0.67" in identity_backward_graph()  # P = softmax of (1/√2, 0), as dV = Pᵀ
        True
    """
    from attention_math.derivations.gradients import IDENTITY_LOSS_D_OUT
    from attention_math.examples import IDENTITY_2X2 as ex
    from attention_math.numeric import compute_qkv

    q, k, v = compute_qkv(*(ex.numeric(n) for n in ("x", "w_q", "w_k", "w_v")))
    d_out = np.array(IDENTITY_LOSS_D_OUT.tolist(), dtype=np.float64)  # L_q × d_v
    return backward_graph(q, k, v, d_out)


def crossover_axes(widths: tuple[int, ...] = (64, 128)) -> tuple[Figure, dict[int, float]]:
    """The FLOPs of softmax and of linear attention against the length ``L``, one pair of
    curves per head width ``d``, each crossover ``L*`` marked; and the ``L*`` marked.

    The curves are [`softmax_flops`][attention_math.derivations.linear.softmax_flops] and
    [`linear_flops`][attention_math.derivations.linear.linear_flops] evaluated at each ``L``;
    ``L*`` is [`crossover_length`][attention_math.derivations.linear.crossover_length] at
    ``d``, and the two counts must agree there exactly (SymPy), or ``AssertionError``.
    The figure is open: [`cost_crossover`][attention_math.diagrams.cost_crossover] turns it
    into SVG.

    Examples:
        >>> from attention_math.diagrams import crossover_axes
        >>> fig, marked = crossover_axes((64,))
        >>> round(marked[64], 2)
        64.49
        >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    import sympy as sp

    from attention_math.derivations.linear import (
        L,
        crossover_length,
        d,
        linear_flops,
        softmax_flops,
    )

    quad, lin, star = softmax_flops(), linear_flops(), crossover_length()
    lengths = np.geomspace(8, 8192, 200)  # 200 lengths
    marked: dict[int, float] = {}
    with style():
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for width, colour in zip(widths, ("#4c72b0", "#dd8452", "#55a868"), strict=False):
            at = {d: width}
            f_quad = sp.lambdify(L, quad.subs(at), "numpy")
            f_lin = sp.lambdify(L, lin.subs(at), "numpy")
            l_star = star.subs(at)  # exact
            if sp.simplify((quad - lin).subs(at).subs(L, l_star)) != 0:
                raise AssertionError(f"the FLOP counts differ at L* = {l_star} for d = {width}")
            marked[width] = float(l_star)
            ax.loglog(lengths, f_quad(lengths), color=colour,
                      label=f"softmax, $d = {width}$: ${sp.latex(quad.subs(at))}$")  # fmt: skip
            ax.loglog(lengths, f_lin(lengths), color=colour, ls="--",
                      label=f"linear, $d = {width}$: ${sp.latex(lin.subs(at))}$")  # fmt: skip
            y = float(quad.subs(at).subs(L, l_star))
            ax.axvline(marked[width], color=colour, lw=0.8, ls=":")
            ax.scatter([marked[width]], [y], color=colour, zorder=3,
                       label=f"crossover, $d = {width}$: L* = {marked[width]:.1f}")  # fmt: skip
            ax.annotate(f"L* = {marked[width]:.1f}", (marked[width], y), fontsize=8,
                        textcoords="offset points", xytext=(6, -14))  # fmt: skip
        ax.set(
            title="FLOPs of one head: softmax ($L^2$) against linear ($L$)",
            xlabel="sequence length $L$",
            ylabel="FLOPs",
        )
        ax.legend(fontsize=7.5, framealpha=0.0, loc="upper left")
    return fig, marked


def cost_crossover(widths: tuple[int, ...] = (64, 128)) -> str:
    """[`crossover_axes`][attention_math.diagrams.crossover_axes] as SVG text.

    Examples:
        >>> from attention_math.diagrams import cost_crossover
        >>> "64.2" in cost_crossover((64,))
        True
    """
    fig, _ = crossover_axes(widths)
    return fluid(svg(fig), max_width="36rem")
