"""The gradient formulas, verified exactly in SymPy, and their agreement with the NumPy code."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from attention_math import symbolic
from attention_math.backward import attention_backward
from attention_math.crosscheck import crosscheck
from attention_math.derivations import gradients as g
from attention_math.examples import IDENTITY_2X2 as ex
from attention_math.symbolic import is_zero


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_softmax_jacobian_explicit(n):
    _, J = g.softmax_jacobian(n)
    assert J.shape == (n, n)
    assert J == J.T
    assert all(is_zero(e) for e in J * sp.ones(n, 1))


def test_softmax_jacobian_two_entries_is_sigma_one_minus_sigma():
    p, J = g.softmax_jacobian(2)
    sigma = p[0]
    expected = sigma * (1 - sigma) * sp.Matrix([[1, -1], [-1, 1]])
    assert all(is_zero(e) for e in J - expected)
    # So the eigenvalues are 0 (along the ones-vector) and 2σ(1 − σ) > 0 (along (1, −1)).
    assert all(
        is_zero(e) for e in J * sp.Matrix([1, -1]) - 2 * sigma * (1 - sigma) * sp.Matrix([1, -1])
    )


def test_softmax_jacobian_general_identity():
    raw, identity = g.softmax_jacobian_general()
    assert raw.has(sp.KroneckerDelta) and raw.has(sp.Sum)
    i, j = sp.symbols("i j", integer=True, positive=True)
    assert identity.has(sp.KroneckerDelta(i, j))


def test_jacobian_psd_quadratic_form_is_a_variance():
    out = g.verify_jacobian_properties(3)
    assert all(e == 0 for e in out["J_ones"])
    # A variance is a sum of p_i times squares: non-negative for real x and p_i > 0.
    assert all(
        isinstance(t, sp.Mul) and any(f.is_Pow and f.exp == 2 for f in t.args)
        for t in sp.Add.make_args(out["variance"])
    )


def test_jacobian_psd_numerically_on_random_points():
    rng = np.random.default_rng(0)
    _, J = g.softmax_jacobian(3)
    z = sorted(J.free_symbols, key=str)
    f = sp.lambdify(z, J, "numpy")
    for _ in range(20):
        eig = np.linalg.eigvalsh(np.array(f(*rng.normal(size=3) * 3), dtype=float))
        assert eig.min() > -1e-15 and np.sum(np.abs(eig) < 1e-15) >= 1


@pytest.mark.parametrize(
    "mask",
    [None, "additive", [[True, False, True], [False, False, False]]],
    ids=["no mask", "additive generic mask", "boolean mask with a fully masked row"],
)
@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_backward_formulas_equal_direct_differentiation(mask):
    checked = g.verify_backward(2, 3, 2, 2, mask=mask)  # cross-attention: L_q = 2, L_k = 3
    assert checked["dQ"].shape == (2, 2) and checked["dK"].shape == (3, 2)
    assert checked["dV"].shape == (3, 2)
    if isinstance(mask, list):
        assert checked["dQ"].row(1) == sp.zeros(1, 2)  # the fully masked query


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_projection_formulas_equal_direct_differentiation():
    checked = g.verify_projection_backward(2, 2, 1, 1)
    assert set(checked) == {"dX", "dW_Q", "dW_K", "dW_V"}
    assert checked["dX"].shape == (2, 2)


def test_a_wrong_formula_is_rejected():
    """The check can fail: dropping the −rowsum(dO ∘ O) term (ignoring the ppᵀ part of the
    Jacobian) gives a different dQ."""
    Q, K, V = (symbolic.generic_matrix(n, 2, 1) for n in "qkv")
    dO = symbolic.generic_matrix("g", 2, 1)
    f = g.backward(Q, K, V, dO, scale=1)
    loss = sum(dO.multiply_elementwise(f["O"]), sp.S.Zero)
    direct = Q.applyfunc(lambda a: sp.diff(loss, a))
    wrong = f["P"].multiply_elementwise(f["dP"]) * K
    assert all(is_zero(e) for e in direct - f["dQ"])
    assert not all(is_zero(e) for e in direct - wrong)


def test_is_zero_sees_through_exponential_forms():
    a, b = sp.symbols("a b", real=True)
    assert is_zero(sp.exp(a + b) - sp.exp(a) * sp.exp(b))
    assert not is_zero(sp.exp(a + b) - sp.exp(a))


def test_worked_example_exact_equals_numpy():
    X, W_Q, W_K, W_V = (ex.exact(n) for n in ("x", "w_q", "w_k", "w_v"))
    exact = g.projection_backward(X, W_Q, W_K, W_V, g.IDENTITY_LOSS_D_OUT)
    q, k, v = (ex.numeric("x") @ ex.numeric(w) for w in ("w_q", "w_k", "w_v"))
    d_out = np.array(g.IDENTITY_LOSS_D_OUT.tolist(), dtype=float)
    for name, num in zip(("dQ", "dK", "dV"), attention_backward(q, k, v, d_out), strict=True):
        crosscheck(exact[name], num, label=name)
    # dS = 2σ(1−σ)·[[−1, 1], [−1, 1]] with σ = σ(1/√2): a closed form the page shows.
    sigma = symbolic.sigmoid(1 / sp.sqrt(2))
    expected = 2 * sigma * (1 - sigma) * sp.Matrix([[-1, 1], [-1, 1]])
    assert all(is_zero(e) for e in exact["dS"] - expected)


def test_bad_arguments():
    with pytest.raises(ValueError, match="n must be a positive integer"):
        g.softmax_jacobian(0)
    with pytest.raises(ValueError, match="mask must be None"):
        g.verify_backward(1, 1, 1, 1, mask="boolean")
    with pytest.raises(ValueError, match="d_out has shape"):
        g.backward(sp.eye(2), sp.eye(2), sp.eye(2), sp.ones(1, 2))
