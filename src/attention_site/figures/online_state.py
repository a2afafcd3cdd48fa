"""The online softmax's state ``(m, λ)`` along one query row, tile by tile, as a figure.

The figure for the page "The online softmax": the scores of one query, the running maximum
``m`` over them, and ``λ`` after each tile split into the part carried from the previous tiles
(rescaled by ``e^{m_old − m_new}``) and the part the new tile adds. Where the maximum moves
up, the carried part shrinks below the previous ``λ``, and ``λ`` can fall.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import NDArray

from attention_math.derivations.online_softmax import numeric_trace
from attention_site.figures.style import style, svg

__all__ = ["state_figure", "state_steps"]


def state_steps(
    seed: int = 0, n_keys: int = 8, block: int = 2
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
        >>> state_steps(block=3)
        Traceback (most recent call last):
        ...
        ValueError: n_keys (8) must be a multiple of block (3)
    """
    if n_keys % block:
        raise ValueError(f"n_keys ({n_keys}) must be a multiple of block ({block})")
    rng = np.random.default_rng(seed)
    s = rng.standard_normal(n_keys) * 2  # (n_keys,): one query's scores
    v = rng.standard_normal((n_keys, 1))  # (n_keys, 1): the values, for the trace
    steps, m, ell = [], -np.inf, 0.0
    for t, (m_t, ell_t, _) in enumerate(numeric_trace(s, v, block)):
        tile = s[t * block : (t + 1) * block]  # (block,)
        carried = float(np.exp(m - m_t) * ell)  # 0 for the first tile (m = −∞)
        new = float(np.exp(tile - m_t).sum())
        if not np.isclose(carried + new, ell_t, rtol=1e-12):
            raise AssertionError(f"tile {t + 1}: {carried} + {new} ≠ λ = {ell_t}")
        step = dict(m_old=m, m=m_t, ell_old=ell, carried=carried, new=new, ell=ell_t)
        steps.append({k: float(x) for k, x in step.items()})
        m, ell = float(m_t), float(ell_t)
    return s, steps


def state_figure(seed: int = 0) -> str:
    """The figure: scores and running maximum above; ``λ`` per tile below, carried part and
    new part stacked, with the tile where the maximum jumps and ``λ`` falls annotated.

    Examples:
        >>> from attention_site.figures.online_state import state_figure
        >>> text = state_figure()
        >>> text.startswith("<svg") and "falls" in text
        True
    """
    s, steps = state_steps(seed)  # (n_keys,) scores, one step per tile
    block = len(s) // len(steps)
    falls = [t for t, st in enumerate(steps) if st["ell"] < st["ell_old"]]
    if not falls:
        raise AssertionError("the seeded row must show λ falling when the maximum moves")
    with style():
        fig, (top, bottom) = plt.subplots(
            2, 1, figsize=(6.4, 5.6), sharex=True, gridspec_kw={"height_ratios": [1, 1.1]}
        )
        x = np.arange(1, len(s) + 1)
        for t in range(len(steps)):  # tiles shaded alternately
            for ax in (top, bottom):
                if t % 2 == 0:
                    ax.axvspan(t * block + 0.5, (t + 1) * block + 0.5, color="#808080", alpha=0.1)
        top.plot(x, s, "o", color="#1f77b4", label="score $s_j$")
        edges = np.arange(len(steps) + 1) * block + 0.5
        top.stairs(
            [st["m"] for st in steps],
            edges,
            color="#d62728",
            lw=2,
            baseline=None,
            label="running max $m$",
        )
        top.set(title="One query row, tiles of two keys", xlabel="key $j$", ylabel="score")
        top.legend(loc="lower right", fontsize=9, frameon=False)
        centres = (edges[:-1] + edges[1:]) / 2
        carried = [st["carried"] for st in steps]
        new = [st["new"] for st in steps]
        bottom.bar(
            centres,
            carried,
            width=block * 0.7,
            color="#9e9e9e",
            label="carried: $e^{m_{old}-m}\\lambda_{old}$",
        )
        bottom.bar(
            centres,
            new,
            width=block * 0.7,
            bottom=carried,
            color="#1f77b4",
            label="this tile: $\\sum e^{s_j-m}$",
        )
        for t in falls:
            st = steps[t]
            rise = st["m"] - st["m_old"]
            bottom.text(
                centres[t] + block * 0.5,
                st["ell_old"],
                " λ before",
                va="center",
                fontsize=9,
                color="#d62728",
            )
            bottom.hlines(
                st["ell_old"],
                centres[t] - block * 0.45,
                centres[t] + block * 0.45,
                colors="#d62728",
                linestyles="--",
            )
            bottom.annotate(
                f"max rose by {rise:.2f}:\nold λ × $e^{{-{rise:.2f}}}$,\nso λ falls",
                xy=(centres[t], st["ell_old"]),
                xytext=(centres[t] - block * 1.6, st["ell_old"] * 1.08),
                fontsize=9,
                arrowprops={"arrowstyle": "->", "color": "#d62728"},
            )
        bottom.set(title="λ after each tile", xlabel="key $j$", ylabel="λ")
        bottom.set_ylim(0, max(st["ell"] for st in steps) * 1.6)
        bottom.legend(loc="upper left", fontsize=9, frameon=False)
        bottom.set_xticks(x)
        fig.tight_layout()
        return svg(fig)
