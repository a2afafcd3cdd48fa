"""A formula's box keeps its drawing's size and baseline while the browser skips it.

extra.css lets the browser skip formulas off screen (``content-visibility: auto``); the
build writes each formula's size as the size of its box meanwhile
(``attention_site.extensions.typeset.sized``), from what MathJax drew, so that drawing it
moves nothing (the browser test tests/browser/test_render_cost.py measures that on a
page). A dotted object name in an API heading may wrap after its dots
(``breakable_names``), not mid-word, on a phone.
"""

from __future__ import annotations

import re

import pytest

from attention_site.extensions import names, typeset

PAGE = (
    '<p>score <span class="arithmatex">\\(q_i^\\top k_j / \\sqrt{d_k}\\)</span> per pair</p>'
    '<div class="arithmatex">\\[P = \\frac{e^{s}}{\\sum_j e^{s_j}}\\]</div>'
    '<div class="arithmatex">\\[\\mathrm{att} = \\operatorname{softmax}(S) V \\tag{1}\\]</div>'
)
CONTAINER = re.compile(
    r'<mjx-container ([^>]*)><svg style="vertical-align: ([^;]+);[^"]*"[^>]*? '
    r'width="([^"]+)" height="([^"]+)"'
)


@pytest.mark.docs  # runs MathJax in Node, as the build does
def test_every_formula_box_has_its_drawings_size_and_depth() -> None:
    out = typeset.typeset_html(PAGE)
    found = CONTAINER.findall(out)
    assert len(found) == 3
    for attrs, depth, width, height in found:
        style_attr = re.search(r'style="([^"]*)"', attrs)
        assert style_attr is not None, attrs
        style = style_attr.group(1)
        display = 'display="true"' in attrs
        expected = f"contain-intrinsic-size: {'auto' if width == '100%' else width} {height};"
        assert style.startswith(expected), style
        # an inline formula's box is lowered by the drawing's depth; a displayed one is a block
        assert (f"vertical-align: {depth};" in style) is not display, style
        ratio = f"aspect-ratio: {width.removesuffix('ex')} / {height.removesuffix('ex')};"
        assert (ratio in style) is not display, style
    assert [w for *_, w, _ in found].count("100%") == 1  # the numbered equation spans the line


def test_sized_leaves_what_it_does_not_recognise() -> None:
    hook = typeset
    assert hook.sized("<span>not maths</span>") == "<span>not maths</span>"
    drawn = (
        '<mjx-container class="MathJax" jax="SVG" style="position: relative;">'
        '<svg style="vertical-align: -0.5ex;" xmlns="http://www.w3.org/2000/svg" '
        'width="2ex" height="1.5ex"></svg></mjx-container>'
    )
    assert hook.sized(drawn).startswith(
        '<mjx-container class="MathJax" jax="SVG" style="contain-intrinsic-size: 2ex 1.5ex; '
        'vertical-align: -0.5ex; aspect-ratio: 2 / 1.5; position: relative;">'
    )
    flat = drawn.replace("-0.5ex", "0")  # MathJax writes a zero depth without a unit
    assert "vertical-align: 0; aspect-ratio: 2 / 1.5; position" in hook.sized(flat)


def test_a_dotted_object_name_may_wrap_after_its_dots_only() -> None:
    hook = names
    heading = (
        '<h2 id="x"><code class="doc-symbol doc-symbol-heading doc-symbol-module"></code>'
        '<span class="doc doc-object-name doc-module-name">attention_math.derivations.tiles'
        "</span></h2><p>attention_math.numeric stays as written in prose</p>"
    )
    out = hook.breakable_names(heading)
    assert ">attention_math.<wbr>derivations.<wbr>tiles</span>" in out
    assert "<p>attention_math.numeric stays" in out
    assert hook.breakable_names(out.replace("<wbr>", "")) == out
