"""Curves of one quantity against another, with the histograms and step plots that are read
the same way: softmax weights against a score, the spread of the scores, saturation against
``d_k``, kernel smoothers, FLOPs against length, RoPE's score against the offset and its
rotations under each scaling, RoFormer's long-term decay, T5's buckets (a step plot), the KV
cache against the context, the toy model's training loss, and lines on log-log axes.

Each draws what the package computes (its docstring names the function) as SVG text.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from attention_math import positional
from attention_math.derivations import decoding
from attention_math.derivations.kernels import regression_data
from attention_math.kernels import nadaraya_watson
from attention_math.plot.style import drawn_once, fluid, style, svg
from attention_math.toy.model import ToyModel

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn
    from matplotlib.figure import Figure

__all__ = [
    "SCALINGS",
    "cache_figure",
    "cost_crossover",
    "crossover_axes",
    "decay_figure",
    "loss_curve",
    "rope_figure",
    "rope_scaling_figure",
    "saturation_figure",
    "score_spread",
    "series",
    "smoother_figure",
    "smoother_weights_figure",
    "softmax_pair",
    "t5_figure",
]

_GREY = "#808080"  # the placeholder svg() turns into the page's text colour


@functools.cache  # a pure function of its arguments: drawn once per process
def softmax_pair(mark: float) -> str:
    """The softmax of two scores ``(a, 0)`` against ``a``: both weights, ``mark`` marked.

    Examples:
        >>> from attention_math.plot.curves import softmax_pair
        >>> "<svg" in softmax_pair(0.5)
        True
    """
    from attention_math import numeric

    a = np.linspace(-6.0, 6.0, 241)  # the first score; the second is 0
    p = numeric.softmax(np.stack([a, np.zeros_like(a)], axis=-1))  # 241 × 2
    at = numeric.softmax(np.array([mark, 0.0]))  # 2
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(5.6, 3.9))
        ax.plot(a, p[:, 0], color="#4c72b0", label="weight of score $a$: sigmoid$(a)$")
        ax.plot(a, p[:, 1], color="#dd8452", ls="--", label="weight of score 0: $1 -$ sigmoid$(a)$")
        ax.axhline(0.5, color=_GREY, lw=0.6, ls=":")
        ax.scatter([mark, mark], at, color=_GREY, zorder=3)
        for y in at:
            ax.annotate(
                f"{y:.4f}", (mark, y), textcoords="offset points", xytext=(6, -3), fontsize=8
            )
        ax.set(title="softmax of the two scores $(a, 0)$", xlabel="score $a$", ylabel="weight")
        # below the axes: inside, the written-out labels would cover the curves' crossing
        ax.legend(
            fontsize=8, framealpha=0.0, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2
        )
        fig.tight_layout()
        return fluid(svg(fig), max_width="32rem")


@functools.cache  # a pure function of its arguments: drawn once per process
def score_spread(widths: tuple[int, ...] = (4, 256), n: int = 20_000, seed: int = 0) -> str:
    """Histograms of ``q·k`` for random unit-variance ``q, k`` of each width ``d_k``,
    unscaled (left) and divided by ``√d_k`` (right).

    Examples:
        >>> from attention_math.plot.curves import score_spread
        >>> "<svg" in score_spread((4, 16), n=200)
        True
    """
    rng = np.random.default_rng(seed)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

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


def crossover_axes(widths: tuple[int, ...] = (64, 128)) -> tuple[Figure, dict[int, float]]:
    """The FLOPs of softmax and of linear attention against the length ``L``, one pair of
    curves per head width ``d``, each crossover ``L*`` marked; and the ``L*`` marked.

    The curves are [`softmax_flops`][attention_math.derivations.linear.softmax_flops] and
    [`linear_flops`][attention_math.derivations.linear.linear_flops] evaluated at each ``L``;
    ``L*`` is [`crossover_length`][attention_math.derivations.linear.crossover_length] at
    ``d``, and the two counts must agree there exactly (SymPy), or ``AssertionError``.
    The figure is open: [`cost_crossover`][attention_math.plot.curves.cost_crossover] turns it
    into SVG.

    Examples:
        >>> from attention_math.plot.curves import crossover_axes
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
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

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


@functools.cache  # a pure function of its arguments: drawn once per process
def cost_crossover(widths: tuple[int, ...] = (64, 128)) -> str:
    """[`crossover_axes`][attention_math.plot.curves.crossover_axes] as SVG text.

    Examples:
        >>> from attention_math.plot.curves import cost_crossover
        >>> "64.2" in cost_crossover((64,))
        True
    """
    fig, _ = crossover_axes(widths)
    return fluid(svg(fig), max_width="36rem")


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def saturation_figure(
    ds: list[int],
    curves: dict[str, NDArray[np.float64]],
    limits: dict[str, float] | None = None,
    n_keys: int | None = None,
) -> str:
    """The two saturation curves of
    [`saturation`][attention_math.derivations.scaling.saturation]
    as an SVG figure (titles, axis labels).

    With ``limits`` (from
    [`saturation_limits`][attention_math.derivations.scaling.saturation_limits]) each panel
    also draws as dashed lines, labelled on the figure, where the curves can go: one-hot (all
    the weight on one key: largest weight 1, gradient norm 0) and, for the largest weight,
    uniform over the ``n_keys`` keys (``1/n``).

    Examples:
        >>> import numpy as np
        >>> from attention_math.derivations.scaling import saturation, saturation_limits
        >>> from attention_math.plot.curves import saturation_figure
        >>> curves = saturation([1, 4], np.random.default_rng(0), n_samples=5)
        >>> text = saturation_figure([1, 4], curves)
        >>> text.startswith("<svg") and "Softmax gradient norm" in text
        True
        >>> lim = {k: float(v) for k, v in saturation_limits(16).items()}
        >>> "one-hot" in saturation_figure([1, 4], curves, lim, n_keys=16)
        True
    """
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
        for ax, what, label in (
            (axes[0], "max", "mean largest weight"),
            (axes[1], "grad", "mean ‖∂softmax/∂s‖ (Frobenius)"),
        ):
            ax.plot(ds, curves[f"{what}_unscaled"], "o-", label="unscaled  q·k")
            ax.plot(ds, curves[f"{what}_scaled"], "s-", label="scaled  q·k/√d_k")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("d_k")
            ax.set_ylabel(label)
            if limits is not None:
                keys = f"{n_keys} keys" if n_keys is not None else "the keys"
                ends = [("one_hot", "one-hot: all weight on one key")]
                if what == "max":  # the gradient norm is largest in between, not at uniform
                    ends.append(("uniform", f"uniform over {keys}"))
                for end, text in ends:
                    y = limits[f"{what}_{end}"]
                    ax.axhline(y, color="0.45", linestyle="--", linewidth=0.9)
                    ax.annotate(
                        text,
                        (0.5, y),
                        xycoords=("axes fraction", "data"),
                        xytext=(0, 3 if y < 0.9 else -3),
                        textcoords="offset points",
                        ha="center",
                        va="bottom" if y < 0.9 else "top",
                        fontsize=8,
                        color="0.3",
                    )
                ax.set_ylim(-0.04, 1.06) if what == "max" else ax.set_ylim(-0.02, None)
            if what == "max":  # below the one-hot line, above the rising curve
                ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(0.0, 0.92))
            else:
                ax.legend(frameon=False, loc="center left")
        axes[0].set_title("Largest attention weight")
        axes[1].set_title("Softmax gradient norm")
        fig.tight_layout()
        return svg(fig)


@functools.cache  # a pure function of its arguments: drawn once per process
def smoother_figure(bandwidths: tuple[float, ...] = (0.1, 0.5, 3.0)) -> str:
    """Nadaraya–Watson estimates of
    [`regression_data`][attention_math.derivations.kernels.regression_data] for a few
    bandwidths, as SVG.

    Examples:
        >>> from attention_math.plot.curves import smoother_figure
        >>> "<svg" in smoother_figure((0.5,))
        True
    """
    x, y, grid, truth = regression_data()
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        ax.plot(x, y, "o", ms=3, color="#808080", label="observations (keys, values)")
        ax.plot(grid, truth, "--", lw=1, color="#808080", label="true function")
        for tau in bandwidths:
            ax.plot(grid, nadaraya_watson(grid, x, y, bandwidth=tau), lw=1.6, label=f"τ = {tau:g}")
        ax.set_title("Kernel regression = attention of the grid points to the observations")
        ax.set_xlabel("x (query)")
        ax.set_ylabel("y")
        ax.legend(fontsize=8, frameon=False, loc="lower left")
        return svg(fig)


@functools.cache  # a pure function of its arguments: drawn once per process
def smoother_weights_figure(bandwidth: float = 0.5, n_queries: int = 4) -> str:
    """The weights of a few queries over the samples of
    [`regression_data`][attention_math.derivations.kernels.regression_data], one curve per
    query against the samples' positions ``x``: each a bump centred on its query, as wide as
    the bandwidth. The weights are the smoother applied to one-hot values,
    ``nadaraya_watson(queries, x, I)``, so each row is one query's row of attention weights.

    Examples:
        >>> from attention_math.plot.curves import smoother_weights_figure
        >>> "<svg" in smoother_weights_figure(0.5, 2)
        True
    """
    x, _, grid, _ = regression_data()
    order = np.argsort(x)
    xs = x[order]  # (n,): the sample positions, sorted for drawing
    queries = np.linspace(grid[0], grid[-1], n_queries + 2)[1:-1]  # (n_queries,): inside
    weights = nadaraya_watson(queries, xs, np.eye(len(xs)), bandwidth=bandwidth)  # (nq, n)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(6.4, 3.2))
        for q, w in zip(queries, weights, strict=True):
            (line,) = ax.plot(xs, w, "o-", ms=3, lw=1.4, label=f"query x = {q:.2f}")
            ax.axvline(q, color=line.get_color(), lw=0.8, ls=":")  # where the query sits
        ax.set_title(f"Each query's weights over the samples, τ = {bandwidth:g}")
        ax.set_xlabel("sample position $x_i$ (the keys); dotted: the query")
        ax.set_ylabel("weight")
        ax.legend(fontsize=8, frameon=False, loc="upper right")
        return fluid(svg(fig), max_width="40rem")


@functools.cache  # a pure function of its arguments: drawn once per process
def rope_figure(d: int = 64, seed: int = 0) -> str:
    """The score of RoPE-rotated ``q`` and ``k`` against the offset ``j − i``, for several
    query positions ``i``: the curves coincide (the relative property), which the figure says
    on it, since three curves drawn on top of each other look like one.

    Examples:
        >>> from attention_math.plot.curves import rope_figure
        >>> rope_figure(8).startswith("<svg")
        True
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, d))  # (1, d)
    k = q + 0.5 * rng.standard_normal((1, d))  # (1, d): a key similar to the query
    offsets = np.arange(-40, 41)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(7, 3.4))
        styles = (("-", 5), ("--", 2.5), (":", 1.5))  # wide to thin: each shows under the next
        for i, (line, width) in zip((0, 100, 1000), styles, strict=True):
            rq = positional.rope(q, [i])  # (1, d)
            rk = positional.rope(np.repeat(k, offsets.size, 0), i + offsets)  # (offsets, d)
            ax.plot(
                offsets, (rk @ rq.T)[:, 0] / np.sqrt(d), line, lw=width, label=f"query at i = {i}"
            )
        ax.set(
            title="RoPE: the score depends on the offset j − i only",
            xlabel="offset j − i (key position minus query position)",
            ylabel="score q·k / √dₖ",
        )
        ax.text(
            0.02,
            0.95,
            "three query positions,\none curve: they lie\non top of each other",
            transform=ax.transAxes,
            va="top",
            fontsize=9,
        )
        ax.legend(frameon=False, fontsize=8)
        fig.tight_layout()
        return svg(fig)


SCALINGS: dict[str, dict[str, Any] | None] = {
    "no scaling": None,
    "position interpolation (linear)": {"rope_type": "linear", "factor": 4.0},
    # "dynamic" with factor 1: the base is raised for the scale n / L_train of the current
    # length n, which is 4 at four times the training length
    "NTK-aware (dynamic)": {"rope_type": "dynamic", "factor": 1.0},
    "YaRN": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192},
    "Llama 3": {
        "rope_type": "llama3",
        "factor": 4.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
}
"""The RoPE scalings compared on the page "RoPE for long contexts" and in
`rope_scaling_figure`: a Llama-like head (d = 128, base 500000) trained on 8192
tokens and stretched 4× (the fields of each Hugging Face rope_scaling dictionary)."""


@functools.cache  # a pure function of its arguments: drawn once per process
def rope_scaling_figure(d: int = 128, base: float = 500000.0, train_len: int = 8192) -> str:
    """Left: the turns each pair makes over the training length, per method. Right: the
    same at four times that length, with the turns of training as the reference.

    Examples:
        >>> from attention_math.plot.curves import rope_scaling_figure
        >>> rope_scaling_figure(16, 10000.0, 64).startswith("<svg")
        True
    """
    test_len = 4 * train_len
    pairs = np.arange(d // 2)
    styles = ["-", "--", "-.", ":", (0, (5, 1, 1, 1))]
    theta = positional.rope_frequencies(d, base=base)  # (d/2,)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, (a, b) = plt.subplots(1, 2, figsize=(9.5, 3.6), sharey=True)
        for (name, sc), ls in zip(SCALINGS.items(), styles, strict=True):
            for ax, n in ((a, train_len), (b, test_len)):
                if sc is None:
                    new = theta
                else:  # "dynamic" depends on the current length n; the others do not
                    new, _ = positional.rope_frequencies(
                        d, base=base, scaling=sc, max_position_embeddings=train_len, seq_len=n
                    )
                ax.semilogy(pairs, n * new / (2 * math.pi), linestyle=ls, label=name)
        for ax, n in ((a, train_len), (b, test_len)):
            ax.axhline(1.0, color="#808080", lw=0.8)
            ax.set(xlabel="pair i", title=f"turns of each pair over {n} positions")
        b.plot(
            pairs,
            train_len * theta / (2 * math.pi),
            color="#808080",
            lw=3,
            alpha=0.35,
            label="training: no scaling over " + str(train_len),
        )
        a.set(ylabel="full turns (log scale)")
        b.set(ylabel="full turns (log scale)")
        b.legend(frameon=False, fontsize=7, loc="upper right")
        fig.tight_layout()
        return svg(fig)


@functools.cache  # a pure function of its arguments: drawn once per process
def decay_figure(d: int = 128, base: float = 10000.0, max_distance: int = 2000) -> str:
    """RoFormer's relative upper bound ``(2/d) Σ_j |S_j(r)|`` against the distance ``r``.

    Examples:
        >>> from attention_math.plot.curves import decay_figure
        >>> decay_figure(8, 100.0, 50).startswith("<svg")
        True
    """
    r = np.arange(max_distance + 1)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(7, 3.0))
        ax.plot(r, positional.rope_decay_bound(r, d=d, base=base), lw=1)
        ax.set(
            title=f"RoFormer's long-term decay (d = {d}, base {base:g})",
            xlabel="relative distance r",
            ylabel="relative upper bound",
        )
        fig.tight_layout()
        return svg(fig)


@functools.cache  # a pure function of its arguments: drawn once per process
def t5_figure(num_buckets: int = 32, max_distance: int = 128, span: int = 300) -> str:
    """T5's bucket against the offset ``key − query``, bidirectional.

    Examples:
        >>> from attention_math.plot.curves import t5_figure
        >>> t5_figure(8, 20, 30).startswith("<svg")
        True
    """
    rel = np.arange(-span, span + 1)
    bucket = positional.t5_relative_bucket(
        rel, bidirectional=True, num_buckets=num_buckets, max_distance=max_distance
    )
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(7, 3.0))
        ax.step(rel, bucket, where="mid", lw=1)
        for x in (-max_distance, max_distance):
            ax.axvline(x, color="#808080", lw=0.8, ls=":")
        ax.set(
            title=f"T5 buckets ({num_buckets} buckets, max_distance {max_distance})",
            xlabel="relative position key − query",
            ylabel="bucket",
        )
        fig.tight_layout()
        return svg(fig)


@functools.cache  # a pure function of its arguments: drawn once per process
def cache_figure(max_tokens: int = 8192, bytes_per_entry: int = 2) -> str:
    """The size of the KV cache as the context grows, for the published models of
    `decoding.MODELS`, from the formula ``2 · n_layers · h_kv · d_head · L · b``; each
    model's line ends at the context it was trained for.

    Examples:
        >>> from attention_math.plot.curves import cache_figure
        >>> cache_figure(1024).startswith("<svg")
        True
    """
    s = decoding.symbols()
    tokens = np.arange(0, max_tokens + 1, max_tokens // 64)  # (T,)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(7, 3.4))
        for model in decoding.MODELS:
            per_token = decoding.cache_bytes().subs(
                {
                    s["n_layers"]: model.n_layers,
                    s["h_kv"]: model.n_kv_heads,
                    s["d_head"]: model.d_head,
                    s["n_bytes"]: bytes_per_entry,
                    s["L"]: 1,
                }
            )
            t = tokens[tokens <= model.context]  # (T',): each line ends at its trained context
            held = np.minimum(t, model.window) if model.window else t  # rolling
            ax.plot(t, held * int(per_token) / 2**30, label=model.name)
        ax.set(
            title=f"KV cache of one sequence ({8 * bytes_per_entry}-bit entries)",
            xlabel="tokens in the context",
            ylabel="GiB",
        )
        ax.legend(frameon=False, fontsize=8)
        fig.tight_layout()
        return svg(fig)


def loss_curve(model: ToyModel, window: int = 50) -> str:
    """The training loss, step by step (a moving mean over ``window`` steps), on the copied
    tokens and on the others, with ``log vocab`` (a uniform guess) for reference.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy import Config, Hyper
        >>> from attention_math.toy.train import train
        >>> from attention_math.plot.curves import loss_curve
        >>> m = train(Config(vocab=8, d_model=8, n_ctx=12), Hyper(steps=60, batch=2, length=12))
        >>> loss_curve(m, window=10).startswith("<svg")
        True
    """
    h = model.history
    kernel = np.ones(window) / window
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

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


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def series(
    x: Sequence[float],
    lines: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    hline: tuple[str, float] | None = None,
) -> str:
    """Lines on log-log axes (one per ``(label, ys)``), with an optional labelled level.

    Raises:
        ValueError: a line whose length differs from ``x``.

    Examples:
        >>> from attention_math.plot.curves import series
        >>> "<svg" in series([1, 2], [("a", [1, 2])], title="t", xlabel="x", ylabel="y")
        True
    """
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        for i, (label, ys) in enumerate(lines):
            if len(ys) != len(x):
                raise ValueError(f"line {label!r} has {len(ys)} points, x has {len(x)}")
            ax.loglog(x, ys, "o-", color=f"C{i + 1}", label=label, markersize=3)
        if hline is not None:
            ax.axhline(hline[1], color="C0", linestyle=":", label=hline[0])
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return svg(fig)
