"""A figure tells the page how narrow it may be drawn: no narrower than keeps its smallest text
10 CSS pixels (attention_math.plot.style `legible`); the site's keyboard transform gives a
figure wider than a phone's column a scrolling box with a tab stop."""

from __future__ import annotations

import math
import re

import pytest

from attention_math.plot.style import LEGIBLE_PX, fluid, legible, style, svg


def _figure(legend_size: float):
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(6.4, 3.2))
        ax.plot([0, 1], [0, 1], label="a line")
        ax.set(title="a title", xlabel="x", ylabel="y")
        ax.legend(fontsize=legend_size)
        return svg(fig)


@pytest.mark.parametrize("smallest", [7.0, 8.5])
def test_the_smallest_text_sets_the_narrowest_width(smallest: float) -> None:
    text = _figure(smallest)
    width = float(re.search(r'<svg [^>]*?width="([0-9.]+)pt"', text).group(1))
    need = int(re.search(r"--min-width: (\d+)px", text).group(1))
    assert need == math.ceil(LEGIBLE_PX * width / smallest)
    # drawn that wide, the smallest text is LEGIBLE_PX high (and not a pixel more)
    assert LEGIBLE_PX <= smallest * need / width < LEGIBLE_PX + smallest / width + 1e-9


def test_fluid_keeps_one_style_attribute() -> None:
    text = fluid(_figure(8.0), max_width="20rem")
    head = text[: text.index(">")]
    assert head.count(" style=") == 1 and "max-width: 20rem" in head and "--min-width:" in head


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        legible("<svg >", 0, 8)
    with pytest.raises(ValueError, match="positive"):
        legible("<svg >", 100, -1)
