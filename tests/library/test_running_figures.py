"""The running example keeps the properties it was chosen for, and the lesson's figures
draw what the pages say they draw."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math.plot import curves, panels
from attention_math.plot import hull as hulls
from attention_math.plot.panels import running_pipeline
from attention_math.running import RUNNING, forward, numeric_forward


def test_the_running_example_teaches_what_it_was_chosen_for() -> None:
    assert RUNNING.exact("w_q") != RUNNING.exact("w_k")
    s = forward()["S"]
    assert s != s.T, "the scores should not be symmetric"
    assert all(e.is_integer for e in s), "√d_k = 2 should leave integer scores"
    assert len({int(np.argmax(np.array(s.row(i), dtype=float))) for i in range(3)}) == 3
    p = forward(is_causal=True)["P"]
    assert p.row(0) == sp.Matrix([[1, 0, 0]])


def test_the_numeric_intermediates_agree_with_the_exact_ones() -> None:
    exact, num = forward(is_causal=True), numeric_forward(is_causal=True)
    for name in ("Q", "K", "V", "P", "O"):
        np.testing.assert_allclose(num[name], np.array(exact[name].evalf(), dtype=float))
    assert np.isneginf(num["S"][0, 1]) and not np.isinf(num["raw"]).any()


def test_hull_of_a_square_with_an_inside_point() -> None:
    pts = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], dtype=float)
    hull = hulls._hull(pts)
    assert {tuple(p) for p in hull} == {(0, 0), (1, 0), (1, 1), (0, 1)}


def test_every_output_of_the_running_example_is_in_the_hull_of_its_values() -> None:
    for causal in (False, True):
        f = numeric_forward(causal)
        # barycentric coordinates in the triangle v1 v2 v3 are the weights: all in [0, 1]
        v, o = f["V"], f["O"]
        coords = np.linalg.solve(np.vstack([v.T, np.ones(3)]), np.vstack([o.T, np.ones(3)]))
        assert (coords > -1e-12).all() and np.allclose(coords.T, f["P"])


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_the_figures_show_their_content() -> None:
    pipe = panels.running_pipeline()
    for shape in ("3×4", "3×3", "3×2"):
        assert shape in pipe
    assert pipe.count("−∞") == 3  # the three entries above the diagonal
    assert "0.6698" in curves.softmax_pair(1 / np.sqrt(2))
    spread = curves.score_spread((4, 256))
    assert "256" in spread and "std 16" in spread  # √256: the unscaled spread of a wide head


def test_figures_refuse_what_they_cannot_draw() -> None:
    with pytest.raises(ValueError, match="points in the plane"):
        hulls.value_hull(np.zeros((3, 3)), {}, title="t")
    with pytest.raises(ValueError, match="X must be a matrix"):
        panels.pipeline(*([np.zeros(3)] + [np.zeros((2, 2))] * 7))


ROOT = Path(__file__).resolve().parents[2]
CSS = (ROOT / "docs/stylesheets/extra.css").read_text(encoding="utf-8")


def test_pipeline_has_a_phone_layout_and_the_css_picks_it():
    wide, narrow = running_pipeline(), running_pipeline(narrow=True)

    def box(svg: str) -> tuple[float, float]:
        w, h = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups()
        return float(w), float(h)

    (ww, wh), (nw, nh) = box(wide), box(narrow)
    assert ww > wh and nh > 2 * nw  # wide for a desk, tall for a phone
    # at a phone's 343 px of content, the narrow figure's 10 pt labels are at least 11 px
    assert 343 / (nw * 4 / 3) * 10 * 4 / 3 >= 11
    for title in ("input $X$", "output $O = PV$"):
        assert title.split("$")[0] in narrow
    home = (ROOT / "docs/index.md").read_text(encoding="utf-8")
    assert "pipeline-narrow" in home and "narrow=True" in home
    assert re.search(r"\.pipeline-narrow \{ display: none; \}", CSS)
    # each layout is hidden at the other width (the breakpoint is the theme's)
    assert re.search(r"\.pipeline-wide \{ display: none; \}", CSS)
