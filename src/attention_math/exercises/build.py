"""Exercise factories: the reference answer and the usual slips, computed by the core.

`attention_exercise` covers scores, weights and outputs of
``softmax(Q Kᵀ · scale + M) V``: the exact answer comes from
`attention_math.symbolic`, the NumPy reference from `attention_math.numeric`,
and each slip (no scale, ``1/d_k``, softmax over columns, mask after the softmax) is the
same computation with that one thing done wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np, numeric
from attention_math.exercises.checker import compare
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["additive_mask", "attention_exercise", "drop_coinciding", "float_array"]


def float_array(m: sp.Basic) -> np.ndarray:
    """An exact matrix as float64 (``-oo`` → ``-inf``).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.build import float_array
        >>> float_array(sp.Matrix([[sp.Rational(1, 4), -sp.oo]]))
        array([[0.25, -inf]])
    """
    return np.array(sp.Matrix(m).evalf(30).tolist(), dtype=np.float64)


def additive_mask(allowed: sp.Matrix) -> sp.Matrix:
    """A 0/1 matrix (1 = may attend) as the additive mask with entries 0 and ``-oo``.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.build import additive_mask
        >>> additive_mask(sp.Matrix([[1, 0], [1, 1]]))
        Matrix([
        [0, -oo],
        [0,   0]])
    """
    return allowed.applyfunc(lambda a: sp.S.Zero if a else -sp.oo)


def drop_coinciding(answer: sp.Basic, mistakes: list[Mistake]) -> tuple[Mistake, ...]:
    """Keep the slips whose result differs from the answer, its transpose and earlier slips.

    A slip that gives the right answer anyway (no scale on a symmetric example, say) cannot
    be told apart, so it is not offered as a diagnosis.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.build import drop_coinciding
        >>> from attention_math.exercises.model import Mistake
        >>> a = sp.Matrix([[1, 2]])
        >>> kept = drop_coinciding(a, [Mistake("rounding", sp.Matrix([[1, 2]])),
        ...                            Mistake("shape", sp.Matrix([[1], [2]])),
        ...                            Mistake("unnormalized", sp.Matrix([[2, 4]]))])
        >>> [m.diagnosis for m in kept]
        ['unnormalized']
    """
    taken = [answer] + ([answer.T] if isinstance(answer, sp.MatrixBase) else [])
    kept: list[Mistake] = []
    for m in mistakes:
        if all(compare(m.answer, t, 0) is None for t in taken):
            kept.append(m)
            taken.append(m.answer)
    return tuple(kept)


def _weights(S: sp.Matrix, mask: sp.Matrix | None, axis: int = -1) -> sp.Matrix:
    return symbolic.softmax(S if mask is None else S + mask, axis=axis)


def attention_exercise(
    *,
    id: str,
    chapter: str,
    title: str,
    statement: str,
    q: sp.Matrix,
    k: sp.Matrix,
    v: sp.Matrix | None = None,
    mask: sp.Matrix | None = None,
    scale: sp.Expr | None = None,
    what: str = "weights",
    inputs: Mapping[str, sp.Basic] | None = None,
    tolerance: float | None = None,
    scale_slips: bool = True,
    extra: tuple[Mistake, ...] = (),
    explanation: str = "",
    solution: Callable[[Exercise], object] | None = None,
) -> Exercise:
    """An exercise on ``S = Q Kᵀ · scale``, ``P = softmax(S + M)`` or ``O = P V``.

    ``what`` is ``"scores"``, ``"weights"`` or ``"output"``; ``mask`` is additive (0 or
    ``-oo``). With ``scale_slips`` the slips "no scale" and "scale 1/d_k" are recognised.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.build import attention_exercise
        >>> ex = attention_exercise(id="demo", chapter="forward", title="t", statement="s",
        ...                         q=sp.eye(2), k=sp.eye(2))
        >>> [m.diagnosis for m in ex.mistakes]
        ['missing_scale', 'wrong_scale']
    """
    if what not in ("scores", "weights", "output"):
        raise ValueError(f"what must be 'scores', 'weights' or 'output', got {what!r}")
    if what == "output" and v is None:
        raise ValueError(f"{id}: an output exercise needs v")
    d_k = q.cols
    s = 1 / sp.sqrt(d_k) if scale is None else sp.sympify(scale)

    def result(
        scale_used: sp.Expr, axis: int = -1, mask_after: bool = False, masked: bool = True
    ) -> sp.Matrix:
        S = symbolic.scores(q, k, scale=scale_used)
        if what == "scores":
            return S
        if mask_after and mask is not None:  # softmax of every score, then blocked ones zeroed
            P = symbolic.softmax(S).multiply_elementwise(mask.applyfunc(lambda m: int(m == 0)))
        else:
            P = _weights(S, mask if masked else None, axis)
        return P if what == "weights" else P * v

    answer = result(s)
    slips: list[Mistake] = []
    if scale_slips:
        unscaled = "Q Kᵀ" if mask is None else "Q Kᵀ + M"
        if what != "scores":
            unscaled = f"softmax({unscaled})" + (" V" if what == "output" else "")
        slips.append(Mistake("missing_scale", result(sp.S.One), f"Without it: {unscaled}."))
        slips.append(Mistake("wrong_scale", result(sp.Rational(1, d_k)), "You divided by d_k."))
    if what != "scores":
        by_column = "Yours" if what == "weights" else "Your weights"
        slips.append(Mistake("softmax_axis", result(s, axis=0), f"{by_column} sum to 1 by column."))
        if mask is not None:
            slips.append(Mistake("mask_after_softmax", result(s, mask_after=True)))
            causal = mask.is_square and all(
                (mask[i, j] == -sp.oo) == (j > i)
                for i in range(mask.rows)
                for j in range(mask.cols)
            )
            detail = "Query t may only use keys 1..t." if causal else "Masked keys get weight 0."
            slips.append(Mistake("missing_mask", result(s, masked=False), detail))
    slips.extend(extra)

    def reference() -> np.ndarray:
        qn, kn = float_array(q), float_array(k)
        if what == "scores":
            scores: np.ndarray = qn @ kn.T * float(s)
            return scores
        mn = None if mask is None else float_array(mask)
        vn = float_array(v) if v is not None else np.eye(kn.shape[0])
        f = numeric.attention_weights if what == "weights" else numeric.attention
        return f(qn, kn, vn, mask=mn, scale=float(s))

    shown = dict(inputs) if inputs is not None else {"Q": q, "K": k}
    if inputs is None and v is not None:
        shown["V"] = v
    if inputs is None and mask is not None:
        shown["M"] = mask
    return Exercise(
        id=id,
        chapter=chapter,
        title=title,
        statement=statement,
        answer=answer,
        inputs=shown,
        mistakes=drop_coinciding(answer, slips),
        tolerance=tolerance,
        numeric=reference,
        kind=what,
        explanation=explanation,
        solution=solution,
    )
