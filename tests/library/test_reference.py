"""The tuned ``numeric.attention`` (untiled, tiled, default) against the one-screen
``reference.attention``, over random shapes, masks, causal alignments and dtypes."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric, reference, running
from attention_math.crosscheck import crosscheck


@st.composite
def problems(draw: st.DrawFn) -> dict[str, object]:
    """q, k, v of one dtype with broadcasting batch axes, a mask of any kind, a causal flag."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    L_q, L_k = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q = rng.standard_normal((*batch, L_q, d_k)).astype(dtype)  # (..., L_q, d_k)
    k = rng.standard_normal((*batch, L_k, d_k)).astype(dtype)  # (..., L_k, d_k)
    v = rng.standard_normal((*batch, L_k, d_v)).astype(dtype)  # (..., L_k, d_v)
    kind = draw(st.sampled_from(["none", "bool", "additive", "padding"]))
    mask: np.ndarray | None = None
    if kind == "bool":  # some rows may be fully masked
        mask = rng.random((L_q, L_k)) < draw(st.sampled_from([0.3, 0.7, 1.0]))
    elif kind == "additive":  # a bias with some -inf, of the inputs' dtype
        bias = rng.standard_normal((L_q, L_k)) * 2
        mask = np.where(rng.random((L_q, L_k)) < 0.2, -np.inf, bias).astype(dtype)
    elif kind == "padding":  # (L_k,) broadcast over the queries
        mask = np.arange(L_k) < draw(st.integers(0, L_k))
    scale = draw(st.sampled_from([None, 0.0, 0.5, 2.0]))
    is_causal = draw(st.booleans())
    alignment = draw(st.sampled_from(["top-left", "bottom-right"]))
    return dict(q=q, k=k, v=v, mask=mask, scale=scale, is_causal=is_causal, align=alignment)


def _bound(p: dict[str, object]) -> float:
    """A few ε per unit of score size, in units of the largest value: rounding a score s
    moves its weight by about ε·|s| in either computation."""
    q, k, v = (np.asarray(p[n]) for n in ("q", "k", "v"))
    s = 1 / np.sqrt(q.shape[-1]) if p["scale"] is None else float(p["scale"])  # type: ignore[arg-type]
    top = float(np.abs(q @ np.swapaxes(k, -1, -2)).max()) * s + 6  # |bias| ≲ 6 too
    return 32 * float(np.finfo(q.dtype).eps) * top * max(float(np.abs(v).max()), 1e-30)


@settings(max_examples=150, deadline=None)
@given(p=problems(), block=st.sampled_from([None, 1, 3, (2, 5)]))
def test_tuned_attention_equals_the_reference(p: dict[str, object], block: object) -> None:
    kw = dict(scale=p["scale"], is_causal=p["is_causal"], causal_alignment=p["align"])
    want = reference.attention(p["q"], p["k"], p["v"], p["mask"], **kw)  # type: ignore[arg-type]
    got = numeric.attention(p["q"], p["k"], p["v"], p["mask"], block_size=block, **kw)  # type: ignore[arg-type,call-overload]
    assert got.dtype == np.asarray(p["q"]).dtype  # float32 stays float32
    assert got.shape == want.shape
    assert np.isfinite(got).all()
    assert float(np.abs(got - want).max()) <= _bound(p)


def test_fully_masked_rows_are_zero_in_both() -> None:
    q = k = v = np.eye(3)
    mask = np.array([[False] * 3, [True, False, False], [True] * 3])
    want = reference.attention(q, k, v, mask)
    assert np.array_equal(want[0], np.zeros(3))  # the project's convention, not NaN
    assert np.allclose(numeric.attention(q, k, v, mask), want, rtol=0, atol=1e-15)


def test_the_reference_is_the_exact_formula() -> None:
    # on the running example, exactly as the forward-pass chapter derives it with SymPy
    f = running.numeric_forward(is_causal=True)
    out = reference.attention(f["Q"], f["K"], f["V"], is_causal=True)
    crosscheck(running.forward(is_causal=True)["O"], out, label="reference.attention")


def test_the_reference_fits_on_one_screen() -> None:
    # what the lesson shows: the body of the function, a shape comment on each array line
    source = inspect.getsource(reference.attention)
    body = source.split('"""')[-1].strip().splitlines()
    assert len(body) <= 25, f"reference.attention's body has {len(body)} lines"
    arrays = [ln for ln in body if ln.lstrip().startswith(("att =", "out:", "top =", "total ="))]
    assert len(arrays) >= 6 and all("# (..., L_q, " in ln for ln in arrays)


@pytest.mark.parametrize("bad", [{"scale": -1.0}, {"causal_alignment": "bottom"}])
def test_the_reference_checks_its_input_like_the_tuned_path(bad: dict[str, object]) -> None:
    x = np.eye(2)
    with pytest.raises(ValueError) as theirs:
        numeric.attention(x, x, x, is_causal=True, **bad)  # type: ignore[call-overload]
    with pytest.raises(ValueError) as ours:
        reference.attention(x, x, x, is_causal=True, **bad)  # type: ignore[arg-type]
    assert str(ours.value) == str(theirs.value)
