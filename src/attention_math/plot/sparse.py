"""Sparse selection drawn: top-k's error against ``k`` beside its bound, and which keys each
of NSA's three branches reads.

Each draws what [`sparse`][attention_math.sparse] computes, as SVG text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from attention_math.plot.style import drawn_once, fluid, style, svg
from attention_math.sparse import topk_error, topk_mask

__all__ = ["error_curves", "nsa_figure", "topk_error_figure"]


def error_curves(
    p: NDArray[np.floating], v: NDArray[np.floating], ks: Sequence[int]
) -> dict[str, NDArray[np.float64]]:
    """Top-k's error and its two bounds for each ``k`` in ``ks``, averaged over the rows, each
    row's divided by its largest value norm ``max_j ‖v_j‖`` (so the bound reads ``2p_S̄``).

    Args:
        p: dense weights ``(rows, L_k)``, each row summing to 1 (zeros where masked).
        v: each row's values ``(rows, L_k, d_v)``.
        ks: the ``k`` to try.

    Returns:
        ``{"error", "bound_spread", "bound", "discarded"}``, each ``(len(ks),)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.sparse import error_curves
        >>> p = np.array([[0.5, 0.25, 0.25]])
        >>> v = np.array([[[1.0], [-1.0], [1.0]]])
        >>> c = error_curves(p, v, [1, 2, 3])
        >>> c["error"].round(4).tolist(), c["bound"].round(4).tolist()
        ([0.5, 0.1667, 0.0], [1.0, 0.5, 0.0])
    """
    norms = np.linalg.norm(v, axis=-1)  # (rows, L_k)
    v_max = np.where(p > 0, norms, 0).max(axis=-1)  # (rows,)
    out: dict[str, list[float]] = {"error": [], "bound_spread": [], "bound": [], "discarded": []}
    for k in ks:
        kept = topk_mask(np.log(np.where(p > 0, p, 1.0)) + np.where(p > 0, 0, -np.inf), k)
        e = topk_error(p, v, kept)
        for name in out:
            x = getattr(e, name)  # (rows,)
            out[name].append(float(np.mean(x if name == "discarded" else x / v_max)))
    return {name: np.asarray(x) for name, x in out.items()}


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def topk_error_figure(
    ks: Sequence[int], panels: Mapping[str, Mapping[str, NDArray[np.float64]]]
) -> str:
    """One panel per set of rows: top-k's measured error, the tight bound
    ``p_S̄ max ‖v_i − v_j‖`` and ``2p_S̄ max ‖v_j‖``, each over ``max_j ‖v_j‖``, against ``k``
    (log scale; a zero is not drawn).

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.sparse import topk_error_figure
        >>> c = {n: np.array([0.5, 0.1]) for n in ("error", "bound_spread", "bound")}
        >>> topk_error_figure([1, 2], {"example": c}).startswith("<svg")
        True
    """
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), squeeze=False)
        for ax, (title, c) in zip(axes[0], panels.items(), strict=True):
            for name, mark, label in (
                ("bound", "--", r"bound $2\,p_{\bar S}$"),
                ("bound_spread", "-.", r"bound $p_{\bar S} \max\|v_i - v_j\| / \max\|v\|$"),
                ("error", "o-", "measured ‖o − o_S‖ / max‖v‖"),
            ):
                y = np.where(c[name] > 0, c[name], np.nan)  # log axes: zeros left out
                ax.plot(ks, y, mark, label=label, markersize=3)
            ax.set_yscale("log")
            ax.set_xlabel("k (keys kept per query)")
            ax.set_ylabel("mean over queries")
            ax.set_title(title)
            ax.legend(fontsize=8, loc="lower left")
        return fluid(svg(fig))


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def nsa_figure(masks: Mapping[str, NDArray[np.bool_]]) -> str:
    """The keys (columns) each query (rows) reads in each of NSA's branches: one panel each.

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.sparse import nsa_figure
        >>> nsa_figure({"window": np.tri(4, dtype=bool)}).startswith("<svg")
        True
    """
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, axes = plt.subplots(1, len(masks), figsize=(3.2 * len(masks), 3.4), squeeze=False)
        for ax, (title, m) in zip(axes[0], masks.items(), strict=True):
            ax.imshow(m, cmap="Blues", vmin=0, vmax=1.4, interpolation="nearest")
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("key position")
            ax.set_ylabel("query position")
        return fluid(svg(fig))
