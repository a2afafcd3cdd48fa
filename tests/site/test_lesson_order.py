"""What the hardest lessons' figures and worked examples show, read from the figure a page
prints or the maths it defines (no site build); the order of a page's prose is for review."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parents[2] / "docs"


def src(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def test_online_softmax_figure_says_on_it_why_lambda_falls():
    from attention_site.figures.online_state import state_figure, state_steps

    _, steps = state_steps()
    svg = state_figure()
    for st in steps[1:]:  # every jump of the maximum is labelled with its size
        rise = st["m"] - st["m_old"]
        assert (f"max +{rise:.2f}" in svg) == (rise > 0)
    fall = next(st for st in steps if st["ell"] < st["ell_old"])
    assert "falls" in svg and f"{fall['m'] - fall['m_old']:.2f}" in svg
    assert 'width="100%"' in svg  # drawn at the column's width, readable on a phone


def test_rope_worked_example_scores_depend_on_the_offset_only():
    from attention_math import positional

    q, k = np.array([[1.0, 0.0]]), np.array([[0.6, 0.8]])  # the page's plane example

    def score(i: int, j: int) -> float:
        return float((positional.rope(q, [i]) @ positional.rope(k, [j]).T)[0, 0])

    assert np.isclose(score(0, 3), score(2, 5)) and np.isclose(score(2, 5), score(10, 13))
    assert not np.isclose(score(2, 5), score(5, 2))  # the page's last row: offset −3 differs


def test_rope_figure_names_positions_as_the_page_does():
    from attention_math.plot.curves import rope_figure

    svg = rope_figure(8)
    assert "j − i" in svg and "query at i = " in svg and "n − m" not in svg


def test_attention_as_norms_table_holds():
    from attention_math.block import layer_norm

    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 8)) * rng.uniform(0.5, 3, size=(5, 1))
    x_ln = layer_norm(x, np.ones(8), np.zeros(8), eps=0.0)
    k = x_ln @ rng.normal(size=(8, 4))
    k_qk = layer_norm(k, np.ones(4), np.zeros(4), eps=0.0)
    assert np.allclose(np.linalg.norm(x_ln, axis=1), np.sqrt(8))  # equal norms for the tokens
    assert np.ptp(np.linalg.norm(k, axis=1)) > 1  # but not for their keys
    assert np.allclose(np.linalg.norm(k_qk, axis=1), 2.0)  # QK-norm: √d_k for every key


def test_attention_as_kernel_weights_figure_is_readable():
    from attention_math.plot.curves import smoother_weights_figure

    svg = smoother_weights_figure(0.5, 3)
    assert svg.count("query x = ") == 2 * 3 and 'width="100%"' in svg  # legend + text alternative


def test_equation_one_defines_the_weights_with_the_mask():
    """forward/softmax's equation (1), the definition of P every later page uses, has the mask
    M in it: P = softmax(S + M), per row."""
    (eq,) = re.findall(r"\$\$\n(.*?)\\tag\{1\}", src("forward/softmax.md"), re.S)
    assert r"\operatorname{softmax}(S + M)" in eq
    assert "M_{ij}" in eq and "M_{il}" in eq  # in the numerator and in the row's sum
