"""Figures of the chapter "Positions and decoding", drawn with the conventions of
[`style`][attention_site.figures.style]: deterministic SVG text, ``currentColor`` for text and axes,
every plot titled and labelled. Each function draws what the package computes."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from attention_math import positional
from attention_math.derivations import decoding, sliding_window
from attention_site.figures.style import style, svg

__all__ = ["alibi_figure", "cache_figure", "frequencies_figure", "reach_figure", "rope_figure"]


def frequencies_figure(n_positions: int = 64, d_model: int = 64) -> str:
    """The sinusoidal encoding as a heatmap, and the frequencies ``θ_i`` it uses (also RoPE's).

    Examples:
        >>> from attention_site.figures.positions import frequencies_figure
        >>> frequencies_figure(8, 8).startswith("<svg")
        True
    """
    pe = positional.sinusoidal(n_positions, d_model)  # (n, d_model)
    theta = positional.rope_frequencies(d_model)  # (d_model/2,)
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4), width_ratios=(1.4, 1))
        im = a.imshow(pe, cmap="RdBu", aspect="auto", vmin=-1, vmax=1)
        a.set(title="sinusoidal encoding PE[j, ·]", xlabel="dimension", ylabel="position j")
        fig.colorbar(im, ax=a, fraction=0.046, pad=0.04)
        b.semilogy(np.arange(theta.size), theta, "o", ms=3)
        b.set(
            title="frequencies θᵢ = 10000^(−2i/d)",
            xlabel="pair i",
            ylabel="radians per position",
        )
        fig.tight_layout()
        return svg(fig)


def rope_figure(d: int = 64, seed: int = 0) -> str:
    """The score of RoPE-rotated ``q`` and ``k`` against the offset ``j − i``, for several
    query positions ``i``: the curves coincide (the relative property), which the figure says
    on it, since three curves drawn on top of each other look like one.

    Examples:
        >>> from attention_site.figures.positions import rope_figure
        >>> rope_figure(8).startswith("<svg")
        True
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, d))  # (1, d)
    k = q + 0.5 * rng.standard_normal((1, d))  # (1, d): a key similar to the query
    offsets = np.arange(-40, 41)
    with style():
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


def alibi_figure(n_heads: int = 8, length: int = 24) -> str:
    """ALiBi: one head's bias matrix, and each head's weights over past keys when the
    content scores are equal (a causal row).

    Examples:
        >>> from attention_site.figures.positions import alibi_figure
        >>> alibi_figure(4, 6).startswith("<svg")
        True
    """
    bias = positional.alibi_bias(n_heads, length)  # (h, L, L)
    causal = np.tri(length, dtype=bool)  # (L, L)
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
        shown = np.where(causal, bias[0], np.nan)  # (L, L): the blocked half left blank
        im = a.imshow(shown, cmap="viridis", aspect="auto")
        a.set(title="bias −β₁·(i − j), head 1, causal", xlabel="key j", ylabel="query i")
        fig.colorbar(im, ax=a, fraction=0.046, pad=0.04)
        for head in range(n_heads):
            row = bias[head, -1]  # (L,): the last query
            w = np.exp(row - row.max())
            b.plot(length - 1 - np.arange(length), w / w.sum(), label=f"head {head + 1}")
        b.set(
            title="weights of the last query, equal content",
            xlabel="distance i − j",
            ylabel="weight",
        )
        b.legend(frameon=False, fontsize=7, ncol=2)
        fig.tight_layout()
        return svg(fig)


def reach_figure(length: int = 16, window: int = 3, layers: tuple[int, ...] = (1, 2, 3)) -> str:
    """Who can influence whom after 1, 2, 3 layers of sliding-window attention (boolean
    matrix powers, computed exactly).

    Examples:
        >>> from attention_site.figures.positions import reach_figure
        >>> reach_figure(6, 2, (1, 2)).startswith("<svg")
        True
    """
    with style():
        fig, axes = plt.subplots(1, len(layers), figsize=(3.1 * len(layers), 3.2))
        for ax, n in zip(np.atleast_1d(axes), layers, strict=True):
            r = np.array(sliding_window.reach(length, window, n), dtype=float)  # (L, L)
            ax.imshow(r, cmap="Blues", vmin=0, vmax=1.3)
            ax.set(
                title=f"{n} layer{'s' if n > 1 else ''}: last row {int(r[-1].sum())} tokens",
                xlabel="key (source) j",
                ylabel="query i",
            )
        fig.suptitle(f"reach of a sliding window w = {window}")
        fig.tight_layout()
        return svg(fig)


def cache_figure(max_tokens: int = 8192, bytes_per_entry: int = 2) -> str:
    """The size of the KV cache as the context grows, for the published models of
    `decoding.MODELS`, from the formula ``2 · n_layers · h_kv · d_head · L · b``; each
    model's line ends at the context it was trained for.

    Examples:
        >>> from attention_site.figures.positions import cache_figure
        >>> cache_figure(1024).startswith("<svg")
        True
    """
    s = decoding.symbols()
    tokens = np.arange(0, max_tokens + 1, max_tokens // 64)  # (T,)
    with style():
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
