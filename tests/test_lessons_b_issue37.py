"""Issue 37, the pages of positions/ and long/: each corrected statement with a check that fails
if the old one comes back (the RoPE checks are in test_positions_derivations/_oracle)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def source(page: str) -> str:
    return re.sub(r"\s+", " ", (DOCS / page).read_text(encoding="utf-8"))


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


def test_flash_backward_credits_the_first_paper_for_the_recomputing_backward():
    text = source("long/flash-backward.md")
    intro = text[: text.index("## The three identities")]
    first, second = "arxiv.org/abs/2205.14135", "arxiv.org/abs/2307.08691"
    # the recomputing backward, D = rowsum(dO∘O) and key blocks outside: FlashAttention (2022)
    assert first in intro and intro.index(first) < intro.index("rowsum")
    assert intro.index("key blocks in the outer loop") < intro.index(second)
    # what FlashAttention-2 changed: the saved statistic and the parallelism
    after = intro[intro.index(second) :]
    assert "log-sum-exp" in after and "parallel" in after
    assert "FlashAttention's backward (Dao, 2023" not in text
    assert "as FlashAttention-2 orders them" not in text


def test_performance_times_only_from_a_quiet_run(monkeypatch):
    from attention_site.pages.timings import quiet

    monkeypatch.chdir(ROOT)  # the page's block reads its results from the repository root
    doc = json.loads((ROOT / "benchmarks/results/backward_bench.json").read_text())
    (code,) = [b for b in blocks("long/performance.md") if "backward_bench.json" in b]
    out = run(code)
    assert "load average" in out and f"on {doc['machine']['cores']} cores" in out
    timed = bool(re.search(r"\d \| [\d.]+ s, ", out.replace("|", " | ")))
    assert ("not published" in out) == (not quiet(doc))
    assert timed == quiet(doc), out
    # every results file the page reads is printed with its load
    page = (DOCS / "long/performance.md").read_text(encoding="utf-8")
    for name in set(re.findall(r"benchmarks/results/(\w+)\.json", page)):  # not a variant
        assert page.count(f"{name}.json") and "load_text(doc)" in page


def test_linear_attention_crossover_moves_with_the_number_of_features():
    from attention_math.derivations.linear import (
        crossover_length,
        d,
        n_features,
        performer_crossover,
    )

    for width, m in ((64, 64), (64, 256), (128, 512), (32, 1024)):
        at = float(performer_crossover().subs({d: width, n_features: m}))
        assert 1.5 * m < at < 2.5 * m  # near m (about 2m), however small d is
        assert at > float(crossover_length().subs(d, width))  # never below elu's d-sized one
    text = source("long/linear-attention.md")
    assert "orthogonal" in text and "arxiv.org/abs/2009.14794" in text
    assert "for these features only" in text


def test_sliding_window_edge_differs_by_one_key():
    from attention_math.derivations.sliding_window import edge_conventions
    from attention_math.numeric import sliding_window_mask

    for length, w in ((8, 3), (20, 5), (6, 1)):
        ours, inclusive = edge_conventions(length, w).values()
        assert (ours == sliding_window_mask(length, window=w)).all()
        assert (inclusive == sliding_window_mask(length, window=w + 1)).all()
        assert ours[-1].sum() == w and inclusive[-1].sum() == w + 1
    with pytest.raises(ValueError, match="window"):
        edge_conventions(4, 0)
    text = source("positions/sliding-window.md")
    assert "window_size=(w - 1, 0)" in text and "between $i - w$ and $i$" in text


def test_sinks_first_token_and_positions_within_the_cache():
    from attention_math.derivations.decoding import streaming_positions
    from attention_math.numeric import causal_mask

    seen = causal_mask(6).sum(axis=0)
    assert seen[0] == 6 and (seen[1:] < 6).all()
    kept = streaming_positions(9, 4, 3)  # the paper's example: tokens 0-3 and 6-8 cached
    assert [t for t, _ in kept] == [0, 1, 2, 3, 6, 7, 8]
    assert [c for _, c in kept] == list(range(7))
    text = source("positions/sinks.md")
    assert "every* query sees" in text and "within the cache" in text
    assert "arxiv.org/abs/2309.17453" in text and "evanmiller.org" in text


def test_online_softmax_figure_shows_lambda_falling_when_the_maximum_moves():
    from attention_site.figures.online_state import state_steps

    _, steps = state_steps()
    falls = [s for s in steps if s["ell"] < s["ell_old"]]
    assert falls and all(s["m"] > s["m_old"] for s in falls)  # λ falls only when m moves
    assert all(np.isclose(s["carried"] + s["new"], s["ell"]) for s in steps)
    text = source("long/online-softmax.md")
    assert text.index("state_figure()") < text.index("merge_is_associative")


MY_PAGES = sorted(
    str(p.relative_to(DOCS))
    for folder in ("positions", "gradients", "long")
    for p in (DOCS / folder).glob("*.md")
)
FOLD = '??? abstract "How we know this is right"'


@pytest.mark.parametrize("page", MY_PAGES)
def test_evidence_is_in_one_folded_block_at_the_end(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    assert text.count(FOLD) <= 1
    main = text
    if FOLD in text:
        tail = text[text.index(FOLD) :]
        assert all(not line or line.startswith("    ") for line in tail.splitlines()[1:])
        main = text[: text.index(FOLD)]
    prose = re.sub(r"```.*?```", "", main, flags=re.S)
    prose = re.sub(r"`[^`]*`", "", prose)
    words = r"the build|test suite|pytest|\bCI\b|benchmark|exit status|OpenBLAS|GEMM|"
    words += r"calibration|threadpoolctl|hypothesis"
    assert not re.findall(words, prose, flags=re.I), page
    if "positions_oracle.json" in text or "_bench" in text:  # evidence lives in the fold
        assert "positions_oracle.json" not in main and "_bench" not in main
