"""multi_head_attention: equivalences with the per-head loop, the block identity, errors."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric
from attention_math.derivations import multihead as mh
from attention_math.multihead import multi_head_attention


def _weights(rng, d_model, h, d_k, d_v, d_out):
    return (
        rng.standard_normal((d_model, h * d_k)),
        rng.standard_normal((d_model, h * d_k)),
        rng.standard_normal((d_model, h * d_v)),
        rng.standard_normal((h * d_v, d_out)),
    )


def test_numeric_does_not_import_multihead():
    # multihead imports numeric; numeric must not reach back (no cycle, not even lazily)
    import subprocess
    import sys

    code = (
        "import sys, attention_math.numeric as n; "
        "print('attention_math.multihead' in sys.modules, hasattr(n, 'multi_head_attention'))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["False", "False"]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    h=st.integers(1, 4),
    d_k=st.integers(1, 3),
    d_v=st.integers(1, 3),
    l_q=st.integers(1, 4),
    l_k=st.integers(1, 4),
    causal=st.booleans(),
)
def test_reshape_code_equals_per_head_loop(seed, h, d_k, d_v, l_q, l_k, causal):
    rng = np.random.default_rng(seed)
    x_q, x_kv = rng.standard_normal((l_q, 5)), rng.standard_normal((l_k, 5))
    w = _weights(rng, 5, h, d_k, d_v, 3)
    mask = numeric.causal_mask(l_q, l_k) if causal else None
    got = multi_head_attention(x_q, x_kv, *w, n_heads=h, mask=mask)
    want = mh.multi_head_loop(x_q, x_kv, *w, n_heads=h, mask=mask)
    assert got.shape == (l_q, 3)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_one_head_is_plain_attention_then_w_o():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3))
    w_q, w_k, w_v, w_o = _weights(rng, 3, 1, 2, 2, 3)
    q, k, v = numeric.compute_qkv(x, w_q, w_k, w_v)
    np.testing.assert_allclose(
        multi_head_attention(x, x, w_q, w_k, w_v, w_o, 1),
        numeric.attention(q, k, v) @ w_o,
    )


def test_batched_inputs_and_batched_mask():
    rng = np.random.default_rng(4)
    x_q, x_kv = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    w = _weights(rng, 4, 2, 2, 3, 4)
    mask = np.ones((2, 3, 5), dtype=bool)
    mask[1, :, 3:] = False  # second sequence: last two keys are padding
    out = multi_head_attention(x_q, x_kv, *w, 2, mask=mask)
    for b in range(2):
        np.testing.assert_allclose(out[b], mh.multi_head_loop(x_q[b], x_kv[b], *w, 2, mask[b]))


def test_block_identity_symbolic():
    for n in (1, 2, 3):
        lhs, rhs = mh.block_identity(n)
        assert lhs == rhs
    assert mh.concat_equals_sum(2, 2, 3, 2)


def test_block_identity_would_catch_wrong_blocks():
    heads = [sp.Matrix(1, 1, [sp.Symbol(f"h{i}")]) for i in range(2)]
    w_o = sp.Matrix([[sp.Symbol("a")], [sp.Symbol("b")]])
    swapped = heads[0] * w_o[1:, :] + heads[1] * w_o[:1, :]
    assert (sp.Matrix.hstack(*heads) * w_o - swapped).expand() != sp.zeros(1, 1)


def test_cross_attention_shapes_from_the_trace():
    z = np.zeros
    trace = dict(
        mh.shape_trace(z((3, 8)), z((7, 8)), z((8, 8)), z((8, 8)), z((8, 4)), z((4, 5)), 2)
    )
    assert trace["Q = X_q W_Q"] == (3, 8)
    assert trace["K = X_kv W_K"] == (7, 8)
    assert trace["K split into heads"] == (2, 7, 4)
    assert trace["scores Q⁽ⁱ⁾K⁽ⁱ⁾ᵀ per head"] == (2, 3, 7)
    assert trace["heads softmax(·) V⁽ⁱ⁾"] == (2, 3, 2)
    assert trace["Concat(head_1, …, head_h)"] == (3, 4)
    assert trace["output Concat · W_O"] == (3, 5)


def test_every_step_of_the_trace_has_its_tex_form_for_the_page():
    """A label the trace records has a TeX form on /why/multi-head/ (no raw ``X_kv`` there),
    a masked trace's too; a label it does not know is refused by name."""
    z = np.zeros
    steps = [
        step
        for mask in (None, np.tril(np.ones((3, 7), dtype=bool)))
        for step, _ in mh.shape_trace(
            z((3, 8)), z((7, 8)), z((8, 8)), z((8, 8)), z((8, 4)), z((4, 5)), 2, mask=mask
        )
    ]
    assert set(steps) == set(mh.STEP_LATEX)
    for step in steps:
        tex = mh.step_latex(step)
        assert tex.count("$") % 2 == 0 and "$" in tex
        assert "_kv" not in tex.replace("_{kv}", "")
    with pytest.raises(ValueError, match="'Q times K'"):
        mh.step_latex("Q times K")


@pytest.mark.parametrize(
    "change, error, match",
    [
        ({"n_heads": 0}, ValueError, "n_heads must be a positive integer"),
        ({"n_heads": True}, TypeError, "n_heads must be a positive integer, got True"),
        ({"n_heads": 3}, ValueError, r"w_q has 4 columns, not divisible by n_heads = 3"),
        # x_kv may be narrower (PyTorch's kdim), but w_k must then read its width
        ({"x_kv": np.zeros((5, 3))}, ValueError, r"w_k must have shape.*d_model = 3.*\(5, 3\)"),
        ({"w_q": np.zeros((3, 4))}, ValueError, r"w_q must have shape \(d_model.*got \(3, 4\)"),
        ({"w_k": np.zeros((4, 6))}, ValueError, r"w_q and w_k must have the same number of col"),
        ({"w_o": np.zeros((3, 4))}, ValueError, r"w_o must have shape.*n_heads·d_v = 4"),
        ({"x_q": np.array([[np.nan] * 4])}, ValueError, "x_q contains NaN"),
        ({"x_q": np.array(["a"] * 4)}, TypeError, "x_q must hold real numbers"),
        ({"x_q": np.zeros(4)}, ValueError, r"x_q must have at least 2 dimensions"),
        ({"mask": np.zeros((3, 5), dtype=bool)}, ValueError, r"mask of shape \(3, 5\)"),
    ],
)
def test_bad_input_errors(change, error, match):
    rng = np.random.default_rng(0)
    args = {
        "x_q": rng.standard_normal((2, 4)),
        "x_kv": rng.standard_normal((5, 4)),
        "w_q": rng.standard_normal((4, 4)),
        "w_k": rng.standard_normal((4, 4)),
        "w_v": rng.standard_normal((4, 4)),
        "w_o": rng.standard_normal((4, 4)),
        "n_heads": 2,
    }
    args.update(change)
    with pytest.raises(error, match=match):
        multi_head_attention(**args)


def test_float32_inputs_and_mask_shape_error_names_shapes():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = [rng.standard_normal((4, 4)).astype(np.float32) for _ in range(4)]
    out = multi_head_attention(x, x, *w, 2)
    assert out.dtype == np.float32 and out.shape == (3, 4)
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        multi_head_attention(x, x, *w, 2, mask=np.ones((4, 4), dtype=bool))


def test_circuits_sum_of_heads_equals_concatenation():
    from attention_math.multihead import circuits, multi_head_attention
    from attention_math.numeric import softmax

    rng = np.random.default_rng(17)
    x = rng.normal(size=(5, 6))
    n_heads, d = 3, 2
    w_q, w_k, w_v = (rng.normal(size=(6, n_heads * d)) for _ in range(3))
    w_o = rng.normal(size=(n_heads * d, 4))
    qk, ov = circuits(w_q, w_k, w_v, w_o, n_heads)
    assert qk.shape == (3, 6, 6) and ov.shape == (3, 6, 4)
    total = np.zeros((5, 4))
    for h in range(n_heads):
        scores = x @ qk[h] @ x.T / np.sqrt(d)  # the QK circuit decides where to look
        p = softmax(scores)  # P_h
        total += p @ x @ ov[h]  # the OV circuit decides what is moved
        assert np.linalg.matrix_rank(qk[h]) <= d and np.linalg.matrix_rank(ov[h]) <= d
    want = multi_head_attention(x, x, w_q, w_k, w_v, w_o, n_heads)
    assert np.allclose(total, want, rtol=1e-12, atol=1e-12)


def test_circuits_bad_input():
    from attention_math.multihead import circuits

    w = np.ones((4, 4))
    with pytest.raises(ValueError, match="not divisible by n_heads = 3"):
        circuits(w, w, w, w, 3)
    with pytest.raises(ValueError, match="w_o must have shape"):
        circuits(w, w, w, np.ones((3, 4)), 2)
    with pytest.raises(ValueError, match="n_heads must be a positive integer"):
        circuits(w, w, w, w, 0)
