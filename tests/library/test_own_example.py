""" "Your own example" (attention_math.own_example): right steps, clear messages, no NumPy.

The steps are compared with `attention_math.symbolic` (exact) and `attention_math.numeric`
(NumPy, float64): the module's own cross-check uses neither.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from attention_math import numeric, symbolic
from attention_math.own_example import MAX_CHARS, MAX_ENTRY, MAX_SIZE, own_example, read_matrix
from tests.library.test_no_numpy import run_without_numpy
from tests.library.test_safe_parse import MALICIOUS

QKV = {"Q": "1 0 1\n0 1 1/2\nsqrt(2) 1 0", "K": "1 1 0\n0 1 1\n1/2 0 1", "V": "1 2 3\n0 1 0\n1 1 1"}
Q = sp.Matrix([[1, 0, 1], [0, 1, sp.Rational(1, 2)], [sp.sqrt(2), 1, 0]])
K = sp.Matrix([[1, 1, 0], [0, 1, 1], [sp.Rational(1, 2), 0, 1]])
V = sp.Matrix([[1, 2, 3], [0, 1, 0], [1, 1, 1]])
MATHML = "{http://www.w3.org/1998/Math/MathML}"


def test_reading_matrices() -> None:
    assert read_matrix("1, 2\n3, 4", "Q") == sp.Matrix([[1, 2], [3, 4]])
    assert read_matrix("1 2; 3 4", "Q") == sp.Matrix([[1, 2], [3, 4]])
    assert read_matrix("[[1, 2], [3, 4]]", "Q") == sp.Matrix([[1, 2], [3, 4]])
    assert read_matrix("0.25 -1/2\n\n", "Q") == sp.Matrix([[sp.Rational(1, 4), -sp.Rational(1, 2)]])
    assert read_matrix("sqrt(2) exp(1) pi", "Q") == sp.Matrix([[sp.sqrt(2), sp.E, sp.pi]])


@pytest.mark.parametrize(
    "typed",
    [
        "0.33333333333",  # not 1/3
        "0.142857142857",  # not 1/7
        "1.4142135623730951",  # not sqrt(2)
        "0.12345678901234567",  # more digits than a float keeps
        "2.5e-3",
        "-0.1",
    ],
)
def test_a_decimal_is_the_exact_number_its_digits_write(typed: str) -> None:
    """Every digit typed counts, and nothing is guessed: the page promises it."""
    want = sp.Rational(typed)
    assert read_matrix(typed, "Q") == sp.Matrix([[want]])
    assert read_matrix(f"[[{typed}, 1]]", "K") == sp.Matrix([[want, 1]])
    assert read_matrix(f"exp({typed}) 1", "V")[0] == sp.exp(want)


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_the_steps_are_the_exact_forward_pass(mask: str) -> None:
    r = own_example(QKV, mask)
    names = [s["name"] for s in r["steps"]]
    expected = ["QK^\\top", "S = QK^\\top/\\sqrt{d_k}", "P = \\operatorname{softmax}(S + M)"]
    expected[2:2] = ["S + M"] if mask == "causal" else []
    assert names == [*expected, "O = PV"]
    m = [[j <= i for j in range(3)] for i in range(3)] if mask == "causal" else None
    out, weights = symbolic.attention(Q, K, V, mask=m), symbolic.attention_weights(Q, K, V, mask=m)
    weights = weights.applyfunc(sp.cancel)  # shown without negative powers of e
    assert r["steps"][-1]["latex"] == f"O = PV = {symbolic.latex(out)}"
    assert (
        r["steps"][-2]["latex"]
        == f"P = \\operatorname{{softmax}}(S + M) = {symbolic.latex(weights)}"
    )


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_the_decimals_agree_with_numpy(mask: str) -> None:
    r = own_example(QKV, mask)
    q, k, v = (np.array(x.evalf(), dtype=float) for x in (Q, K, V))  # (3, 3) each
    causal = numeric.causal_mask(3) if mask == "causal" else None
    out = numeric.attention(q, k, v, mask=causal)  # (3, 3)
    shown = [
        float(e.text.replace("−", "-"))
        for e in ET.fromstring(r["steps"][-1]["decimal"]).iter(f"{MATHML}mn")
        if e.text != "10"
    ]
    np.testing.assert_allclose(shown, out.ravel(), rtol=5e-4)  # shown to 4 digits


@pytest.mark.parametrize("causal", [False, True])
def test_the_running_example_shows_the_chapters_exact_weights(causal: bool) -> None:
    """Typed into the form, the running example's weights read as the chapter prints them
    (``e/(1 + e + e²)``, not ``1/(e⁻¹ + 1 + e)``), and equal them."""
    from attention_math.running import RUNNING, forward

    typed = {
        name: "\n".join(" ".join(map(str, row)) for row in getattr(RUNNING, key))
        for name, key in (("X", "x"), ("W_Q", "w_q"), ("W_K", "w_k"), ("W_V", "w_v"))
    }
    r = own_example(typed, "causal" if causal else "none")
    chapter = forward(is_causal=causal)["P"]
    assert r["steps"][-2]["latex"].endswith(symbolic.latex(chapter))
    assert "e^{-" not in r["steps"][-2]["latex"]


def test_minus_signs_and_matrix_brackets_in_the_mathml() -> None:
    r = own_example({"Q": "1 0\n0 1", "K": "-1 0\n0 1", "V": "1 -2\n3 4"}, "causal")
    for step in r["steps"]:
        for key in ("exact", "decimal"):
            root = ET.fromstring(step[key])
            signs = [e.text for e in root.iter() if e.text and "-" in e.text]
            assert signs == [], (step["name"], key, signs)  # − (U+2212), never a hyphen
            matrices = [e for e in root.iter(f"{MATHML}mrow") if e.get("class") == "am-matrix"]
            assert matrices, step["name"]  # the brackets the style sheet draws
            fences = [e.text for e in matrices[0] if e.tag == f"{MATHML}mo"]
            assert fences == ["[", "]"]


def test_x_with_projections_gives_q_k_v_first() -> None:
    r = own_example({"X": "1 0\n0 1\n1 1", "W_Q": "1 0\n0 1", "W_K": "0 1\n1 0", "W_V": "1 2\n3 4"})
    assert [s["name"] for s in r["steps"]][:3] == ["Q = XW_Q", "K = XW_K", "V = XW_V"]
    assert r["steps"][1]["latex"] == "K = XW_K = " + symbolic.latex(
        sp.Matrix([[0, 1], [1, 0], [1, 1]])
    )
    assert len(r["steps"]) == 7


def test_every_formula_is_mathml_the_page_can_parse() -> None:
    r = own_example(
        {"X": "1 0\n0 1\n1 1", "W_Q": "1 0\n0 1", "W_K": "0 1\n1 0", "W_V": "1 2\n3 4"}, "causal"
    )
    for step in r["steps"]:
        for key in ("exact", "decimal"):
            root = ET.fromstring(step[key])  # strict XML, as the page's DOMParser reads it
            assert root.tag == f"{MATHML}math", step["name"]


@pytest.mark.parametrize(
    ("matrices", "mask", "message"),
    [
        ({"Q": "1 2\n3", "K": "1", "V": "1"}, "none", "Q: the rows have 2, 1 entries"),
        ({"Q": "1 0", "K": "1", "V": "1"}, "none", "Q is 1×2 and K is 1×1"),
        ({"Q": "1", "K": "1\n2", "V": "1"}, "none", "K is 2×1 and V is 1×1"),
        ({"Q": "1", "K": "1\n2", "V": "1\n2"}, "causal", "the causal mask needs one query per key"),
        (
            {"Q": "1 " * (MAX_SIZE + 1), "K": "1", "V": "1"},
            "none",
            f"limit of {MAX_SIZE}×{MAX_SIZE}",
        ),
        ({"Q": "1\n" * (MAX_SIZE + 1), "K": "1", "V": "1"}, "none", "larger than the limit"),
        ({"Q": "1" * (MAX_CHARS + 1), "K": "1", "V": "1"}, "none", f"more than {MAX_CHARS}"),
        ({"Q": "sqrt(-1)", "K": "1", "V": "1"}, "none", "not a finite real number"),
        ({"Q": "oo", "K": "1", "V": "1"}, "none", "not a finite real number"),
        ({"Q": f"{MAX_ENTRY + 1}", "K": "1", "V": "1"}, "none", f"larger than {MAX_ENTRY}"),
        ({"Q": "1/0", "K": "1", "V": "1"}, "none", "Q, row 1, entry 1: division by zero"),
        ({"Q": "1 x", "K": "1", "V": "1"}, "none", "Q, row 1, entry 2: the unknown name 'x'"),
        ({"Q": "", "K": "1", "V": "1"}, "none", "Q: empty"),
        ({"Q": "1", "K": "1", "V": "1"}, "both", "mask must be one of none, causal"),
        ({"X": "1", "W_Q": "1 2", "W_K": "1", "W_V": "1"}, "none", "they need as many columns"),
        ({"X": "1 2", "W_Q": "1", "W_K": "1", "W_V": "1"}, "none", "W_Q needs one row per column"),
    ],
)
def test_bad_input_gets_a_message_naming_what_is_wrong(
    matrices: dict[str, str], mask: str, message: str
) -> None:
    r = own_example(matrices, mask)
    assert set(r) == {"error"} and message in r["error"], r


# "1; 2" is a column of two rows here (rows may be split by ";")
@pytest.mark.parametrize("template", [t for t in MALICIOUS if t != "1; 2"])
def test_hostile_strings_are_refused_and_nothing_runs(template: str, tmp_path: Path) -> None:
    path = tmp_path / "pwned"
    r = own_example({"Q": template.format(path=path), "K": "1", "V": "1"})
    assert set(r) == {"error"} and r["error"].startswith("Q"), r
    assert not path.exists()


def test_own_example_runs_without_numpy() -> None:
    out = run_without_numpy(
        """
        from attention_math.own_example import own_example

        r = own_example({"Q": "1 0\\n0 1", "K": "1 0\\n0 1", "V": "1 2\\n3 4"}, "causal")
        print(len(r["steps"]), r["steps"][-1]["latex"])
        assert "numpy" not in sys.modules
        """
    )
    assert out.startswith("5 O = PV = ")
