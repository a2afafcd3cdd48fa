"""The error of rounded scores with and without FlashAttention-3's random Hadamard rotation,
as outliers grow ([`outlier_errors`][attention_math.precision.outlier_errors])."""

from __future__ import annotations

from collections.abc import Sequence

from attention_math.display import Svg
from attention_math.plot.style import drawn_once, fluid, style, svg
from attention_math.precision import OutlierErrors

__all__ = ["rotation_figure"]


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def rotation_figure(panels: Sequence[tuple[str, OutlierErrors]]) -> Svg:
    """The relative RMS error of ``Q̂K̂ᵀ`` against the outlier size, one colour per grid,
    without (solid, circles) and with (dashed, squares) the rotation, on log-log axes: one
    panel, so that it reads on a phone too.

    Examples:
        >>> from attention_math.precision import outlier_errors
        >>> from attention_math.plot.precision import rotation_figure
        >>> e = outlier_errors(8, [1.0, 10.0], n=8, d=8, seeds=1)
        >>> text = rotation_figure([("int8", e)])
        >>> text.startswith("<svg") and "rotated" in text
        True
    """
    if not panels:
        raise ValueError("rotation_figure needs at least one grid")
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for i, (name, e) in enumerate(panels):
            colour = f"C{i}"
            ax.plot(e.outliers, e.plain, "o-", color=colour, label=f"{name}, plain")
            ax.plot(e.outliers, e.rotated, "s--", color=colour, label=f"{name}, rotated")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("outlier factor (1% of the entries of Q and K)")
        ax.set_ylabel("relative RMS error of the scores")
        ax.set_title("Rounding QKᵀ with and without the Hadamard rotation")
        ax.legend(
            frameon=False,
            fontsize=8,
            ncol=len(panels),
            loc="upper center",
            bbox_to_anchor=(0.5, -0.2),
        )
        fig.tight_layout()
        return fluid(svg(fig), max_width="40rem")
