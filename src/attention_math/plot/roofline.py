"""The roofline: attainable FLOP/s against arithmetic intensity, with points placed on it.

Lines of measured series on log-log axes are [`series`][attention_math.plot.curves.series]."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from attention_math.hardware import A100_SXM_80GB, GPU, ridge
from attention_math.plot.style import drawn_once, style, svg

__all__ = ["roofline"]


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def roofline(
    points: Sequence[tuple[str, float]],
    *,
    title: str,
    gpu: GPU = A100_SXM_80GB,
    attained: Mapping[str, float] | None = None,
) -> str:
    """The roofline of ``gpu`` (log-log) with each ``(label, FLOPs per byte)`` marked on it.

    A point named in ``attained`` (label → FLOP/s) is drawn at that rate instead, below the
    roof, with a dotted line up to the roof it misses: a kernel held back by work the roof
    does not count. Points at the same place are drawn once, their labels joined.

    Raises:
        ValueError: no points, an intensity or attained rate that is not positive, or an
            ``attained`` label that is not a point's.

    Examples:
        >>> from attention_math.plot.roofline import roofline
        >>> "<svg" in roofline([("decode", 1.0), ("prefill", 500.0)], title="A100")
        True
        >>> points = [("a", 2.0), ("b", 2.0), ("c", 300.0)]  # a and b at one place
        >>> "a and b" in roofline(points, title="t", attained={"c": 1e14})
        True
    """
    if not points:
        raise ValueError("points must hold at least one (label, intensity) pair")
    attained = dict(attained or {})
    for label, x in points:
        if not x > 0:
            raise ValueError(f"intensity of {label!r} must be positive, got {x!r}")
    for label, rate in attained.items():
        if label not in {p[0] for p in points}:
            raise ValueError(f"attained names {label!r}, which is not a point")
        if not rate > 0:
            raise ValueError(f"attained rate of {label!r} must be positive, got {rate!r}")
    lo = min(0.3, min(x for _, x in points) / 2)
    hi = max(3000.0, max(x for _, x in points) * 2)
    xs = np.geomspace(lo, hi, 200)
    roof = np.minimum(gpu.peak_flops, xs * gpu.hbm_bytes_per_s) / 1e12  # TFLOP/s
    placed: dict[tuple[float, float, bool], list[str]] = {}  # (x, y, below the roof) → labels
    for label, x in points:
        on_roof = min(gpu.peak_flops, x * gpu.hbm_bytes_per_s)
        y = min(attained.get(label, on_roof), on_roof) / 1e12
        placed.setdefault((x, y, label in attained), []).append(label)
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        ax.loglog(xs, roof, color="C0", label=f"{gpu.name} roof")
        ax.axvline(ridge(gpu), color="C0", linestyle=":", linewidth=1)
        for i, ((x, y, below), labels) in enumerate(placed.items()):
            if below:
                top = min(gpu.peak_flops, x * gpu.hbm_bytes_per_s) / 1e12
                ax.plot([x, x], [y, top], ":", color=f"C{i + 1}", linewidth=1)
            ax.plot([x], [y], "o", color=f"C{i + 1}", label=" and ".join(labels))
        ax.set_title(title)
        ax.set_xlabel("arithmetic intensity (FLOPs per byte of memory traffic)")
        ax.set_ylabel("attainable TFLOP/s")
        ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        return svg(fig)
