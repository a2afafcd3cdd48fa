"""State-space duality, exactly: the Mamba-2 scan is masked linear attention.

* `symbolic_mask`: the 1-semiseparable mask ``𝐋_{ij} = a_{j+1} ⋯ a_i`` for symbolic decays.
* `recurrence_equals_masked_attention`: for symbolic ``a_t``, ``b_t``, ``c_t``, ``x_t`` the
  scan ``h_t = a_t h_{t−1} + b_t x_tᵀ``, ``y_t = h_tᵀ c_t`` gives exactly ``(𝐋 ∘ C Bᵀ) X``.
* `chunked_equals_masked_attention`: the chunked algorithm (diagonal blocks as attention,
  off-diagonal blocks through the chunk states) gives the same, exactly.
* `unit_decay_is_causal_linear_attention`: with every ``a_t = 1`` the mask is the causal
  mask and the output is the numerator of causal linear attention; its normaliser is the
  same map applied to a column of ones.
* `off_diagonal_rank`: every block below the diagonal of ``𝐋 ∘ C Bᵀ`` has rank ≤ N.
* FLOP counts of the three forms (`recurrence_flops`, `attention_flops`, `chunked_flops`).

References: Dao & Gu (2024), "Transformers are SSMs", https://arxiv.org/abs/2405.21060.
"""

from __future__ import annotations

import sympy as sp

from attention_math.derivations._once import derived_once

__all__ = [
    "attention_flops",
    "chunked_equals_masked_attention",
    "chunked_flops",
    "masked_attention",
    "off_diagonal_rank",
    "recurrence",
    "recurrence_flops",
    "symbolic_inputs",
    "symbolic_mask",
    "unit_decay_is_causal_linear_attention",
    "unrolled_output",
]

L, N, P, Q = sp.symbols("L N P Q", positive=True, integer=True)


def symbolic_inputs(
    length: int, n: int = 1, p: int = 1
) -> tuple[list[sp.Symbol], sp.Matrix, sp.Matrix, sp.Matrix]:
    """Decays ``a_1 … a_L`` and the matrices ``B, C`` (``L × N``) and ``X`` (``L × P``), every
    entry its own symbol (rows counted from 1, as in the paper).

    Examples:
        >>> from attention_math.derivations.ssd import symbolic_inputs
        >>> a, B, C, X = symbolic_inputs(2)
        >>> a, B.T, X.T
        ([a_1, a_2], Matrix([[b_1, b_2]]), Matrix([[x_1, x_2]]))
    """

    def name(letter: str, r: int, col: int, cols: int) -> sp.Symbol:
        return sp.Symbol(f"{letter}_{r + 1}" + (f"{col + 1}" if cols > 1 else ""))

    a = [sp.Symbol(f"a_{t + 1}") for t in range(length)]
    b = sp.Matrix(length, n, lambda r, col: name("b", r, col, n))
    c = sp.Matrix(length, n, lambda r, col: name("c", r, col, n))
    x = sp.Matrix(length, p, lambda r, col: name("x", r, col, p))
    return a, b, c, x


def symbolic_mask(a: list[sp.Expr]) -> sp.Matrix:
    """``𝐋_{ij} = a_{j+1} ⋯ a_i`` for ``i ≥ j`` (an empty product, 1, on the diagonal), 0 above.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.ssd import symbolic_mask
        >>> symbolic_mask(sp.symbols("a_1:4"))
        Matrix([
        [        1,   0, 0],
        [      a_2,   1, 0],
        [a_2*a_3, a_3, 1]])
    """
    n = len(a)
    return sp.Matrix(n, n, lambda i, j: sp.Mul(*a[j + 1 : i + 1]) if i >= j else sp.Integer(0))


def recurrence(
    a: list[sp.Expr], b: sp.Matrix, c: sp.Matrix, x: sp.Matrix, h0: sp.Matrix | None = None
) -> tuple[sp.Matrix, sp.Matrix]:
    """The scan ``h_t = a_t h_{t−1} + b_t x_tᵀ``, ``y_t = h_tᵀ c_t`` in exact arithmetic.

    Returns:
        ``(Y, h_L)``: the ``L × P`` outputs and the last ``N × P`` state.

    Examples:
        >>> from attention_math.derivations.ssd import recurrence, symbolic_inputs
        >>> a, B, C, X = symbolic_inputs(2)
        >>> recurrence(a, B, C, X)[0].applyfunc(lambda e: e.expand())
        Matrix([
        [                      b_1*c_1*x_1],
        [a_2*b_1*c_2*x_1 + b_2*c_2*x_2]])
    """
    length, n, p = x.rows, b.cols, x.cols
    h = sp.zeros(n, p) if h0 is None else h0
    rows = []
    for t in range(length):
        h = a[t] * h + b[t, :].T * x[t, :]  # (N, P)
        rows.append((h.T * c[t, :].T).T)  # (1, P): y_tᵀ = (h_tᵀ c_t)ᵀ
    return sp.Matrix.vstack(*rows) if rows else sp.zeros(0, p), h


def masked_attention(a: list[sp.Expr], b: sp.Matrix, c: sp.Matrix, x: sp.Matrix) -> sp.Matrix:
    """``(𝐋 ∘ C Bᵀ) X`` in exact arithmetic.

    Examples:
        >>> from attention_math.derivations.ssd import masked_attention, symbolic_inputs
        >>> a, B, C, X = symbolic_inputs(2)
        >>> masked_attention(a, B, C, X)
        Matrix([
        [                  b_1*c_1*x_1],
        [a_2*b_1*c_2*x_1 + b_2*c_2*x_2]])
    """
    return symbolic_mask(a).multiply_elementwise(c * b.T) * x


def _zero(m: sp.Matrix) -> bool:
    return all(sp.expand(e) == 0 for e in m)


@derived_once
def recurrence_equals_masked_attention(length: int = 4, n: int = 2, p: int = 2) -> bool:
    """The scan and the masked matrix give the same ``L × P`` output, entry by entry, for
    symbolic decays, projections and inputs (an identity of polynomials).

    Examples:
        >>> from attention_math.derivations.ssd import recurrence_equals_masked_attention
        >>> recurrence_equals_masked_attention(3, 2, 1)
        True
    """
    a, b, c, x = symbolic_inputs(length, n, p)
    y_scan, _ = recurrence(a, b, c, x)
    return _zero(y_scan - masked_attention(a, b, c, x))


def unrolled_output(t: int) -> sp.Expr:
    """``y_t = Σ_{j≤t} c_t b_j (a_{j+1} ⋯ a_t) x_j`` for ``N = P = 1``: the scan unrolled.

    Examples:
        >>> from attention_math.derivations.ssd import unrolled_output
        >>> unrolled_output(3)
        a_2*a_3*b_1*c_3*x_1 + a_3*b_2*c_3*x_2 + b_3*c_3*x_3
    """
    a, b, c, x = symbolic_inputs(t)
    y, _ = recurrence(a, b, c, x)
    return sp.expand(y[t - 1, 0])


def chunked(
    a: list[sp.Expr], b: sp.Matrix, c: sp.Matrix, x: sp.Matrix, chunk_size: int
) -> sp.Matrix:
    """The chunked algorithm in exact arithmetic: per chunk ``s … e−1``, the diagonal block
    ``(𝐋_k ∘ C_k B_kᵀ) X_k`` plus ``(a_s ⋯ a_i) c_iᵀ h_{s−1}``; then the state passed on,
    ``h_{e−1} = (a_s ⋯ a_{e−1}) h_{s−1} + Σ_j (a_{j+1} ⋯ a_{e−1}) b_j x_jᵀ``.

    Examples:
        >>> from attention_math.derivations.ssd import chunked, symbolic_inputs
        >>> a, B, C, X = symbolic_inputs(2)
        >>> chunked(a, B, C, X, 1)[1, 0].expand()
        a_2*b_1*c_2*x_1 + b_2*c_2*x_2
    """
    length, n, p = x.rows, b.cols, x.cols
    h = sp.zeros(n, p)
    rows = []
    for s in range(0, length, chunk_size):
        e = min(s + chunk_size, length)
        ak, bk, ck, xk = a[s:e], b[s:e, :], c[s:e, :], x[s:e, :]
        y_diag = masked_attention(ak, bk, ck, xk)  # (Q, P)
        into = [sp.Mul(*a[s : i + 1]) for i in range(s, e)]  # a_s ⋯ a_i
        y_off = sp.diag(*into) * ck * h  # (Q, P)
        rows.append(y_diag + y_off)
        out_of = [sp.Mul(*a[j + 1 : e]) for j in range(s, e)]  # a_{j+1} ⋯ a_{e−1}
        h = into[-1] * h + bk.T * sp.diag(*out_of) * xk  # (N, P)
    return sp.Matrix.vstack(*rows)


@derived_once
def chunked_equals_masked_attention(length: int = 5, chunk_size: int = 2, n: int = 2) -> bool:
    """The chunked algorithm equals ``(𝐋 ∘ C Bᵀ) X`` exactly (one value column, ``P = 1``).

    Examples:
        >>> from attention_math.derivations.ssd import chunked_equals_masked_attention
        >>> chunked_equals_masked_attention(5, 2, 1)
        True
    """
    a, b, c, x = symbolic_inputs(length, n, 1)
    return _zero(chunked(a, b, c, x, chunk_size) - masked_attention(a, b, c, x))


@derived_once
def unit_decay_is_causal_linear_attention(length: int = 3, m: int = 2, p: int = 1) -> bool:
    """With every ``a_t = 1``: (i) the mask is the causal mask (ones on and below the diagonal);
    (ii) the scan with ``B = φ(K)``, ``C = φ(Q)``, ``X = V`` gives ``tril(φ(Q) φ(K)ᵀ) V``, the
    numerator of causal linear attention; (iii) the same scan with ``X = 1`` gives its
    normaliser ``tril(φ(Q) φ(K)ᵀ) 1``, so that their ratio is causal linear attention (the
    quadratic form of [`attention_math.derivations.linear`][]).

    Examples:
        >>> from attention_math.derivations.ssd import unit_decay_is_causal_linear_attention
        >>> unit_decay_is_causal_linear_attention(3, 2, 1)
        True
    """
    ones = [sp.Integer(1)] * length
    causal = sp.Matrix(length, length, lambda i, j: 1 if i >= j else 0)
    if symbolic_mask(ones) != causal:
        return False
    fq = sp.Matrix(length, m, lambda r, col: sp.Symbol(f"q_{r + 1}{col + 1}", positive=True))
    fk = sp.Matrix(length, m, lambda r, col: sp.Symbol(f"k_{r + 1}{col + 1}", positive=True))
    v = sp.Matrix(length, p, lambda r, col: sp.Symbol(f"v_{r + 1}{col + 1}"))
    weights = (fq * fk.T).lower_triangular()  # tril(φ(Q) φ(K)ᵀ)
    numerator, _ = recurrence(ones, fk, fq, v)
    normaliser, _ = recurrence(ones, fk, fq, sp.ones(length, 1))
    if not (_zero(numerator - weights * v) and _zero(normaliser - weights * sp.ones(length, 1))):
        return False
    linear = [(weights[t, :] * v) / sum(weights[t, :]) for t in range(length)]
    ratio = [numerator[t, :] / normaliser[t, 0] for t in range(length)]
    return all(sp.simplify(r - w) == sp.zeros(1, p) for r, w in zip(ratio, linear, strict=True))


@derived_once
def off_diagonal_rank(length: int = 4, chunk_size: int = 2, n: int = 1) -> int:
    """The largest rank of a block strictly below the diagonal blocks of ``𝐋 ∘ C Bᵀ``
    (symbolic entries): at most ``N``, which is why it can pass through an ``N × P`` state.

    Examples:
        >>> from attention_math.derivations.ssd import off_diagonal_rank
        >>> off_diagonal_rank(4, 2, 1), off_diagonal_rank(6, 3, 2)
        (1, 2)
    """
    a, b, c, _ = symbolic_inputs(length, n, 1)
    full = symbolic_mask(a).multiply_elementwise(c * b.T)
    ranks = [0]
    for s in range(chunk_size, length, chunk_size):
        e = min(s + chunk_size, length)
        for s2 in range(0, s, chunk_size):
            ranks.append(full[s:e, s2 : s2 + chunk_size].rank())
    return max(ranks)


def recurrence_flops() -> sp.Expr:
    """FLOPs of the scan, one head: per step ``a_t h`` (``NP``), ``b_t x_tᵀ`` (``NP``), the sum
    (``NP``) and ``h_tᵀ c_t`` (``2NP``).

    Examples:
        >>> from attention_math.derivations.ssd import recurrence_flops
        >>> recurrence_flops()
        5*L*N*P
    """
    return sp.expand(L * (N * P + N * P + N * P + 2 * N * P))


def attention_flops() -> sp.Expr:
    """FLOPs of the masked-attention form, one head, the whole ``L × L`` products (as a dense
    kernel computes them): ``C Bᵀ`` (``2L²N``), the mask (``L²``, given 𝐋), times ``X``
    (``2L²P``).

    Examples:
        >>> from attention_math.derivations.ssd import attention_flops
        >>> attention_flops()
        2*L**2*N + 2*L**2*P + L**2
    """
    return sp.expand(2 * L**2 * N + L**2 + 2 * L**2 * P)


def chunked_flops() -> sp.Expr:
    """FLOPs of the chunked algorithm with ``L/Q`` chunks of ``Q``: each diagonal block as
    attention (``2Q²N + Q² + 2Q²P``); each chunk's state ``Σ_j (decay) b_j x_jᵀ`` (``3QNP``)
    and its passing on (``2NP``); each chunk's rows read from the incoming state,
    ``(decay) c_iᵀ h`` (``2QNP + QP``) and added (``QP``).

    Examples:
        >>> from attention_math.derivations.ssd import chunked_flops
        >>> chunked_flops()
        5*L*N*P + 2*L*N*P/Q + 2*L*N*Q + 2*L*P*Q + 2*L*P + L*Q
    """
    per_chunk = (
        2 * Q**2 * N + Q**2 + 2 * Q**2 * P + 3 * Q * N * P + 2 * N * P + 2 * Q * N * P + 2 * Q * P
    )
    return sp.expand(L / Q * per_chunk)
