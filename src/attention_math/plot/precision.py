"""The error of rounded scores with and without FlashAttention-3's random Hadamard rotation,
as outliers grow ([`outlier_errors`][attention_math.precision.outlier_errors])."""

from __future__ import annotations

from collections.abc import Sequence

from attention_math.display import Svg
from attention_math.plot.style import fluid, style, svg
from attention_math.precision import OutlierErrors

__all__ = ["rotation_figure"]


def rotation_figure(panels: Sequence[tuple[str, OutlierErrors]]) -> Svg:
    """One panel per grid: the relative RMS error of ``Q̂K̂ᵀ`` against the outlier size,
    without (circles) and with (squares) the rotation, on log-log axes.

    Examples:
        >>> from attention_math.precision import outlier_errors
        >>> from attention_math.plot.precision import rotation_figure
        >>> e = outlier_errors(8, [1.0, 10.0], n=8, d=8, seeds=1)
        >>> text = rotation_figure([("int8", e)])
        >>> text.startswith("<svg") and "rotated" in text
        True
    """
    if not panels:
        raise ValueError("rotation_figure needs at least one panel")
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.3), squeeze=False)
        for ax, (name, e) in zip(axes[0], panels, strict=True):
            ax.plot(e.outliers, e.plain, "o-", label="plain")
            ax.plot(e.outliers, e.rotated, "s-", label="rotated (Hadamard)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("outlier factor")
            ax.set_ylabel("relative RMS error of QKᵀ")
            ax.set_title(name)
        axes[0][0].legend(frameon=False, fontsize=8)
        fig.tight_layout()
        return fluid(svg(fig))
