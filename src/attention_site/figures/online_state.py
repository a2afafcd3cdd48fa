"""The online softmax's state ``(m, λ)`` along one query row, tile by tile, as a figure.

The figure for the page "The online softmax": the scores of one query, the running maximum
``m`` over them, and ``λ`` after each tile split into the part carried from the previous tiles
(rescaled by ``e^{m_old − m_new}``) and the part the new tile adds. Where the maximum moves
up, the carried part shrinks below the previous ``λ``, and ``λ`` can fall.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import NDArray

from attention_math.derivations.online_softmax import numeric_trace
from attention_math.plot.style import fluid, style, svg

__all__ = ["state_figure", "state_steps"]


def state_steps(
    seed: int = 0, n_keys: int = 8, block_size: int = 2
) -> tuple[NDArray[np.float64], list[dict[str, float]]]:
    """One query row of seeded scores, tile by tile: ``m`` before and after, the carried part
    ``e^{m_old − m_new} λ_old`` and the new tile's part ``Σ e^{s − m_new}`` of ``λ``.

    Returns the row's scores and one step per tile. The steps are checked against
    [`numeric_trace`][attention_math.derivations.online_softmax.numeric_trace] (a disagreement
    raises ``AssertionError``).

    Examples:
        >>> from attention_site.figures.online_state import state_steps
        >>> scores, steps = state_steps()
        >>> [round(t["ell"], 2) for t in steps]
        [1.6, 1.91, 2.58, 2.17]
        >>> state_steps(block_size=3)
        Traceback (most recent call last):
        ...
        ValueError: n_keys (8) must be a multiple of block_size (3)
    """
    if n_keys % block_size:
        raise ValueError(f"n_keys ({n_keys}) must be a multiple of block_size ({block_size})")
    rng = np.random.default_rng(seed)
    s = rng.standard_normal(n_keys) * 2  # (n_keys,): one query's scores
    v = rng.standard_normal((n_keys, 1))  # (n_keys, 1): the values, for the trace
    steps, m, ell = [], -np.inf, 0.0
    for t, (m_t, ell_t, _) in enumerate(numeric_trace(s, v, block_size)):
        tile = s[t * block_size : (t + 1) * block_size]  # (block_size,)
        carried = float(np.exp(m - m_t) * ell)  # 0 for the first tile (m = −∞)
        new = float(np.exp(tile - m_t).sum())
        if not np.isclose(carried + new, ell_t, rtol=1e-12):
            raise AssertionError(f"tile {t + 1}: {carried} + {new} ≠ λ = {ell_t}")
        step = dict(m_old=m, m=m_t, ell_old=ell, carried=carried, new=new, ell=ell_t)
        steps.append({k: float(x) for k, x in step.items()})
        m, ell = float(m_t), float(ell_t)
    return s, steps


@functools.cache  # a pure function of its arguments: drawn once per process
def state_figure(seed: int = 0) -> str:
    """The figure: scores and running maximum above, each jump of the maximum labelled; ``λ``
    per tile below, carried part and new part stacked, the previous ``λ`` dashed over each
    tile and the factor ``e^{m_old − m}`` that shrank it written on the carried part, with the
    tile where the maximum jumps and ``λ`` falls annotated.

    Sized to be read on a phone: a narrow figure with large type, drawn at the width of the
    page's column (at most 32rem).

    Examples:
        >>> from attention_site.figures.online_state import state_figure
        >>> text = state_figure()
        >>> text.startswith("<svg") and "falls" in text and "max +" in text
        True
    """
    s, steps = state_steps(seed)  # (n_keys,) scores, one step per tile
    block_size = len(s) // len(steps)
    falls = [t for t, st in enumerate(steps) if st["ell"] < st["ell_old"]]
    if not falls:
        raise AssertionError("the seeded row must show λ falling when the maximum moves")
    red, grey, blue = "#d62728", "#9e9e9e", "#1f77b4"
    with style(), plt.rc_context({"font.size": 12}):
        fig, (top, bottom) = plt.subplots(
            2, 1, figsize=(5.6, 7.4), sharex=True, gridspec_kw={"height_ratios": [1, 1.35]}
        )
        x = np.arange(1, len(s) + 1)
        edges = np.arange(len(steps) + 1) * block_size + 0.5
        centres = (edges[:-1] + edges[1:]) / 2
        for t in range(len(steps)):  # tiles shaded alternately, numbered on top
            for ax in (top, bottom):
                if t % 2 == 0:
                    ax.axvspan(edges[t], edges[t + 1], color="#808080", alpha=0.1)
        top.plot(x, s, "o", color=blue, label="score $s_j$")
        top.stairs([st["m"] for st in steps], edges, color=red, lw=2, baseline=None)
        top.plot([], [], color=red, lw=2, label="running max $m$")  # legend entry
        for t, st in enumerate(steps[1:], start=1):  # label every jump of the maximum
            if st["m"] > st["m_old"]:
                top.annotate(
                    f"max +{st['m'] - st['m_old']:.2f}",
                    xy=(edges[t], (st["m"] + st["m_old"]) / 2),
                    xytext=(-6, 0),
                    textcoords="offset points",
                    ha="right",
                    va="center",
                    color=red,
                    fontsize=11,
                )
        top.set(title="One query row, tiles of two keys", xlabel="key $j$", ylabel="score")
        top.set_ylim(min(s) - 0.4, max(s) + 0.8)
        top.legend(loc="upper left", fontsize=10, frameon=False)
        carried = [st["carried"] for st in steps]
        new = [st["new"] for st in steps]
        bottom.bar(
            centres, carried, width=block_size * 0.7, color=grey, label="carried (old λ, rescaled)"
        )
        bottom.bar(
            centres, new, width=block_size * 0.7, bottom=carried, color=blue, label="this tile"
        )
        for t, st in enumerate(steps[1:], start=1):
            rise = st["m"] - st["m_old"]
            bottom.hlines(  # the previous λ, to compare with
                st["ell_old"],
                centres[t] - block_size * 0.45,
                centres[t] + block_size * 0.45,
                colors=red,
                linestyles="--",
                lw=1.5,
            )
            factor = f"×$e^{{-{rise:.2f}}}$" if rise > 0 else "×1"  # what the old λ was scaled by
            bottom.text(
                centres[t],
                st["carried"] / 2,
                factor,
                ha="center",
                va="center",
                fontsize=11,
                color="white" if st["carried"] > 0.35 else "#808080",
            )
        t = falls[0]
        st = steps[t]
        rise = st["m"] - st["m_old"]
        bottom.annotate(
            f"max +{rise:.2f}: the old λ\nshrinks ×$e^{{-{rise:.2f}}}$ (grey),"
            "\nso λ falls below\nthe dashed line",
            xy=(centres[t], st["ell_old"] + 0.05),
            xytext=(edges[-1], st["ell_old"] * 1.3),
            ha="right",
            va="bottom",
            fontsize=11,
            color=red,
            arrowprops={"arrowstyle": "->", "color": red},
        )
        bottom.hlines([], 0, 0, colors=red, linestyles="--", label="λ before this tile")
        bottom.set(
            title="λ after each tile: old part + new part",
            xlabel="key $j$",
            ylabel="λ",
        )
        bottom.set_ylim(0, max(st["ell"] for st in steps) * 2.0)
        bottom.legend(loc="upper left", fontsize=10, frameon=False)
        bottom.set_xticks(x)
        fig.tight_layout()
        return fluid(svg(fig), max_width="32rem")
