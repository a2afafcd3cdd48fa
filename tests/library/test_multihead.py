"""multi_head_attention: equivalences with the per-head loop, the block identity, errors,
and PyTorch's arguments (biases, ``kdim``/``vdim``, a converted ``key_padding_mask``,
per-head masks, ``is_causal``, ``scale``, dropout, GQA, bfloat16) checked without PyTorch
(``test_multihead_oracle.py`` runs it)."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric
from attention_math.derivations import multihead as mh
from attention_math.multihead import (
    AttentionParams,
    from_key_padding_mask,
    multi_head_attention,
    multi_head_weights,
)
from attention_math.numeric import attention, causal_mask, padding_mask, softmax


def _weights(rng, d_model, h, d_k, d_v, d_out):
    return AttentionParams(
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
    got = multi_head_attention(x_q, x_kv, w, n_heads=h, mask=mask)
    want = mh.multi_head_loop(x_q, x_kv, w, n_heads=h, mask=mask)
    assert got.shape == (l_q, 3)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_one_head_is_plain_attention_then_w_o():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3))
    p = _weights(rng, 3, 1, 2, 2, 3)
    q, k, v = numeric.compute_qkv(x, p.w_q, p.w_k, p.w_v)
    np.testing.assert_allclose(
        multi_head_attention(x, x, p, 1),
        numeric.attention(q, k, v) @ p.w_o,
    )


def test_batched_inputs_and_batched_mask():
    rng = np.random.default_rng(4)
    x_q, x_kv = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    w = _weights(rng, 4, 2, 2, 3, 4)
    mask = np.ones((2, 3, 5), dtype=bool)
    mask[1, :, 3:] = False  # second sequence: last two keys are padding
    out = multi_head_attention(x_q, x_kv, w, 2, mask=mask)
    for b in range(2):
        np.testing.assert_allclose(out[b], mh.multi_head_loop(x_q[b], x_kv[b], w, 2, mask[b]))


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
    p = AttentionParams(z((8, 8)), z((8, 8)), z((8, 4)), z((4, 5)))
    trace = dict(mh.shape_trace(z((3, 8)), z((7, 8)), p, 2))
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
    mha = AttentionParams(z((8, 8)), z((8, 8)), z((8, 4)), z((4, 5)))
    gqa = AttentionParams(z((8, 8)), z((8, 4)), z((8, 2)), z((4, 5)))
    steps = [
        step
        for mask in (None, np.tril(np.ones((3, 7), dtype=bool)))
        for p, g in ((mha, None), (gqa, 1))
        for step, _ in mh.shape_trace(z((3, 8)), z((7, 8)), p, 2, n_kv_heads=g, mask=mask)
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
        ({"n_heads": 3}, ValueError, r"params.w_q has 4 columns, not divisible by n_heads = 3"),
        ({"n_kv_heads": 3}, ValueError, "n_kv_heads = 3 must divide n_heads = 2"),
        ({"n_kv_heads": 1}, ValueError, r"params.w_k must have n_kv_heads·d_k = 1·2 = 2 col"),
        # x_kv may be narrower (PyTorch's kdim), but w_k must then read its width
        ({"x_kv": np.zeros((5, 3))}, ValueError, r"params.w_k must have 3 rows.*x_kv \(5, 3\)"),
        ({"w_q": np.zeros((3, 4))}, ValueError, r"params.w_q must have 4 rows.*got shape \(3, 4\)"),
        ({"w_k": np.zeros((4, 6))}, ValueError, r"params.w_k must have n_kv_heads·d_k = 2·2"),
        ({"w_o": np.zeros((3, 4))}, ValueError, r"params.w_o must have n_heads·d_v = 2·2 = 4 rows"),
        ({"x_q": np.array([[np.nan] * 4])}, ValueError, "x_q contains NaN"),
        ({"x_q": np.array(["a"] * 4)}, TypeError, "x_q must hold real numbers"),
        ({"x_q": np.zeros(4)}, ValueError, r"x_q must have at least 2 dimensions"),
        ({"mask": np.zeros((3, 5), dtype=bool)}, ValueError, r"mask of shape \(3, 5\)"),
        ({"params": (1, 2, 3, 4)}, TypeError, "params must be an AttentionParams"),
    ],
)
def test_bad_input_errors(change, error, match):
    rng = np.random.default_rng(0)
    w = {n: rng.standard_normal((4, 4)) for n in ("w_q", "w_k", "w_v", "w_o")}
    w.update({n: change.pop(n) for n in list(change) if n in w})
    args = {
        "x_q": rng.standard_normal((2, 4)),
        "x_kv": rng.standard_normal((5, 4)),
        "params": AttentionParams(**w),
        "n_heads": 2,
    }
    args.update(change)
    with pytest.raises(error, match=match):
        multi_head_attention(**args)


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"w_q": np.ones(4)}, ValueError, r"w_q must be a matrix \(2 axes\), got shape \(4,\)"),
        ({"b_q": np.ones((1, 4))}, ValueError, r"b_q must be a vector \(1 axis\)"),
        ({"w_k": [[np.inf]]}, ValueError, "w_k contains NaN or ±inf"),
        ({"w_v": [["a"]]}, TypeError, "w_v must hold real numbers"),
        ({"w_o": None}, TypeError, "w_o must hold real numbers"),
    ],
)
def test_attention_params_checks_each_array(change, error, match):
    w = {n: np.eye(4) for n in ("w_q", "w_k", "w_v", "w_o")}
    with pytest.raises(error, match=match):
        AttentionParams(**{**w, **change})


def test_attention_params_keeps_float_arrays_and_is_frozen():
    w_q = np.eye(2)
    p = AttentionParams(w_q, [[1, 0], [0, 1]], np.eye(2), np.eye(2))
    assert p.w_q is w_q  # not copied: an in-place update (an optimiser step) reaches the layer
    assert p.w_k.dtype == np.float64  # integers became floats
    assert list(p.as_dict()) == ["w_q", "w_k", "w_v", "w_o"]
    with pytest.raises(AttributeError):
        p.w_q = np.zeros((2, 2))  # type: ignore[misc]


def test_float32_inputs_and_mask_shape_error_names_shapes():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = AttentionParams(*(rng.standard_normal((4, 4)).astype(np.float32) for _ in range(4)))
    out = multi_head_attention(x, x, w, 2)
    assert out.dtype == np.float32 and out.shape == (3, 4)
    assert multi_head_weights(x, x, w, 2).dtype == np.float32
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        multi_head_attention(x, x, w, 2, mask=np.ones((4, 4), dtype=bool))


def test_circuits_sum_of_heads_equals_concatenation():
    from attention_math.multihead import circuits, multi_head_attention

    rng = np.random.default_rng(17)
    x = rng.normal(size=(5, 6))
    n_heads, d = 3, 2
    w_q, w_k, w_v = (rng.normal(size=(6, n_heads * d)) for _ in range(3))
    w_o = rng.normal(size=(n_heads * d, 4))
    qk, ov = circuits(AttentionParams(w_q, w_k, w_v, w_o), n_heads)
    assert qk.shape == (3, 6, 6) and ov.shape == (3, 6, 4)
    total = np.zeros((5, 4))
    for h in range(n_heads):
        scores = x @ qk[h] @ x.T / np.sqrt(d)  # the QK circuit decides where to look
        p = softmax(scores)  # P_h
        total += p @ x @ ov[h]  # the OV circuit decides what is moved
        assert np.linalg.matrix_rank(qk[h]) <= d and np.linalg.matrix_rank(ov[h]) <= d
    want = multi_head_attention(x, x, AttentionParams(w_q, w_k, w_v, w_o), n_heads)
    assert np.allclose(total, want, rtol=1e-12, atol=1e-12)


def test_circuits_of_grouped_query_heads_pair_each_query_head_with_its_kv_head():
    from attention_math.multihead import circuits

    rng = np.random.default_rng(18)
    x = rng.normal(size=(5, 6))
    p = AttentionParams(
        rng.normal(size=(6, 4 * 2)),
        rng.normal(size=(6, 2 * 2)),
        rng.normal(size=(6, 2 * 3)),
        rng.normal(size=(4 * 3, 5)),
    )
    qk, ov = circuits(p, 4, n_kv_heads=2)
    assert qk.shape == (4, 6, 6) and ov.shape == (4, 6, 5)
    total = sum(softmax(x @ qk[i] @ x.T / np.sqrt(2)) @ x @ ov[i] for i in range(4))
    want = multi_head_attention(x, x, p, 4, n_kv_heads=2)
    np.testing.assert_allclose(total, want, rtol=1e-11, atol=1e-12)


def test_circuits_bad_input():
    from attention_math.multihead import circuits

    w = np.ones((4, 4))
    with pytest.raises(ValueError, match="not divisible by n_heads = 3"):
        circuits(AttentionParams(w, w, w, w), 3)
    with pytest.raises(ValueError, match="w_o must have n_heads·d_v"):
        circuits(AttentionParams(w, w, w, np.ones((3, 4))), 2)
    with pytest.raises(ValueError, match="n_heads must be a positive integer"):
        circuits(AttentionParams(w, w, w, w), 0)
    with pytest.raises(TypeError, match="params must be an AttentionParams"):
        circuits((w, w, w, w), 2)  # type: ignore[arg-type]


def test_per_head_masks_and_the_annotated_transformer_mask_in_multi_head():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4))  # (B, L, d_model)
    w = AttentionParams(*(rng.standard_normal((4, 4)) for _ in range(4)))
    lens = np.array([3, 2])
    hf = padding_mask(lens, 3)[:, None]  # (B, 1, 1, L): The Annotated Transformer, HF
    out = multi_head_attention(x, x, w, 2, mask=hf)
    assert out.shape == (2, 3, 4)  # not (2, 2, 3, 4)
    np.testing.assert_allclose(out, multi_head_attention(x, x, w, 2, mask=padding_mask(lens, 3)))
    per_head = rng.random((2, 2, 3, 3)) < 0.7  # (B, h, L_q, L_k)
    per_head[..., 0] = True
    wts = multi_head_weights(x, x, w, 2, mask=per_head)
    assert wts.shape == (2, 2, 3, 3) and (wts[~per_head] == 0).all()
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 1, 1, 3\)"):
        multi_head_attention(x, x, w, 2, mask=hf[:, None])  # one axis too many


def _mh_case(seed, d_model=4, d_kv=3, d_vin=5):
    rng = np.random.default_rng(seed)
    x_q = rng.standard_normal((2, 3, d_model))
    x_k = rng.standard_normal((2, 4, d_kv))
    x_v = rng.standard_normal((2, 4, d_vin))
    w = dict(
        w_q=rng.standard_normal((d_model, 4)),
        w_k=rng.standard_normal((d_kv, 4)),
        w_v=rng.standard_normal((d_vin, 6)),
        w_o=rng.standard_normal((6, 2)),
    )
    b = dict(
        b_q=rng.standard_normal(4),
        b_k=rng.standard_normal(4),
        b_v=rng.standard_normal(6),
        b_o=rng.standard_normal(2),
    )
    return x_q, x_k, x_v, w, b


def _head_weights(q, k, mask=None):
    """One head's weights the plain way: softmax of the scaled scores, masked keys zero."""
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return softmax(s)


def test_multihead_biases_and_widths_by_hand():
    x_q, x_k, x_v, w, b = _mh_case(14)
    p = AttentionParams(**w, **b)
    out = multi_head_attention(x_q, x_k, p, 2, x_v=x_v)
    wts = multi_head_weights(x_q, x_k, p, 2)
    q, k, v = x_q @ w["w_q"] + b["b_q"], x_k @ w["w_k"] + b["b_k"], x_v @ w["w_v"] + b["b_v"]
    heads = [
        attention(q[..., 2 * i : 2 * i + 2], k[..., 2 * i : 2 * i + 2], v[..., 3 * i : 3 * i + 3])
        for i in range(2)
    ]
    want = np.concatenate(heads, axis=-1) @ w["w_o"] + b["b_o"]
    np.testing.assert_allclose(out, want, rtol=1e-12)
    want_w = [_head_weights(q[..., 2 * i : 2 * i + 2], k[..., 2 * i : 2 * i + 2]) for i in (0, 1)]
    np.testing.assert_allclose(wts, np.stack(want_w, axis=1), rtol=1e-12)


def test_from_key_padding_mask_flips_pytorchs_convention_and_combines_with_mask():
    x_q, x_k, x_v, w, b = _mh_case(15)
    p = AttentionParams(**w, **b)
    pad = np.array([[False, False, False, True], [False, True, True, True]])
    blocked_first = np.ones((3, 4), bool)
    blocked_first[:, 0] = False
    converted = from_key_padding_mask(pad)
    assert converted.shape == (2, 1, 4) and converted.dtype == np.bool_
    np.testing.assert_array_equal(converted[:, 0], ~pad)
    got = multi_head_attention(x_q, x_k, p, 2, mask=blocked_first & converted, x_v=x_v)
    want = multi_head_attention(x_q, x_k, p, 2, mask=blocked_first & ~pad[:, None, :], x_v=x_v)
    np.testing.assert_array_equal(got, want)
    # each sequence equals itself cut to its valid keys, the first key blocked
    for i, n in enumerate((3, 1)):
        alone = multi_head_attention(
            x_q[i], x_k[i, :n], p, 2, mask=blocked_first[:, :n], x_v=x_v[i, :n]
        )
        np.testing.assert_allclose(got[i], alone, rtol=1e-10, atol=1e-12)
    additive = from_key_padding_mask(np.where(pad, -np.inf, 0.0))  # float: added as it is
    got_float = multi_head_attention(
        x_q, x_k, p, 2, mask=np.where(blocked_first, 0.0, -np.inf) + additive, x_v=x_v
    )
    np.testing.assert_allclose(got_float, want, rtol=1e-14)
    with pytest.raises(TypeError, match="key_padding_mask must be boolean"):
        from_key_padding_mask(pad.astype(int))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(\.\.\., L_k\)"):
        from_key_padding_mask(np.bool_(True))


def test_multihead_is_causal_equals_its_mask():
    x_q, x_k, x_v, w, b = _mh_case(16)
    p = AttentionParams(**w, **b)
    for alignment in ("top-left", "bottom-right"):
        mask = causal_mask(3, 4, causal_alignment=alignment)
        kw = dict(is_causal=True, causal_alignment=alignment)
        got = multi_head_attention(x_q, x_k, p, 2, x_v=x_v, **kw)
        want = multi_head_attention(x_q, x_k, p, 2, x_v=x_v, mask=mask)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(
            multi_head_weights(x_q, x_k, p, 2, **kw), multi_head_weights(x_q, x_k, p, 2, mask=mask)
        )


def test_scale_is_passed_to_every_head():
    x_q, x_k, x_v, w, b = _mh_case(19)
    p = AttentionParams(**w, **b)
    # scale s on the scores is the default 1/√d_k on queries multiplied by s·√d_k
    s = 0.3
    stretched = AttentionParams(
        **{**w, **b, "w_q": w["w_q"] * s * np.sqrt(2), "b_q": b["b_q"] * s * np.sqrt(2)}
    )
    np.testing.assert_allclose(
        multi_head_attention(x_q, x_k, p, 2, x_v=x_v, scale=s),
        multi_head_attention(x_q, x_k, stretched, 2, x_v=x_v),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        multi_head_weights(x_q, x_k, p, 2, scale=s),
        multi_head_weights(x_q, x_k, stretched, 2),
        rtol=1e-12,
    )
    uniform = multi_head_weights(x_q, x_k, p, 2, scale=0.0)
    np.testing.assert_allclose(uniform, np.full((2, 2, 3, 4), 0.25))
    with pytest.raises(ValueError, match="scale"):
        multi_head_attention(x_q, x_k, p, 2, x_v=x_v, scale=-1.0)


def test_dropout_is_attentions_dropout_on_the_heads():
    x_q, x_k, x_v, w, b = _mh_case(20)
    p = AttentionParams(**w, **b)
    no_drop = multi_head_attention(x_q, x_k, p, 2, x_v=x_v)
    one = multi_head_attention(x_q, x_k, p, 2, x_v=x_v, dropout_p=0.5, rng=7)
    again = multi_head_attention(x_q, x_k, p, 2, x_v=x_v, dropout_p=0.5, rng=7)
    np.testing.assert_array_equal(one, again)  # the same seed, the same masks
    assert not np.allclose(one, no_drop)
    # the same as attention's dropout on the heads, with the same generator
    q = x_q @ w["w_q"] + b["b_q"]
    k, v = x_k @ w["w_k"] + b["b_k"], x_v @ w["w_v"] + b["b_v"]
    split = lambda t: np.swapaxes(t.reshape(*t.shape[:-1], 2, -1), -3, -2)  # noqa: E731
    heads = attention(split(q), split(k), split(v), dropout_p=0.5, rng=7)  # (B, h, L_q, d_v)
    want = np.swapaxes(heads, -3, -2).reshape(2, 3, 6) @ w["w_o"] + b["b_o"]
    np.testing.assert_allclose(one, want, rtol=1e-12)
    with pytest.raises(ValueError, match="dropout_p must be in"):
        multi_head_attention(x_q, x_k, p, 2, x_v=x_v, dropout_p=1.0)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    groups=st.sampled_from([(4, 1), (4, 2), (4, 4), (6, 3), (2, 1)]),
    l_q=st.integers(1, 4),
    l_k=st.integers(1, 4),
    causal=st.booleans(),
)
def test_grouped_query_heads_equal_repeated_key_value_weights(seed, groups, l_q, l_k, causal):
    """GQA with h_kv key/value heads is multi-head attention whose key/value weight blocks
    are repeated for each query head of a group (query head i reads kv head i // (h/h_kv))."""
    h, g = groups
    rng = np.random.default_rng(seed)
    x_q, x_kv = rng.standard_normal((2, l_q, 6)), rng.standard_normal((2, l_k, 6))
    d_k, d_v = 2, 3
    p = AttentionParams(
        rng.standard_normal((6, h * d_k)),
        rng.standard_normal((6, g * d_k)),
        rng.standard_normal((6, g * d_v)),
        rng.standard_normal((h * d_v, 5)),
        rng.standard_normal(h * d_k),
        rng.standard_normal(g * d_k),
        rng.standard_normal(g * d_v),
        rng.standard_normal(5),
    )

    def repeat(a, d):  # the columns of each kv head, once per query head of its group
        blocks = np.split(a, g, axis=-1)
        return np.concatenate([blk for blk in blocks for _ in range(h // g)], axis=-1)

    full = AttentionParams(
        p.w_q,
        repeat(p.w_k, d_k),
        repeat(p.w_v, d_v),
        p.w_o,
        p.b_q,
        repeat(p.b_k, d_k),
        repeat(p.b_v, d_v),
        p.b_o,
    )
    kw = dict(is_causal=causal)
    np.testing.assert_allclose(
        multi_head_attention(x_q, x_kv, p, h, n_kv_heads=g, **kw),
        multi_head_attention(x_q, x_kv, full, h, **kw),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        multi_head_weights(x_q, x_kv, p, h, n_kv_heads=g, **kw),
        multi_head_weights(x_q, x_kv, full, h, **kw),
        rtol=1e-12,
        atol=1e-14,
    )


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"b_q": np.ones(3)}, r"b_q must have shape \(4,\)"),
        ({"b_o": np.ones(3)}, r"b_o must have shape \(2,\)"),
        ({"x_v": np.ones((2, 5, 5))}, "x_v and x_kv must share L_k"),
        ({"mask": np.ones((2, 3, 3, 4), bool)}, "with 3 heads on axis -3; give n_heads = 2 or 1"),
    ],
)
def test_multihead_new_argument_errors(change, match):
    x_q, x_k, x_v, w, b = _mh_case(17)
    kw = {"x_v": x_v, **{n: change.pop(n) for n in list(change) if n in ("x_v", "mask")}}
    p = AttentionParams(**w, **{**b, **change})
    with pytest.raises(ValueError, match=match):
        multi_head_attention(x_q, x_k, p, 2, **kw)


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
    w = AttentionParams(*(rng.standard_normal((4, 4)) for _ in range(4)))
    attend = padding_mask(lens, n_k)  # (B, 1, L_k), True = may attend
    pad = ~attend[:, 0]  # (B, L_k): PyTorch's key_padding_mask, True = padding
    by_kpm = multi_head_attention(x_q, x_kv, w, n_heads, mask=from_key_padding_mask(pad))
    shared = multi_head_attention(x_q, x_kv, w, n_heads, mask=attend)  # (B, 1, L_k)
    annotated = multi_head_attention(x_q, x_kv, w, n_heads, mask=attend[:, None])  # (B,1,1,L_k)
    per_head = multi_head_attention(
        x_q, x_kv, w, n_heads, mask=np.repeat(attend[:, None], n_heads, axis=1)
    )  # (B, h, 1, L_k)
    assert by_kpm.shape == (B, n_q, 4)
    for other in (shared, annotated, per_head):
        np.testing.assert_allclose(other, by_kpm, rtol=1e-12, atol=1e-14)
    # and each sequence equals itself cut to its valid keys, with no mask at all
    for b, n in enumerate(lens):
        alone = multi_head_attention(x_q[b], x_kv[b, :n], w, n_heads)
        np.testing.assert_allclose(by_kpm[b], alone, rtol=1e-10, atol=1e-12)


def test_multihead_keeps_bfloat16_and_promotes_mixed_inputs():
    ml_dtypes = pytest.importorskip("ml_dtypes")  # in the test group
    bf16 = np.dtype(ml_dtypes.bfloat16)
    x_q, x_k, x_v, w, b = _mh_case(18)
    p = AttentionParams(**{n: a.astype(bf16) for n, a in {**w, **b}.items()})
    x_q, x_k, x_v = (a.astype(bf16) for a in (x_q, x_k, x_v))
    out = multi_head_attention(x_q, x_k, p, 2, x_v=x_v)
    wts = multi_head_weights(x_q, x_k, p, 2)
    assert out.dtype == wts.dtype == bf16
    p64 = AttentionParams(**{n: a.astype(np.float64) for n, a in p.as_dict().items()})
    x64 = [a.astype(np.float64) for a in (x_q, x_k, x_v)]
    exact = multi_head_attention(x64[0], x64[1], p64, 2, x_v=x64[2])
    exact_w = multi_head_weights(x64[0], x64[1], p64, 2)
    eps = 2.0**-7  # bfloat16: 8 significant bits
    scale = np.abs(exact).max()
    assert np.abs(out.astype(np.float64) - exact).max() <= 2 * eps * scale
    assert np.abs(wts.astype(np.float64) - exact_w).max() <= eps
    # one float32 weight matrix promotes the whole product to float32, as NumPy would
    mixed = AttentionParams(**{**p.as_dict(), "w_q": w["w_q"].astype(np.float32)})
    assert multi_head_attention(x_q, x_k, mixed, 2, x_v=x_v).dtype == np.float32
