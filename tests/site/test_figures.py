"""Figures: the same bytes on every run, labelled, and drawn in the page's text colour."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attention_math.plot.heatmap import heatmap
from attention_math.plot.style import style, svg

# A heatmap (with −∞ cells and a colour bar) and a line plot with a legend, as pages draw them.
DRAW = """\
import numpy as np, matplotlib.pyplot as plt
from attention_math.plot.heatmap import heatmap
from attention_math.plot.style import style, svg
w = np.array([[0.5, 0.5, -np.inf], [0.2, 0.3, 0.5]])
print(heatmap(w, title="weights", row_labels=["a", "b"], col_labels=["x", "y", "z"]))
with style():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [3, 1, 2], "o-", label="a curve")
    ax.set(title="a line", xlabel="x", ylabel="y")
    ax.legend()
    print(svg(fig))
"""


def _draw(hash_seed: str) -> bytes:
    env = os.environ | {"PYTHONHASHSEED": hash_seed}
    return subprocess.run(
        [sys.executable, "-c", DRAW], env=env, capture_output=True, check=True, timeout=120
    ).stdout


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_figures_are_byte_identical_across_processes() -> None:
    first, second = _draw("1"), _draw("2")
    assert first.count(b"<svg") == 2
    assert first == second


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_figures_carry_no_date_and_no_fixed_foreground() -> None:
    text = _draw("0").decode()
    assert not re.search(r"dc:date|<metadata|Matplotlib v", text)
    assert "#808080" not in text.lower()
    assert text.count("currentColor") > 10  # title, labels, ticks and spines follow the scheme


def test_two_figures_on_one_page_share_no_ids() -> None:
    a = heatmap(np.eye(2), title="one")
    b = heatmap(np.eye(3), title="two")
    ids_a = set(re.findall(r'\bid="([^"]+)"', a))
    ids_b = set(re.findall(r'\bid="([^"]+)"', b))
    assert ids_a and ids_b and not ids_a & ids_b
    # every reference inside a figure points to one of its own ids
    for text, ids in ((a, ids_a), (b, ids_b)):
        refs = set(re.findall(r'(?:url\(#|href="#)([^)"]+)', text))
        assert refs and refs <= ids


@pytest.mark.parametrize(
    "labels, missing",
    [
        ({"xlabel": "key", "ylabel": "query"}, "title"),
        ({"title": "t", "ylabel": "query"}, "x-axis label"),
        ({"title": "t", "xlabel": "key"}, "y-axis label"),
    ],
)
def test_unlabelled_plots_are_refused(labels: dict[str, str], missing: str) -> None:
    with style():
        fig, ax = plt.subplots()
        ax.set(**labels)
        with pytest.raises(ValueError, match=f"no {missing}"):
            svg(fig)
    assert not plt.get_fignums()  # closed even when refused


def test_figure_title_labels_every_subplot() -> None:
    with style():
        fig, axes = plt.subplots(1, 2)
        for ax in axes:
            ax.set(xlabel="x", ylabel="y")
        fig.suptitle("shared title")
        assert "shared title" in svg(fig)


@pytest.mark.docs
def test_site_figures_follow_the_colour_scheme(built_site) -> None:
    figures = []
    for page in built_site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        figures += re.findall(r"<svg[^>]*>.*?</svg>", html, flags=re.S)
    plots = [f for f in figures if "figure_1" in f]
    assert len(plots) >= 5
    for fig in plots:
        assert "currentColor" in fig and "#808080" not in fig.lower()


def test_a_heatmap_can_share_a_scale_and_show_row_sums() -> None:
    w = np.array([[1.0, 0.0], [0.25, 0.5]])
    text = heatmap(w, title="w", row_sums=True, vmin=0.0, vmax=1.0, colorbar=False)
    assert "row sum" in text and ">0.75<" in text  # the second row's sum
    assert "row sum" not in heatmap(w, title="w")


def test_weight_panels_leave_only_the_masked_weights_blank() -> None:
    from attention_math.plot.heatmap import weight_panels

    p = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])  # causal; p[1, 0] = 0
    text = weight_panels([("head A", p), ("head B", p)], title="two heads")
    assert text.count("<svg") == 1
    cells = re.findall(r"<text[^>]*>([^<]*)</text>", text)
    assert {"two heads", "head A", "head B"} <= set(cells)
    # the zero below the diagonal is a weight the head gives, so it is written (once per
    # panel); the three above it are the mask's, and blank: no "0", no "nan"
    assert cells.count("0") == 2 and "nan" not in cells
    assert cells.count("0.2") == cells.count("0.3") == cells.count("0.5") == 2
    with pytest.raises(ValueError, match="2-D"):
        weight_panels([("a vector", [0.5, 0.5])], title="t")
