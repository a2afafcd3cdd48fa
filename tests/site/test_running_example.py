"""The forward pages follow one example, the running one (W_Q ≠ W_K, d_k = 4), step by step.

Each step page computes its step on :data:`attention_math.running.RUNNING` (the 2×2 identity
example stays as a worked example of its own), and the built page shows that example's numbers.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math import running
from attention_math.display import fmt
from attention_math.running import forward, numeric_forward

ROOT = Path(__file__).resolve().parents[2]
STEPS = ["qkv", "scores", "scaling", "masking", "softmax", "weighted-sum", "formula"]


def _blocks(page: str) -> list[str]:
    text = (ROOT / "docs" / "forward" / f"{page}.md").read_text("utf-8")
    return re.findall(r"```python exec.*?\n(.*?)```", text, re.S)


@pytest.mark.parametrize("page", STEPS)
def test_each_step_page_computes_the_running_example(page: str) -> None:
    blocks = _blocks(page)
    assert any("attention_math.running" in b for b in blocks), f"forward/{page}"
    assert not any("IDENTITY_2X2" in b for b in blocks), (
        f"forward/{page} still computes the identity example: it is a worked example now"
    )


def test_the_running_example_is_not_symmetric_and_needs_the_scaling() -> None:
    exact = forward()
    raw = exact["Q"] * exact["K"].T  # L × L
    assert raw != raw.T  # W_Q ≠ W_K: a non-symmetric score matrix to teach from
    assert exact["K"].cols == 4 and exact["S"] == raw / 2  # √d_k = 2 is visible
    assert all(x.is_Integer for x in exact["S"])  # integer scores: weights read by eye


@pytest.mark.docs
@pytest.mark.parametrize(
    ("page", "name", "causal"),
    [
        ("softmax", "P", False),
        ("masking", "P", True),
        ("weighted-sum", "O", False),
        ("formula", "O", True),
    ],
)
def test_built_step_pages_show_the_running_example(
    built_site: Path, page: str, name: str, causal: bool
) -> None:
    html = (built_site / "forward" / page / "index.html").read_text("utf-8")
    value = np.asarray(numeric_forward(causal)[name])
    decimals = {fmt(x) for x in value.ravel() if x != round(x)}  # as exact_beside_decimal prints
    missing = sorted(d for d in decimals if f"<mn>{d}</mn>" not in html)
    assert decimals and not missing, f"forward/{page} lacks the running example's {name}: {missing}"
    assert 'class="checked"' in html  # each step carries its cross-check badge


@pytest.mark.docs
def test_built_scaling_page_shows_the_running_scores(built_site: Path) -> None:
    html = (built_site / "forward" / "scaling" / "index.html").read_text("utf-8")
    p13 = numeric_forward()["P"][0, 2]  # token 1's weight on key 3, scaled
    assert f"<mn>{fmt(p13)}</mn>" in html


def test_forward_hands_out_copies() -> None:
    first = running.forward(is_causal=True)
    first["P"][0, 0] = 99  # a page that edits its matrix
    assert running.forward(is_causal=True)["P"][0, 0] == 1
    numeric = running.numeric_forward()
    numeric["O"][:] = 0.0
    assert running.numeric_forward()["O"].any()


def test_forward_is_keyed_on_the_example(monkeypatch: pytest.MonkeyPatch) -> None:
    before = running.forward()["Q"]
    x = ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0))
    monkeypatch.setattr(running, "RUNNING", dataclasses.replace(running.RUNNING, x=x))
    after = running.forward()["Q"]
    assert after == sp.Matrix(x) * sp.Matrix(running.RUNNING.w_q)
    assert after != before
