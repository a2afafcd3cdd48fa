"""multi_head_attention: equivalences with the per-head loop, the block identity, errors,
and PyTorch's arguments (biases, ``kdim``/``vdim``, ``key_padding_mask``, per-head masks,
``is_causal``, bfloat16) checked without PyTorch (``test_multihead_oracle.py`` runs it)."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric
from attention_math.derivations import multihead as mh
from attention_math.multihead import multi_head_attention
from attention_math.numeric import (
    attention,
    attention_weights,
    causal_mask,
    padding_mask,
    softmax,
)


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


def test_per_head_masks_and_the_annotated_transformer_mask_in_multi_head():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4))  # (B, L, d_model)
    w = [rng.standard_normal((4, 4)) for _ in range(4)]
    lens = np.array([3, 2])
    hf = padding_mask(lens, 3)[:, None]  # (B, 1, 1, L): The Annotated Transformer, HF
    out = multi_head_attention(x, x, *w, 2, mask=hf)
    assert out.shape == (2, 3, 4)  # not (2, 2, 3, 4)
    np.testing.assert_allclose(out, multi_head_attention(x, x, *w, 2, mask=padding_mask(lens, 3)))
    per_head = rng.random((2, 2, 3, 3)) < 0.7  # (B, h, L_q, L_k)
    per_head[..., 0] = True
    _, wts = multi_head_attention(
        x, x, *w, 2, mask=per_head, return_weights=True, average_attn_weights=False
    )
    assert wts.shape == (2, 2, 3, 3) and (wts[~per_head] == 0).all()
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 1, 1, 3\)"):
        multi_head_attention(x, x, *w, 2, mask=hf[:, None])  # one axis too many


def _mh_case(seed, d_model=4, d_kv=3, d_vin=5):
    rng = np.random.default_rng(seed)
    x_q = rng.standard_normal((2, 3, d_model))
    x_k = rng.standard_normal((2, 4, d_kv))
    x_v = rng.standard_normal((2, 4, d_vin))
    w = (
        rng.standard_normal((d_model, 4)),
        rng.standard_normal((d_kv, 4)),
        rng.standard_normal((d_vin, 6)),
        rng.standard_normal((6, 2)),
    )
    b = dict(
        b_q=rng.standard_normal(4),
        b_k=rng.standard_normal(4),
        b_v=rng.standard_normal(6),
        b_o=rng.standard_normal(2),
    )
    return x_q, x_k, x_v, w, b


def test_multihead_biases_and_widths_by_hand():
    x_q, x_k, x_v, (w_q, w_k, w_v, w_o), b = _mh_case(14)
    out, w = multi_head_attention(
        x_q,
        x_k,
        w_q,
        w_k,
        w_v,
        w_o,
        2,
        x_v=x_v,
        return_weights=True,
        average_attn_weights=False,
        **b,
    )
    q, k, v = x_q @ w_q + b["b_q"], x_k @ w_k + b["b_k"], x_v @ w_v + b["b_v"]
    heads = [
        (attention(*part), attention_weights(*part))
        for part in (
            (q[..., 2 * i : 2 * i + 2], k[..., 2 * i : 2 * i + 2], v[..., 3 * i : 3 * i + 3])
            for i in range(2)
        )
    ]
    want = np.concatenate([h[0] for h in heads], axis=-1) @ w_o + b["b_o"]
    np.testing.assert_allclose(out, want, rtol=1e-12)
    np.testing.assert_allclose(w, np.stack([h[1] for h in heads], axis=1), rtol=1e-12)
    _, avg = multi_head_attention(
        x_q, x_k, w_q, w_k, w_v, w_o, 2, x_v=x_v, return_weights=True, **b
    )
    np.testing.assert_allclose(avg, w.mean(axis=1))


def test_key_padding_mask_is_true_for_padding_and_combines_with_mask():
    x_q, x_k, x_v, w, b = _mh_case(15)
    pad = np.array([[False, False, False, True], [False, True, True, True]])
    blocked_first = np.ones((3, 4), bool)
    blocked_first[:, 0] = False
    got = multi_head_attention(
        x_q, x_k, *w, 2, mask=blocked_first, x_v=x_v, key_padding_mask=pad, **b
    )
    want = multi_head_attention(
        x_q, x_k, *w, 2, mask=blocked_first & ~pad[:, None, :], x_v=x_v, **b
    )
    np.testing.assert_array_equal(got, want)
    additive = np.where(pad, -np.inf, 0.0)
    got_float = multi_head_attention(
        x_q, x_k, *w, 2, mask=blocked_first, x_v=x_v, key_padding_mask=additive, **b
    )
    np.testing.assert_allclose(got_float, want, rtol=1e-14)
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(\.\.\., L_k\)"):
        multi_head_attention(x_q, x_k, *w, 2, x_v=x_v, key_padding_mask=pad[0], **b)


def test_multihead_is_causal_equals_its_mask():
    x_q, x_k, x_v, w, b = _mh_case(16)
    for alignment in ("top-left", "bottom-right"):
        got = multi_head_attention(
            x_q, x_k, *w, 2, x_v=x_v, is_causal=True, causal_alignment=alignment, **b
        )
        want = multi_head_attention(
            x_q, x_k, *w, 2, x_v=x_v, mask=causal_mask(3, 4, causal_alignment=alignment), **b
        )
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"b_q": np.ones(3)}, r"b_q must have shape \(4,\)"),
        ({"b_o": np.ones((1, 2))}, r"b_o must have shape \(2,\)"),
        ({"x_v": np.ones((2, 5, 5))}, "x_v and x_kv must share L_k"),
        (
            {"key_padding_mask": np.zeros((3, 4), bool)},
            r"key_padding_mask of shape \(3, 4\) does not fit the inputs' batch shape \(2,\)",
        ),
        ({"key_padding_mask": np.zeros((2, 5), bool)}, "has 5 keys on its last axis.*L_k = 4"),
        ({"mask": np.ones((2, 3, 3, 4), bool)}, "with 3 heads on axis -3; give n_heads = 2 or 1"),
    ],
)
def test_multihead_new_argument_errors(change, match):
    x_q, x_k, x_v, w, b = _mh_case(17)
    kw = {"x_v": x_v, **b, **change}
    with pytest.raises(ValueError, match=match):
        multi_head_attention(x_q, x_k, *w, 2, **kw)


@settings(max_examples=40, deadline=None)
@given(
    lens=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    n_q=st.integers(1, 4),
    n_heads=st.sampled_from([1, 2]),
    seed=st.integers(0, 2**16),
)
def test_key_padding_mask_per_head_mask_and_shared_mask_agree(lens, n_q, n_heads, seed):
    rng = np.random.default_rng(seed)
    B, n_k = len(lens), 5
    x_q, x_kv = rng.standard_normal((B, n_q, 4)), rng.standard_normal((B, n_k, 4))
    w = [rng.standard_normal((4, 4)) for _ in range(4)]
    attend = padding_mask(lens, n_k)  # (B, 1, L_k), True = may attend
    pad = ~attend[:, 0]  # (B, L_k): PyTorch's key_padding_mask, True = padding
    by_kpm = multi_head_attention(x_q, x_kv, *w, n_heads, key_padding_mask=pad)
    shared = multi_head_attention(x_q, x_kv, *w, n_heads, mask=attend)  # (B, 1, L_k)
    annotated = multi_head_attention(x_q, x_kv, *w, n_heads, mask=attend[:, None])  # (B,1,1,L_k)
    per_head = multi_head_attention(
        x_q, x_kv, *w, n_heads, mask=np.repeat(attend[:, None], n_heads, axis=1)
    )  # (B, h, 1, L_k)
    assert by_kpm.shape == (B, n_q, 4)
    for other in (shared, annotated, per_head):
        np.testing.assert_allclose(other, by_kpm, rtol=1e-12, atol=1e-14)
    # and each sequence equals itself cut to its valid keys, with no mask at all
    for b, n in enumerate(lens):
        alone = multi_head_attention(x_q[b], x_kv[b, :n], *w, n_heads)
        np.testing.assert_allclose(by_kpm[b], alone, rtol=1e-10, atol=1e-12)


def test_multihead_keeps_bfloat16_and_promotes_mixed_inputs():
    ml_dtypes = pytest.importorskip("ml_dtypes")  # in the test group
    bf16 = np.dtype(ml_dtypes.bfloat16)
    x_q, x_k, x_v, w, b = _mh_case(18)
    args = [a.astype(bf16) for a in (x_q, x_k, *w)]
    bias = {n: a.astype(bf16) for n, a in b.items()}
    out, wts = multi_head_attention(*args, 2, x_v=x_v.astype(bf16), return_weights=True, **bias)
    assert out.dtype == wts.dtype == bf16
    exact, exact_w = multi_head_attention(
        *(a.astype(np.float64) for a in args),
        2,
        x_v=x_v.astype(bf16).astype(np.float64),
        return_weights=True,
        **{n: a.astype(np.float64) for n, a in bias.items()},
    )
    eps = 2.0**-7  # bfloat16: 8 significant bits
    scale = np.abs(exact).max()
    assert np.abs(out.astype(np.float64) - exact).max() <= 2 * eps * scale
    assert np.abs(wts.astype(np.float64) - exact_w).max() <= eps
    # one float32 weight matrix promotes the whole product to float32, as NumPy would
    mixed = multi_head_attention(
        args[0], args[1], w[0].astype(np.float32), *args[3:], 2, x_v=x_v.astype(bf16)
    )
    assert mixed.dtype == np.float32
