"""A displayed formula too wide for a phone is drawn a second time, broken over lines at its
relations (attention_site.extensions.linebreak), and the style sheet shows that drawing below
the width at which the first no longer fits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attention_site.extensions import linebreak, typeset
from attention_site.extensions.linebreak import narrow_tex, top_level

ROOT = Path(__file__).resolve().parents[2]

# formulas of the kinds the pages print (the reader's phone screenshots found these scrolling)
WIDE = [
    r"Q = X W_Q, \qquad K = X W_K, \qquad V = X W_V .",
    r"\frac{\partial p_i}{\partial s_j} = p_i\,(\delta_{ij} - p_j),"
    r"\qquad\text{i.e.}\qquad J = \operatorname{diag}(p) - p\,p^\top .",
    r"\operatorname{Var}(q\cdot k) = d_{k} \left(d_{k} \rho_{k} \rho_{q} - \rho_{k} \rho_{q} + 1"
    r"\right) \approx d_k",
    r"o_1 = \frac{1}{2 + e}\,\begin{bmatrix}2 & 0\end{bmatrix} + \frac{1}{2 + e}\,"
    r"\begin{bmatrix}0 & 2\end{bmatrix} + \frac{e}{2 + e}\,\begin{bmatrix}1 & 1\end{bmatrix}",
    r"P = \begin{bmatrix}\frac{1}{2 + e} & \frac{e}{2 + e}\\ \frac{1}{3} & \frac{2}{3}"
    r"\end{bmatrix} = \begin{bmatrix}0.2119 & 0.5761\\ 0.3333 & 0.6667\end{bmatrix}",
]


def _content(tex: str) -> list[str]:
    """The formula's top-level tokens but spacing, line breaks and alignment: what a reader
    reads, in order."""
    scaffold = {r"\\", "&", r"\quad", r"\qquad", r"\begin", r"\end", "{aligned}"}
    return [t for t, _ in top_level(tex) if t.strip() and t not in scaffold]


@pytest.mark.parametrize("tex", WIDE)
def test_a_broken_formula_says_the_same_in_the_same_order(tex: str) -> None:
    broken = narrow_tex(tex)
    assert broken is not None and broken.startswith(r"\begin{aligned}")
    assert broken.count(r"\\") >= 1
    assert _content(broken) == _content(tex)


@pytest.mark.parametrize(
    "tex",
    [
        r"y = \sum_j p_j v_j",  # one relation, nothing to break its side at
        r"\begin{bmatrix}a = b & c = d\end{bmatrix}",  # relations inside an environment only
        r"a &= b \\ &= c",  # on several lines already
        r"E = mc^2 \tag{1}",  # tagged
        r"\left( a = b \right)",  # inside \left … \right
    ],
)
def test_what_cannot_be_broken_at_its_top_level_is_left_as_written(tex: str) -> None:
    assert narrow_tex(tex) is None


def test_a_relation_in_braces_is_not_at_the_top_level() -> None:
    assert narrow_tex(r"f_{i = 1} + g_{j \le 2}") is None
    assert [t for t, top in top_level(r"x^{a=b}") if t == "="] == ["="]
    assert all(not top for t, top in top_level(r"x^{a=b}") if t == "=")


def test_unbalanced_tex_is_refused_by_the_tokenizer_and_skipped_by_the_breaker() -> None:
    with pytest.raises(ValueError, match="unbalanced"):
        top_level(r"a = {b")
    assert narrow_tex(r"a = {b + c = d") is None


@pytest.mark.docs  # MathJax runs in Node (the docs group)
def test_a_wide_formula_gets_a_narrow_drawing_and_a_narrow_one_does_not() -> None:
    wide = r"Q = X W_Q + X W_Q + X W_Q, \qquad K = X W_K + X W_K, \qquad V = X W_V + X W_V ."
    html = f'<div class="arithmatex">\\[{wide}\\]</div><div class="arithmatex">\\[a = b\\]</div>'
    out = typeset.typeset_html(html)
    boxes = re.findall(r'<div class="(arithmatex[^"]*)"', out)
    assert len(boxes) == 2 and boxes[1] == "arithmatex"
    below = re.fullmatch(r"arithmatex am-below-(\d+)", boxes[0])
    assert below is not None and int(below.group(1)) in typeset.BREAKPOINTS
    widths = [float(w) for w in re.findall(r'<svg style="[^"]*"[^>]*? width="([0-9.]+)ex"', out)]
    assert len(widths) == 3  # the wide formula twice, the short one once
    assert widths[1] < 0.85 * widths[0] and widths[0] > typeset.PHONE_EX
    assert 'class="MathJax am-wide"' in out and 'class="MathJax am-narrow"' in out
    assert typeset.typeset_html(out) == out  # a second pass changes nothing


def test_every_breakpoint_has_its_rule_in_the_style_sheet() -> None:
    css = (ROOT / "docs" / "stylesheets" / "extra.css").read_text("utf-8")
    assert re.search(r"mjx-container\.am-narrow \{ display: none; \}", css)
    for below in typeset.BREAKPOINTS:
        rule = re.search(
            rf"@media \(max-width: ([0-9.]+)px\) \{{\s*[^@]*?am-below-{below} > "
            rf"mjx-container\.am-wide \{{ display: none; \}}\s*[^@]*?am-below-{below} > "
            rf"mjx-container\.am-narrow \{{ display: block; \}}",
            css,
        )
        assert rule is not None, f"no rule shows the narrow drawing below {below} px"
        assert below - 1 < float(rule.group(1)) < below
    assert set(typeset.BREAKPOINTS) == {int(b) for b in re.findall(r"am-below-(\d+) >", css)}
    assert linebreak.RELATIONS >= {"=", r"\le", r"\approx"}
