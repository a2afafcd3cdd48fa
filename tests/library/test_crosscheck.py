"""The cross-check raises on disagreement and measures error in units of ε."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from attention_math import numeric, symbolic
from attention_math.crosscheck import CrossCheckError, crosscheck


def test_identity_example_agrees_in_both_precisions():
    exact = symbolic.attention(sp.eye(2), sp.eye(2), [[1, 2], [3, 4]])
    v = np.array([[1, 2], [3, 4]])
    for dtype in (np.float64, np.float32):
        out = numeric.attention(np.eye(2, dtype=dtype), np.eye(2, dtype=dtype), v.astype(dtype))
        check = crosscheck(exact, out)
        assert check.dtype == np.dtype(dtype).name
        assert check.error_eps <= 16


def test_error_is_measured_in_epsilons():
    exact = sp.Matrix([[1, 2]])
    eps = np.finfo(np.float64).eps
    num = np.array([[1.0, 2.0 + 4 * eps]])  # 2 + 4ε is representable exactly (ulp of 2 is 2ε)
    assert crosscheck(exact, num).error_eps == pytest.approx(2.0)  # 4ε / max|x| = 4ε/2


def test_disagreement_raises_with_the_label():
    with pytest.raises(CrossCheckError, match="weights"):
        crosscheck(sp.Rational(1, 3), np.float64(0.3334), label="weights")


def test_seed_rounding_would_fail_the_build():
    # a value printed to 4 digits is far outside a float64 bound
    sigma = symbolic.sigmoid(1 / sp.sqrt(2))
    with pytest.raises(CrossCheckError):
        crosscheck(sigma, np.float64(round(float(sigma.evalf(20)), 4)))


def test_shape_mismatch_and_non_float():
    with pytest.raises(ValueError, match="shape"):
        crosscheck(sp.eye(2), np.eye(3))
    with pytest.raises(TypeError):
        crosscheck(sp.eye(2), np.eye(2, dtype=int))


def test_nan_never_agrees():
    with pytest.raises(CrossCheckError):
        crosscheck(sp.Matrix([[1, 2]]), np.array([[1.0, np.nan]]))


def test_vector_against_row_matrix():
    assert crosscheck(sp.Matrix([[1, 2]]), np.array([1.0, 2.0])).error_eps == 0


def test_exact_zeros():
    assert crosscheck(sp.zeros(1, 2), np.zeros((1, 2))).error_eps == 0
    with pytest.raises(CrossCheckError):
        crosscheck(sp.zeros(1, 2), np.array([[0.0, 1e-10]]))
