"""The figures of the multi-head, gradients and linear-attention pages draw what the package
computes, with the shapes of its arrays, and appear on their pages with a text alternative."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attention_math.backward import attention_backward
from attention_math.multihead import AttentionParams, multi_head_attention
from attention_math.plot import curves, panels
from attention_math.running import RUNNING

ROOT = Path(__file__).resolve().parents[2]


def _cells(svg: str) -> list[str]:
    """The text of every ``<text>`` element: with ``svg.fonttype = none`` the numbers stay text."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def _label(svg: str) -> str:
    (label,) = re.findall(r'<svg role="img" aria-label="([^"]*)"', svg)
    return label


def _run(cells: list[str], want: list[str]) -> bool:
    """Whether ``want`` occurs in ``cells`` as one contiguous run (one panel, in order)."""
    n = len(want)
    return any(cells[i : i + n] == want for i in range(len(cells) - n + 1))


def _fmt(a: np.ndarray) -> list[str]:
    from attention_math.plot.panels import _two_places  # as the figures print a number

    return [_two_places(x) for x in a.ravel()]


def test_the_heads_figure_shows_the_package_arrays_with_their_shapes() -> None:
    x, w_q, w_k, w_v = (RUNNING.numeric(n) for n in ("x", "w_q", "w_k", "w_v"))
    w_o = np.array(panels.HEADS_W_O, dtype=float)
    svg = panels.running_heads()
    label = _label(svg)
    h, d_k, d_v = 2, w_q.shape[1] // 2, w_v.shape[1] // 2
    L = x.shape[0]
    # each panel's shape, as the package's arrays have it
    for title, shape in [
        ("input X", x.shape),
        ("Q⁽¹⁾ = X W_Q⁽¹⁾", (L, d_k)),
        ("V⁽²⁾ = X W_V⁽²⁾", (L, d_v)),
        ("P⁽¹⁾ = softmax", (L, L)),
        ("head₂ = P⁽²⁾ V⁽²⁾", (L, d_v)),
        ("Concat(head₁, head₂)", (L, h * d_v)),
        ("× W_O", w_o.shape),
        ("= output", (L, w_o.shape[1])),
    ]:
        assert re.search(rf"{re.escape(title)}[^:]*\n{shape[0]}×{shape[1]}:", label), title
    # the output panel holds multi_head_attention's result, entry by entry, row by row
    out = multi_head_attention(x, x, AttentionParams(w_q, w_k, w_v, w_o), h)  # L × d_out
    assert _run(_cells(svg), ["output feature", "token", *_fmt(out), "= output", "3×2"])


def test_the_heads_figure_refuses_to_draw_what_multi_head_attention_does_not_compute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import attention_math.multihead as mh

    real = mh.multi_head_attention
    monkeypatch.setattr(mh, "multi_head_attention", lambda *a, **k: real(*a, **k) + 1e-6)
    panels.running_heads.cache_clear()  # drawn anew, with the broken multi_head_attention
    with pytest.raises(AssertionError, match="output Concat · W_O"):
        panels.running_heads()
    panels.running_heads.cache_clear()  # no figure drawn from it is kept


def test_the_backward_graph_shows_attention_backward_and_the_shapes() -> None:
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 4)), rng.standard_normal((3, 4))  # L_q × d_k, L_k × d_k
    v, d_out = rng.standard_normal((3, 1)), rng.standard_normal((2, 1))  # L_k × d_v, L_q × d_v
    svg = panels.backward_graph(q, k, v, d_out)
    label = _label(svg)
    for name, shape in [
        ("dO", "L_q × dᵥ = 2×1"),
        ("dV", "Lₖ × dᵥ = 3×1"),
        ("dP", "L_q × Lₖ = 2×3"),
        ("dS", "L_q × Lₖ = 2×3"),
        ("dQ", "L_q × dₖ = 2×4"),
        ("dK", "Lₖ × dₖ = 3×4"),
    ]:
        assert re.search(rf"{name} = [^:]*\n{shape}:", label), (name, shape)
    dq, dk, dv = attention_backward(q, k, v, d_out)
    cells = _cells(svg)
    for rows, grad in (("query", dq), ("key", dk), ("key", dv)):
        assert _run(cells, ["feature", rows, *_fmt(grad)]), grad


def test_the_backward_graph_refuses_to_draw_what_attention_backward_does_not_compute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import attention_math.backward as bw

    real = bw.attention_backward
    monkeypatch.setattr(
        bw, "attention_backward", lambda *a, **k: [g * 1.001 for g in real(*a, **k)]
    )
    with pytest.raises(AssertionError, match="the figure's dQ"):
        panels.identity_backward_graph()


@pytest.mark.parametrize("widths", [(64, 128), (16,)])
def test_the_crossover_is_marked_where_the_drawn_curves_cross(widths: tuple[int, ...]) -> None:
    from attention_math.derivations.linear import crossover_length, d

    fig, marked = curves.crossover_axes(widths)
    try:
        (ax,) = fig.axes
        lines = [ln for ln in ax.get_lines() if ln.get_linestyle() in ("-", "--")]
        vlines = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
        for n, width in enumerate(widths):
            quad, lin = lines[2 * n], lines[2 * n + 1]
            length = np.asarray(quad.get_xdata(), dtype=float)
            gap = np.log(np.asarray(quad.get_ydata(), dtype=float)) - np.log(
                np.asarray(lin.get_ydata(), dtype=float)
            )
            i = int(np.flatnonzero(np.diff(np.sign(gap)))[0])  # the curves cross in [i, i + 1]
            t = gap[i] / (gap[i] - gap[i + 1])
            crossing = float(np.exp(np.log(length[i]) + t * np.log(length[i + 1] / length[i])))
            x_line = float(np.asarray(vlines[n].get_xdata())[0])
            assert x_line == pytest.approx(crossing, rel=1e-3)
            assert x_line == float(crossover_length().subs(d, width)) == marked[width]
    finally:
        plt.close(fig)


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_the_crossover_figure_names_each_crossover_in_its_text_alternative() -> None:
    label = _label(curves.cost_crossover((64, 128)))
    assert _crossover_label(64) in label and _crossover_label(128) in label, label


def test_a_figure_keeps_its_text_whole_through_the_markdown_with_the_abbreviations() -> None:
    import markdown

    from attention_math.plot.roofline import roofline

    figure = roofline([("P = softmax(S)", 1.25), ("fused", 234.0)], title="roofline")
    abbr = (ROOT / "includes" / "abbreviations.md").read_text("utf-8")
    md = markdown.Markdown(extensions=["abbr", "md_in_html", "attention_site.svg_block"])
    indented = figure.replace("\n", "\n    ")  # as in a code block's result tab
    html = md.convert(
        f"A figure:\n\n{figure}\n\n- in a list:\n\n    {indented}\n\n"
        f"After it, the softmax.\n\n{abbr}"
    )
    assert html.count("P = softmax(S)</text>") == 2
    assert not re.search(r"<text[^>]*>[^<]*<(?:abbr|a|span|code|em|strong)\b", html)
    assert '<abbr title="' in html.rsplit("</svg>", 1)[1]  # the prose still gets its hover


def _crossover_label(width: int) -> str:
    from attention_math.derivations.linear import crossover_length, d

    return f"L* = {float(crossover_length().subs(d, width)):.1f}"


@pytest.mark.docs
@pytest.mark.parametrize(
    ("page", "words"),
    [
        ("why/multi-head/index.html", "2 heads: X projected, cut into column blocks"),
        ("why/multi-head/index.html", "head₂ = P⁽²⁾ V⁽²⁾\n3×1"),
        ("gradients/index.html", "the backward pass from dO"),
        ("gradients/index.html", "dS = P ∘\n(dP - rowsum(dP ∘ P))\nL_q × Lₖ = 2×2"),
        ("long/linear-attention/index.html", _crossover_label(64)),
        ("long/linear-attention/index.html", _crossover_label(128)),
        ("long/io/index.html", "P = softmax(S)"),
    ],
)
def test_each_figure_is_on_its_page_with_its_text_alternative(
    built_site, page: str, words: str
) -> None:
    html = (built_site / page).read_text(encoding="utf-8")
    labels = [
        unescape(label) for label in re.findall(r'<svg role="img" aria-label="([^"]*)"', html)
    ]
    # a screen reader collapses white space: a figure in an indented tab keeps its indent
    flat = [" ".join(label.split()) for label in labels]
    assert any(" ".join(words.split()) in label for label in flat), labels
    # an HTML element inside SVG text (the abbreviations' <abbr>) is not drawn: the word vanishes
    assert not re.search(r"<text[^>]*>[^<]*<(?:abbr|a|span|code|em|strong)\b", html)


def test_the_roofline_joins_points_at_one_place_and_refuses_a_bad_attained_rate() -> None:
    from attention_math.plot.roofline import roofline

    points = [("S = QKᵀ", 62.1), ("O = PV", 62.1), ("fused", 227.0)]
    figure = roofline(points, title="roofline", attained={"fused": 1.8e14})
    assert "S = QKᵀ and O = PV" in figure
    assert figure.count("fused</text>") == 1
    with pytest.raises(ValueError, match="not a point"):
        roofline(points, title="roofline", attained={"prefill": 1e14})
    with pytest.raises(ValueError, match="positive"):
        roofline(points, title="roofline", attained={"fused": 0.0})
