"""Exercises: State-space duality (Mamba-2's scan as masked attention, the decay mask, chunks,
the discretisation, the link to linear attention). Reference answers are computed, never typed.

This module imports no NumPy (the checker also runs without it): every exact answer is
SymPy, and the NumPy references are looked up when they are called, at build time.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from attention_math._lazy import np
from attention_math.derivations import ssd as exact
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]

R = sp.Rational
MASK_A = [R(1, 2), R(1, 3), R(1, 4)]  # a_1, a_2, a_3
SCAN = {"a": [1, R(1, 2), R(1, 2)], "b": [1, 2, 1], "c": [1, 1, 2], "x": [2, 1, 4]}
CHUNK = {"h": [2, 1], "a_3": R(1, 3), "a_4": R(1, 2), "c_4": [1, 3]}
LINEAR = {"q": [2, 1], "k": [1, 3], "v": [4, 8]}  # φ(q_t), φ(k_t), v_t; N = P = 1
BLOCK_A = [R(1, 2), R(1, 3), R(1, 4), R(1, 5)]
N_P = 64  # N = P for the chunk-size exercise


def _col(values: Sequence[object]) -> sp.Matrix:
    return sp.Matrix([[sp.sympify(v)] for v in values])


def _scan_answer() -> sp.Matrix:
    y, _ = exact.recurrence(SCAN["a"], _col(SCAN["b"]), _col(SCAN["c"]), _col(SCAN["x"]))
    return y


def _chunk_answer(into: sp.Expr) -> sp.Expr:
    return into * (sp.Matrix([CHUNK["c_4"]]) * _col(CHUNK["h"]))[0, 0]


def _linear_answer(normalised: bool = True) -> sp.Expr:
    ones = [sp.Integer(1)] * 2
    num, _ = exact.recurrence(ones, _col(LINEAR["k"]), _col(LINEAR["q"]), _col(LINEAR["v"]))
    den, _ = exact.recurrence(ones, _col(LINEAR["k"]), _col(LINEAR["q"]), sp.ones(2, 1))
    return num[1, 0] / den[1, 0] if normalised else num[1, 0]


def _block() -> sp.Matrix:
    return exact.symbolic_mask(BLOCK_A)[2:4, 0:2]


def _steps_to_eighth() -> sp.Integer:
    a = sp.exp(sp.log(2) * R(-1, 2))  # exp(Δ A) with Δ = ln 2, A = −1/2
    k = 0
    while not bool(a**k <= R(1, 8)):
        k += 1
    return sp.Integer(k)


def _q_star() -> sp.Expr:
    q = sp.Symbol("Q", positive=True)  # a real chunk size (exact.Q is an integer)
    flops = exact.chunked_flops().subs({exact.N: N_P, exact.P: N_P, exact.Q: q})
    (root,) = [r for r in sp.solve(sp.diff(flops, q), q) if r.is_positive]
    return sp.simplify(root)


# --- NumPy references (build time only) -------------------------------------------------------


def _mask_ref() -> np.ndarray:
    from attention_math.ssd import semiseparable_mask  # NumPy: build time only

    return semiseparable_mask(np.array([float(v) for v in MASK_A]))


def _decay_ref() -> np.ndarray:
    from attention_math.hf.mamba2 import softplus  # NumPy: build time only

    delta = softplus(np.array([0.0]))  # dt + dt_bias = 0
    return np.asarray(np.exp(delta * -np.exp(np.log(3.0)))[0])  # A = −exp(A_log), A_log = ln 3


def _scan_ref() -> np.ndarray:
    from attention_math.ssd import ssd_recurrence  # NumPy: build time only

    a = np.array([float(v) for v in SCAN["a"]])
    b, c, x = (np.array(SCAN[k], dtype=float)[:, None] for k in ("b", "c", "x"))
    y = ssd_recurrence(a, b, c, x)
    assert isinstance(y, np.ndarray)
    return y


def _chunk_ref() -> np.ndarray:
    from attention_math.ssd import ssd_chunked  # NumPy: build time only

    # a state h_2 = (2, 1)ᵀ entering chunk 2 (positions 3, 4) with no new input: the
    # chunked algorithm's off-diagonal part alone
    a = np.array([1.0, 1.0, float(CHUNK["a_3"]), float(CHUNK["a_4"])])
    c = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], CHUNK["c_4"]], dtype=float)
    y = ssd_chunked(a[2:], np.zeros((2, 2)), c[2:], np.zeros((2, 1)), 2,
                    state=np.array(CHUNK["h"], dtype=float)[:, None])  # fmt: skip
    assert isinstance(y, np.ndarray)
    return np.asarray(y[1, 0])


def _linear_ref() -> np.ndarray:
    from attention_math.linear import linear_attention  # NumPy: build time only

    q, k, v = (np.array(LINEAR[n], dtype=float)[:, None] for n in ("q", "k", "v"))
    out = linear_attention(q, k, v, feature_map=lambda z: z, is_causal=True)
    return np.asarray(out[1, 0])


def _block_ref() -> np.ndarray:
    from attention_math.ssd import semiseparable_mask  # NumPy: build time only

    m = semiseparable_mask(np.array([float(v) for v in BLOCK_A]))
    return np.asarray(np.linalg.det(m[2:4, 0:2]))


def _steps_ref() -> np.ndarray:
    from attention_math.ssd import semiseparable_mask  # NumPy: build time only

    a = np.full(12, np.exp(np.log(2.0) * -0.5))
    first_col = semiseparable_mask(a)[:, 0]  # weight of x_1 at step 1 + k: a^k
    return np.asarray(float(np.argmax(first_col <= 0.125 + 1e-12)))


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    out: list[Exercise] = []
    mask = exact.symbolic_mask(MASK_A)
    off_by_one = sp.Matrix(3, 3, lambda i, j: sp.Mul(*MASK_A[j : i + 1]) if i >= j else 0)
    out.append(
        Exercise(
            id="ssd-mask",
            chapter="ssd",
            title="The decay mask",
            statement=(
                "A head of Mamba-2 decays by $a_1 = 1/2$, $a_2 = 1/3$, $a_3 = 1/4$. Write its "
                "$3 \\times 3$ mask $\\mathbf L$, with $\\mathbf L_{ij} = a_{j+1} \\cdots a_i$ "
                "for $i \\ge j$ (an empty product is $1$) and $0$ above the diagonal."
            ),
            answer=mask,
            mistakes=(
                Mistake("decay_off_by_one", off_by_one),
                Mistake("transposed", mask.T),
            ),
            numeric=_mask_ref,
            explanation=(
                "The diagonal is $1$ (no step between $j$ and $i = j$). Below it, "
                "$\\mathbf L_{21} = a_2 = 1/3$, $\\mathbf L_{32} = a_3 = 1/4$ and $\\mathbf "
                "L_{31} = a_2 a_3 = 1/12$. $a_1$ appears nowhere: it would decay a state from "
                "before the sequence, which is zero."
            ),
            solution=_solve_ssd_mask,
        )
    )
    out.append(
        Exercise(
            id="ssd-decay",
            chapter="ssd",
            title="From dt to a decay",
            statement=(
                "In a `Mamba2Mixer`, a token's `dt + dt_bias` is $0$ for some head, whose "
                "`A_log` is $\\ln 3$. The module takes $\\Delta$ = softplus(`dt + dt_bias`) and "
                "$A$ = −exp(`A_log`). What is the decay $a = \\exp(\\Delta A)$?"
            ),
            answer=sp.exp(sp.log(1 + sp.exp(0)) * -sp.exp(sp.log(3))),
            numeric=_decay_ref,
            kind="scalar",
            explanation=(
                "$\\Delta = \\ln(1 + e^0) = \\ln 2$ and $A = -3$, so $a = e^{-3 \\ln 2} = "
                "2^{-3} = 1/8$. A longer step $\\Delta$ or a larger $|A|$ forgets faster."
            ),
            solution=_solve_ssd_decay,
        )
    )
    no_decay, _ = exact.recurrence([1, 1, 1], _col(SCAN["b"]), _col(SCAN["c"]), _col(SCAN["x"]))
    out.append(
        Exercise(
            id="ssd-scan",
            chapter="ssd",
            title="Three steps of the scan",
            statement=(
                "One head with $N = P = 1$: decays $a = (1, 1/2, 1/2)$, $b = (1, 2, 1)$, "
                "$c = (1, 1, 2)$, inputs $x = (2, 1, 4)$. From $h_0 = 0$, run $h_t = a_t h_{t-1} "
                "+ b_t x_t$, $y_t = c_t h_t$, and give $(y_1, y_2, y_3)$ as a $3 \\times 1$ "
                "column."
            ),
            answer=_scan_answer(),
            mistakes=(Mistake("decay_missing", no_decay),),
            numeric=_scan_ref,
            explanation=(
                "$h_1 = 2$, $y_1 = 2$; $h_2 = 2/2 + 2 = 3$, $y_2 = 3$; $h_3 = 3/2 + 4 = 11/2$, "
                "$y_3 = 2 \\cdot 11/2 = 11$. The same from the mask: $y_3 = c_3 (a_2 a_3 b_1 x_1 "
                "+ a_3 b_2 x_2 + b_3 x_3) = 2 (1/2 + 1 + 4)$."
            ),
            solution=_solve_ssd_scan,
        )
    )
    out.append(
        Exercise(
            id="ssd-chunk-state",
            chapter="ssd",
            title="A block below the diagonal, through the state",
            statement=(
                "The chunked algorithm with chunks of $Q = 2$: chunk 1 (positions 1, 2) ends "
                "with the state $h_2 = (2, 1)^\\top$ ($N = 2$, $P = 1$). Chunk 2 has $a_3 = 1/3$, "
                "$a_4 = 1/2$ and $c_4 = (1, 3)$. How much do positions 1 and 2 contribute to "
                "$y_4$ (the off-diagonal block's share, $(a_3 a_4)\\, c_4^\\top h_2$)?"
            ),
            answer=_chunk_answer(CHUNK["a_3"] * CHUNK["a_4"]),
            mistakes=(Mistake("decay_off_by_one", _chunk_answer(CHUNK["a_4"])),),
            numeric=_chunk_ref,
            kind="scalar",
            explanation=(
                "$c_4^\\top h_2 = 1 \\cdot 2 + 3 \\cdot 1 = 5$, and the state decays twice "
                "on its way from position 2 to 4, by $a_3$ then $a_4$: $5/6$. Every entry of "
                "that block of $\\mathbf L \\circ C B^\\top$ passes through the $N$ numbers of "
                "$h_2$ (per value column), so the block has rank at most $N$."
            ),
            solution=_solve_ssd_chunk_state,
        )
    )
    out.append(
        Exercise(
            id="ssd-linear",
            chapter="ssd",
            title="No decay: causal linear attention",
            statement=(
                "Set every $a_t = 1$. With one feature ($N = 1$), $b_t = \\varphi(k_t)$, "
                "$c_t = \\varphi(q_t)$: $\\varphi(k) = (1, 3)$, $\\varphi(q) = (2, 1)$, values "
                "$v = (4, 8)$. Run the scan twice, on $x = v$ and on $x = (1, 1)$: their ratio "
                "at $t = 2$ is causal linear attention's output. What is it?"
            ),
            answer=_linear_answer(),
            mistakes=(Mistake("unnormalized", _linear_answer(normalised=False)),),
            numeric=_linear_ref,
            kind="scalar",
            explanation=(
                "With $a_t = 1$ the mask is the causal mask. The scan on $v$ gives "
                "$\\varphi(q_2)(\\varphi(k_1) v_1 + \\varphi(k_2) v_2) = 1 \\cdot (4 + 24) = 28$; "
                "on ones, $\\varphi(q_2)(\\varphi(k_1) + \\varphi(k_2)) = 4$: the output is "
                "$28/4 = 7$, the weighted mean of the values with weights $1/4$ and $3/4$."
            ),
            solution=_solve_ssd_linear,
        )
    )
    block = _block()
    out.append(
        Exercise(
            id="ssd-semiseparable",
            chapter="ssd",
            title="A block of rank one",
            statement=(
                "Decays $a = (1/2, 1/3, 1/4, 1/5)$. Take the $2 \\times 2$ block of the mask "
                "$\\mathbf L$ in rows $3, 4$ and columns $1, 2$ (entirely below the diagonal). "
                "What is its determinant?"
            ),
            answer=block.det(),
            numeric=_block_ref,
            kind="scalar",
            explanation=(
                "The block is $\\begin{bmatrix} a_2 a_3 & a_3 \\\\ a_2 a_3 a_4 & a_3 a_4 "
                "\\end{bmatrix}$: the second row is $a_4$ times the first, so the determinant "
                "is $0$ whatever the decays. That is what *1-semiseparable* means: every "
                "block below the diagonal has rank at most one."
            ),
            solution=_solve_ssd_semiseparable,
        )
    )
    out.append(
        Exercise(
            id="ssd-memory",
            chapter="ssd",
            title="How long a token is remembered",
            statement=(
                "A head with $A = -1/2$ reads the same step $\\Delta = \\ln 2$ at every token. "
                "After how many steps $k$ has the weight $\\mathbf L_{j+k, j}$ of a token first "
                "fallen to $1/8$ or below?"
            ),
            answer=_steps_to_eighth(),
            numeric=_steps_ref,
            kind="scalar",
            explanation=(
                "Each step multiplies by $a = e^{\\Delta A} = 2^{-1/2}$, so $\\mathbf L_{j+k,j} "
                "= 2^{-k/2}$, which is $1/8 = 2^{-3}$ at $k = 6$."
            ),
            solution=_solve_ssd_memory,
        )
    )
    out.append(
        Exercise(
            id="ssd-chunk-size",
            chapter="ssd",
            title="The chunk size that counts fewest FLOPs",
            statement=(
                "The chunked algorithm costs, per token, $(2N + 2P + 1)\\,Q + 5NP + 2NP/Q + "
                "2P$ FLOPs: attention inside chunks grows with $Q$, passing states between "
                "chunks shrinks with it. For $N = P = 64$, which real $Q > 0$ minimises it? "
                "Give it exactly (`sqrt(...)` is fine)."
            ),
            answer=_q_star(),
            kind="scalar",
            explanation=(
                "Setting the derivative $(2N + 2P + 1) - 2NP/Q^2$ to zero gives $Q^* = "
                "\\sqrt{2NP/(2N + 2P + 1)} = \\sqrt{8192/257} \\approx 5.6$. Kernels use "
                "chunks of 64 to 256 all the same: FLOPs are not time, and the diagonal blocks "
                "are matrix products that tensor cores run far faster than the scan's "
                "element-wise steps."
            ),
            solution=_solve_ssd_chunk_size,
        )
    )
    return out


def _solve_ssd_mask(ex: Exercise) -> object:
    a = {2: sp.Rational(1, 3), 3: sp.Rational(1, 4)}  # a_1 never appears
    return sp.Matrix([[1, 0, 0], [a[2], 1, 0], [a[2] * a[3], a[3], 1]])


def _solve_ssd_decay(ex: Exercise) -> object:
    delta = sp.log(1 + sp.exp(0))  # softplus(0) = ln 2
    big_a = -sp.exp(sp.log(3))  # A = −exp(A_log) = −3
    return sp.simplify(sp.exp(delta * big_a))


def _solve_ssd_scan(ex: Exercise) -> object:
    a, b, c, x = [1, sp.Rational(1, 2), sp.Rational(1, 2)], [1, 2, 1], [1, 1, 2], [2, 1, 4]
    h, y = sp.Integer(0), []
    for t in range(3):
        h = a[t] * h + b[t] * x[t]
        y.append([c[t] * h])
    return sp.Matrix(y)


def _solve_ssd_chunk_state(ex: Exercise) -> object:
    h_2 = sp.Matrix([2, 1])
    c_4 = sp.Matrix([[1, 3]])
    return sp.Rational(1, 3) * sp.Rational(1, 2) * (c_4 * h_2)[0, 0]


def _solve_ssd_linear(ex: Exercise) -> object:
    fq, fk, v = [2, 1], [1, 3], [4, 8]
    num = fq[1] * (fk[0] * v[0] + fk[1] * v[1])  # the scan on x = v, step 2
    den = fq[1] * (fk[0] + fk[1])  # the scan on x = 1, step 2
    return sp.Rational(num, den)


def _solve_ssd_semiseparable(ex: Exercise) -> object:
    a2, a3, a4 = sp.Rational(1, 3), sp.Rational(1, 4), sp.Rational(1, 5)
    return sp.Matrix([[a2 * a3, a3], [a2 * a3 * a4, a3 * a4]]).det()


def _solve_ssd_memory(ex: Exercise) -> object:
    k = sp.Symbol("k", positive=True)
    # 2^(−k/2) = 1/8, then the first whole step at or past it
    return sp.ceiling(sp.solve(sp.Eq(2 ** (-k / 2), sp.Rational(1, 8)), k)[0])


def _solve_ssd_chunk_size(ex: Exercise) -> object:
    q = sp.Symbol("Q", positive=True)
    n = p = 64
    per_token = (2 * n + 2 * p + 1) * q + 5 * n * p + 2 * n * p / q + 2 * p
    return sp.solve(sp.diff(per_token, q), q)[0]
