"""The SymPy derivation: exact equalities, the σ(1/√2) closed form, masks as limits."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from attention_math import symbolic
from attention_math.numeric import attention as np_attention

SQRT2_INV = 1 / sp.sqrt(2)


def zero(expr) -> bool:
    return sp.simplify(expr) == 0


def test_softmax_of_inverse_sqrt2_and_zero_is_sigmoid_and_complement():
    p = symbolic.softmax([[SQRT2_INV, 0]])
    sigma = sp.exp(SQRT2_INV) / (1 + sp.exp(SQRT2_INV))
    assert zero(p[0] - sigma)
    assert zero(p[1] - (1 - sigma))
    assert zero(symbolic.sigmoid(SQRT2_INV) - 1 / (1 + sp.exp(-SQRT2_INV)))


def test_identity_example_closed_form_in_sigma():
    s = sp.Symbol("s", positive=True)
    out = symbolic.attention(sp.eye(2), sp.eye(2), [[1, 2], [3, 4]])
    closed = out.applyfunc(lambda e: symbolic.in_terms_of_sigmoid(e, SQRT2_INV, s))
    assert closed == sp.Matrix([[3 - 2 * s, 4 - 2 * s], [1 + 2 * s, 2 + 2 * s]])
    back = closed.subs(s, symbolic.sigmoid(SQRT2_INV))
    assert all(zero(a - b) for a, b in zip(back, out, strict=True))


def test_in_terms_of_sigmoid_rejects_other_exponentials():
    with pytest.raises(ValueError, match="not a function"):
        symbolic.in_terms_of_sigmoid(sp.exp(SQRT2_INV) + sp.exp(SQRT2_INV / 2), SQRT2_INV)


def test_in_terms_of_sigmoid_handles_integer_multiples():
    s = sp.Symbol("s", positive=True)
    r = symbolic.in_terms_of_sigmoid(sp.exp(2 * SQRT2_INV) + sp.exp(-SQRT2_INV), SQRT2_INV, s)
    assert zero(r - (s**2 / (1 - s) ** 2 + (1 - s) / s))


def test_rows_sum_to_one_for_generic_symbols():
    z = symbolic.generic_matrix("z", 2, 3)
    p = symbolic.softmax(z)
    for i in range(2):
        assert zero(sum(p.row(i)) - 1)


def test_generic_attention_entry_matches_the_definition():
    q, k, v = (symbolic.generic_matrix(n, 2, 1) for n in ("q", "k", "v"))
    out = symbolic.attention(q, k, v, scale=1)
    q1, k1, k2, v1, v2 = (sp.Symbol(n, real=True) for n in ("q_11", "k_11", "k_21", "v_11", "v_21"))
    expected = (sp.exp(q1 * k1) * v1 + sp.exp(q1 * k2) * v2) / (sp.exp(q1 * k1) + sp.exp(q1 * k2))
    assert zero(out[0, 0] - expected)


def test_default_scale_is_inverse_sqrt_dk():
    s = symbolic.scores([[1, 1, 1, 1]], [[1, 0, 0, 0]])
    assert s[0, 0] == sp.Rational(1, 2)  # 1/√4


def test_masks_boolean_additive_and_limit_agree():
    q = k = sp.eye(2)
    v = sp.Matrix([[1, 2], [3, 4]])
    boolean = symbolic.attention(q, k, v, mask=[[True, False], [True, True]])
    additive = symbolic.attention(q, k, v, mask=sp.Matrix([[0, -sp.oo], [0, 0]]))
    assert boolean == additive
    assert boolean.row(0) == v.row(0)
    lim = symbolic.masked_softmax_limit([SQRT2_INV, 0], masked=[1])
    assert lim == [1, 0]
    lim3 = symbolic.masked_softmax_limit([0, 1, 5], masked=[2])
    direct = symbolic.softmax([[0, 1]])
    assert zero(lim3[0] - direct[0]) and zero(lim3[1] - direct[1]) and lim3[2] == 0


def test_fully_masked_row_is_zero():
    out = symbolic.attention(
        sp.eye(2), sp.eye(2), [[1, 2], [3, 4]], mask=[[False, False], [True, True]]
    )
    assert list(out.row(0)) == [0, 0]


def test_additive_finite_mask_is_added():
    out = symbolic.attention([[0]], [[0], [0]], [[0], [1]], mask=[[0, sp.log(3)]])
    assert zero(out[0, 0] - sp.Rational(3, 4))


def test_exact_matches_numpy_on_rationals():
    rng = np.random.default_rng(5)
    ints = rng.integers(-3, 4, size=(3, 3, 2))
    q, k, v = (sp.Matrix(a.tolist()) / 2 for a in ints)
    exact = symbolic.attention(q, k, v, mask=np.tri(3, dtype=bool))
    num = np_attention(ints[0] / 2, ints[1] / 2, ints[2] / 2, np.tri(3, dtype=bool))
    np.testing.assert_allclose(np.array(exact.evalf(30).tolist(), float), num, rtol=1e-14)


def test_floats_become_exact_binary_values():
    m = symbolic.as_matrix([[0.1]])
    assert m[0, 0] == sp.Rational(3602879701896397, 36028797018963968)


def test_evaluate_and_to_mpmath_digits():
    assert str(symbolic.evaluate(sp.sqrt(2), 12)) == "1.41421356237"
    x = symbolic.to_mpmath(sp.pi, 40)
    assert abs(x - sp.pi.evalf(45)) < 1e-38
    with pytest.raises(ValueError, match="digits"):
        symbolic.evaluate(sp.pi, 0)


def test_latex_uses_bmatrix():
    assert symbolic.latex(sp.eye(2)).startswith(r"\begin{bmatrix}")


@pytest.mark.parametrize(
    ("args", "exc"),
    [
        (([[1, 2]], [[1, 2, 3]], [[1]]), ValueError),
        (([[1, 2]], [[1, 2]], [[1], [2]]), ValueError),
        (([], [[1]], [[1]]), ValueError),
    ],
)
def test_shape_errors(args, exc):
    with pytest.raises(exc):
        symbolic.attention(*args)


def test_mask_shape_error():
    with pytest.raises(ValueError, match="mask"):
        symbolic.attention(sp.eye(2), sp.eye(2), sp.eye(2), mask=[[True, False]])


@pytest.mark.parametrize(
    "bad", ["__import__('os').system('true')", [["1", "2"]], np.array([["x"]]), [[1, "2"]]]
)
def test_strings_are_never_sympified(bad):
    # sympy.Matrix(str) would run sympify, which evaluates the string
    with pytest.raises(TypeError, match="string"):
        symbolic.as_matrix(bad)
    with pytest.raises(TypeError, match="string"):
        symbolic.attention(bad, [[1]], [[1]])


def test_string_scale_and_mask_are_rejected():
    with pytest.raises(TypeError, match="string"):
        symbolic.scores([[1]], [[1]], scale="1/2")
    with pytest.raises(TypeError, match="string"):
        symbolic.attention([[1]], [[1]], [[1]], mask=[["-oo"]])


def test_softmax_keeps_a_column_written_as_nested_lists() -> None:
    # Only a flat list is one row: [[1], [2]] is a column, each row one score (weight 1).
    column = [[1], [2]]
    assert symbolic.softmax(column) == sp.Matrix([[1], [1]])
    assert symbolic.softmax(np.array(column, dtype=float)) == sp.Matrix([[1], [1]])
    e1, e2 = sp.E, sp.exp(2)
    want = sp.Matrix([[e1 / (e1 + e2)], [e2 / (e1 + e2)]])
    assert sp.simplify(symbolic.softmax(column, axis=0) - want) == sp.zeros(2, 1)
    assert symbolic.softmax([1, 2]).shape == (1, 2)
    assert symbolic.softmax(np.array([1, 2])).shape == (1, 2)


def test_a_sympy_matrix_of_booleans_is_a_mask() -> None:
    eye, v = sp.eye(2), sp.Matrix([[1, 2], [3, 4]])
    rows = [[True, False], [True, True]]
    with pytest.warns(sp.utilities.exceptions.SymPyDeprecationWarning):
        as_sympy = sp.Matrix(rows)  # SymPy itself warns about booleans in a Matrix
    assert symbolic.attention(eye, eye, v, mask=as_sympy) == symbolic.attention(
        eye, eye, v, mask=rows
    )
    assert symbolic.attention(eye, eye, v, mask=rows)[0, :] == v[0, :]


def test_in_terms_of_sigmoid_rewrites_e_itself_when_a_is_one() -> None:
    """exp(1) is SymPy's constant E, not an exp atom: it must be rewritten like exp(2·1)."""
    import sympy as sp

    from attention_math.symbolic import attention, in_terms_of_sigmoid, sigmoid

    assert in_terms_of_sigmoid(sigmoid(1), 1) == sp.Symbol("sigma", positive=True)
    out = attention(sp.sqrt(2) * sp.eye(2), sp.eye(2), [[1, 2], [3, 4]])  # scores 1 and 0
    rewritten = out.applyfunc(lambda e: in_terms_of_sigmoid(e, 1))
    assert not any(x.has(sp.E) for x in rewritten)


def test_floats_in_the_scale_and_the_mask_are_their_exact_binary_values() -> None:
    """No 15-digit Floats slip into the exact derivation (as_matrix already reads floats so)."""
    import sympy as sp

    from attention_math.symbolic import attention_weights, scores

    tenth = sp.Rational(0.1)  # 3602879701896397/2**55, not 1/10 and not a Float
    assert scores(sp.eye(2), sp.eye(2), scale=0.1) == tenth * sp.eye(2)
    w = attention_weights(sp.eye(2), sp.eye(2), sp.eye(2), mask=[[0.1, 0], [0, 0]])
    assert not any(x.atoms(sp.Float) for x in w)
    assert w[0, 0].has(tenth)


def test_the_exact_backward_reads_a_float_scale_as_the_forward_does() -> None:
    import sympy as sp

    from attention_math.derivations.gradients import backward

    g = backward(sp.eye(2), sp.eye(2), sp.eye(2), sp.ones(2, 2), scale=0.1)
    assert not any(x.atoms(sp.Float) for name in ("O", "dQ", "dK") for x in g[name])


def test_in_terms_of_sigmoid_still_refuses_a_wrong_rewrite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = symbolic.attention(sp.eye(2), sp.eye(2), [[1, 2], [3, 4]])
    a = 1 / sp.sqrt(2)
    sigma = sp.Symbol("sigma", positive=True)
    assert symbolic.in_terms_of_sigmoid(out[0, 0], a, sigma) == 3 - 2 * sigma
    real_factor = sp.factor
    monkeypatch.setattr(sp, "factor", lambda e: real_factor(e) + sp.Rational(1, 10**9))
    derive = symbolic.in_terms_of_sigmoid.__wrapped__  # type: ignore[attr-defined]  # not the kept result
    with pytest.raises(ArithmeticError, match="did not verify"):
        derive(out[0, 0], a, sigma)


@pytest.mark.parametrize("alignment", ["top-left", "bottom-right"])
@pytest.mark.parametrize(("l_q", "l_k"), [(3, 3), (2, 4), (4, 2)])
def test_is_causal_matches_numeric_and_the_written_mask(alignment, l_q, l_k) -> None:
    rng = np.random.default_rng(l_q * 10 + l_k)
    q, k, v = (
        rng.integers(-3, 4, (l_q, 2)),
        rng.integers(-3, 4, (l_k, 2)),
        rng.integers(-3, 4, (l_k, 2)),
    )
    kw = {"is_causal": True, "causal_alignment": alignment}
    w = symbolic.attention_weights(q, k, v, **kw)
    seen = np.tri(l_q, l_k, k=0 if alignment == "top-left" else l_k - l_q, dtype=bool)
    assert all(w[i, j] is sp.S.Zero for i, j in zip(*np.nonzero(~seen), strict=True))
    assert w == symbolic.attention_weights(q, k, v, mask=seen.tolist())
    exact = symbolic.attention(q, k, v, **kw)
    assert exact == symbolic.attention(q, k, v, mask=seen.tolist())
    num = np_attention(q.astype(float), k.astype(float), v.astype(float), **kw)
    assert np.allclose(np.array(exact.evalf(30).tolist(), dtype=float), num, rtol=0, atol=1e-14)


def test_is_causal_combines_with_a_mask() -> None:
    eye = sp.eye(3)
    v = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    # the mask hides key 0 from query 2; causality hides keys after each query
    w = symbolic.attention_weights(
        eye, eye, v, mask=[[True] * 3, [True] * 3, [False, True, True]], is_causal=True
    )
    assert [[bool(w[i, j] == 0) for j in range(3)] for i in range(3)] == [
        [False, True, True],
        [False, False, True],
        [True, False, False],
    ]
    assert symbolic.is_zero(sum(w.row(2)) - 1)


def test_the_weights_times_v_are_the_output() -> None:
    q, k, v = (
        symbolic.generic_matrix("q", 2, 2),
        symbolic.generic_matrix("k", 3, 2),
        symbolic.generic_matrix("v", 3, 1),
    )
    w = symbolic.attention_weights(
        q, k, v, scale=1, is_causal=True, causal_alignment="bottom-right"
    )
    out = symbolic.attention(q, k, v, scale=1, is_causal=True, causal_alignment="bottom-right")
    assert w.shape == (2, 3) and out.shape == (2, 1)
    assert all(symbolic.is_zero(e) for e in w * v - out)


def test_bad_causal_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="is_causal must be True or False, got 1"):
        symbolic.attention([[1]], [[1]], [[1]], is_causal=1)
    with pytest.raises(ValueError, match="causal_alignment"):
        symbolic.attention_weights(
            [[1]], [[1]], [[1]], is_causal=True, causal_alignment="lower-right"
        )
    assert symbolic.attention([[1]], [[1]], [[1]], is_causal=np.True_) == sp.Matrix([[1]])
