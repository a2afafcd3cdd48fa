"""Where a head puts the weight of a query that has nothing to read: the toy of
[`toy.gated`][attention_math.toy.gated] with a plain softmax, a learned sink logit and a
sigmoid output gate, drawn as SVG text."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from attention_math.plot.style import drawn_once, fluid, style, svg

__all__ = ["sink_gate_figure"]

_LABELS = {"softmax": "softmax", "sink": "sink logit", "gate": "output gate"}


@drawn_once  # kept in memory by its arguments' content: drawn once per process
def sink_gate_figure(
    masses: Mapping[tuple[bool, str], Mapping[str, float]],
    losses: Mapping[tuple[bool, str], NDArray[np.floating]],
) -> str:
    """Above: for each setting (with a start token, without) and variant, the rest queries'
    weight on the first token, on the sink and on the other tokens, and their mean gate;
    below: the training losses.

    Args:
        masses: ``(bos, kind) →`` [`attention_mass`][attention_math.toy.gated.attention_mass].
        losses: ``(bos, kind) →`` the loss of each training step.

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.gates import sink_gate_figure
        >>> m = {"first_rest": 0.9, "sink_rest": 0.0, "gate_rest": 1.0}
        >>> keys = [(b, k) for b in (True, False) for k in ("softmax", "sink", "gate")]
        >>> text = sink_gate_figure({k: m for k in keys}, {k: np.ones(3) for k in keys})
        >>> text.startswith("<svg") and "first token" in text
        True
    """
    with style():
        import matplotlib.pyplot as plt  # optional dependency: imported when a figure is drawn

        fig, (left, right) = plt.subplots(2, 1, figsize=(6.4, 7.6), height_ratios=(1.1, 1))
        names, first, sink, gate = [], [], [], []
        for bos in (True, False):
            for kind in ("softmax", "sink", "gate"):
                m = masses[(bos, kind)]
                names.append(f"{_LABELS[kind]}\n{'with BOS' if bos else 'no BOS'}")
                first.append(m["first_rest"])
                sink.append(m["sink_rest"])
                gate.append(m["gate_rest"])
        x = np.arange(len(names)) + np.repeat([0.0, 0.6], 3)  # a gap between the settings
        f, s = np.array(first), np.clip(np.array(sink), 0, 1)
        other = np.clip(1 - f - s, 0, 1)
        left.bar(x, f, color="C3", label="first token")
        left.bar(x, s, bottom=f, color="C0", label="sink logit")
        left.bar(x, other, bottom=f + s, color="C7", alpha=0.5, label="other tokens")
        left.plot(x, gate, "kD", markersize=5, label="mean gate σ")
        left.set_xticks(x, names, fontsize=7.5)
        left.set_ylim(0, 1.16)
        left.set_ylabel("weight (bars), gate (◆)")
        left.set_xlabel("variant, setting")
        left.set_title("Rest queries: where the weight goes")
        left.legend(frameon=False, fontsize=7.5, ncol=4, loc="upper center")
        colours = {"softmax": "0.35", "sink": "C0", "gate": "C2"}
        for bos, style_ in ((True, "-"), (False, "--")):
            for kind in ("softmax", "sink", "gate"):
                loss = np.asarray(losses[(bos, kind)])
                right.plot(
                    np.arange(1, loss.size + 1),
                    np.maximum(loss, 1e-6),
                    style_,
                    color=colours[kind],
                    linewidth=1.1,
                    label=f"{_LABELS[kind]}, {'with' if bos else 'no'} BOS",
                )
        right.set_yscale("log")
        right.set_xlabel("training step")
        right.set_ylabel("mean squared error")
        right.set_title("Training loss")
        right.set_ylim(1e-8, 3.0)
        right.legend(frameon=False, fontsize=7.5, loc="lower left", ncol=2)
        fig.tight_layout()
        return fluid(svg(fig))
