"""The errors a careful reader found (issue 15), each with a check that fails if it comes back.

Unit checks test the derivation behind each corrected statement; the built-site checks grep
the rendered page for the wrong statement and for the corrected one.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math import numeric
from attention_math.derivations.convex_hull import in_column_ranges, in_hull
from tests.conftest import mkdocs_config, nav_pages


def page(site: Path, path: str) -> str:
    """The text of a built page, tags removed, whitespace collapsed (so prose greps work)."""
    html = (site / path / "index.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def raw(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


# --- causal-768: the whole-matrix weight sums over the whole matrix -------------------------


def test_whole_matrix_denominator_sums_over_rows_and_columns() -> None:
    from attention_math.causal768 import normalisations, whole_matrix_weight

    formula, value = whole_matrix_weight()
    (total,) = [a for a in sp.preorder_traversal(formula) if isinstance(a, sp.Sum)]
    variables = [lim[0] for lim in total.limits]
    assert len(variables) == 2  # over j ≤ i *and* over i, not one row
    assert value == normalisations()["whole matrix"][0, 0] and value != 1


# --- forward/qkv: what distinguishes Q, K, V -----------------------------------------------


# (4, 3): the old rank, read at one integer point, was 2 there (W_K lost rank at that point)
@pytest.mark.parametrize(("d_model", "d_k"), [(4, 1), (4, 3)])  # (3, 2): the doctest
def test_queries_and_keys_enter_only_through_a_rank_d_k_form(d_model: int, d_k: int) -> None:
    from attention_math.derivations.qkv import qkv_roles

    r = qkv_roles(d_model=d_model, d_k=d_k)
    assert r.scores_through_form and r.minors_vanish and r.invariant and r.linear_in_v
    assert r.rank == d_k and r.form.shape == (d_model, d_model)


def test_qkv_roles_rejects_d_k_not_below_d_model() -> None:
    from attention_math.derivations.qkv import qkv_roles

    with pytest.raises(ValueError, match="d_k"):
        qkv_roles(d_model=2, d_k=2)


# --- forward/weighted-sum: the convex hull, not per-column ranges ---------------------------


def test_hull_test_is_stricter_than_column_ranges() -> None:
    segment = [[0.0, 0.0], [1.0, 1.0]]
    assert in_column_ranges(segment, [1.0, 0.0]) and not in_hull(segment, [1.0, 0.0])
    assert in_hull(segment, [0.25, 0.25])
    triangle = [[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]]
    assert in_hull(triangle, [1.0, 1.0]) and not in_hull(triangle, [3.0, 3.0])
    assert in_hull(triangle, [4.0, 0.0])  # a vertex is in the hull


def test_attention_outputs_in_hull_and_fully_masked_row_is_not() -> None:
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 5, 3))  # (2, L, d_k)
    v = 1 + rng.random((5, 3))  # (L, d_v): positive, so 0 lies outside their hull
    mask = np.ones((5, 5), dtype=bool)  # (L_q, L_k)
    mask[2] = False
    out = numeric.attention(q, k, v, mask=mask)  # (L, d_v)
    assert [in_hull(v, o) for o in out] == [True, True, False, True, True]


def test_in_hull_rejects_mismatched_point() -> None:
    with pytest.raises(ValueError, match="coordinates"):
        in_hull([[0.0, 0.0], [1.0, 1.0]], [1.0, 2.0, 3.0])


# --- gradient exercises: every dS has rows summing to zero --------------------------------


def test_every_ds_given_in_an_exercise_has_zero_row_sums() -> None:
    from attention_math.exercises import catalogue

    found = 0
    for ex in catalogue().values():
        for name, value in ex.inputs.items():
            if name == "dS":
                found += 1
                sums = [sp.simplify(sum(value.row(i))) for i in range(value.rows)]
                assert sums == [0] * value.rows, (ex.id, value)
    assert found >= 2


# --- online softmax: order needs commutativity ---------------------------------------------


def test_merge_is_commutative_and_a_noncommutative_merge_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from attention_math.derivations import online_softmax as osm

    s, v = osm.symbols(3)
    a, b = osm.tile_state(s[:1], v[:1]), osm.tile_state(s[1:], v[1:])
    assert osm.merge_is_commutative(a, b)

    def keeps_first_shift(x: osm.State, y: osm.State) -> osm.State:  # wrong: y's shift ignored
        return osm.State(x.m, x.ell + y.ell, x.o + y.o)

    monkeypatch.setattr(osm, "merge", keeps_first_shift)
    assert not osm.merge_is_commutative(a, b)
    assert {r[1] for r in osm.REFERENCES.values()} >= {"Online normalizer calculation for softmax"}


# --- masks: the exact outcome of −1e9 per format, and the underflow threshold -------------


def test_minus_1e9_per_format_exactly() -> None:
    from attention_math.derivations.masks import fill_report

    outcome = {t: fill_report(-1e9, t) for t in (np.float16, np.float32, np.float64)}
    assert all(r.weight == 0.0 for r in outcome.values())  # beside an allowed key: always 0
    assert [r.fully_masked for r in outcome.values()] == ["NaN", "uniform", "as if unmasked"]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_underflow_threshold_is_exact_and_ln_tiny_only_sufficient(dtype: type) -> None:
    from attention_math.derivations.masks import underflow

    u = underflow(dtype)
    assert float(u.ln_tiny) < float(u.exact)  # ln τ is below the threshold: sufficient only
    tau = sp.Rational(float(np.finfo(dtype).smallest_subnormal))
    t = sp.Symbol("t")
    w = sp.exp(t) / (1 + sp.exp(t) + sp.exp(2))
    assert sp.simplify(w.subs(t, u.exact) - tau / 2) == 0  # the weight is τ/2 exactly at t*
    weight = lambda x: numeric.softmax(np.array([0.0, x, 2.0], dtype=dtype))[1]  # noqa: E731
    assert weight(u.computed) == 0 and weight(np.nextafter(u.computed, 0)) >= 0
    assert abs(u.computed - float(u.exact)) < 1


# --- the exercise whose 62 ε needed its cause ----------------------------------------------


def test_large_scores_error_is_the_input_rounding() -> None:
    from attention_math.crosscheck import crosscheck
    from attention_math.derivations.softmax_stability import input_rounding
    from attention_math.exercises import get

    ex = get("softmax-shift")
    r = input_rounding(ex.inputs["s"])
    measured = crosscheck(ex.answer, ex.numeric(), bound_eps=ex.bound_eps).error_eps
    assert abs(r.delta_eps[1]) <= 256  # half the spacing near 1000
    assert abs(measured - r.normwise_eps) < 2  # the cause explains the measured error


# --- the sharpening exercise: NumPy's decimals are the limit itself, not P(1000) ------------


def test_sharpening_numeric_side_reaches_the_limit_exactly() -> None:
    from attention_math.crosscheck import crosscheck
    from attention_math.exercises import get

    ex = get("identity-sharp")
    assert np.array_equal(ex.numeric(), np.eye(2))  # no 8e-308 beside an exact 0
    assert crosscheck(ex.answer, ex.numeric()).error_eps == 0


# --- the built site: wrong statements gone, corrections present ----------------------------


GONE = {  # page: statements that must not come back
    "examples/causal-768": [r"\sum_{j \le i} e^{S_{ij}}"],
    "why/masks": ["Why −1e9 works in float32 but not in float16", "once $t$ is below the"],
    "forward/qkv": ["nothing else distinguishes them"],
    "forward/weighted-sum": ["column's value range", "it lies between them"],
    "forward": ["weighted average of the whole sequence"],
    "why": ["Every claim is derived in SymPy"],
    "why/equivariance": [
        "This is why transformers need positional information at all",
        "(PQ, PK, PV)",  # a permutation is Π; P is the weights
    ],
    "reference/derivations/equivariance": ["P A Pᵀ P V", "(PQ, PK, PV)"],
    "why/softmax": ["The seed documents compute"],
    "examples/five-words": ["sums of powers"],
    "long/online-softmax": ["FlashAttention-4", "the issue's bound", "e^{\\text{margin}}"],
    "exercises/examples": ["softmax}(c\\,I)"],
    "forward/formula": ["With $d_k = d_v = 1$"],
}


@pytest.mark.docs
@pytest.mark.parametrize("path", sorted(GONE))
def test_corrected_statements_do_not_come_back(built_site: Path, path: str) -> None:
    html = raw(built_site, path)
    text = page(built_site, path)
    back = [s for s in GONE[path] if s in html or s in text]
    assert not back, f"{path}: {back}"


@pytest.mark.docs
def test_corrected_statements_are_on_their_pages(built_site: Path) -> None:
    from attention_math.causal768 import whole_matrix_weight

    assert sp.latex(whole_matrix_weight()[0]) in raw(built_site, "examples/causal-768")
    assert "\\mid q" in raw(built_site, "why/scaling")  # the variance given the query
    masks = page(built_site, "why/masks")
    assert "as if there were no mask" in masks and "A row with an allowed key" in masks
    assert "rank" in page(built_site, "forward/qkv") and "F^{-\\top}" in raw(
        built_site, "forward/qkv"
    )
    assert "convex hull" in page(built_site, "forward/weighted-sum")
    online = page(built_site, "long/online-softmax")
    for needed in ("commutative", "quadratic", "Basic Linear Algebra Subprograms", "GEMM"):
        assert needed in online, needed
    cited = raw(built_site, "long/online-softmax")  # cited as links (issue 37)
    for arxiv in ("1805.02867", "2205.14135", "2307.08691"):
        assert f"arxiv.org/abs/{arxiv}" in cited, arxiv
    assert "causal decoder" in page(built_site, "why/equivariance")
    assert "\\frac{1}{1 + e^{- a}}" in raw(built_site, "exercises/softmax")
    assert "relative to the largest weight" in page(built_site, "exercises/softmax")
    units = raw(built_site, "why/softmax")  # the u-table says its unit and how it differs
    assert "u = \\varepsilon/2" in units and "online-softmax/#accuracy" in units


@pytest.mark.docs
def test_equations_are_numbered_in_reading_order(built_site: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    first_seen: list[int] = []
    for md in nav_pages(mkdocs_config()["nav"]):
        text = (root / "docs" / md).read_text(encoding="utf-8")
        for tag in re.findall(r"\\tag\{(\d+)\}", text):
            if int(tag) not in first_seen:
                first_seen.append(int(tag))
    assert first_seen and first_seen == sorted(first_seen), first_seen


# --- sources cited by title, file names kept as package data ------------------------------


def test_every_example_has_a_titled_source() -> None:
    from attention_math.examples import EXAMPLES, SOURCES

    assert {ex.seed for ex in EXAMPLES.values()} == set(SOURCES)
    assert SOURCES["001_6252953421927e15.txt"].author == "Dinesh Lal"
    for ex in EXAMPLES.values():
        assert ex.source.title and ex.source.cite().startswith("“")


FILE_NAME = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")
SEED_AS_DOCUMENT = re.compile(r"\b[Ss]eed (document|file|\d{3})|\bthe seed\b|\bseed's\b")


@pytest.mark.docs
def test_pages_cite_sources_by_title_never_by_file_name(built_site: Path) -> None:
    from attention_math.examples import EXAMPLES

    offenders = []
    for html_file in sorted(built_site.rglob("*.html")):
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html_file.read_text(encoding="utf-8")))
        rel = html_file.relative_to(built_site)
        offenders += [f"{rel}: {m.group()}" for m in FILE_NAME.finditer(text)]
        offenders += [f"{rel}: {m.group()}" for m in SEED_AS_DOCUMENT.finditer(text)]
    assert not offenders, offenders
    for ex in EXAMPLES.values():
        text = page(built_site, f"examples/{ex.id}")
        assert ex.source.cite() in text, (ex.id, ex.source.cite())
    audit = page(built_site, "audit")
    for ex in EXAMPLES.values():
        assert ex.source.cite() in audit
    for needed in ("What a reader can check", "Out of scope: conceptual claims", "weights"):
        assert needed in audit, needed
