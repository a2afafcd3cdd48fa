"""The build's computations made cheaper (issue 13) still give the same answers, and what
they remember can never be served stale or changed by a caller."""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import pytest
import sympy as sp

from attention_math import audit as audit_module
from attention_math import running, symbolic
from attention_math.examples import EXAMPLES
from attention_site.figures import style as plots


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


def test_audit_of_a_changed_example_is_recomputed(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = EXAMPLES["the-cat-sleeps"]
    registered = audit_module.audit([ex.id])
    claims = tuple(dataclasses.replace(c, published=("9.999",)) for c in ex.claims[:1])
    monkeypatch.setitem(EXAMPLES, ex.id, dataclasses.replace(ex, claims=claims))
    changed = audit_module.audit([ex.id])
    assert len(changed) == 1 and changed[0].claim.published == ("9.999",)
    assert changed[0] != registered[0]


def test_in_terms_of_sigmoid_still_refuses_a_wrong_rewrite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = symbolic.attention(sp.eye(2), sp.eye(2), [[1, 2], [3, 4]])
    a = 1 / sp.sqrt(2)
    sigma = sp.Symbol("sigma", positive=True)
    assert symbolic.in_terms_of_sigmoid(out[0, 0], a, sigma) == 3 - 2 * sigma
    real_factor = sp.factor
    monkeypatch.setattr(sp, "factor", lambda e: real_factor(e) + sp.Rational(1, 10**9))
    with pytest.raises(ArithmeticError, match="did not verify"):
        symbolic.in_terms_of_sigmoid(out[0, 0], a, sigma)


def test_shared_mathtext_parses_draw_the_same_svg(monkeypatch: pytest.MonkeyPatch) -> None:
    def draw() -> str:
        with plots.style():
            fig, ax = plt.subplots()
            ax.plot([0, 1], [0, 1], label="$d_k = 4$")
            ax.set(title=r"$\sqrt{d_k}$ and $e^{x}$", xlabel="$x_i$", ylabel=r"$\sigma(x)$")
            ax.legend()
            return plots.svg(fig)

    shared = draw()
    assert plots._PARSES  # the labels were parsed through the shared memo
    with monkeypatch.context() as m:
        m.setattr(plots, "_parses_shared", _matplotlib_own)
        assert draw() == shared


def _matplotlib_own() -> object:
    import contextlib

    return contextlib.nullcontext()
