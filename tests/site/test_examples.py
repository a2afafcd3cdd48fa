"""The seed examples as data: inputs, claims, their sources, the recovery of damaged inputs,
seed 002, and causal-768's reproduction (the whole-matrix normalisation it used)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.causal768 import implied_weights, normalisations, reproduce
from attention_math.examples import (
    EXAMPLES,
    IDENTITY_2X2,
    LETS_GO,
    LETS_GO_RECOVERY,
    NOTEBOOK_768,
    Claim,
    exact_entry,
    recover_weights,
)
from tests.built_pages import raw

VERDICTS = {"agrees", "rounding slip", "wrong"}


def test_five_seeds_are_covered() -> None:
    seeds = sorted(e.seed for e in EXAMPLES.values())
    assert [s[:3] for s in seeds] == ["000", "001", "002", "003", "004"]
    assert all(e.claims for e in EXAMPLES.values())


def test_identity_example_keeps_its_api() -> None:
    assert IDENTITY_2X2.exact("w_v") == sp.Matrix([[1, 2], [3, 4]])
    assert IDENTITY_2X2.numeric("x", np.float32).dtype == np.float32


@pytest.mark.parametrize("example_id", list(EXAMPLES))
def test_claims_are_well_formed(example_id: str) -> None:
    ex = EXAMPLES[example_id]
    for c in ex.claims:
        assert c.verdict in VERDICTS
        assert (c.diagnosis == "") == (c.verdict == "agrees"), c.id
        if not c.quantity.startswith("shape:"):
            for p in c.published:
                exact_entry(p)  # every published number parses exactly
        assert c.where


@pytest.mark.parametrize("example_id", list(EXAMPLES))
def test_numeric_inputs_are_the_exact_ones(example_id: str) -> None:
    ex = EXAMPLES[example_id]
    for name in ("x", "w_q", "w_k", "w_v", "v", "scaled"):
        if ex.has(name):
            exact = np.array(ex.exact(name).evalf(20).tolist(), dtype=float)
            assert np.array_equal(ex.numeric(name), exact)


def test_exact_entry() -> None:
    assert exact_entry("0.71") == sp.Rational(71, 100)
    assert exact_entry("-11.0") == -11
    assert exact_entry("-inf") == -sp.oo
    with pytest.raises(TypeError, match="strings, not floats"):
        exact_entry(0.71)


def test_places() -> None:
    c = Claim("c", "w", "output", (0,), ("0.12386",), "wrong", "x", decimals=6)
    assert c.places("0.12386") == 6  # pandas dropped the trailing zero
    c = Claim("c", "w", "output", (0, 0), ("-11.0",), "agrees", "")
    assert c.places("-11.0") == 1


def test_missing_input_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="publishes no 'w_v'"):
        LETS_GO.exact("w_v")


# --- seed 003: the damaged query weights --------------------------------------------


def test_damaged_query_weight_is_recovered() -> None:
    r = LETS_GO_RECOVERY
    assert r.damaged == ((0, 0),)  # only the printed 0.22 is inconsistent with Q
    assert r.printed[0, 0] == sp.Rational(22, 100)
    assert r.rounded[0, 0] == sp.Rational(222, 100)  # a lost leading digit
    assert LETS_GO.exact("w_q") == r.rounded
    # The least-squares fit explains the printed Q to within its rounding (± 0.005) …
    assert max(abs(e) for e in r.residual_least_squares) < sp.Rational(5, 1000)
    # … and so do the rounded weights: X·W rounds to every printed entry of Q.
    assert max(abs(e) for e in r.residual_rounded) <= sp.Rational(5, 1000)


def test_transposed_key_weights_do_not_explain_k() -> None:
    x, w_k = LETS_GO.exact("x"), LETS_GO.exact("w_k")
    k = {c.index: exact_entry(c.published[0]) for c in LETS_GO.claims if c.quantity == "k"}
    printed_k = sp.Matrix(3, 2, lambda i, j: k[(i, j)])
    assert max(abs(e) for e in x * w_k - printed_k) < sp.Rational(5, 100)
    assert max(abs(e) for e in x * w_k.T - printed_k) > 1


@settings(max_examples=30, deadline=None)
@given(
    w=st.lists(st.integers(-9, 9), min_size=4, max_size=4),
    damage=st.tuples(st.integers(0, 1), st.integers(0, 1)),
)
def test_recovery_finds_any_damaged_entry(w: list[int], damage: tuple[int, int]) -> None:
    x = ((1, 0), (0, 1), (1, 1))
    W = sp.Matrix(2, 2, w) / 10
    product = sp.Matrix(x) * W
    printed = W.copy()
    printed[damage] += 1  # the OCR changed one digit
    r = recover_weights(
        x,
        tuple(tuple(str(e) for e in product.row(i)) for i in range(3)),
        tuple(tuple(str(e) for e in printed.row(i)) for i in range(2)),
        decimals=1,
    )
    assert r.rounded == W and r.residual_rounded == sp.zeros(3, 2)
    assert r.damaged == (damage,)


def test_recovery_needs_an_overdetermined_system() -> None:
    with pytest.raises(ValueError, match="do not over-determine"):
        recover_weights((("1", "2"),), (("1", "2"),), (("1", "0"), ("0", "1")))


# --- seed 002: the normalisation, from the printed numbers ---------------------------


def test_printed_output_implies_whole_matrix_normalisation() -> None:
    implied, residual = implied_weights()
    assert residual < 1e-6  # the printed output is a combination of the printed V rows
    candidates = {
        k: np.array(sp.N(w, 20).tolist(), dtype=float) for k, w in normalisations().items()
    }
    errors = {k: np.abs(w - implied).max() for k, w in candidates.items()}
    assert errors["whole matrix"] < 1e-5
    assert errors["per row"] > 0.5 and errors["per column"] > 0.1
    assert not np.allclose(implied.sum(axis=1), 1, atol=0.1)  # not a per-row softmax


def test_notebook_claims_are_row_claims_over_printed_columns() -> None:
    rows = [c for c in NOTEBOOK_768.claims if c.quantity == "output"]
    assert [len(c.published) for c in rows] == [len(NOTEBOOK_768.columns)] * 3 == [20] * 3


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_seeded_reproduction(seed: int) -> None:
    r = reproduce(seed)
    assert np.allclose(r.weights.sum(axis=1), 1)
    assert np.isclose(r.weights_whole.sum(), 1)
    assert np.array_equal(r.output[0], r.v[0])  # the first token attends only to itself
    assert np.all(np.triu(r.weights, 1) == 0) and np.all(np.triu(r.weights_whole, 1) == 0)
    assert all("agrees" in c for c in r.checks)


def test_reproduce_rejects_bad_arguments() -> None:
    with pytest.raises(TypeError, match="seed must be an int"):
        reproduce("0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be positive"):
        reproduce(0, length=0)


@pytest.mark.parametrize(
    ("d", "label"),
    [(1, "column 1"), (2, "columns 1 and 2"), (3, "columns 1, 2 and 3")],
)
def test_reproduce_small_d_checks_distinct_existing_columns(d: int, label: str) -> None:
    r = reproduce(d=d)
    assert r.output.shape == (3, d)
    assert r.checks[1].startswith(f"output, {label}: ")
    assert all("agrees" in c for c in r.checks)


def test_whole_matrix_denominator_sums_over_rows_and_columns() -> None:
    from attention_math.causal768 import normalisations, whole_matrix_weight

    formula, value = whole_matrix_weight()
    (total,) = [a for a in sp.preorder_traversal(formula) if isinstance(a, sp.Sum)]
    variables = [lim[0] for lim in total.limits]
    assert len(variables) == 2  # over j ≤ i *and* over i, not one row
    assert value == normalisations()["whole matrix"][0, 0] and value != 1


@pytest.mark.docs
def test_the_causal_768_page_shows_the_whole_matrix_weight_it_computes(built_site: Path) -> None:
    """The page prints the package's formula for the whole-matrix weight, not a typed one."""
    from attention_math.causal768 import whole_matrix_weight

    assert sp.latex(whole_matrix_weight()[0]) in raw(built_site, "examples/causal-768")


def test_every_example_has_a_titled_source() -> None:
    from attention_math.examples import EXAMPLES, SOURCES

    assert {ex.seed for ex in EXAMPLES.values()} == set(SOURCES)
    for ex in EXAMPLES.values():
        assert ex.source.title and ex.source.cite().startswith(f"“{ex.source.title}")
        # the author, when the document names one, is in the citation; the file never is
        assert ex.source.author in ex.source.cite() and ex.source.file not in ex.source.cite()


def test_the_cat_sleeps_listing_is_the_catalogued_one() -> None:
    """The page quotes the tutorial's listing and runs it to print the shapes: its arrays are the
    catalogue's inputs, and its comments the ones the audit judges wrong."""
    import re

    from attention_math.examples import CAT_SLEEPS

    page = (Path(__file__).parents[2] / "docs/examples/the-cat-sleeps.md").read_text("utf-8")
    (listing,) = re.findall(r'```python exec="on" source="above"[^\n]*\n(.*?)\n```', page, re.S)
    scope: dict[str, object] = {}
    exec(compile(listing, "the-cat-sleeps listing", "exec"), scope)  # the page's own code
    assert np.array_equal(scope["S"], CAT_SLEEPS.numeric("x"))
    assert np.array_equal(scope["W_q"], CAT_SLEEPS.numeric("w_q"))
    wrong = {
        c.where.removeprefix("comment ").strip("'")
        for c in CAT_SLEEPS.claims
        if c.verdict == "wrong"
    }
    assert len(wrong) == 2 and all(c in listing for c in wrong), wrong
