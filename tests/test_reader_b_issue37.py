"""Issue 37, the fresh read of examples/causal-768, why/scaling and why/masks: what the
rewrite added (the saturation figure's two ends, the heatmaps' shared scale and row sums) and
the order the pages teach in, each a check that fails if it goes."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math.derivations import scaling
from attention_site.figures.curves import saturation_figure
from attention_site.figures.heatmap import heatmap

DOCS = Path(__file__).resolve().parents[1] / "docs"


def src(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def _frobenius_of_jacobian(p: np.ndarray) -> float:
    """‖diag(p) − p pᵀ‖_F by NumPy, independent of the SymPy side."""
    return float(np.linalg.norm(np.diag(p) - np.outer(p, p)))


@pytest.mark.parametrize("n", [2, 3, 16, 50])
def test_saturation_limits_are_the_jacobian_at_uniform_and_one_hot(n: int) -> None:
    lim = scaling.saturation_limits(n)
    uniform, one_hot = np.full(n, 1 / n), np.eye(n)[0]
    assert lim["max_uniform"] == sp.Rational(1, n) and lim["max_one_hot"] == 1
    assert lim["grad_one_hot"] == 0
    assert abs(float(lim["grad_uniform"]) - _frobenius_of_jacobian(uniform)) < 1e-15
    assert _frobenius_of_jacobian(one_hot) == 0.0


def test_the_scaled_curve_sits_between_its_limits() -> None:
    """The page says the scaled row is neither one-hot nor uniform at any width."""
    ds = [1, 64, 1024]
    c = scaling.saturation(ds, np.random.default_rng(0), n_keys=16, n_samples=100)
    lim = scaling.saturation_limits(16)
    assert np.all(c["max_scaled"] > float(lim["max_uniform"]))
    assert np.all(c["max_scaled"] < 0.5 * float(lim["max_one_hot"]))


@pytest.mark.parametrize("bad", [1, 0, -3])
def test_saturation_limits_reject_too_few_keys(bad: int) -> None:
    with pytest.raises(ValueError, match="n_keys"):
        scaling.saturation_limits(bad)


def test_saturation_limits_reject_a_non_integer() -> None:
    with pytest.raises(TypeError, match="n_keys"):
        scaling.saturation_limits(2.5)  # type: ignore[arg-type]


def test_the_saturation_figure_labels_its_ends() -> None:
    ds = [1, 4]
    curves = scaling.saturation(ds, np.random.default_rng(0), 16, 10)
    lim = {k: float(v) for k, v in scaling.saturation_limits(16).items()}
    text = saturation_figure(ds, curves, lim, n_keys=16)
    assert "one-hot: all weight on one key" in text and "uniform over 16 keys" in text
    assert "one-hot" not in saturation_figure(ds, curves)  # only when asked


def test_a_heatmap_can_share_a_scale_and_show_row_sums() -> None:
    w = np.array([[1.0, 0.0], [0.25, 0.5]])
    text = heatmap(w, title="w", row_sums=True, vmin=0.0, vmax=1.0, colorbar=False)
    assert "row sum" in text and ">0.75<" in text  # the second row's sum
    assert "row sum" not in heatmap(w, title="w")


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
