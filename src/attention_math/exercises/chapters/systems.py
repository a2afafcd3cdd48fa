"""Exercises: Heads, IO and decoding (what attention costs on real hardware). Reference
answers are computed, never typed."""

from __future__ import annotations

import sympy as sp

from attention_math import symbolic
from attention_math._lazy import np
from attention_math.derivations import cost
from attention_math.exercises.build import float_array
from attention_math.exercises.model import Exercise, Mistake
from attention_math.exercises.steps import step

__all__ = ["exercises"]


def _heads() -> list[Exercise]:
    """Topic 1: why several heads."""
    # the derivations import NumPy: imported here, not with the chapter (the browser's
    # checker imports every chapter, and builds only the one it checks)
    from attention_math.derivations.heads import cost_difference, two_patterns

    ex = two_patterns()
    q_a = sp.Matrix([[1, 0], [0, 2]])
    q_b = sp.Matrix([[0, 1], [1, 1]])
    k = sp.Matrix([[1, 1], [2, 0]])
    wide = (q_a * k.T + q_b * k.T) / 2  # one head of width 4: scale 1/√4
    return [
        Exercise(
            id="systems-heads-flops",
            chapter="systems",
            title="What more heads cost",
            statement=(
                "Count FLOPs as on the Cost page: $2 n_1 n_2 n_3$ for an $n_1 \\times n_2$ by "
                "$n_2 \\times n_3$ product, and on each score matrix 7 FLOPs per entry for scale, "
                "mask, max, shift and exp, sum and divide. Multi-head attention with $h$ heads of "
                "$d_k = d_v = d_{\\text{model}}/h$ against one head of width $d_{\\text{model}}$ "
                "(same $d_{\\text{model}}$, $L_q$ queries, $L_k$ keys): how many more FLOPs do "
                "the $h$ heads take? Use `h`, `L_q`, `L_k`."
            ),
            answer=sp.factor(cost_difference()),
            mistakes=(
                Mistake(
                    "wrong_factor",
                    sp.Integer(0),
                    "The matrix products cancel, but each head has its own score matrix.",
                ),
            ),
            symbols={"h": cost.h, "L_q": cost.L_q, "L_k": cost.L_k},
            kind="expression",
            explanation=(
                "The products do not depend on $h$ when $d_k = d_v = d_{\\text{model}}/h$: the "
                "projections and $W_O$ keep their sizes, and $h$ score products of width "
                "$d_{\\text{model}}/h$ add up to one of width $d_{\\text{model}}$. What is left is "
                "the elementwise work on $h$ score matrices instead of one."
            ),
            solution=_solve_systems_heads_flops,
        ),
        Exercise(
            id="systems-heads-wide-scores",
            chapter="systems",
            title="The scores of one wide head",
            statement=(
                "Head 1 has queries $Q_1$, head 2 queries $Q_2$, and both the keys $K$ "
                "(width 2 each). One head of width 4 takes the queries $[Q_1 | Q_2]$ and "
                "the keys $[K | K]$. Compute its scaled scores exactly."
            ),
            answer=wide,
            inputs={"Q_1": q_a, "Q_2": q_b, "K": k},
            mistakes=(
                Mistake(
                    "wrong_scale",
                    wide * 2 / sp.sqrt(2),
                    "The wide head has d_k = 4: it scales by 1/√4, not by a narrow head's 1/√2.",
                ),
                Mistake("transposed", wide.T, "Rows are queries, columns keys."),
            ),
            numeric=lambda: (
                float_array(sp.Matrix.hstack(q_a, q_b)) @ float_array(sp.Matrix.hstack(k, k)).T / 2
            ),
            explanation=(
                "A dot product over four coordinates is the sum of the dot products over the two "
                "halves, so the wide head's raw scores are $Q_1 K^\\top + Q_2 K^\\top$; its width "
                "is 4, so it divides by $\\sqrt4 = 2$."
            ),
            solution=_solve_systems_heads_wide_scores,
        ),
        Exercise(
            id="systems-heads-output",
            chapter="systems",
            title="Two heads, two readings",
            statement=(
                "The example of the page Why several heads: head 1's weights $P_1$ (the "
                "previous token) and head 2's weights $P_2$ (the first token; causal, four "
                "tokens), and the value column $v$ (each token's number) in both heads. Give "
                "token 3's output of the two heads side by side: a row of two entries, exactly."
            ),
            answer=ex.two_heads.row(2),
            inputs={"P_1": ex.p_a, "P_2": ex.p_b, "v": ex.v},
            mistakes=(
                Mistake(
                    "transposed",
                    sp.Matrix([[ex.two_heads[2, 1], ex.two_heads[2, 0]]]),
                    "Head 1's output comes first.",
                ),
            ),
            numeric=lambda: _two_heads_numeric()[2:3],
            explanation=(
                "Each head averages the token numbers with its own weights: token 3's output in "
                "head 1 is row 3 of $P_1$ times $v$, in head 2 row 3 of $P_2$ times $v$."
            ),
            solution=_solve_systems_heads_output,
        ),
        Exercise(
            id="systems-heads-wide-token4",
            chapter="systems",
            title="Where the wide head looks",
            statement=(
                "In the same example, one head of width 4 (queries $[Q^{(A)} | Q^{(B)}]$, keys "
                "$[K | K]$, scale $1/\\sqrt 4$) scores token 4's query against the four "
                "keys below. Give its weights for token 4 (a row), exactly."
            ),
            answer=ex.p_one.row(3),
            inputs={
                "q": sp.Matrix.hstack(ex.q_a.row(3), ex.q_b.row(3)),
                "K": sp.Matrix.hstack(ex.k, ex.k),
            },
            mistakes=(
                Mistake(
                    "unnormalized",
                    sp.Matrix([[sp.Integer(1)] * 4]),
                    "Every score is 0: the exponentials are 1, to be divided by their sum.",
                ),
            ),
            numeric=lambda: _softmax_numeric(
                sp.Matrix.hstack(ex.q_a.row(3), ex.q_b.row(3)), sp.Matrix.hstack(ex.k, ex.k)
            ),
            explanation=(
                "Token 4's query is $c$ times key 3 in its first half and $c$ times key 1 in its "
                "second; keys 3 and 1 are opposite, so every score is a sum of two terms that "
                "cancel, or of two zeros. Equal scores give equal weights."
            ),
            solution=_solve_systems_heads_wide_token4,
        ),
    ]


def _decoding() -> list[Exercise]:
    """Topic 3: decoding economics."""
    # the derivations import NumPy: imported here, not with the chapter (the browser's
    # checker imports every chapter, and builds only the one it checks)
    from attention_math.derivations import serving as ds

    h, h_kv = 8, 2
    group = sp.Matrix([[i // (h // h_kv) for i in range(h)]])
    interleaved = sp.Matrix([[i % h_kv for i in range(h)]])
    # a small model: the counts of serving.decode_cost, in symbols of the derivation
    layers, heads, kv_heads, d_head, w_read, n_bytes, ctx = 2, 4, 2, 8, 10_000, 2, 100
    point = {
        ds.W: w_read,
        ds.t: ctx,
        ds.b: 1,
        ds.n_bytes: n_bytes,
        ds.n_layers: layers,
        ds.h: heads,
        ds.h_kv: kv_heads,
        ds.d_head: d_head,
    }
    n_b = ds.decode_bytes().subs(point)
    flops = ds.decode_flops().subs(point)
    lengths = sp.Matrix([[5, 16, 17, 40]])
    n_block = 16
    waste = sum(-(-int(n) // n_block) * n_block - int(n) for n in lengths)
    lse = sp.Matrix([[sp.log(3), 0]])  # two chunks' log-sum-exps
    o_c = sp.Matrix([[2, 5]])  # their normalised outputs (one number each)
    merged = (sp.exp(lse[0]) * o_c[0] + sp.exp(lse[1]) * o_c[1]) / (sp.exp(lse[0]) + sp.exp(lse[1]))
    sizes = (
        f"$n_{{\\text{{layers}}}} = {layers}$, $h = {heads}$ query heads, "
        f"$h_{{kv}} = {kv_heads}$ kv heads of $d_{{\\text{{head}}}} = {d_head}$, "
        f"$W_{{\\text{{read}}}} = {w_read}$ weights read per token, "
        f"$n_{{\\text{{bytes}}}} = {n_bytes}$ bytes per number"
    )
    return [
        Exercise(
            id="systems-gqa-groups",
            chapter="systems",
            title="Which kv head a query head reads",
            statement=(
                f"Grouped-query attention with $h = {h}$ query heads and $h_{{kv}} = {h_kv}$ "
                "key/value heads, as Llama and `torch.nn.functional.scaled_dot_product_attention"
                "(enable_gqa=True)` arrange them. Give, for query heads $0, \\ldots, 7$ in "
                "order, the index of the kv head each one reads (a row)."
            ),
            answer=group,
            mistakes=(Mistake("gqa_interleaved", interleaved),),
            explanation=(
                "Each kv head serves a group of $h/h_{kv} = 4$ consecutive query heads: query "
                "head $i$ reads kv head $\\lfloor i / 4 \\rfloor$. PyTorch's `enable_gqa=True` "
                "repeats each kv head 4 times in a row (`repeat_interleave`), which is the same "
                "grouping."
            ),
            solution=_solve_systems_gqa_groups,
        ),
        Exercise(
            id="systems-decode-bytes",
            chapter="systems",
            title="Bytes per decoded token",
            statement=(
                f"A small model: {sizes}. One sequence decodes a token with $L = {ctx}$ "
                "positions in its cache (the new one included). How many bytes does the step "
                "read: the weights once, and every cached key and value?"
            ),
            answer=n_b,
            mistakes=(
                Mistake("kv_factor", (ds.decode_bytes().subs(point) + n_bytes * w_read) / 2),
                Mistake("kv_heads", ds.decode_bytes().subs({**point, ds.h_kv: heads})),
            ),
            kind="scalar",
            explanation=(
                "The weights are read once: $W_{\\text{read}}\\, n_{\\text{bytes}}$. Every layer "
                "reads, for each of its $h_{kv}$ kv heads, a key **and** a value of "
                "$d_{\\text{head}}$ numbers at each of the $L$ positions."
            ),
            solution=_solve_systems_decode_bytes,
        ),
        Exercise(
            id="systems-decode-intensity",
            chapter="systems",
            title="The arithmetic intensity of decode",
            statement=(
                "The same step: 2 FLOPs per weight read, and $4\\, d_{\\text{head}}$ FLOPs "
                "per query head, cached position and layer (scores and weighted sum). How many "
                "FLOPs per byte does it do? (Exactly, as a fraction.)"
            ),
            answer=sp.Rational(flops, n_b),
            mistakes=(
                Mistake(
                    "kv_heads",
                    sp.Rational(flops, ds.decode_bytes().subs({**point, ds.h_kv: heads})),
                ),
            ),
            kind="scalar",
            explanation=(
                "Every query head (all $h$ of them, not $h_{kv}$) scores every cached position "
                "and sums the values: $4\\, d_{\\text{head}}$ FLOPs per head, position and "
                "layer. Divide by the bytes of the previous exercise."
            ),
            solution=_solve_systems_decode_intensity,
        ),
        Exercise(
            id="systems-paged-waste",
            chapter="systems",
            title="PagedAttention's waste",
            statement=(
                f"Four sequences of the lengths $n$ below share a PagedAttention pool with blocks "
                f"of $n_{{\\text{{block}}}} = {n_block}$ positions. How many cache slots are "
                "allocated but empty, in all?"
            ),
            answer=sp.Integer(waste),
            inputs={"n": lengths},
            kind="scalar",
            explanation=(
                "A sequence of length $n$ gets $\\lceil n / 16 \\rceil$ blocks; only the end of "
                "its last block is empty."
            ),
            solution=_solve_systems_paged_waste,
        ),
        Exercise(
            id="systems-flash-decoding",
            chapter="systems",
            title="Merging two Flash-Decoding chunks",
            statement=(
                "Flash-Decoding splits one query's keys into two chunks. Chunk $c$ reports "
                "its output $o_c$ (normalised within the chunk; one number here, the row $o$ "
                "below) and its log-sum-exp: "
                f"$\\operatorname{{lse}}_1 = \\log {sp.exp(lse[0])}$, "  # log 3, plain in a shell
                f"$\\operatorname{{lse}}_2 = {sp.latex(lse[1])}$. Give the attention output "
                "over all the keys, exactly."
            ),
            answer=sp.nsimplify(merged),
            inputs={"o": o_c},
            mistakes=(Mistake("merge_weights", (o_c[0] + o_c[1]) / sp.Integer(2)),),
            kind="scalar",
            explanation=(
                "Chunk $c$ holds $e^{\\operatorname{lse}_c}$ of the softmax's denominator, so its "
                "output counts with the weight "
                "$e^{\\operatorname{lse}_c} / \\sum_{c'} e^{\\operatorname{lse}_{c'}}$: here "
                "$3/4$ and $1/4$."
            ),
            solution=_solve_systems_flash_decoding,
        ),
    ]


def _io() -> list[Exercise]:
    """Topic 2: why FlashAttention is fast (the online softmax's merge, IO, the backward)."""
    # the derivations import NumPy: imported here, not with the chapter (the browser's
    # checker imports every chapter, and builds only the one it checks)
    from attention_math.derivations import io as io_d
    from attention_math.derivations.online_softmax import State, finish, merge

    # two online-softmax states of one query row: (m, λ, o) with o not yet divided by λ
    a = State(sp.Integer(1), sp.Integer(2), sp.Integer(4))
    b_ = State(sp.Integer(3), sp.Integer(1), sp.Integer(5))
    merged = merge(a, b_)
    # one tile: state (m, λ, o) = (0, 1, [1, 2]) of one query row, then a tile of two keys
    o_old = sp.Matrix([[1, 2]])
    s_tile = sp.Matrix([[sp.log(3), 0]])  # the tile's scores (scaled)
    v_tile = sp.Matrix([[1, 0], [0, 1]])  # its values
    m_new = sp.Max(0, *s_tile)
    e_tile = s_tile.applyfunc(lambda x: sp.exp(x - m_new))
    o_new = sp.exp(0 - m_new) * o_old + e_tile * v_tile
    no_rescale = o_old + e_tile * v_tile
    L, d = sp.symbols("L d", positive=True)
    m_A, m_all = sp.symbols("m_A m", real=True)  # the merge's references
    qk_flops, qk_bytes = io_d.intensity_steps()["S = QKᵀ"]
    return [
        Exercise(
            id="systems-online-merge",
            chapter="systems",
            title="Merging two online-softmax states",
            statement=(
                "One query row's keys are split into two sets. Over the first the online "
                f"softmax has the state $m = {a.m}$, $\\lambda = {a.ell}$, $o = {a.o}$ "
                "(one value column; $o$ is not yet divided by $\\lambda$); over the second "
                f"$m = {b_.m}$, $\\lambda = {b_.ell}$, $o = {b_.o}$. Give the attention output "
                "over all the keys, exactly."
            ),
            answer=sp.simplify(finish(merged)),
            mistakes=(Mistake("missing_rescale", sp.Rational(a.o + b_.o, a.ell + b_.ell)),),
            kind="scalar",
            explanation=(
                "Bring both states to the larger maximum $m = 3$: the first state's $\\lambda$ and "
                "$o$ are multiplied by $e^{1 - 3}$, the second's by $e^0 = 1$. Then add, and "
                "divide once at the end."
            ),
            solution=_solve_systems_online_merge,
        ),
        Exercise(
            id="systems-flash-tile",
            chapter="systems",
            title="One FlashAttention tile",
            statement=(
                "A query row has the running state $m = 0$, $\\lambda = 1$ and the "
                "unnormalised output $o$ below. The next tile brings two keys with the scaled "
                "scores $s$ and the values $V$ (one per row). Give the new unnormalised "
                "output $o$ (a row, before any division by $\\lambda$), exactly."
            ),
            answer=o_new,
            inputs={"o": o_old, "s": s_tile, "V": v_tile},
            mistakes=(Mistake("missing_rescale", no_rescale),),
            explanation=(
                "The tile's largest score, $\\log 3$, is the new maximum. The old output was "
                "accumulated relative to $e^0$, so it is multiplied by $e^{0 - \\log 3} = 1/3$; "
                "the tile adds $\\sum_j e^{s_j - \\log 3}\\, v_j$."
            ),
            solution=_solve_systems_flash_tile,
        ),
        Exercise(
            id="systems-hbm-standard",
            chapter="systems",
            title="The standard implementation's traffic",
            statement=(
                "One head of width $d$, $L$ queries and keys. The standard implementation "
                "reads $Q$ and $K$ from HBM and writes $S$; reads $S$ and writes $P$; reads "
                "$P$ and $V$ and writes $O$. How many numbers move between HBM and the chip? "
                "Use `L`, `d`."
            ),
            answer=sp.expand(io_d.standard().subs({io_d.L: L, io_d.d: d})),
            symbols={"L": L, "d": d},
            kind="expression",
            explanation=(
                "Each kernel reads its inputs and writes its output: $2Ld$ in and $L^2$ out, then "
                "$L^2$ in and $L^2$ out, then $L^2 + Ld$ in and $Ld$ out."
            ),
            solution=_solve_systems_hbm_standard,
        ),
        Exercise(
            id="systems-matmul-intensity",
            chapter="systems",
            title="Is QKᵀ memory-bound?",
            statement=(
                "The kernel $S = QK^\\top$ of one head reads $Q$ and $K$ ($L \\times d$ each) "
                "and writes $S$ ($L \\times L$) to HBM, in 16-bit numbers (2 bytes); it does "
                "$2 L^2 d$ FLOPs. How many FLOPs per byte? Use `L`, `d`."
            ),
            answer=sp.simplify((qk_flops / qk_bytes).subs({io_d.L: L, io_d.d: d, io_d.n_bytes: 2})),
            symbols={"L": L, "d": d},
            kind="expression",
            explanation=(
                "The bytes are $2(2Ld + L^2)$. At long $L$ the ratio tends to $d$ FLOPs per byte, "
                "below the A100's ridge for the usual head widths (see "
                "[Why FlashAttention is fast](../long/io.md)): even this matrix product waits on "
                "memory when it writes its $L \\times L$ result out."
            ),
            solution=_solve_systems_matmul_intensity,
        ),
        Exercise(
            id="systems-backward-ratio",
            chapter="systems",
            title="What recomputing costs",
            statement=(
                "The forward pass of one head has two matrix products of $2 L^2 d$ FLOPs each "
                "($QK^\\top$ and $PV$). FlashAttention's backward computes $dV$, $dP$, $dQ$, "
                "$dK$ (one such product each) and recomputes $S = QK^\\top$ instead of storing "
                "$P$. Its matrix-product FLOPs divided by the forward's?"
            ),
            answer=io_d.backward_ratio(),
            mistakes=(Mistake("no_recompute", sp.Integer(2)),),
            kind="scalar",
            explanation=(
                "Five products of $2L^2 d$ FLOPs in the backward ($S$ again, $dV$, $dP$, $dQ$, "
                "$dK$) against two in the forward."
            ),
            solution=_solve_systems_backward_ratio,
        ),
        Exercise(
            id="systems-merge-proof",
            chapter="systems",
            title="Why merging online-softmax states is exact",
            task="prove",
            statement=(
                "A query row's keys are split into sets $A$ and $B$. Over each, the online "
                "softmax keeps a state $(m, \\lambda, o)$: a reference $m$ (its running "
                "maximum), $\\lambda = \\sum_j e^{s_j - m}$ and $o = \\sum_j e^{s_j - m} v_j$. "
                "The merge takes $m = \\max(m_A, m_B)$, "
                "$\\lambda = e^{m_A - m}\\lambda_A + e^{m_B - m}\\lambda_B$ and $o$ likewise. "
                "Show that $o/\\lambda$ is exactly the attention output over $A \\cup B$. By "
                "what factor is $\\lambda_A$ multiplied? Use `m_A` and `m`."
            ),
            answer=sp.exp(m_A - m_all),
            mistakes=(Mistake("missing_rescale", sp.Integer(1)),),
            symbols={"m_A": m_A, "m": m_all},
            kind="expression",
            explanation=(
                "1. Rescaling changes a state's reference: "
                "$e^{m_A - m}\\lambda_A = \\sum_{j \\in A} e^{m_A - m} e^{s_j - m_A} = "
                "\\sum_{j \\in A} e^{s_j - m}$, and the same for $o_A$ and for $B$.\n"
                "2. With both at the reference $m$, the sums add: $\\lambda = "
                "\\sum_{j \\in A \\cup B} e^{s_j - m}$ and $o = \\sum_{j \\in A \\cup B} "
                "e^{s_j - m} v_j$.\n"
                "3. Divide: the common $e^{-m}$ cancels (shift invariance), so $o/\\lambda = "
                "\\sum_j e^{s_j} v_j / \\sum_l e^{s_l}$, the softmax-weighted average over "
                "all the keys. The factor on $\\lambda_A$ is $e^{m_A - m}$.\n\n"
                "Steps 1 to 3 hold for **any** reference $m$: the algebra does not need the "
                "maximum. The maximum is there for the floats: with it every exponent "
                "$s_j - m$ and $m_A - m$ is at most $0$, so nothing overflows. And the "
                "merge is associative, so tiles (FlashAttention) or chunks of the cache "
                "(Flash-Decoding) can be merged in any grouping. SymPy checks the steps "
                "with symbolic scores, values and references."
            ),
            solution=_solve_systems_merge_proof,
        ),
    ]


def _bias() -> list[Exercise]:
    """Topic 8: gradients of a bias, and what the backward keeps."""
    # the derivations import NumPy: imported here, not with the chapter (the browser's
    # checker imports every chapter, and builds only the one it checks)
    from attention_math import io_model

    p = sp.Matrix([[sp.Rational(1, 2), sp.Rational(1, 2)], [sp.Rational(1, 4), sp.Rational(3, 4)]])
    dp = sp.Matrix([[2, 0], [1, 5]])
    row = sp.Matrix([sum(p.multiply_elementwise(dp).row(i)) for i in range(2)])  # (2, 1)
    ds = p.multiply_elementwise(dp - row * sp.ones(1, 2))
    d_s3 = sp.Matrix([[1, -2, 1], [3, 1, -4], [2, 4, -6]])  # a real dS: each row sums to 0
    sums = sp.Matrix(
        [[sum(d_s3[i, j] for i in range(3) for j in range(3) if i - j == o) for o in range(-2, 3)]]
    )
    h, L = 16, 2048
    return [
        Exercise(
            id="systems-dmask",
            chapter="systems",
            title="The gradient of an additive bias",
            statement=(
                "The scores are $S = \\alpha\\, QK^\\top + M$ with a learned bias $M$. For "
                "the weights $P$ and the gradient $dP = \\partial \\ell / \\partial P$ "
                "below, compute $dM = \\partial \\ell / \\partial M$ exactly."
            ),
            answer=ds,
            inputs={"P": p, "dP": dp},
            mistakes=(Mistake("missing_term", p.multiply_elementwise(dp)),),
            numeric=lambda: _dmask_numeric(p, dp),
            explanation=(
                "$M$ enters the scores with coefficient 1, so $dM = dS$: the softmax's backward, "
                "row by row, "
                "$dS = P \\circ (dP - \\operatorname{rowsum}(P \\circ dP)\\, \\mathbf{1}^\\top)$."
            ),
            solution=_solve_systems_dmask,
        ),
        Exercise(
            id="systems-relbias-grad",
            chapter="systems",
            title="The gradient of a relative bias",
            statement=(
                "A relative bias fills $M_{ij} = b_{i-j}$ from a table with one entry per "
                "offset $i - j = -2, -1, 0, 1, 2$. For the gradient $dS$ below (3 queries, 3 "
                "keys), give the table's gradient as a row in the order of the offsets."
            ),
            answer=sums,
            inputs={"dS": d_s3},
            mistakes=(
                Mistake(
                    "offset_sum",
                    sp.Matrix([[d_s3[0, 2], d_s3[0, 1], d_s3[0, 0], d_s3[1, 0], d_s3[2, 0]]]),
                ),
                Mistake("transposed", sp.Matrix([list(reversed(list(sums)))])),
            ),
            explanation=(
                "Every $(i, j)$ with the same offset $i - j$ read the same table entry, so that "
                "entry's gradient is the sum of $dS$ over the diagonal $i - j$: offset $-2$ is "
                "the top-right corner, $0$ the main diagonal, $2$ the bottom-left corner."
            ),
            solution=_solve_systems_relbias_grad,
        ),
        Exercise(
            id="systems-store-bytes",
            chapter="systems",
            title="Store or recompute, in bytes",
            statement=(
                f"One layer of $h = {h}$ heads, $L = {L}$ queries and keys. Storing the weights "
                "$P$ for the backward takes 2 bytes per entry; FlashAttention instead keeps one "
                "float32 log-sum-exp (4 bytes) per query row and head. How many bytes more does "
                "storing $P$ take?"
            ),
            answer=sp.Integer(
                io_model.backward_bytes(L, h, recompute=False)
                - io_model.backward_bytes(L, h, recompute=True)
            ),
            kind="scalar",
            explanation=(
                "$P$ has $h L^2$ entries of 2 bytes; the log-sum-exp has $h L$ entries of 4 bytes."
            ),
            solution=_solve_systems_store_bytes,
        ),
    ]


def _dmask_numeric(p: sp.Matrix, dp: sp.Matrix) -> np.ndarray:
    pn, dpn = float_array(p), float_array(dp)  # (2, 2) each
    out: np.ndarray = pn * (dpn - (pn * dpn).sum(axis=-1, keepdims=True))  # (2, 2): dS
    return out


def _two_heads_numeric() -> np.ndarray:
    from attention_math.derivations.heads import two_patterns_numeric  # NumPy, at build time

    return two_patterns_numeric()["two_heads"]


def _softmax_numeric(q: sp.Matrix, k: sp.Matrix) -> np.ndarray:
    from attention_math import numeric  # NumPy, at build time only

    s = float_array(q.evalf(30)) @ float_array(k).T / 2  # (1, 4)
    return numeric.softmax(s)


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    return [*_heads(), *_io(), *_decoding(), *_bias()]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs (or the numbers its statement gives) as a learner would,
# and must pass the checker.


def _solve_systems_heads_flops(ex: Exercise) -> object:
    h, L_q, L_k = sp.symbols("h L_q L_k", positive=True)
    per_entry = 7  # scale, mask, max, shift and exp (2), sum, divide
    return per_entry * (h - 1) * L_q * L_k


def _solve_systems_heads_wide_scores(ex: Exercise) -> object:
    x = ex.inputs
    q = sp.Matrix.hstack(x["Q_1"], x["Q_2"])  # (2, 4)
    k = sp.Matrix.hstack(x["K"], x["K"])  # (2, 4)
    return q * k.T / sp.sqrt(4)


def _solve_systems_heads_output(ex: Exercise) -> object:
    x = ex.inputs
    row = 2  # token 3 (rows count from 0 in Python)
    o_1 = (x["P_1"].row(row) * x["v"])[0]
    o_2 = (x["P_2"].row(row) * x["v"])[0]
    return sp.Matrix([[o_1, o_2]])


def _solve_systems_heads_wide_token4(ex: Exercise) -> object:
    x = ex.inputs
    s = (x["q"] * x["K"].T / sp.sqrt(4)).applyfunc(sp.simplify)  # (1, 4): all zero
    e = s.applyfunc(sp.exp)
    return e / sum(e)


def _solve_systems_online_merge(ex: Exercise) -> object:
    (m_a, lam_a, o_a), (m_b, lam_b, o_b) = (1, 2, 4), (3, 1, 5)  # as the statement gives them
    m = max(m_a, m_b)
    c_a, c_b = sp.exp(m_a - m), sp.exp(m_b - m)  # rescale each side to the common maximum
    return (c_a * o_a + c_b * o_b) / (c_a * lam_a + c_b * lam_b)


def _solve_systems_flash_tile(ex: Exercise) -> object:
    x = ex.inputs
    m_old = 0
    m_new = max(m_old, *x["s"])  # log 3
    p = x["s"].applyfunc(lambda s: sp.exp(s - m_new))  # (1, 2): the tile's weights, unnormalised
    o = sp.exp(m_old - m_new) * x["o"] + p * x["V"]  # (1, 2)
    return o.applyfunc(sp.simplify)


def _solve_systems_hbm_standard(ex: Exercise) -> object:
    L, d = sp.symbols("L d", positive=True)
    scores = 2 * L * d + L**2  # Q, K in; S out
    softmax = L**2 + L**2  # S in; P out
    weighted = L**2 + L * d + L * d  # P, V in; O out
    return scores + softmax + weighted


def _solve_systems_matmul_intensity(ex: Exercise) -> object:
    L, d = sp.symbols("L d", positive=True)
    flops = 2 * L**2 * d
    n_bytes = 2 * (2 * L * d + L**2)  # Q, K read; S written
    return sp.simplify(flops / n_bytes)


def _solve_systems_backward_ratio(ex: Exercise) -> object:
    backward = 5  # products of 2 L² d FLOPs: S again, dV, dP, dQ, dK
    forward = 2  # QKᵀ and PV
    return sp.Rational(backward, forward)


def _solve_systems_gqa_groups(ex: Exercise) -> object:
    h, h_kv = 8, 2
    return sp.Matrix([[i // (h // h_kv) for i in range(h)]])


def _solve_systems_decode_bytes(ex: Exercise) -> object:
    n_layers, h_kv, d_head, w_read, n_bytes, L = 2, 2, 8, 10_000, 2, 100
    cache = 2 * n_layers * h_kv * d_head * L  # keys and values: numbers read
    return n_bytes * (w_read + cache)


def _solve_systems_decode_intensity(ex: Exercise) -> object:
    n_layers, h, h_kv, d_head, w_read, n_bytes, L = 2, 4, 2, 8, 10_000, 2, 100
    flops = 2 * w_read + 4 * d_head * h * L * n_layers
    n_b = n_bytes * (w_read + 2 * n_layers * h_kv * d_head * L)
    return sp.Rational(flops, n_b)


def _solve_systems_paged_waste(ex: Exercise) -> object:
    lengths = [int(n) for n in ex.inputs["n"]]
    n_block = 16
    blocks = [-(-n // n_block) for n in lengths]  # ceil(n / n_block)
    return sum(b * n_block - n for b, n in zip(blocks, lengths, strict=True))


def _solve_systems_flash_decoding(ex: Exercise) -> object:
    o = ex.inputs["o"]
    lse = [sp.log(3), 0]  # as the statement gives them
    w = [sp.exp(x) for x in lse]  # each chunk's share of the denominator, unnormalised
    return sum(w[c] * o[c] for c in range(2)) / sum(w)


def _solve_systems_dmask(ex: Exercise) -> object:
    P, dP = ex.inputs["P"], ex.inputs["dP"]  # (2, 2) each
    row = sp.Matrix([sum(P.multiply_elementwise(dP).row(i)) for i in range(2)])  # (2, 1)
    return P.multiply_elementwise(dP - row * sp.ones(1, 2))


def _solve_systems_relbias_grad(ex: Exercise) -> object:
    dS = ex.inputs["dS"]  # (3, 3)
    grad = [sum(dS[i, j] for i in range(3) for j in range(3) if i - j == o) for o in range(-2, 3)]
    return sp.Matrix([grad])


def _solve_systems_store_bytes(ex: Exercise) -> object:
    h, L = 16, 2048
    return h * L * L * 2 - h * L * 4


def _solve_systems_merge_proof(ex: Exercise) -> object:
    s = sp.symbols("s_1:4", real=True)  # keys 1, 2 in A; key 3 in B
    v = sp.symbols("v_1:4", real=True)  # one value column
    m_A, m = ex.symbols["m_A"], ex.symbols["m"]
    m_B = sp.Symbol("m_B", real=True)  # any references: the algebra needs no maximum
    lam_A, o_A = (
        sum(sp.exp(s[j] - m_A) for j in (0, 1)),
        sum(sp.exp(s[j] - m_A) * v[j] for j in (0, 1)),
    )
    lam_B, o_B = sp.exp(s[2] - m_B), sp.exp(s[2] - m_B) * v[2]
    factor = sp.exp(m_A - m)
    step(
        "rescaling moves A's reference to m", factor * lam_A, sum(sp.exp(s[j] - m) for j in (0, 1))
    )
    lam = step(
        "the rescaled sums add",
        factor * lam_A + sp.exp(m_B - m) * lam_B,
        sum(sp.exp(s[j] - m) for j in range(3)),
    )
    o = step(
        "and so do the outputs",
        factor * o_A + sp.exp(m_B - m) * o_B,
        sum(sp.exp(s[j] - m) * v[j] for j in range(3)),
    )
    p = symbolic.softmax(sp.Matrix([s]))  # (1, 3)
    step("o/λ is attention over all the keys", o / lam, (p * sp.Matrix(v))[0])
    return factor
