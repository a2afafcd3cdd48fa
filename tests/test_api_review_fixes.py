"""Fixes from the review of the API pages: each test fails on the code before its fix."""

from __future__ import annotations

import string

import numpy as np
import pytest

from attention_math import audit as audit_mod
from attention_math.causal768 import reproduce
from attention_math.crosscheck import CrossCheckError
from attention_site import notation
from attention_site.pages.examples import steps_md


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


def test_index_subscripts_are_the_ones_documented() -> None:
    """The module docstring lists exactly the characters and commands ``_INDEX`` accepts."""
    doc = notation.__doc__ or ""
    letters, chars = "c i j k l m n t", ", : = < > + - '"
    assert f"``{letters}``" in doc and f"``{chars}``" in doc
    documented = set(string.digits) | set(letters.split()) | set(chars.split())
    accepted = {c for c in string.printable if notation._INDEX.match(c)}
    assert accepted == documented
    for command in (r"\cdot", r"\ldots", r"\le"):
        assert f"``{command}``" in doc
        assert notation._INDEX.match(command) and notation._INDEX.match(command[1:])


def test_symbols_in_tex_keeps_index_subscripts_and_undefined_reads_them() -> None:
    assert notation.symbols_in_tex(r"S_{ij}") == ["S_ij"]
    assert notation.undefined(["S_ij", "S_k=1", "S_t-1"]) == []


@pytest.mark.parametrize(
    ("d", "label"),
    [(1, "column 1"), (2, "columns 1 and 2"), (3, "columns 1, 2 and 3")],
)
def test_reproduce_small_d_checks_distinct_existing_columns(d: int, label: str) -> None:
    r = reproduce(d=d)
    assert r.output.shape == (3, d)
    assert r.checks[1].startswith(f"output, {label}: ")
    assert all("agrees" in c for c in r.checks)


def test_steps_md_names_the_entry_of_a_product() -> None:
    """A step whose symbol is a product is bracketed: ``(QK^\\top)_{11}``, not ``Q_{11}``."""
    text = steps_md("identity-2x2", ("scores", "scaled"), max_exact=0)
    assert r"(QK^\top)_{11} = " in text
    assert r"S_{11} = " in text
    assert "Q_{11}" not in text.replace(r"(QK^\top)_{11}", "")


def test_transformer_block_returns_the_floating_dtype_of_x() -> None:
    from attention_math.block import random_params, transformer_block

    p = random_params(4, 6)
    x = np.arange(12).reshape(3, 4) % 3
    assert transformer_block(x, p, n_heads=2).dtype == np.float64
    assert transformer_block(x.astype(np.float32), p, n_heads=2).dtype == np.float32
    ml_dtypes = pytest.importorskip("ml_dtypes")
    y = transformer_block(x.astype(ml_dtypes.bfloat16), p, n_heads=2)
    assert y.dtype == ml_dtypes.bfloat16
