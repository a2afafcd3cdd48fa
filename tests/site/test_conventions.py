"""The table of the page "Coming from PyTorch, d2l or Hugging Face" (pages.conventions).

Without PyTorch: every row runs, says when it ran one side only, and a disagreement raises.
With it (``oracle``): every row runs both sides and they agree, and the recorded PyTorch side
the build shows without PyTorch is still what PyTorch finds."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from attention_site.pages import conventions
from attention_site.pages.conventions import ConventionMismatch, Row, rows, table

# What issue 19 asks the page to map, one row each (in the table's order)
TOPICS = [
    "boolean mask",
    "additive (float) mask",
    "`nn.MultiheadAttention` masks",
    "sequence-first inputs",
    "d2l's `valid_lens`",
    "`(B, 1, 1, L)` masks",
    "`is_causal` alignment",
    "fully masked row",
    "attention weights",
    "`kdim`, `vdim`",
    "log-sum-exp",
    "backward",
    "`log_softmax`, empty input",
    "dtypes and `scale`",
    "bfloat16",
    "zero-length sequence",
    # and the SDPA arguments the package has no flag for
    "`enable_gqa`",
    "dropout",
]


def test_every_convention_has_a_row():
    assert [r.topic for r in rows(torch=False)] == TOPICS


def test_without_torch_each_torch_row_says_it_ran_one_side():
    for r in rows(torch=False):
        compared_in_numpy = r.topic == "d2l's `valid_lens`"  # d2l's rule: NumPy only
        assert ("PyTorch is not installed" in r.found) != compared_in_numpy, r
        assert "nan" not in r.found, r  # NaN appears only in MultiheadAttention's column


def test_rows_print_what_was_computed():
    by_topic = {r.topic: r.found for r in rows(torch=False)}
    assert "top-left [[1, 0, 0, 0], [1, 1, 0, 0]]" in by_topic["`is_causal` alignment"]
    assert "bottom-right [[1, 1, 1, 0], [1, 1, 1, 1]]" in by_topic["`is_causal` alignment"]
    assert (
        "= [0.0, -1000.0], `log(softmax(…))` = [0.0, -inf]"
        in by_topic["`log_softmax`, empty input"]
    )
    assert (
        "ours: output row [0.0, 0.0, 0.0, 0.0], weights [0.0, 0.0, 0.0]"
        in by_topic["fully masked row"]
    )
    assert "weights [0.333, 0.333, 0.333]" in by_topic["fully masked row"]
    assert "float16 with float32 gives float32" in by_topic["dtypes and `scale`"]
    assert "negative scale refused" in by_topic["dtypes and `scale`"]
    assert "output (2, 3, 4) (not (2, 2, 3, 4))" in by_topic["`(B, 1, 1, L)` masks"]
    assert "no queries: ours (1, 1, 0, 5)" in by_topic["zero-length sequence"]
    assert "`(L, B, E)` = (4, 2, 6), swapped: output (2, 4, 6)" in by_topic["sequence-first inputs"]


def test_a_disagreement_raises_instead_of_printing():
    a = np.zeros((2, 3))
    assert conventions._agree(a, a + 1e-14).startswith("agree")
    with pytest.raises(ConventionMismatch, match="shapes"):
        conventions._agree(a, np.zeros((3, 2)))
    with pytest.raises(ConventionMismatch, match="outputs differ"):
        conventions._agree(a, a + 1e-3, "outputs")


def test_a_row_that_stops_agreeing_fails_the_table(monkeypatch):
    # d2l's rule against ours: break ours and the table raises rather than print "differ"
    monkeypatch.setattr(conventions, "padding_mask", lambda lens, n: np.ones((2, 1, n), bool))
    with pytest.raises(ConventionMismatch):
        table(torch=False)


def test_bfloat16_row_without_ml_dtypes(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        conventions.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ml_dtypes" else real(name, *a),
    )
    assert "`ml_dtypes` is not installed" in conventions.bfloat16(None).found


def test_bfloat16_row_with_ml_dtypes():
    pytest.importorskip("ml_dtypes")  # in the test group: present wherever the suite runs
    found = conventions.bfloat16(None).found
    assert found.split("PyTorch")[-1].count("ours returns bfloat16") == 1


def test_table_escapes_pipes_and_has_one_line_per_row(monkeypatch):
    monkeypatch.setattr(conventions, "ROWS", (lambda torch: Row("a|b", "x", "y", "z"),) * 2)
    lines = table(torch=False).splitlines()
    assert len(lines) == 4 and lines[2] == "| a\\|b | x | y | z |"


def test_without_pytorch_the_table_shows_the_recorded_side_labelled():
    """Issue 37: a build without PyTorch showed "the package's side only" in every row; it now
    shows PyTorch's side as recorded by the oracle run, with the version and date."""
    from pathlib import Path

    from attention_site.data import load

    rec = load("conventions_oracle")
    assert rec["torch"] and rec["recorded_utc"][:4].isdigit()
    assert {r["topic"] for r in rec["rows"]} == {r.topic for r in rows(torch=False)}
    body = table(torch=False, recorded=rec).splitlines()[2:]
    label = f"**Recorded** (PyTorch {rec['torch']}, {rec['recorded_utc'][:10]})"
    torch_rows = [line for line in body if "PyTorch is not installed" in line or label in line]
    assert torch_rows and all(label in line for line in torch_rows)
    assert not any("the package's side only" in line for line in body)
    page = Path(__file__).resolve().parents[2] / "docs/reference/coming-from-pytorch.md"
    assert "conventions_oracle.json" in page.read_text(encoding="utf-8")


@pytest.mark.oracle
def test_page_rows_run_both_sides_and_agree(torch):
    """With PyTorch every row runs both sides, and what the rows compute is what PyTorch does:
    the sides agree where the conventions match, and differ where the page says they do."""
    for r in rows(torch):
        assert "PyTorch is not installed" not in r.found, r
    found = {r.topic: r.found for r in rows(torch)}
    assert "SDPA raises for mixed dtypes" in found["dtypes and `scale`"]
    assert "`MultiheadAttention`: weights [nan, nan, nan]" in found["fully masked row"]
    assert "SDPA: output row [0.0, 0.0, 0.0, 0.0]" in found["fully masked row"]
    topics = ("boolean mask", "`kdim`, `vdim`", "backward", "log-sum-exp", "sequence-first inputs")
    for topic in (*topics, "attention weights", "`(B, 1, 1, L)` masks"):
        assert "agree (max abs difference" in found[topic], topic
    assert found["`enable_gqa`"].startswith("agree (max abs difference")
    assert "in `eval()` agree (max abs difference" in found["dropout"]
    assert "averaged agree" in found["attention weights"]
    assert "per head agree" in found["attention weights"]


@pytest.mark.oracle
def test_the_rows_claims_about_torch_hold(torch):
    # what the "backward" and "sequence-first inputs" rows say of PyTorch, checked directly
    F = torch.nn.functional
    q = torch.zeros(1, 2, 3, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=torch.zeros(2, 2), is_causal=True)
    assert torch.nn.MultiheadAttention(4, 2).batch_first is False


@pytest.mark.oracle
def test_recorded_pytorch_side_matches_a_fresh_run(torch):
    """data/conventions_oracle.json is what a build without PyTorch shows as
    PyTorch's side: under CI (where PyTorch is installed) it must still be what PyTorch finds;
    rerun benchmarks/conventions_oracle.py when this fails."""
    import re

    from attention_site.data import load
    from attention_site.pages.conventions import record

    saved = load("conventions_oracle")
    fresh = record(torch)

    def shape(found: str) -> str:  # rounding-level numbers may move between machines
        return re.sub(r"\d\.\de[-+]\d\d", "N", found)

    assert [r["topic"] for r in saved["rows"]] == [r["topic"] for r in fresh["rows"]]
    for old, new in zip(saved["rows"], fresh["rows"], strict=True):
        assert shape(old["found"]) == shape(new["found"]), old["topic"]
