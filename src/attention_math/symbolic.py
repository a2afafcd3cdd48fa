"""The exact derivation: attention on ``sympy.Matrix``, with no rounding anywhere.

Entries may be rationals (the result is exact, e.g. in terms of ``exp(sqrt(2)/2)``) or
symbols (generic ``q_11``, ``k_12``, … from `generic_matrix`). A masked score is
``-oo``; its weight is the limit ``lim_{t→-∞} e^t / (e^t + c) = 0``, which is what
SymPy's ``exp(-oo) = 0`` evaluates to (`masked_softmax_limit` takes the limit
explicitly to show the two agree).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import mpmath
import sympy as sp

from attention_math._lazy import loaded_numpy
from attention_math._once import derived_once

__all__ = [
    "as_matrix",
    "attention",
    "attention_weights",
    "evaluate",
    "generic_matrix",
    "in_terms_of_sigmoid",
    "is_zero",
    "latex",
    "masked_softmax_limit",
    "scores",
    "sigmoid",
    "softmax",
    "to_mpmath",
]


def _exact(x: object) -> sp.Expr:
    """``x`` in SymPy, a finite float as its exact binary value (every entry of `as_matrix`)."""
    if isinstance(x, float | sp.Float) and bool(sp.Float(x).is_finite):
        return sp.Rational(x)
    return sp.sympify(x)


def as_matrix(x: object, name: str = "matrix") -> sp.Matrix:
    """``x`` as an exact ``sympy.Matrix``: ints stay ints, floats become their exact binary value.

    Examples:
        >>> from attention_math.symbolic import as_matrix
        >>> as_matrix([[1, 0.5]])
        Matrix([[1, 1/2]])
    """
    if isinstance(x, sp.MatrixBase):
        m = sp.Matrix(x)
    elif _has_string(x):  # sympify would eval it: strings go through exercises.parse instead
        raise TypeError(f"{name} contains a string; pass numbers or SymPy expressions")
    else:
        x = _numpy_as_lists(x)
        try:
            m = sp.Matrix(x)
        except (TypeError, ValueError, sp.SympifyError) as exc:
            raise TypeError(f"{name} cannot be read as a matrix: {exc}") from None
    if 0 in m.shape:
        raise ValueError(f"{name} has an empty dimension: shape {m.shape}")
    return m.applyfunc(_exact)


def _numpy_as_lists(x: object) -> object:
    """A NumPy array as nested lists. NumPy is not imported here (it is not a pure-Python wheel,
    and the browser build runs without it): if it is not loaded, ``x`` is no array."""
    np = loaded_numpy()
    return x.tolist() if np is not None and isinstance(x, np.ndarray) else x


def _has_string(x: object) -> bool:
    if isinstance(x, str | bytes):
        return True
    if isinstance(x, list | tuple):
        return any(_has_string(e) for e in x)
    np = loaded_numpy()  # an array only if NumPy is loaded; never import it here
    if np is None or not isinstance(x, np.ndarray):
        return False
    return x.dtype.kind in "OUS" and any(_has_string(e) for e in x.tolist())


def generic_matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    """A matrix of real symbols ``name_ij`` (1-based), for derivations that hold for any entries.

    Examples:
        >>> from attention_math.symbolic import generic_matrix
        >>> generic_matrix("q", 2, 2)
        Matrix([
        [q_11, q_12],
        [q_21, q_22]])
    """
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def _exp_to_symbols(expr: sp.Expr) -> sp.Expr:
    """Write every ``exp(c₁t₁ + c₂t₂ + …)`` as ``E₁^{c₁} E₂^{c₂} …`` with ``E_k = exp(t_k)``
    (and ``exp(c·log X)`` as ``X^c``).

    ``exp(2z)`` and ``exp(z)·exp(z)`` then become the same ``E²``; integer ``c_k`` keep the
    result a rational function of the ``E_k``.
    """
    atoms: dict[sp.Expr, sp.Dummy] = {}

    def atom(t: sp.Expr) -> sp.Dummy:
        return atoms.setdefault(t, sp.Dummy(positive=True))

    def rewrite(arg: sp.Expr) -> sp.Expr:
        out = sp.S.One
        for term in sp.Add.make_args(sp.expand(arg)):
            c, t = term.as_coeff_Mul()
            if c.is_Integer and isinstance(t, sp.log):
                out *= t.args[0] ** c  # exp(c·log X) = X^c for an integer c, any X ≠ 0
            else:
                out *= atom(t) ** c if c.is_Integer and t != 1 else atom(term)
        return out

    return expr.replace(sp.exp, rewrite)


def is_zero(expr: object) -> bool:
    """Whether ``expr`` is identically zero, decided exactly: the one test the derivations use.

    Every exponential becomes a product of powers of fresh positive symbols (``exp(a − b)``
    is ``A/B``, ``exp(c·log X)`` is ``X^c``) and the result is cancelled to a single
    fraction: a zero numerator proves the identity. A non-zero numerator means the
    expression is not zero, or is zero only through a relation this rewrite does not see:
    ``False`` means "not proved"; a ``True`` is never wrong.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.symbolic import is_zero
        >>> a, b = sp.symbols("a b", real=True)
        >>> is_zero(sp.exp(a) / (1 + sp.exp(a)) - 1 + 1 / (1 + sp.exp(a)))
        True
        >>> is_zero(sp.exp(2 * a) - sp.exp(a) ** 2), is_zero(sp.exp(a - b) * sp.exp(b) - sp.exp(a))
        (True, True)
        >>> is_zero(sp.exp(a) - 1), is_zero(a - b)
        (False, False)
    """
    return bool(sp.cancel(sp.together(_exp_to_symbols(sp.sympify(expr)))) == 0)


def _softmax_row(row: Sequence[sp.Expr]) -> list[sp.Expr]:
    terms = [sp.S.Zero if z == -sp.oo else sp.exp(z) for z in row]  # e^{-∞} = 0 (the limit)
    total = sp.Add(*terms)
    if total == 0:  # every entry masked: the project's zero-row convention
        return [sp.S.Zero] * len(terms)
    return [t / total for t in terms]


def softmax(z: object, axis: int = -1) -> sp.Matrix:
    """Exact softmax of each row (``axis=-1``) or column (``axis=0``) of ``z``.

    Entries equal to ``-oo`` get weight 0; a row that is all ``-oo`` becomes zeros. A flat
    list (or 1-D array) is one row; a column written as nested lists stays a column.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.symbolic import softmax
        >>> softmax([[1 / sp.sqrt(2), 0]])
        Matrix([[exp(sqrt(2)/2)/(1 + exp(sqrt(2)/2)), 1/(1 + exp(sqrt(2)/2))]])
        >>> softmax([0, -sp.oo])
        Matrix([[1, 0]])
        >>> softmax([[1], [2]])  # each row of a column holds one score
        Matrix([
        [1],
        [1]])
    """
    m = as_matrix(z, "z")
    if m.cols == 1 and m.rows > 1 and _is_flat(z):
        m = m.T  # a flat list is one row
    if axis in (0, -2):
        return softmax(m.T, axis=-1).T
    if axis not in (1, -1):
        raise ValueError(f"axis must be -1/1 (rows) or 0/-2 (columns), got {axis!r}")
    return sp.Matrix([_softmax_row(list(m.row(i))) for i in range(m.rows)])


def _is_flat(z: object) -> bool:
    """Whether ``z`` is a flat sequence (a 1-D array, or a list of scalars), not a matrix."""
    if isinstance(z, sp.MatrixBase):
        return False
    if hasattr(z, "ndim"):  # an array (NumPy is not imported here)
        return bool(z.ndim == 1)
    return isinstance(z, list | tuple) and not any(
        isinstance(e, list | tuple | sp.MatrixBase) or (hasattr(e, "ndim") and e.ndim > 0)
        for e in z
    )


def scores(q: object, k: object, *, scale: object = None) -> sp.Matrix:
    """Scaled scores ``Q Kᵀ · scale``; ``scale`` defaults to ``1/√d_k``.

    Examples:
        >>> from attention_math.symbolic import scores
        >>> scores([[1, 0], [0, 1]], [[1, 0], [0, 1]])
        Matrix([
        [sqrt(2)/2,         0],
        [        0, sqrt(2)/2]])
    """
    Q, K = as_matrix(q, "Q"), as_matrix(k, "K")
    if Q.cols != K.cols:
        raise ValueError(f"Q and K must share d_k: Q is {Q.shape}, K is {K.shape}")
    if _has_string(scale):
        raise TypeError("scale is a string; pass a number or a SymPy expression")
    s = 1 / sp.sqrt(Q.cols) if scale is None else _exact(scale)
    return (Q * K.T) * s


def _apply_mask(S: sp.Matrix, mask: object) -> sp.Matrix:
    """Blocked entries become ``-oo``; additive entries are added to the scores."""
    if _has_string(mask):
        raise TypeError("mask contains a string; pass booleans, numbers or -oo")
    rows = _numpy_as_lists(mask.tolist() if isinstance(mask, sp.MatrixBase) else mask)
    if not isinstance(rows, list | tuple) or not all(isinstance(r, list | tuple) for r in rows):
        raise ValueError(f"mask must be a matrix of the scores' shape {S.shape}, got {mask!r}")
    shape = (len(rows), *{len(r) for r in rows})  # a ragged mask has more than two entries
    if shape != S.shape:
        raise ValueError(f"mask has shape {shape}, the scores have shape {S.shape}")
    # NumPy bools are bool after tolist; a SymPy Matrix of booleans holds true/false atoms
    boolean = all(isinstance(e, bool | sp.logic.boolalg.BooleanAtom) for r in rows for e in r)
    out = S.copy()
    for i in range(S.rows):
        for j in range(S.cols):
            e = rows[i][j]
            if boolean:
                out[i, j] = S[i, j] if e else -sp.oo
            else:
                e = _exact(e)
                out[i, j] = -sp.oo if e == -sp.oo else S[i, j] + e
    return out


def attention(
    q: object,
    k: object,
    v: object,
    mask: object = None,
    *,
    scale: object = None,
    is_causal: bool = False,
    causal_alignment: Literal["top-left", "bottom-right"] = "top-left",
) -> sp.Matrix:
    """Exact ``softmax(Q Kᵀ · scale + M) V``, the output ``(L_q, d_v)``.

    ``mask`` is a boolean matrix (True = may attend: Python, NumPy or SymPy booleans) or an
    additive one whose blocked entries are ``-oo``. A 0/1 integer matrix is additive (a
    bias of 0 or 1), not a mask: [`numeric.attention`][attention_math.numeric.attention],
    which cannot tell, refuses integers. The weights come from
    [`attention_weights`][attention_math.symbolic.attention_weights].

    Args:
        q: queries, ``(L_q, d_k)``: numbers, SymPy expressions or a ``sympy.Matrix``.
        k: keys, ``(L_k, d_k)``.
        v: values, ``(L_k, d_v)``.
        mask: ``None``, or a boolean or additive matrix of the scores' shape ``(L_q, L_k)``.
        scale: factor on the scores; default ``1/√d_k``.
        is_causal: query ``i`` sees keys ``0..i`` only, as
            ``mask=causal_mask(L_q, L_k)`` (combined with ``mask`` if both are given): a hidden
            key's score is ``-oo`` and its weight exactly 0.
        causal_alignment: with ``is_causal`` and ``L_q ≠ L_k``, where the diagonal sits, as in
            [`numeric.causal_mask`][attention_math.numeric.causal_mask]: ``"top-left"``
            (default) or ``"bottom-right"``.

    Returns:
        The output as a ``sympy.Matrix`` ``(L_q, d_v)``, one fraction per entry.

    Examples:
        >>> from attention_math.symbolic import attention
        >>> out = attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]])
        >>> out[0, 0]
        (exp(sqrt(2)/2) + 3)/(1 + exp(sqrt(2)/2))
        >>> attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]],
        ...           mask=[[True, False], [True, True]])[0, :]
        Matrix([[1, 2]])
        >>> attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]], is_causal=True)[0, :]
        Matrix([[1, 2]])

    See Also:
        - [`attention_weights`][attention_math.symbolic.attention_weights]: the weights.
        - [`numeric.attention`][attention_math.numeric.attention]: the same in floating point,
          which every exact result is checked against.
    """
    W, V = _weights(q, k, v, mask, scale, is_causal, causal_alignment)
    return (W * V).applyfunc(sp.together)  # one fraction per entry: Σ_j e^{s_ij} v_j / Σ_j e^{s_ij}


def attention_weights(
    q: object,
    k: object,
    v: object,
    mask: object = None,
    *,
    scale: object = None,
    is_causal: bool = False,
    causal_alignment: Literal["top-left", "bottom-right"] = "top-left",
) -> sp.Matrix:
    """Exact attention weights ``softmax(Q Kᵀ · scale + M)``, ``(L_q, L_k)``.

    The arguments are those of [`attention`][attention_math.symbolic.attention] (``v`` is
    checked against ``k``, so one argument list serves both), and
    ``attention_weights(q, k, v) * Matrix(v)`` is ``attention(q, k, v)`` exactly.

    Returns:
        The weights as a ``sympy.Matrix`` ``(L_q, L_k)``, each row summing to 1 (a fully masked
            row is zeros); a masked entry is exactly 0.

    Examples:
        >>> from attention_math.symbolic import attention_weights
        >>> q = k = [[1, 0], [0, 1]]
        >>> attention_weights(q, k, [[1, 2], [3, 4]])
        Matrix([
        [exp(sqrt(2)/2)/(1 + exp(sqrt(2)/2)),              1/(1 + exp(sqrt(2)/2))],
        [             1/(1 + exp(sqrt(2)/2)), exp(sqrt(2)/2)/(1 + exp(sqrt(2)/2))]])
        >>> attention_weights(q, k, [[1, 2], [3, 4]], is_causal=True)
        Matrix([
        [                     1,                                   0],
        [1/(1 + exp(sqrt(2)/2)), exp(sqrt(2)/2)/(1 + exp(sqrt(2)/2))]])

    See Also:
        - [`attention`][attention_math.symbolic.attention]: the output these weights give.
        - [`numeric.attention_weights`][attention_math.numeric.attention_weights]: the same in
          floating point.
        - [`softmax`][attention_math.symbolic.softmax]: the row normalisation on its own.
    """
    return _weights(q, k, v, mask, scale, is_causal, causal_alignment)[0]


def _weights(
    q: object,
    k: object,
    v: object,
    mask: object,
    scale: object,
    is_causal: object,
    causal_alignment: object,
) -> tuple[sp.Matrix, sp.Matrix]:
    """The weights ``W`` and ``V`` as a matrix, with the checks both public functions share."""
    np = loaded_numpy()  # NumPy's bool is a flag too, if NumPy is loaded; never import it here
    if not (isinstance(is_causal, bool) or (np is not None and isinstance(is_causal, np.bool_))):
        raise TypeError(f"is_causal must be True or False, got {is_causal!r}")
    V = as_matrix(v, "V")
    S = scores(q, k, scale=scale)
    if S.cols != V.rows:
        raise ValueError(f"K and V must share L_k: K gives {S.cols} keys, V is {V.shape}")
    offset = _causal_offset(S.rows, S.cols, causal_alignment)  # checks the name even if unused
    if mask is not None:
        S = _apply_mask(S, mask)
    if is_causal:
        for i in range(S.rows):
            for j in range(max(0, i + offset + 1), S.cols):  # key j is after query i
                S[i, j] = -sp.oo
    return softmax(S), V


def _causal_offset(n_q: int, n_k: int, causal_alignment: object) -> int:
    """Query ``i`` sees key ``j`` iff ``j ≤ i + offset``: ``_checks.causal_offset``, which
    imports NumPy, written again here for the exact side."""
    if causal_alignment == "top-left":
        return 0
    if causal_alignment == "bottom-right":
        return n_k - n_q
    raise ValueError(
        f'causal_alignment must be "top-left" or "bottom-right", got {causal_alignment!r}'
    )


def masked_softmax_limit(row: Sequence[object], masked: Iterable[int]) -> list[sp.Expr]:
    """Softmax of ``row`` with the ``masked`` positions sent to −∞ by an explicit limit.

    Each masked score is replaced by ``t`` and ``t → -∞`` is taken with ``sympy.limit``;
    the result equals `softmax` with ``-oo`` entries, but for a row masked in every
    position: there all scores are the same ``t`` and the limit is uniform, while `softmax`
    (like `attention_math.numeric`) gives such a row zeros by convention.

    Examples:
        >>> from attention_math.symbolic import masked_softmax_limit
        >>> masked_softmax_limit([0, 5], masked=[1])
        [1, 0]
    """
    t = sp.Symbol("t", real=True)
    masked = set(masked)
    z = [t if j in masked else sp.sympify(e) for j, e in enumerate(row)]
    den = sp.Add(*(sp.exp(e) for e in z))
    return [sp.limit(sp.exp(e) / den, t, -sp.oo) for e in z]


def sigmoid(x: object) -> sp.Expr:
    """The logistic function ``σ(x) = eˣ / (1 + eˣ)``, the softmax of ``(x, 0)``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.symbolic import sigmoid
        >>> sigmoid(1 / sp.sqrt(2))
        exp(sqrt(2)/2)/(1 + exp(sqrt(2)/2))
    """
    x = sp.sympify(x)
    return sp.exp(x) / (1 + sp.exp(x))


@derived_once
def in_terms_of_sigmoid(expr: object, a: object, symbol: sp.Symbol | None = None) -> sp.Expr:
    """Rewrite ``expr``, which contains ``exp(n·a)``, as a rational function of ``σ = σ(a)``.

    Every ``exp(c)`` with ``c / a`` an integer ``n`` becomes ``(σ / (1 − σ))ⁿ``, SymPy's ``E``
    (``exp(1)``) included; one with ``c / a`` irrational (``exp(3)`` for ``a = 1/√2``) is left
    as it is. Uses ``eᵃ = σ / (1 − σ)`` and verifies the rewrite exactly before returning it.

    Raises:
        ValueError: ``expr`` has an ``exp(c)`` with ``c / a`` rational but not an integer, or
            sharing a symbol with ``a``: it is not a function of ``exp(a)`` alone.
        ArithmeticError: the rewrite did not verify (a bug, never the input).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.symbolic import in_terms_of_sigmoid, attention
        >>> out = attention(sp.eye(2), sp.eye(2), [[1, 2], [3, 4]])
        >>> out.applyfunc(lambda e: in_terms_of_sigmoid(e, 1 / sp.sqrt(2)))
        Matrix([
        [3 - 2*sigma, 4 - 2*sigma],
        [2*sigma + 1, 2*sigma + 2]])
        >>> in_terms_of_sigmoid(sp.E / (1 + sp.E), 1)  # exp(1) is SymPy's E
        sigma
    """
    s = symbol if symbol is not None else sp.Symbol("sigma", positive=True)
    base = sp.sympify(a)
    ex = sp.sympify(expr)
    e = sp.Dummy("e")
    # exp(n·a) → eⁿ for integer n. xreplace, not subs: subs matches exp(a) through odd powers.
    table: dict[sp.Expr, sp.Expr] = {}
    # exp(1) is SymPy's constant E, not an exp atom: it is exp(n·a) for n = 1/a
    found = [(f, f.args[0]) for f in ex.atoms(sp.exp)] + (
        [(sp.E, sp.S.One)] if ex.has(sp.E) else []
    )
    for f, c in found:
        n = c / base
        n = n if n.is_Integer else sp.simplify(n)  # the ratio is most often already n
        if n.is_integer:
            table[f] = e**n
        elif c.free_symbols & base.free_symbols or n.is_rational:
            raise ValueError(f"{expr} is not a function of exp({a}) alone: it has {f}")
    expr_e = ex.xreplace(table)
    rewritten = sp.factor(sp.cancel(expr_e.subs(e, s / (1 - s))))
    rewritten = sp.expand(rewritten) if rewritten.is_polynomial(s) else rewritten
    # verified exactly: with σ = e / (1 + e) the rewrite is a rational function of e that
    # must equal expr_e (cancel decides that); only if it does not, the slower simplify
    # of the same identity in exp(a) decides before anything is raised
    if sp.cancel(rewritten.subs(s, e / (1 + e)) - expr_e) != 0 and (
        sp.simplify(rewritten.subs(s, sigmoid(base)) - ex) != 0
    ):
        raise ArithmeticError(f"rewriting {expr} in σ({a}) did not verify")
    return rewritten


def latex(expr: object) -> str:
    """LaTeX for an expression or matrix (matrices as ``bmatrix``).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.symbolic import latex
        >>> latex(sp.Matrix([[1, sp.sqrt(2) / 2]]))
        '\\\\begin{bmatrix}1 & \\\\frac{\\\\sqrt{2}}{2}\\\\end{bmatrix}'
    """
    return str(sp.latex(sp.sympify(expr), mat_str="bmatrix", mat_delim=""))


def evaluate(expr: object, digits: int = 15) -> sp.Expr | sp.Matrix:
    """``expr`` evaluated to ``digits`` significant digits (mpmath arbitrary precision).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.symbolic import evaluate, sigmoid
        >>> evaluate(sigmoid(1 / sp.sqrt(2)), 30)
        0.669761549326656925616794945834
    """
    if isinstance(digits, bool) or not isinstance(digits, int):  # the wording of _checks
        raise TypeError(f"digits must be a positive integer, got {digits!r}")
    if digits < 1:
        raise ValueError(f"digits must be a positive integer, got {digits!r}")
    return sp.N(sp.sympify(expr), digits)


def to_mpmath(expr: object, dps: int = 50) -> mpmath.mpf | mpmath.matrix:
    """``expr`` as an mpmath number (or matrix) with ``dps`` decimal digits.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.symbolic import to_mpmath
        >>> import mpmath
        >>> x = to_mpmath(sp.sqrt(2), 30)
        >>> mpmath.nstr(x, 25)  # the value keeps its 30 digits outside the precision context
        '1.414213562373095048801689'

    """
    e = sp.sympify(expr)
    with mpmath.workdps(dps):
        if isinstance(e, sp.MatrixBase):
            return mpmath.matrix(
                [[mpmath.mpf(sp.N(x, dps)) for x in e.row(i)] for i in range(e.rows)]
            )
        return mpmath.mpf(sp.N(e, dps))
