"""The committed accuracy results of ``benchmarks/positions_oracle.py`` (read by the pages of
chapter "Positions and decoding"): every measured agreement is there, for both formats, and
within its bound."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).parents[1] / "benchmarks" / "results" / "positions_oracle.json"


def test_every_agreement_is_measured_in_both_formats_and_within_its_bound():
    doc = json.loads(RESULTS.read_text())
    rows = doc["results"]
    kinds = {(r["what"], r["dtype"]) for r in rows}
    for what in ("gqa", "block", "rope", "incremental"):
        assert {(what, "float64"), (what, "float32")} <= kinds, what
    for r in rows:
        assert 0 <= r["error_eps"] <= r["bound_eps"], r
    assert doc["machine"]["torch"], "the results name the PyTorch they were measured against"
    assert len(doc["load_before"]) == 3  # the load average goes with every figure


def test_gqa_covers_multi_query_and_multi_head():
    cases = {r["case"] for r in json.loads(RESULTS.read_text())["results"] if r["what"] == "gqa"}
    assert {"8 query heads, 1 key/value", "8 query heads, 8 key/value"} <= cases
