"""The audit: every verdict and diagnosis pinned, the CLI run, the diagnoses computed."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import audit as audit_mod
from attention_math import audit as audit_module
from attention_math.__main__ import main
from attention_math.audit import (
    HYPOTHESES,
    audit,
    audit_claim,
    exact_steps,
    format_computed,
    steps,
)
from attention_math.crosscheck import CrossCheckError
from attention_math.examples import EXAMPLES, Claim, Example

A, S, W = "agrees", "rounding slip", "wrong"

#: every registered claim, by example and claim id (the registry, examples.EXAMPLES, holds
#: what the audit must find for each)
CLAIMS = {(e.id, c.id): c for e in EXAMPLES.values() for c in e.claims}


def test_claims_are_registered_once_with_a_verdict_the_audit_gives() -> None:
    assert len(CLAIMS) == sum(len(e.claims) for e in EXAMPLES.values())  # ids are unique
    for key, claim in CLAIMS.items():
        assert claim.verdict in (A, S, W), key
        assert (claim.verdict == A) == (claim.diagnosis == ""), key  # a slip says what it is


@pytest.mark.parametrize("key", sorted(CLAIMS), ids=lambda k: f"{k[0]}:{k[1]}")
def test_verdict_and_diagnosis(key: tuple[str, str]) -> None:
    """The audit, computed afresh, finds what the registry says of each claim."""
    finding = audit_claim(EXAMPLES[key[0]], CLAIMS[key])
    assert finding.as_registered, (finding.verdict, finding.diagnosis)


def _counts(verdicts: list[str]) -> tuple[int, int, int]:
    return verdicts.count(A), verdicts.count(S), verdicts.count(W)


def test_verdict_counts() -> None:
    """The three verdicts occur, and in the numbers the registry holds."""
    found = _counts([f.verdict for f in audit()])
    assert found == _counts([c.verdict for c in CLAIMS.values()])
    assert all(found), found  # the seeds hold claims that agree, slips and errors


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_cli_subprocess_exits_zero_and_prints_the_report() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "attention_math", "audit"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    for example_id in EXAMPLES:  # one table per example, under its id and title
        assert any(line.startswith(f"{example_id}: ") for line in lines), example_id
    assert lines[1].split() == ["claim", "published", "exact", "verdict", "diagnosis"]
    agrees, slips, wrong = _counts([c.verdict for c in CLAIMS.values()])
    summary = f"{len(CLAIMS)} claims: {agrees} agrees, {slips} rounding slip, {wrong} wrong"
    assert summary in run.stdout
    assert f"the {wrong} wrong are errors in the published examples" in " ".join(run.stdout.split())
    assert max(len(line) for line in lines) <= 100
    assert run.stderr == ""


def test_cli_one_example_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "the-cat-sleeps", "--where"]) == 0
    out = capsys.readouterr().out
    assert "the-cat-sleeps" in out and "identity-2x2" not in out
    assert out.splitlines()[1].split()[:2] == ["claim", "where"]
    assert main(["audit", "no-such-example"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "unknown example 'no-such-example'" in captured.err


def test_exact_column_never_reads_as_a_tie() -> None:
    # O[2,2] = 1.536496…: at two more decimals it would print 1.53650, which reads as if it
    # rounded up to 1.537, the wrong rounding the source could be accused of.
    (o22,) = [f for f in audit(["the-cat-sleeps"]) if f.claim.id == "O[2,2]"]
    assert format_computed(o22.computed, o22.claim) == "1.536496"
    for f in audit():
        if f.claim.quantity.startswith("shape:"):
            continue
        shown_all = format_computed(f.computed, f.claim).split(", ")  # long lists end in "… (n)"
        for shown, p in zip(shown_all, f.claim.published, strict=False):
            if "." in shown and shown[0] in "-0123456789":
                tail = shown.split(".")[1][f.claim.places(p) :]
                assert tail.rstrip("0") != "5", (f.claim.id, shown)


def test_cli_fails_when_a_verdict_flips(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ex = EXAMPLES["the-cat-sleeps"]
    # Register 1.537 (the wrong rounding of 1.536496…) as if it agreed: the audit must object.
    claims = tuple(
        dataclasses.replace(c, published=("1.537",)) if c.id == "O[2,2]" else c for c in ex.claims
    )
    monkeypatch.setitem(EXAMPLES, ex.id, dataclasses.replace(ex, claims=claims))
    assert main(["audit", ex.id]) == 1
    assert "CHANGED the-cat-sleeps O[2,2]" in capsys.readouterr().err
    flipped = [f for f in audit([ex.id]) if not f.as_registered]
    assert [(f.claim.id, f.verdict) for f in flipped] == [("O[2,2]", S)]


def test_every_step_is_cross_checked() -> None:
    for example_id in EXAMPLES:
        pairs = steps(example_id)
        assert "weights" in pairs
        for exact, num in pairs.values():
            assert exact.shape == num.shape


def test_exact_weights_rows_sum_to_one() -> None:
    for example_id in EXAMPLES:
        w = exact_steps(example_id)["weights"]
        for i in range(w.rows):
            assert sp.N(sum(w.row(i)), 30) == pytest.approx(1, abs=1e-25)


# --- the diagnoses are computed: synthetic examples with a known mistake ---------------


def _synthetic(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    published: np.ndarray,
    quantity: str = "output",
    decimals: int = 3,
) -> list:
    """An example with non-symmetric inputs whose published numbers are ``published``."""
    ex = Example(
        id=f"synthetic-{name}",
        title="synthetic",
        seed="test",
        x=((1, 0), (0, 1), (1, 2)),
        w_q=((1, 2), (0, 1)),
        w_k=((2, 0), (1, 1)),
        w_v=((1, 3), (2, 0)),
        tokens=("a", "b", "c"),
    )
    claims = tuple(
        Claim(f"{quantity}[{i},{j}]", "test", quantity, (i, j), (f"{v:.{decimals}f}",), "", "")
        for (i, j), v in np.ndenumerate(published)
    )
    ex = dataclasses.replace(ex, claims=claims)
    monkeypatch.setitem(EXAMPLES, ex.id, ex)
    return [audit_claim(ex, c) for c in claims]


def _mistake(name: str, **kw: object) -> np.ndarray:
    ex = Example(
        id="m",
        title="",
        seed="",
        x=((1, 0), (0, 1), (1, 2)),
        w_q=((1, 2), (0, 1)),
        w_k=((2, 0), (1, 1)),
        w_v=((1, 3), (2, 0)),
    )
    return audit_mod._forward(ex, **kw)[name]


@pytest.mark.parametrize(
    ("mistake", "diagnosis"),
    [
        ({"normalise": "all"}, "softmax normalised over the whole matrix"),
        ({"normalise": "column"}, "softmax normalised over columns"),
        ({"scale": "none"}, "no scaling by 1/√d_k"),
        ({"scale": "d_k"}, "scaled by 1/d_k instead of 1/√d_k"),
        ({"transpose": True}, "transposed weight matrices"),
    ],
)
def test_a_known_mistake_is_diagnosed(
    monkeypatch: pytest.MonkeyPatch, mistake: dict, diagnosis: str
) -> None:
    published = _mistake("output", **mistake)
    findings = _synthetic(monkeypatch, "-".join(map(str, mistake.items())), published)
    wrong = [f for f in findings if f.verdict == W]
    assert wrong, "the mistake must change some published number"
    assert {f.diagnosis for f in wrong} == {diagnosis}


def test_exp0_as_zero_is_diagnosed(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = EXAMPLES["five-words"]  # scores with exact zeros
    published = audit_mod._forward(ex, exp0_zero=True)["weights"]
    claims = tuple(
        Claim(f"w{i}{j}", "t", "weights", (i, j), (f"{v:.2f}",), "", "", 2)
        for (i, j), v in np.ndenumerate(published)
    )
    syn = dataclasses.replace(ex, id="synthetic-exp0", claims=claims)
    monkeypatch.setitem(EXAMPLES, syn.id, syn)
    wrong = [audit_claim(syn, c) for c in claims]
    wrong = [f for f in wrong if f.verdict == W]
    assert len(wrong) >= 10
    assert {f.diagnosis for f in wrong} == {"exp(0) treated as 0"}


def test_correct_numbers_agree_and_near_misses_are_slips(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _mistake("output")
    assert {f.verdict for f in _synthetic(monkeypatch, "correct", out)} == {A}
    bumped = np.round(out, 3) + 0.001  # the last digit off by one everywhere
    findings = _synthetic(monkeypatch, "bumped", bumped)
    assert {f.verdict for f in findings} == {S}
    far = np.round(out, 3) + 0.05  # fifty units of the last place
    assert {f.verdict for f in _synthetic(monkeypatch, "far", far)} == {W}


def test_hypotheses_are_listed_once_and_the_unexplained_is_none_of_them() -> None:
    assert len(set(HYPOTHESES)) == len(HYPOTHESES)
    assert audit_mod.UNEXPLAINED not in HYPOTHESES


def test_unknown_example_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown example 'nope'"):
        audit(["nope"])


def test_every_example_has_a_page_in_the_nav() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    nav = (root / "mkdocs.yml").read_text()
    for example_id in EXAMPLES:
        assert (root / "docs" / "examples" / f"{example_id}.md").is_file()
        assert f"examples/{example_id}.md" in nav
    assert "audit.md" in nav  # the ledger of all examples, wherever the nav puts it


def test_audit_table_links_each_example() -> None:
    from attention_math.audit import findings_table

    text = findings_table(audit(), link="../examples/", where=False)
    lines = text.splitlines()
    assert lines[0] == "| example | claim | published | exact | verdict | diagnosis |"
    assert len(lines) == 2 + sum(len(e.claims) for e in EXAMPLES.values())
    for example_id in EXAMPLES:
        # the built page's URL: MkDocs does not rewrite links in printed Markdown
        assert f"[{example_id}](../examples/{example_id}/)" in text


_COUNTER = iter(range(10**6))


@settings(max_examples=15, deadline=None)
@given(
    w=st.lists(st.integers(-3, 3), min_size=12, max_size=12),
    shift=st.sampled_from([0, 1, -1, 30]),
)
def test_verdict_follows_the_distance_in_last_places(w: list[int], shift: int) -> None:
    rows = [tuple(w[i : i + 2]) for i in range(0, 12, 2)]
    ex = Example(
        id=f"synthetic-prop-{next(_COUNTER)}",
        title="",
        seed="",
        x=((1, 0), (0, 1), (1, 1)),
        w_q=tuple(rows[0:2]),
        w_k=tuple(rows[2:4]),
        w_v=tuple(rows[4:6]),
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(EXAMPLES, ex.id, ex)
        exact = exact_steps(ex.id)["output"]
        claims = []
        for (i, j), _ in np.ndenumerate(np.zeros(exact.shape)):
            value = sp.N(exact[i, j], 30)
            units = int(sp.floor(value * 1000 + sp.Rational(1, 2))) + shift
            if abs(value * 1000 - sp.floor(value * 1000) - sp.Rational(1, 2)) < 1e-6:
                continue  # a near tie: the correct rounding is ambiguous
            text = f"{units / 1000:.3f}"
            claims.append(Claim(f"o{i}{j}", "t", "output", (i, j), (text,), "", ""))
        verdicts = {audit_claim(ex, c).verdict for c in claims}
    if claims:
        assert verdicts == {{0: A, 1: S, -1: S, 30: W}[shift]}


def test_audit_cross_checks_every_example(monkeypatch: pytest.MonkeyPatch) -> None:
    """``audit`` runs ``steps``: a float64 step off the exact one raises, as the module says."""
    real = audit_mod.numeric_steps

    def off(example_id: str) -> dict[str, np.ndarray]:
        out = dict(real(example_id))
        out["weights"] = out["weights"] + 1e-6  # far above the cross-check's bound
        return out

    monkeypatch.setattr(audit_mod, "numeric_steps", off)
    audit_mod.steps.cache_clear()
    try:
        with pytest.raises(CrossCheckError, match="identity-2x2: weights"):
            audit_mod.audit(["identity-2x2"])
    finally:
        audit_mod.steps.cache_clear()  # no poisoned pair left for later tests


def test_audit_of_a_changed_example_is_recomputed(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = EXAMPLES["the-cat-sleeps"]
    registered = audit_module.audit([ex.id])
    claims = tuple(dataclasses.replace(c, published=("9.999",)) for c in ex.claims[:1])
    monkeypatch.setitem(EXAMPLES, ex.id, dataclasses.replace(ex, claims=claims))
    changed = audit_module.audit([ex.id])
    assert len(changed) == 1 and changed[0].claim.published == ("9.999",)
    assert changed[0] != registered[0]
