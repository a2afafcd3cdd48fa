"""Timings on the site (attention_site.pages.timings): a page shows a time only from a run on a
quiet machine, and always with the load the machine had."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from attention_site.data import load

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def blocks(page: str) -> list[str]:
    """The page's executed Python blocks, dedented (folded blocks are indented)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    found = re.findall(r'^( *)```python exec="on"[^\n]*\n(.*?)^\1```', text, flags=re.M | re.S)
    return ["\n".join(line[len(indent) :] for line in body.splitlines()) for indent, body in found]


def run(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<page block>", "exec"), {})  # the page's own code, as the site runs it
    return out.getvalue()


def test_performance_times_only_from_a_quiet_run(monkeypatch):
    from attention_site.pages.timings import quiet

    monkeypatch.chdir(ROOT)  # the page's block reads its results from the repository root
    doc = load("backward_bench")
    (code,) = [b for b in blocks("long/performance.md") if "backward_bench.json" in b]
    out = run(code)
    assert "load average" in out and f"on {doc['machine']['cores']} cores" in out
    timed = bool(re.search(r"\d \| [\d.]+ s, ", out.replace("|", " | ")))
    assert ("not published" in out) == (not quiet(doc))
    assert timed == quiet(doc), out
    # every results file the page reads is printed with its load
    page = (DOCS / "long/performance.md").read_text(encoding="utf-8")
    for name in set(re.findall(r"data/(\w+)\.json", page)):  # not a variant
        assert page.count(f"{name}.json") and "load_text(doc)" in page
