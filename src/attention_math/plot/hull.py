"""The outputs inside the convex hull of the values: attention averages, it never extrapolates."""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math.plot.style import drawn_once, fluid, style, svg

__all__ = ["running_hull", "value_hull"]

_GREY = "#808080"  # the placeholder svg() turns into the page's text colour


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


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def value_hull(v: ArrayLike, outputs: dict[str, ArrayLike], *, title: str) -> str:
    """Value vectors (``d_v = 2``), their convex hull, and output rows drawn inside it.

    ``outputs`` maps a legend label to an ``L_q × 2`` array of output rows.

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.hull import value_hull
        >>> v = np.array([[0.0, 0], [1, 0], [0, 1]])
        >>> "<svg" in value_hull(v, {"outputs": [[0.2, 0.2]]}, title="t")
        True
    """
    vals = np.asarray(v, dtype=np.float64)
    if vals.ndim != 2 or vals.shape[1] != 2:
        raise ValueError(f"v must be L_k × 2 (points in the plane), got shape {vals.shape}")
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

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


@functools.cache  # a pure function of its arguments: drawn once per process
def running_hull() -> str:
    """`value_hull` for the running example, without and with the causal mask.

    Examples:
        >>> from attention_math.plot.hull import running_hull
        >>> running_hull().startswith("<svg")
        True
    """
    from attention_math.running import numeric_forward

    plain, causal = numeric_forward(), numeric_forward(is_causal=True)
    return value_hull(
        plain["V"],
        {"outputs, no mask": plain["O"], "outputs, causal mask": causal["O"]},
        title="every output is a weighted average of the values",
    )
