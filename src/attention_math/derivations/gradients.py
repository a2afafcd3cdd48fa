"""Gradients of attention, derived and verified exactly in SymPy.

``verify_backward`` and ``verify_projection_backward`` differentiate a scalar loss directly
(``sympy.diff`` of every entry) and check that the matrix formula gives the same expression,
exactly; ``verify_jacobian_properties`` checks the softmax Jacobian's identities. Each
difference is reduced to the zero rational function, never sampled. They raise
``ArithmeticError`` on any mismatch and return what they checked, so the site can show it.

The formulas, for ``S = α Q Kᵀ + M`` (scale α), ``P = softmax(S)`` row by row, ``O = P V`` and an
upstream gradient ``dO = ∂ℓ/∂O``:

- softmax Jacobian per row: ``∂p_i/∂s_j = p_i (δ_ij − p_j)``, i.e. ``J = diag(p) − p pᵀ``;
- ``dV = Pᵀ dO``, ``dP = dO Vᵀ``, ``dS = P ∘ (dP − rowsum(dO ∘ O))``,
  ``dQ = α dS K``, ``dK = α dSᵀ Q``;
- through ``Q = X W_Q``, ``K = X W_K``, ``V = X W_V``: ``dW_Q = Xᵀ dQ``, ``dW_K = Xᵀ dK``,
  ``dW_V = Xᵀ dV`` and ``dX = dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ``.
"""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math.derivations._once import derived_once
from attention_math.symbolic import is_zero

__all__ = [
    "IDENTITY_LOSS_D_OUT",
    "backward",
    "projection_backward",
    "softmax_jacobian",
    "softmax_jacobian_general",
    "verify_backward",
    "verify_jacobian_properties",
    "verify_projection_backward",
]

IDENTITY_LOSS_D_OUT = sp.eye(2)
"""The upstream gradient of the worked example's loss ``ℓ = tr(O) = O_11 + O_22``."""


def _require_zero(diff: sp.Matrix, what: str) -> None:
    for idx, e in enumerate(diff):
        if not is_zero(e):
            raise ArithmeticError(f"{what}: entry {idx} differs by {e}")


def softmax_jacobian(n: int) -> tuple[sp.Matrix, sp.Matrix]:
    """The ``n × n`` Jacobian of the softmax of generic scores ``s_1 … s_n``, verified.

    Returns ``(p, J)``: the softmax column ``p`` and ``J = diag(p) − p pᵀ``, after checking
    ``J_ij = ∂p_i/∂s_j`` entry by entry against ``sympy.diff``.

    Raises:
        ValueError: ``n`` is not a positive integer.

    Examples:
        >>> from attention_math.derivations.gradients import softmax_jacobian
        >>> p, J = softmax_jacobian(2)
        >>> J[0, 1] == -p[0] * p[1]
        True
    """
    if isinstance(n, bool) or not isinstance(n, int):  # the wording of _checks.check_count
        raise TypeError(f"n must be a positive integer, got {n!r}")
    if n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    s = symbolic.generic_matrix("s", 1, n)  # one row of scores
    p = symbolic.softmax(s).T  # column
    direct = sp.Matrix(n, n, lambda i, j: sp.diff(p[i], s[j]))
    J = sp.diag(*p) - p * p.T
    _require_zero(direct - J, "softmax Jacobian")
    return p, J


@derived_once
def softmax_jacobian_general() -> tuple[sp.Expr, sp.Expr]:
    """``∂p_i/∂s_j`` for a softmax of any length ``n``, verified for symbolic ``n``.

    ``p_i = e^{s_i} / Σ_{l=1}^{n} e^{s_l}`` is differentiated with ``s`` an indexed symbol;
    SymPy's Kronecker deltas give ``p_i(δ_ij − p_j)`` for every ``1 ≤ i, j ≤ n``. Returns the
    derivative as SymPy first writes it and the identity it equals.

    Examples:
        >>> from attention_math.derivations.gradients import softmax_jacobian_general
        >>> raw, identity = softmax_jacobian_general()
        >>> raw.args[0]  # the first term: the derivative of the numerator e^{s_i}
        exp(s[i])*KroneckerDelta(i, j)/Sum(exp(s[l]), (l, 1, n))
    """
    i, j, ell = sp.symbols("i j l", integer=True, positive=True)
    m = sp.Symbol("m", integer=True, nonnegative=True)
    s = sp.IndexedBase("s", real=True)  # one row of scores

    def p(a: sp.Symbol, n: sp.Expr) -> sp.Expr:
        return sp.exp(s[a]) / sp.Sum(sp.exp(s[ell]), (ell, 1, n))

    # n = j + m states j ≤ n, which the sum over the Kronecker delta needs.
    n = j + m
    raw = sp.diff(p(i, n), s[j])
    if sp.simplify(raw.doit() - p(i, n) * (sp.KroneckerDelta(i, j) - p(j, n))) != 0:
        raise ArithmeticError("the general softmax Jacobian did not verify")
    n_sym = sp.Symbol("n", integer=True, positive=True)
    back = {n: n_sym}
    # Unevaluated, so that it prints as p_i (δ_ij − p_j) rather than multiplied out.
    identity = sp.Mul(p(i, n_sym), sp.KroneckerDelta(i, j) - p(j, n_sym), evaluate=False)
    return raw.xreplace(back), identity


@derived_once
def verify_jacobian_properties(n: int) -> dict[str, sp.Expr]:
    """Check that the softmax Jacobian is symmetric PSD with ``J·1 = 0``, for ``n`` entries.

    PSD: ``xᵀ J x = Σ p_i x_i² − (Σ p_i x_i)² = Σ p_i (x_i − x̄)²`` with ``x̄ = Σ p_i x_i``:
    the variance of ``x`` under the weights ``p``, never negative. Returns the quadratic form
    and the variance it equals.

    Examples:
        >>> from attention_math.derivations.gradients import verify_jacobian_properties
        >>> sorted(verify_jacobian_properties(2))
        ['J_ones', 'quadratic_form', 'variance']
    """
    p, J = softmax_jacobian(n)
    if J != J.T:
        raise ArithmeticError("the softmax Jacobian is not symmetric")
    J_ones = J * sp.ones(n, 1)
    _require_zero(J_ones, "J times the ones-vector")
    x = symbolic.generic_matrix("x", n, 1)
    quad = (x.T * J * x)[0]
    mean = (p.T * x)[0]
    variance = sum((p[i] * (x[i] - mean) ** 2 for i in range(n)), sp.S.Zero)
    if not is_zero(quad - variance):
        raise ArithmeticError("xᵀJx is not the variance of x under p")
    return {"J_ones": J_ones.applyfunc(sp.simplify), "quadratic_form": quad, "variance": variance}


def backward(
    q: object, k: object, v: object, d_out: object, mask: object = None, *, scale: object = None
) -> dict[str, sp.Matrix]:
    """The backward pass by the matrix formulas, exactly: ``P, O, dP, dS, dQ, dK, dV``.

    ``mask`` and ``scale`` are as in [`attention`][attention_math.symbolic.attention] (a boolean
    matrix or an additive one; ``scale`` defaults to ``1/√d_k``).

    Raises:
        ValueError: ``d_out`` does not have the output's shape.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.gradients import backward
        >>> g = backward(sp.eye(2), sp.eye(2), [[1, 2], [3, 4]], sp.eye(2))
        >>> g["dV"] == g["P"].T
        True
        >>> [sp.simplify(sum(g["dS"].row(i))) for i in range(2)]  # rows of dS sum to zero
        [0, 0]
    """
    Qm, Km = symbolic.as_matrix(q, "Q"), symbolic.as_matrix(k, "K")
    Vm, dO = symbolic.as_matrix(v, "V"), symbolic.as_matrix(d_out, "d_out")
    # read as attention reads it (a float as its exact value), so dQ and dK use the same α
    alpha = 1 / sp.sqrt(Qm.cols) if scale is None else symbolic._exact(scale)
    out = symbolic.attention(Qm, Km, Vm, mask=mask, scale=alpha)
    P = symbolic.attention_weights(Qm, Km, Vm, mask=mask, scale=alpha)
    if dO.shape != out.shape:
        raise ValueError(f"d_out has shape {dO.shape}, the output has shape {out.shape}")
    dV = P.T * dO
    dP = dO * Vm.T
    delta = dO.multiply_elementwise(out) * sp.ones(out.cols, 1)  # rowsum(dO ∘ O), a column
    dS = P.multiply_elementwise(dP - delta * sp.ones(1, P.cols))
    return {
        "P": P,
        "O": out,
        "dP": dP,
        "dS": dS,
        "dQ": alpha * dS * Km,
        "dK": alpha * dS.T * Qm,
        "dV": dV,
    }


def _loss(d_out: sp.Matrix, out: sp.Matrix) -> sp.Expr:
    """ℓ = Σ dO ∘ O: its gradient with respect to O is exactly dO."""
    return sum(d_out.multiply_elementwise(out), sp.S.Zero)


def _direct_gradient(loss: sp.Expr, A: sp.Matrix) -> sp.Matrix:
    return A.applyfunc(lambda a: sp.diff(loss, a))


@derived_once
def verify_backward(
    l_q: int = 2, l_k: int = 3, d_k: int = 2, d_v: int = 2, mask: object = None
) -> dict[str, sp.Matrix]:
    """Verify ``dQ``, ``dK``, ``dV`` against direct differentiation on generic matrices.

    ``Q``, ``K``, ``V``, ``dO`` and the scale ``α`` are symbols. ``mask`` is ``None``,
    ``"additive"`` (a generic additive mask ``M`` of symbols ``m_ij``) or an ``l_q × l_k``
    boolean matrix. Returns the formula gradients (each checked equal to ``∂ℓ/∂·``).

    Raises:
        ValueError: a ``mask`` other than None, ``"additive"`` or a boolean matrix.
        ArithmeticError: if a formula differs from the direct derivative.

    Examples:
        >>> from attention_math.derivations.gradients import verify_backward
        >>> sorted(verify_backward(1, 2, 1, 1))
        ['dK', 'dQ', 'dV']
    """
    Q = symbolic.generic_matrix("q", l_q, d_k)
    K = symbolic.generic_matrix("k", l_k, d_k)
    V = symbolic.generic_matrix("v", l_k, d_v)
    dO = symbolic.generic_matrix("g", l_q, d_v)
    alpha = sp.Symbol("alpha", positive=True)  # the scale α, as /gradients/ writes it
    if isinstance(mask, str):
        if mask != "additive":
            raise ValueError(f'mask must be None, "additive" or a boolean matrix, got {mask!r}')
        mask = symbolic.generic_matrix("m", l_q, l_k)
    formulas = backward(Q, K, V, dO, mask=mask, scale=alpha)
    loss = _loss(dO, formulas["O"])
    checked = {}
    for name, A in (("dQ", Q), ("dK", K), ("dV", V)):
        _require_zero(_direct_gradient(loss, A) - formulas[name], name)
        checked[name] = formulas[name]
    return checked


def projection_backward(
    x: object, w_q: object, w_k: object, w_v: object, d_out: object, *, scale: object = None
) -> dict[str, sp.Matrix]:
    """Gradients through the projections by the formulas: ``dX, dW_Q, dW_K, dW_V``.

    Also returns the attention-level gradients of
    [`backward`][attention_math.derivations.gradients.backward].

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.gradients import projection_backward
        >>> g = projection_backward(sp.eye(2), sp.eye(2), sp.eye(2), [[1, 2], [3, 4]], sp.eye(2))
        >>> g["dW_V"] == g["dV"]   # X = I
        True
    """
    Xm = symbolic.as_matrix(x, "X")
    Wq, Wk, Wv = (symbolic.as_matrix(w, n) for w, n in ((w_q, "W_Q"), (w_k, "W_K"), (w_v, "W_V")))
    g = backward(Xm * Wq, Xm * Wk, Xm * Wv, d_out, scale=scale)
    g["dW_Q"] = Xm.T * g["dQ"]
    g["dW_K"] = Xm.T * g["dK"]
    g["dW_V"] = Xm.T * g["dV"]
    g["dX"] = g["dQ"] * Wq.T + g["dK"] * Wk.T + g["dV"] * Wv.T  # X feeds all three
    return g


@derived_once
def verify_projection_backward(
    length: int = 2, d_model: int = 2, d_k: int = 1, d_v: int = 1
) -> dict[str, sp.Matrix]:
    """Verify ``dX, dW_Q, dW_K, dW_V`` against direct differentiation on generic matrices.

    Examples:
        >>> from attention_math.derivations.gradients import verify_projection_backward
        >>> sorted(verify_projection_backward(2, 1, 1, 1))
        ['dW_K', 'dW_Q', 'dW_V', 'dX']
    """
    X = symbolic.generic_matrix("x", length, d_model)
    W = {
        "W_Q": symbolic.generic_matrix("a", d_model, d_k),
        "W_K": symbolic.generic_matrix("b", d_model, d_k),
        "W_V": symbolic.generic_matrix("c", d_model, d_v),
    }
    dO = symbolic.generic_matrix("g", length, d_v)
    alpha = sp.Symbol("alpha", positive=True)  # the scale α, as /gradients/ writes it
    formulas = projection_backward(X, W["W_Q"], W["W_K"], W["W_V"], dO, scale=alpha)
    loss = _loss(dO, formulas["O"])
    checked = {}
    for name, A in (("dX", X), *((f"d{n}", w) for n, w in W.items())):
        _require_zero(_direct_gradient(loss, A) - formulas[name], name)
        checked[name] = formulas[name]
    return checked
