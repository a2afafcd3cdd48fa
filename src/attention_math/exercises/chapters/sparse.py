"""Exercises: Sparse selection (top-k attention and its error, DeepSeek's lightning indexer,
NSA's block scores, the cost of a decoded token). Reference answers are computed, never typed.

This module imports no NumPy (the checker also runs without it): every exact answer is
SymPy, and the NumPy references are looked up when they are called, at build time.
"""

from __future__ import annotations

import sympy as sp

from attention_math._lazy import np
from attention_math.exercises.model import Exercise, Mistake

__all__ = ["exercises"]

# one query's dense weights (scores log 4, log 2, log 1, log 1 over a sum of 8) and values
_P = sp.Matrix([[sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 8), sp.Rational(1, 8)]])
_V = sp.Matrix([[2], [0], [-2], [4]])
_TOP = 2


def _kept(p: sp.Matrix, top_k: int) -> list[int]:
    """The ``top_k`` largest weights' keys, ties to the earlier key."""
    return sorted(range(p.cols), key=lambda j: (-p[j], j))[:top_k]


def _topk() -> list[Exercise]:
    """Top-k attention: the kept weights, the discarded mass, the error and its bounds."""
    kept = _kept(_P, _TOP)
    renorm = sp.Matrix([[_P[j] / sum(_P[i] for i in kept) if j in kept else 0 for j in range(4)]])
    raw = sp.Matrix([[_P[j] if j in kept else 0 for j in range(4)]])
    eps = 1 - sum(_P[j] for j in kept)
    o = (_P * _V)[0]
    o_s = (renorm * _V)[0]
    error = sp.Abs(o - o_s)
    dropped = [j for j in range(4) if j not in kept]
    spread = eps * sp.Max(*(sp.Abs(_V[i] - _V[j]) for i in dropped for j in kept))
    bound = 2 * eps * sp.Max(*(sp.Abs(x) for x in _V))
    scores = sp.Matrix([[sp.log(4), sp.log(2), 0, 0]])  # log of 8·p: the same softmax
    weights_text = "$p = (1/2, 1/4, 1/8, 1/8)$"
    return [
        Exercise(
            id="sparse-topk-weights",
            chapter="sparse",
            title="The weights top-2 keeps",
            statement=(
                "One query has the scaled scores $s$ below over four keys. Top-$k$ attention "
                f"with $k = {_TOP}$ keeps the two largest scores and takes the softmax over them "
                "only. Give its weights over all four keys (a row, 0 for a dropped key), exactly."
            ),
            answer=renorm,
            inputs={"s": scores},
            mistakes=(
                Mistake(
                    "unnormalized",
                    raw,
                    "Those are the dense weights of the kept keys: their softmax is taken anew, "
                    "so they sum to 1.",
                ),
            ),
            numeric=lambda: _topk_weights_numeric(scores),
            explanation=(
                "The dense weights are $p = (1/2, 1/4, 1/8, 1/8)$; the two largest are kept. A "
                "softmax over the kept scores divides their exponentials by their own sum, so "
                "each kept weight is its dense weight divided by $1 - \\varepsilon$, the weight "
                "kept."
            ),
            solution=_solve_sparse_topk_weights,
        ),
        Exercise(
            id="sparse-discarded-mass",
            chapter="sparse",
            title="The discarded mass",
            statement=(
                f"The same query, dense weights {weights_text}. What is the dense weight "
                f"$\\varepsilon$ of the keys that top-{_TOP} drops?"
            ),
            answer=eps,
            kind="scalar",
            explanation="The two smallest weights are dropped: $\\varepsilon = 1/8 + 1/8$.",
            solution=_solve_sparse_discarded_mass,
        ),
        Exercise(
            id="sparse-topk-error",
            chapter="sparse",
            title="The error, exactly",
            statement=(
                f"The same query with the one-number values $v$ below, weights {weights_text}. "
                f"Give the error $|o - o_S|$ of top-{_TOP} attention: $o$ the dense output, "
                "$o_S$ the top-2 output, exactly."
            ),
            answer=error,
            inputs={"v": _V},
            mistakes=(
                Mistake(
                    "unnormalized",
                    sp.Abs(o - (raw * _V)[0]),
                    "o_S divides the kept sum by 1 − ε.",
                ),
            ),
            kind="scalar",
            numeric=_topk_error_numeric,
            explanation=(
                "$o = \\sum_j p_j v_j$ and $o_S = (p_1 v_1 + p_2 v_2)/(1 - \\varepsilon)$. "
                "Check with the identity $o - o_S = \\varepsilon\\,(o_{\\bar S} - o_S)$: "
                "$o_{\\bar S}$ is the average of the dropped values with their weights."
            ),
            solution=_solve_sparse_topk_error,
        ),
        Exercise(
            id="sparse-bound-tight",
            chapter="sparse",
            title="The tight bound",
            statement=(
                "For the same query and values, the error is at most $\\varepsilon$ times "
                "the largest $|v_i - v_j|$ over a dropped key $i$ and a kept key $j$. Compute "
                "this bound."
            ),
            answer=spread,
            inputs={"v": _V},
            mistakes=(
                Mistake(
                    "wrong_factor",
                    bound,
                    "That is the looser 2ε·max|v_j|: here the bound takes the largest distance "
                    "from a dropped value to a kept one.",
                ),
            ),
            kind="scalar",
            explanation=(
                "$o_S$ is an average of the kept values and $o_{\\bar S}$ of the dropped ones, "
                "so they are at most the largest distance between a dropped and a kept value "
                "apart; the error is $\\varepsilon$ times their distance."
            ),
            solution=_solve_sparse_bound_tight,
        ),
    ]


def _indexer() -> list[Exercise]:
    """DeepSeek's lightning indexer, eq. (1)."""
    q = sp.Matrix([[1, 0], [0, 1]])  # two heads of width 2 (rows), one query
    w = sp.Matrix([[2, 1]])  # the heads' weights
    k = sp.Matrix([[1, -1], [-1, 2], [3, 1]])  # three keys (rows)
    dots = q * k.T  # (heads, keys)
    relu = dots.applyfunc(lambda x: sp.Max(x, 0))
    answer = w * relu  # (1, keys)
    return [
        Exercise(
            id="sparse-indexer-scores",
            chapter="sparse",
            title="The lightning indexer's scores",
            statement=(
                "DeepSeek-V3.2's indexer scores query $t$ against key $s$ with "
                "$I_{t,s} = \\sum_j w_{t,j}\\, \\operatorname{ReLU}(q_{t,j} \\cdot k_s)$. One "
                "query has two heads: $q_{t,j}$ is row $j$ of $Q$, $w_{t,j}$ the weight of "
                "head $j$; "
                "the keys are the rows of $K$. Give its index scores (a row over the three keys)."
            ),
            answer=answer,
            inputs={"Q": q, "w": w, "K": k},
            mistakes=(
                Mistake("missing_relu", w * dots, "The ReLU drops each negative head score."),
            ),
            numeric=lambda: _indexer_numeric(q, w, k),
            explanation=(
                "Each head takes the dot product of its query with the key; the ReLU sets the "
                "negative ones to 0; the weights $w_{t,j}$ sum what is left."
            ),
            solution=_solve_sparse_indexer_scores,
        ),
    ]


def _eq9(p: sp.Matrix, block: int, stride: int, select_block: int, n_select: int) -> sp.Matrix:
    """NSA's eq. (9) exactly, counted from 0: selection block ``j`` collects compression block
    ``(l'/d)(j + 1) − 1 − m − n`` for ``m < l'/d``, ``n < l/d`` (0 out of range)."""
    r, c = select_block // stride, block // stride
    return sp.Matrix(
        [
            [
                sp.Add(
                    *(
                        p[r * (j + 1) - 1 - m - n]
                        for m in range(r)
                        for n in range(c)
                        if 0 <= r * (j + 1) - 1 - m - n < p.cols
                    )
                )
                for j in range(n_select)
            ]
        ]
    )


# DeepSeek-V3.2's sizes (sparse.DEEPSEEK_V32, from its config.json), as the statement gives them
_LATENT, _INDEX_DIM, _CONTEXT, _TOP_K = 576, 128, 131072, 2048


def _nsa_and_cost() -> list[Exercise]:
    """NSA's eq. (9), the pairs top-k scores and the bytes of a decoded token."""
    p_cmp = sp.Matrix(
        [[sp.Rational(1, 6), sp.Rational(1, 6), sp.Rational(1, 3), sp.Rational(1, 3)]]
    )
    slc = _eq9(p_cmp, 4, 2, 4, 3)
    # the slip: every overlapping compression block counted once
    once = sp.Matrix(
        [[sp.Add(*(p_cmp[i] for i in range(4) if 2 * j - 1 <= i <= 2 * j + 1)) for j in range(3)]]
    )
    L, k = sp.symbols("L k", positive=True, integer=True)
    t = sp.Symbol("t", positive=True, integer=True)
    pairs = sp.expand(sp.summation(t, (t, 1, k)) + sp.summation(k, (t, k + 1, L)))
    dense = 2 * _LATENT * _CONTEXT  # every latent, 2 bytes a number
    dsa = 1 * _INDEX_DIM * _CONTEXT + 2 * _LATENT * _TOP_K  # every indexer key, k latents
    ratio = sp.Rational(dsa, dense)
    latent, n_ctx, top = _LATENT, _CONTEXT, _TOP_K
    return [
        Exercise(
            id="sparse-nsa-selection",
            chapter="sparse",
            title="NSA's selection scores",
            statement=(
                "NSA compresses blocks of $l = 4$ tokens every $d = 2$ tokens; the compressed "
                "branch gives one query the weights $p$ below over the blocks starting at tokens "
                "0, 2, 4, 6. Selection blocks have $l' = 4$ tokens (0-3, 4-7, 8-11). By eq. (9), "
                "$p^{\\text{slc}}[j] = \\sum_{m < l'/d} \\sum_{n < l/d} "
                "p^{\\text{cmp}}[(l'/d)\\, j - m - n]$ (indices from 1, out of range: 0), "
                "give the three selection scores (a row)."
            ),
            answer=slc,
            inputs={"p": p_cmp},
            mistakes=(
                Mistake(
                    "overlap_weight",
                    once,
                    "Each compression block counts once per stride it shares with the "
                    "selection block.",
                ),
            ),
            numeric=lambda: _selection_numeric(p_cmp),
            explanation=(
                "Counted from 0, selection block $j$ collects compression block "
                "$2(j+1) - 1 - m - n$ for $m, n \\in \\{0, 1\\}$: the block starting with it "
                "twice (all of its 4 tokens, 2 strides, are inside) and the two that straddle its "
                "edges once (2 tokens, 1 stride)."
            ),
            solution=_solve_sparse_nsa_selection,
        ),
        Exercise(
            id="sparse-causal-pairs",
            chapter="sparse",
            title="How many scores top-k computes",
            statement=(
                "A causal sequence of $L$ tokens; query $t$ (from 1) sees $t$ keys and top-$k$ "
                "keeps $\\min(t, k)$ of them. For $L \\ge k$, how many (query, key) pairs does "
                "the attention weigh in all? Use `L`, `k`."
            ),
            answer=pairs,
            symbols={"L": L, "k": k},
            mistakes=(
                Mistake("wrong_factor", k * L, "The first k queries see fewer than k keys."),
            ),
            kind="expression",
            explanation=(
                "Queries $1, \\ldots, k$ keep every key they see, $1 + \\cdots + k$; the "
                "other $L - k$ keep $k$ each."
            ),
            solution=_solve_sparse_causal_pairs,
        ),
        Exercise(
            id="sparse-decode-bytes",
            chapter="sparse",
            title="The bytes of a decoded token",
            statement=(
                f"DeepSeek-V3.2 caches {latent} numbers per token (its MLA latent, 2 bytes each) "
                f"and, for the indexer, {_INDEX_DIM} numbers per token in FP8 (1 byte). "
                f"Decoding one token with $L = {n_ctx}$ tokens cached, dense attention reads "
                f"every latent; DSA reads every indexer key and the latents of the "
                f"$k = {top}$ keys it selects. What fraction of the dense bytes does DSA read? "
                "(Exactly, as a fraction.)"
            ),
            answer=ratio,
            mistakes=(
                Mistake(
                    "missing_term",
                    sp.Rational(2 * _LATENT * _TOP_K, dense),
                    "The indexer's keys are read for every cached token.",
                ),
            ),
            kind="scalar",
            numeric=_decode_bytes_numeric,
            explanation=(
                "Dense: $2 \\cdot 576 L$ bytes. DSA: $128 L$ bytes of indexer keys and "
                "$2 \\cdot 576 k$ bytes of latents. The indexer's read grows with $L$: at long "
                "contexts it is most of what DSA reads."
            ),
            solution=_solve_sparse_decode_bytes,
        ),
    ]


def _topk_weights_numeric(scores: sp.Matrix) -> np.ndarray:
    from attention_math import sparse  # NumPy: build time only
    from attention_math.numeric import softmax

    s = np.array(scores.evalf(30).tolist(), dtype=float)  # (1, 4)
    kept = sparse.topk_mask(s, _TOP)  # (1, 4)
    return np.where(kept, softmax(np.where(kept, s, -np.inf)), 0.0)


def _topk_error_numeric() -> np.floating:
    from attention_math import sparse  # NumPy: build time only

    p = np.array(_P.tolist(), dtype=float)[0]  # (4,)
    v = np.array(_V.tolist(), dtype=float)  # (4, 1)
    kept = sparse.topk_mask(p[None], _TOP)[0]  # (4,)
    return np.float64(sparse.topk_error(p, v, kept).error)


def _indexer_numeric(q: sp.Matrix, w: sp.Matrix, k: sp.Matrix) -> np.ndarray:
    from attention_math import sparse  # NumPy: build time only

    qa = np.array(q.tolist(), dtype=float)[None]  # (1, heads, 2)
    wa = np.array(w.tolist(), dtype=float)  # (1, heads)
    ka = np.array(k.tolist(), dtype=float)  # (keys, 2)
    return sparse.indexer_scores(qa, wa, ka)


def _decode_bytes_numeric() -> np.floating:
    from attention_math import sparse  # NumPy: build time only

    c = sparse.DEEPSEEK_V32
    latent = c["kv_lora_rank"] + c["qk_rope_head_dim"]
    kw = {"n_heads": c["num_attention_heads"], "d_k": latent, "d_v": c["kv_lora_rank"]}
    dense = sparse.decode_cost(_CONTEXT, cache_dim=latent, **kw)
    chosen = sparse.decode_cost(c["index_topk"], cache_dim=latent, **kw)
    index = sparse.indexer_cost(
        _CONTEXT, index_heads=c["index_n_heads"], index_dim=c["index_head_dim"]
    )
    return np.float64((chosen.n_bytes + index.n_bytes) / dense.n_bytes)


def _selection_numeric(p: sp.Matrix) -> np.ndarray:
    from attention_math import sparse  # NumPy: build time only

    pa = np.array(p.tolist(), dtype=float)  # (1, 4)
    return sparse.selection_scores(pa, block=4, stride=2, select_block=4, n_select=3)


def exercises() -> list[Exercise]:
    """The exercises of this chapter, in reading order."""
    return [*_topk(), *_indexer(), *_nsa_and_cost()]


# The solutions, as the chapter's page shows them (source and result): each computes its
# exercise's answer from its inputs (or the numbers its statement gives) as a learner would,
# and must pass the checker.


def _solve_sparse_topk_weights(ex: Exercise) -> object:
    s = ex.inputs["s"]  # (1, 4)
    kept = [0, 1]  # the two largest scores: log 4 and log 2
    e = [sp.exp(s[j]) if j in kept else sp.Integer(0) for j in range(4)]  # dropped: weight 0
    return sp.Matrix([e]) / sum(e)


def _solve_sparse_discarded_mass(ex: Exercise) -> object:
    p = [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 8), sp.Rational(1, 8)]
    return p[2] + p[3]  # the two smallest, dropped


def _solve_sparse_topk_error(ex: Exercise) -> object:
    p = [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 8), sp.Rational(1, 8)]
    v = list(ex.inputs["v"])
    o = sum(pj * vj for pj, vj in zip(p, v, strict=True))
    o_s = (p[0] * v[0] + p[1] * v[1]) / (p[0] + p[1])
    return sp.Abs(o - o_s)


def _solve_sparse_bound_tight(ex: Exercise) -> object:
    v = list(ex.inputs["v"])
    eps = sp.Rational(1, 4)
    return eps * max(abs(v[i] - v[j]) for i in (2, 3) for j in (0, 1))


def _solve_sparse_indexer_scores(ex: Exercise) -> object:
    Q, w, K = ex.inputs["Q"], ex.inputs["w"], ex.inputs["K"]
    scores = []
    for s in range(K.rows):
        heads = [w[j] * max((Q.row(j) * K.row(s).T)[0], 0) for j in range(Q.rows)]
        scores.append(sum(heads))
    return sp.Matrix([scores])


def _solve_sparse_nsa_selection(ex: Exercise) -> object:
    p = ex.inputs["p"]  # (1, 4): compression blocks 1 … 4 in the paper's numbering
    l, d, l_sel = 4, 2, 4
    out = []
    for j in range(1, 4):  # selection blocks 1 … 3
        total = sp.Integer(0)
        for m in range(l_sel // d):
            for n in range(l // d):
                i = (l_sel // d) * j - m - n
                if 1 <= i <= p.cols:
                    total += p[i - 1]
        out.append(total)
    return sp.Matrix([out])


def _solve_sparse_causal_pairs(ex: Exercise) -> object:
    L, k = sp.symbols("L k", positive=True, integer=True)
    return k * (k + 1) / 2 + (L - k) * k


def _solve_sparse_decode_bytes(ex: Exercise) -> object:
    L, k = 131072, 2048
    dense = 2 * 576 * L
    dsa = 1 * 128 * L + 2 * 576 * k
    return sp.Rational(dsa, dense)
