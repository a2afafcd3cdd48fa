"""The order each lesson teaches in, read from its Markdown source or from the figure it prints
(no site build): the hardest pages after their fresh read (the online softmax, RoPE, "Attention
as …", causal-768, why/scaling, why/masks) keep the step a reader needs before the step that
uses it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parents[1] / "docs"
FOLD = '??? abstract "How we know this is right"'


def src(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def main_line(page: str) -> str:
    """The page's Markdown before its folded evidence block."""
    text = src(page)
    return text[: text.index(FOLD)] if FOLD in text else text


def test_online_softmax_derives_the_merge_factor_before_the_merge_and_the_figure():
    text = main_line("long/online-softmax.md")
    factor = text.index(r"e^{s_j - m} &= e^{m_T - m}\, e^{s_j - m_T}")
    merge = text.index(r"\lambda_{T\cup U} &= e^{m_T - m}\lambda_T")
    assert factor < merge < text.index("state_figure()") < text.index("merge_is_associative")
    assert "**tile**" in text[: text.index("## The state")]  # the word is said before it is used


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


def test_online_softmax_shows_flashattention_1s_update_before_comparing_it():
    text = main_line("long/online-softmax.md")
    fa1 = text.index(r"\lambda_T \cdot \big(o_T/\lambda_T\big)")
    assert fa1 < text.index("osm.fa1_update")


def test_rope_starts_from_the_offset_in_a_plane_and_folds_the_rounding():
    text = main_line("positions/rope.md")
    plane = text.index("positional.rope(q, [i]), positional.rope(k, [j])")
    assert plane < text.index("## Scores depend on the offset only") < text.index("## Two layouts")
    for word in ("unit in the last place", "ulp", "bit for bit", "mpmath", "float32"):
        assert word not in text, word  # the rounding discussion lives in the folded block


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
    assert "on top of each other" in svg


def test_attention_as_explains_layer_normalisation_before_qk_norm_and_shows_the_norms():
    text = main_line("attention-as.md")
    said = re.search(r"\*layer\s+normalisation\*", text)  # the word, said and explained
    assert said and said.start() < text.index("**QK-norm**") < text.index(
        "from attention_math.block import"
    )
    assert "positions/block.md" in text  # where the reader meets it again


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
    assert "heatmap(" not in main_line("attention-as.md")  # the 6 × 40 heatmap was unreadable
    assert re.search(r"smoother_weights_figure\(0\.5\)", main_line("attention-as.md"))


def test_causal_768_states_its_point_before_any_number() -> None:
    text = src("examples/causal-768.md")
    point = text.index("**The point of this example: which axis the softmax runs over.**")
    assert point < text.index("```python exec")
    assert "axis=None" in text and "docs.scipy.org" in text  # SciPy's default, cited
    # the two weight heatmaps share one colour scale and print their row sums
    assert "vmin=0.0" in text and "vmax=1.0" in text and "row_sums=True" in text
    # the machinery of the reproduction (its cross-checks) is folded
    folded = text.index('??? abstract "How we know this is right"')
    assert text.index(".checks") > folded


def test_scaling_derives_the_standard_case_before_the_general_one() -> None:
    text = src("why/scaling.md")
    folded = text.index('??? note "When the assumptions fail')
    assert text.index("## The derivation") < text.index("**One product.**") < folded
    # the general symbols (μ, σ, ρ) appear only in the folded cases
    main = text[:folded]
    assert not re.search(r"\\(mu|sigma|rho)_", main), "general moments in the main line"
    # the softmax Jacobian is derived before its figure
    assert text.index("the quotient rule gives") < text.index("saturation_figure(")


def test_masks_derive_the_threshold_before_its_table_and_define_sdpa_before_use() -> None:
    text = src("why/masks.md")
    table = text.index("from attention_math.derivations.masks import underflow")
    assert text.index("**Where a float reaches zero.**") < table
    assert text.index("\\iff t \\le t^*") < table
    assert text.index("is PyTorch's `scaled_dot_product_attention`") < text.index(
        "PyTorch's SDPA since 2.5"
    )
    assert text.rstrip().splitlines()[-1].startswith("    ")  # ends inside the folded block
    assert text.index('??? abstract "How we know this is right"') > text.index(
        "## The fully masked row"
    )


def test_equation_one_defines_the_weights_with_the_mask():
    """forward/softmax's equation (1), the definition of P every later page uses, has the mask
    M in it: P = softmax(S + M), per row."""
    (eq,) = re.findall(r"\$\$\n(.*?)\\tag\{1\}", src("forward/softmax.md"), re.S)
    assert r"\operatorname{softmax}(S + M)" in eq
    assert "M_{ij}" in eq and "M_{il}" in eq  # in the numerator and in the row's sum
