"""Figures of the long-context and modern-block pages: what each RoPE scaling does to the
rotation of every pair, RoFormer's long-term decay, T5's buckets and ALiBi's far weight.
Each function draws what `attention_math` computes (deterministic SVG, see ``plots``)."""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from attention_math import positional
from attention_site.figures.style import style, svg

__all__ = ["SCALINGS", "decay_figure", "rope_scaling_figure", "t5_figure"]

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
"""The methods compared on the page: a Llama-like head (d = 128, base 500000) trained on 8192
tokens and stretched 4× (the fields of each Hugging Face rope_scaling dictionary)."""


def rope_scaling_figure(d: int = 128, base: float = 500000.0, train_len: int = 8192) -> str:
    """Left: the turns each pair makes over the training length, per method. Right: the
    same at four times that length, with the turns of training as the reference.

    Examples:
        >>> from attention_site.figures.long_context import rope_scaling_figure
        >>> rope_scaling_figure(16, 10000.0, 64).startswith("<svg")
        True
    """
    test_len = 4 * train_len
    pairs = np.arange(d // 2)
    styles = ["-", "--", "-.", ":", (0, (5, 1, 1, 1))]
    theta = positional.rope_frequencies(d, base=base)  # (d/2,)
    with style():
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


def decay_figure(d: int = 128, base: float = 10000.0, max_distance: int = 2000) -> str:
    """RoFormer's relative upper bound ``(2/d) Σ_j |S_j(r)|`` against the distance ``r``.

    Examples:
        >>> from attention_site.figures.long_context import decay_figure
        >>> decay_figure(8, 100.0, 50).startswith("<svg")
        True
    """
    r = np.arange(max_distance + 1)
    with style():
        fig, ax = plt.subplots(figsize=(7, 3.0))
        ax.plot(r, positional.rope_decay_bound(r, d=d, base=base), lw=1)
        ax.set(
            title=f"RoFormer's long-term decay (d = {d}, base {base:g})",
            xlabel="relative distance r",
            ylabel="relative upper bound",
        )
        fig.tight_layout()
        return svg(fig)


def t5_figure(num_buckets: int = 32, max_distance: int = 128, span: int = 300) -> str:
    """T5's bucket against the offset ``key − query``, bidirectional.

    Examples:
        >>> from attention_site.figures.long_context import t5_figure
        >>> t5_figure(8, 20, 30).startswith("<svg")
        True
    """
    rel = np.arange(-span, span + 1)
    bucket = positional.t5_relative_bucket(
        rel, bidirectional=True, num_buckets=num_buckets, max_distance=max_distance
    )
    with style():
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
