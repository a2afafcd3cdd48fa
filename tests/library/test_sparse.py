"""Sparse selection: top-k attention, its exact error and bound, DeepSeek's indexer, NSA."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import sparse
from attention_math.crosscheck import CrossCheckError
from attention_math.derivations import sparse as ds
from attention_math.numeric import attention, attention_weights, causal_mask, sliding_window_mask
from tests.conftest import require_or_skip

# ---- top-k attention ----


@settings(max_examples=40, deadline=None)
@given(
    n_q=st.integers(1, 6),
    n_k=st.integers(1, 9),
    extra=st.integers(0, 3),
    seed=st.integers(0, 2**32 - 1),
    causal=st.booleans(),
)
def test_topk_with_every_allowed_key_is_dense_attention_exactly(n_q, n_k, extra, seed, causal):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(n_q, 4)), rng.normal(size=(n_k, 4)), rng.normal(size=(n_k, 3))
    mask = rng.random((n_q, n_k)) < 0.7  # (n_q, n_k): some keys hidden
    allowed = mask & causal_mask(n_q, n_k) if causal else mask
    # top_k covers the most allowed keys of any row: the kept set is the allowed set, the
    # masks handed to the softmax are equal, and so are the outputs, bit for bit
    top_k = int(allowed.sum(axis=-1).max(initial=0)) + extra or 1
    ours = sparse.topk_attention(q, k, v, top_k, mask, is_causal=causal)
    assert np.array_equal(ours, attention(q, k, v, allowed))
    assert np.array_equal(sparse.topk_mask(q @ k.T, top_k, allowed), allowed)


@settings(max_examples=40, deadline=None)
@given(n_k=st.integers(2, 12), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_topk_output_is_the_kept_dense_weights_renormalised(n_k, seed, data):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(n_k, 4)), rng.normal(size=(n_k, 2))
    top_k = data.draw(st.integers(1, n_k))
    p = attention_weights(q, k, v)  # (3, n_k): dense
    kept = sparse.topk_mask(q @ k.T, top_k)  # (3, n_k)
    assert (kept.sum(axis=-1) == top_k).all()
    # the kept weights are the row's largest: no dropped weight exceeds a kept one
    assert (np.where(kept, p, np.inf).min(axis=-1) >= np.where(kept, -np.inf, p).max(axis=-1)).all()
    want = (np.where(kept, p, 0) @ v) / np.where(kept, p, 0).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(sparse.topk_attention(q, k, v, top_k), want, rtol=1e-12, atol=1e-14)


def test_ties_go_to_the_earlier_key_and_minus_inf_is_never_kept():
    got = sparse.topk_mask([[1.0, 2.0, 2.0, -np.inf, 2.0]], 2)
    assert got.tolist() == [[False, True, True, False, False]]
    assert sparse.topk_mask([[-np.inf, 0.0]], 2).tolist() == [[False, True]]


# ---- the error and its bound ----


def _heavy_tailed(rng: np.random.Generator, n: int) -> np.ndarray:
    """Scores with a heavy tail: a few keys far above the rest, as trained heads have."""
    return rng.standard_t(df=2, size=n) * 2.0  # (n,)


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(2, 16),
    d_v=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_the_error_is_eps_times_a_difference_of_averages_and_within_both_bounds(n, d_v, seed, data):
    rng = np.random.default_rng(seed)
    s = _heavy_tailed(rng, n)  # (n,)
    v = rng.normal(size=(n, d_v)) * rng.uniform(0.1, 10)  # (n, d_v)
    top_k = data.draw(st.integers(1, n - 1))
    kept = sparse.topk_mask(s[None], top_k)[0]  # (n,)
    p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()  # (n,)
    e = sparse.topk_error(p, v, kept)
    eps = p[~kept].sum()
    assert e.discarded == pytest.approx(eps, rel=1e-12, abs=1e-300)
    o, o_s = p @ v, (p[kept] @ v[kept]) / p[kept].sum()  # (d_v,) each
    if eps > 0:
        o_rest = (p[~kept] @ v[~kept]) / eps  # (d_v,): attention over the dropped keys
        np.testing.assert_allclose(o - o_s, eps * (o_rest - o_s), rtol=1e-9, atol=1e-12)
    tol = 1e-12 * (1 + np.abs(v).max())
    assert e.error <= e.bound_spread + tol
    assert e.bound_spread <= e.bound + tol
    assert e.bound == pytest.approx(2 * eps * np.linalg.norm(v, axis=-1).max(), rel=1e-12)


def test_two_opposite_values_attain_the_bound():
    for eps in (0.5, 0.25, 1e-3):
        p = np.array([1 - eps, eps])
        v = np.array([[0.0, 3.0], [0.0, -3.0]])
        e = sparse.topk_error(p, v, np.array([True, False]))
        assert e.error == pytest.approx(e.bound, rel=1e-12)
        assert e.error == pytest.approx(e.bound_spread, rel=1e-12)
    error, bound = ds.tight_example()
    assert sp.simplify(error - bound) == 0 and error != 0


def test_the_bound_is_loose_when_the_values_agree():
    # the error is p_S̄ times a distance between averages: equal values give none, whatever p_S̄
    p = np.array([0.4, 0.3, 0.3])
    v = np.array([[1.0, 2.0]] * 3)
    e = sparse.topk_error(p, v, np.array([True, False, False]))
    assert e.error == 0 and e.bound_spread == 0 and e.bound > 1


def test_weights_that_are_exactly_zero_cost_nothing():
    # a key masked with -inf has weight exactly 0: dropping it changes nothing, bit for bit
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(4, 5)), rng.normal(size=(6, 5)), rng.normal(size=(6, 2))
    mask = np.array([True, False, True, True, False, True])
    p = attention_weights(q, k, v, mask)  # (4, 6): zero at the masked keys
    assert (p[:, ~mask] == 0).all()
    kept = np.broadcast_to(mask, p.shape)
    e = sparse.topk_error(p, v, kept)
    assert (e.discarded == 0).all() and (e.error <= 1e-15).all() and (e.bound == 0).all()
    assert np.array_equal(sparse.topk_attention(q, k, v, 4, mask), attention(q, k, v, mask))


def test_identity_proven_in_sympy():
    assert ds.error_identity(3, 1)
    assert ds.error_identity(5, 2)


def test_exact_and_numeric_agree_on_the_worked_example():
    ex = ds.example()
    assert ex.discarded == sp.Rational(1, 4)
    checks = ds.crosscheck_error(ex)
    assert all(c.passed for c in checks)
    assert ex.error <= ex.bound_spread <= ex.bound


def test_a_wrong_exact_value_fails_the_crosscheck():
    ex = ds.example()
    wrong = ex._replace(error=ex.error * 2)
    with pytest.raises(CrossCheckError):
        ds.crosscheck_error(wrong)


# ---- DeepSeek's lightning indexer ----


def test_indexer_scores_are_eq_1_term_by_term():
    rng = np.random.default_rng(0)
    n_q, n_k, h, d = 3, 5, 4, 6
    q, w, k = rng.normal(size=(n_q, h, d)), rng.normal(size=(n_q, h)), rng.normal(size=(n_k, d))
    want = np.array(
        [
            [sum(w[t, j] * max(float(q[t, j] @ k[s]), 0.0) for j in range(h)) for s in range(n_k)]
            for t in range(n_q)
        ]
    )
    np.testing.assert_allclose(sparse.indexer_scores(q, w, k), want, rtol=1e-13)
    # a positive scale on the dot products scales the scores: the ranking is unchanged
    np.testing.assert_allclose(sparse.indexer_scores(q, w, k, scale=0.5), want / 2, rtol=1e-13)


def test_the_indexer_chooses_and_the_attention_scores_weigh():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(7, 3)), rng.normal(size=(7, 3)), rng.normal(size=(7, 2))
    index = rng.normal(size=(7, 7))  # (7, 7): scores unrelated to q kᵀ
    kept = sparse.topk_mask(index, 2, causal_mask(7))
    got = sparse.topk_attention(q, k, v, 2, is_causal=True, index_scores=index)
    np.testing.assert_allclose(got, attention(q, k, v, kept), rtol=1e-13)
    assert not np.allclose(got, sparse.topk_attention(q, k, v, 2, is_causal=True))


@pytest.mark.slow
@pytest.mark.oracle
def test_indexer_top_k_equals_hugging_face_deepseek_v32(torch):
    require_or_skip("transformers", "Hugging Face transformers, the optional oracle, is missing")
    from transformers import DeepseekV32Config
    from transformers.models.deepseek_v32 import modeling_deepseek_v32 as m

    for seed, length, top_k in [(0, 1, 3), (1, 6, 3), (2, 11, 4)]:
        config = DeepseekV32Config(
            hidden_size=16,
            q_lora_rank=8,
            index_n_heads=8,
            index_head_dim=8,
            index_topk=top_k,
            qk_rope_head_dim=4,
            num_attention_heads=2,
        )
        torch.manual_seed(seed)
        indexer = m.DeepseekV32Indexer(config, layer_idx=0).double().eval()
        for p in indexer.parameters():  # nothing left at an identity or zero default
            torch.nn.init.normal_(p, std=0.5)
        x = torch.randn(1, length, 16, dtype=torch.float64)
        q_resid = torch.randn(1, length, 8, dtype=torch.float64)
        rope = m.DeepseekV32RotaryEmbedding(config)
        pos = torch.arange(length)[None]
        cos, sin = (t.double() for t in rope(x, pos))
        allowed = torch.ones(length, length, dtype=torch.bool).tril()[None]  # (1, L, L)
        got = indexer(x, q_resid, (cos, sin), allowed, pos).numpy()[0]  # (L, min(top_k, L))
        # the indexer's queries and keys, as its forward makes them (projections, norm, RoPE)
        with torch.no_grad():
            q = indexer.wq_b(q_resid).view(1, length, 8, 8)
            k = indexer.k_norm(indexer.wk(x)).unsqueeze(2)
            r = config.qk_rope_head_dim
            q_rot, k_rot = m.apply_rotary_pos_emb(q[..., :r], k[..., :r], cos, sin, unsqueeze_dim=2)
            q = torch.cat([q_rot, q[..., r:]], dim=-1)[0].numpy()  # (L, H_I, d_I)
            k = torch.cat([k_rot, k[..., r:]], dim=-1)[0, :, 0].numpy()  # (L, d_I)
            w = (indexer.weights_proj(x) * 8**-0.5)[0].numpy()  # (L, H_I)
        scores = sparse.indexer_scores(q, w, k, scale=8**-0.5)  # (L, L)
        ours = sparse.topk_mask(scores, top_k, causal_mask(length))  # (L, L)
        for t in range(length):
            theirs = [j for j in got[t] if j <= t]  # the masked picks of a short row dropped
            assert len(theirs) == ours[t].sum() == min(top_k, t + 1)
            # equal as multisets of scores: a tie may pick another key of the same score
            np.testing.assert_allclose(
                np.sort(scores[t, theirs]), np.sort(scores[t, ours[t]]), rtol=1e-12
            )


# ---- Native Sparse Attention ----


def test_compression_blocks_and_what_each_query_sees():
    x = np.arange(10.0)[:, None]  # (10, 1): token j holds j
    got = sparse.compress_blocks(x, block=4, stride=2)  # blocks start at 0, 2, 4, 6
    assert got[:, 0].tolist() == [1.5, 3.5, 5.5, 7.5]
    seen = sparse.compressed_block_mask(10, 4, block=4, stride=2)
    # block i is seen from its last token on, i·d + l − 1
    assert seen.sum(axis=0).tolist() == [10 - 3, 10 - 5, 10 - 7, 10 - 9]
    assert sparse.compress_blocks(x[:3], block=4, stride=2).shape == (0, 1)
    linear = sparse.compress_blocks(x, 4, 2, phi=lambda b: b.sum(axis=-2))  # a learned φ's place
    assert linear[:, 0].tolist() == [6.0, 14.0, 22.0, 30.0]


@pytest.mark.parametrize(
    ("block", "stride", "select_block", "n"), [(32, 16, 64, 256), (4, 2, 4, 20), (6, 3, 12, 40)]
)
def test_eq_9_weighs_each_compression_block_by_its_overlap(block, stride, select_block, n):
    assert ds.selection_is_overlap(block, stride, select_block, n)


def test_eq_9_is_p_cmp_itself_when_the_blocks_coincide():
    p = np.random.default_rng(0).random((3, 5))
    np.testing.assert_array_equal(sparse.selection_scores(p, 4, 4, 4, 5), p)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 24), top_n=st.integers(2, 5), seed=st.integers(0, 2**32 - 1))
def test_selected_blocks_are_causal_forced_and_at_most_top_n(n, top_n, seed):
    lp = 4
    n_sel = -(-n // lp)
    p = np.random.default_rng(seed).random((n, n_sel))
    kept = sparse.selected_block_mask(p, top_n, lp, n, n_initial=1, n_local=1)
    assert not (kept & ~causal_mask(n)).any()  # never a future key
    assert kept[:, 0].all()  # the initial block, always
    assert kept[np.arange(n), np.arange(n)].all()  # the query's own block, always
    padded = np.pad(kept, ((0, 0), (0, n_sel * lp - n)))  # (n, n_sel·l')
    blocks = padded.reshape(n, n_sel, lp).any(axis=-1)  # (n, n_sel): blocks read
    assert (blocks.sum(axis=-1) == np.minimum(top_n, np.arange(n) // lp + 1)).all()
    # the free choices are the best-scored eligible blocks
    for t in range(n):
        free = [j for j in range(t // lp + 1) if 0 < j < t // lp]
        chosen = [j for j in free if blocks[t, j]]
        if chosen and len(chosen) < len(free):
            assert min(p[t, chosen]) >= max(p[t, [j for j in free if not blocks[t, j]]])


def test_forced_blocks_must_fit_in_top_n():
    with pytest.raises(ValueError, match="top_n = 2 cannot hold n_initial = 1 and n_local = 2"):
        sparse.selected_block_mask(np.zeros((4, 2)), 2, 2, 4, n_initial=1, n_local=2)


def test_each_gate_alone_gives_its_branch():
    rng = np.random.default_rng(0)
    n = 16
    q, k, v = rng.normal(size=(2, n, 4)), rng.normal(size=(n, 4)), rng.normal(size=(n, 3))
    kw = {"block": 4, "stride": 2, "select_block": 4, "window": 5}

    def run(g, top_n):
        return sparse.nsa_attention(q, k, v, np.tile(g, (2, n, 1)), top_n=top_n, **kw)

    # selected, with as many blocks as there are: causal attention
    np.testing.assert_allclose(run([0, 1, 0], 4).out, attention(q, k, v, is_causal=True))
    np.testing.assert_allclose(
        run([0, 0, 1], 3).out, attention(q, k, v, sliding_window_mask(n, window=5))
    )
    r = run([1, 0, 0], 3)
    k_cmp, v_cmp = sparse.compress_blocks(k, 4, 2), sparse.compress_blocks(v, 4, 2)
    seen = sparse.compressed_block_mask(n, len(k_cmp), 4, 2)
    np.testing.assert_allclose(r.out, attention(q, k_cmp, v_cmp, seen))
    assert (r.out[:, :3] == 0).all()  # no block whole before token 3
    g = rng.random((2, n, 3))
    mixed = sparse.nsa_attention(q, k, v, g, top_n=3, **kw)
    np.testing.assert_allclose(mixed.out, np.einsum("c...d,...c->...d", mixed.branches, g))


# ---- cost ----


def test_decode_cost_is_linear_in_the_keys_and_pairs_match_the_formula():
    c = sparse.DEEPSEEK_V32
    latent = c["kv_lora_rank"] + c["qk_rope_head_dim"]
    kw = {"n_heads": c["num_attention_heads"], "d_k": latent, "d_v": c["kv_lora_rank"]}
    one = sparse.decode_cost(1, cache_dim=latent, **kw)
    big = sparse.decode_cost(1000, cache_dim=latent, **kw)
    assert big == (1000 * one.flops, 1000 * one.n_bytes)
    idx = sparse.indexer_cost(1, index_heads=c["index_n_heads"], index_dim=c["index_head_dim"])
    assert idx.flops < one.flops and idx.n_bytes < one.n_bytes  # the indexer is the cheap part
    assert ds.pairs_holds(10)
    for n in range(1, 9):
        for k in range(1, 10):
            brute = sum(min(t, k) for t in range(1, n + 1))
            assert sparse.causal_pairs(n, k) == brute
        assert sparse.causal_pairs(n) == int(causal_mask(n).sum())


# ---- bad input ----


def test_bad_input_names_what_is_wrong():
    q = k = v = np.eye(3)
    with pytest.raises(ValueError, match="top_k must be a positive integer, got 0"):
        sparse.topk_attention(q, k, v, 0)
    with pytest.raises(TypeError, match=r"top_k must be a positive integer, got 1\.5"):
        sparse.topk_mask(np.eye(3), 1.5)
    with pytest.raises(TypeError, match="mask must be boolean"):
        sparse.topk_attention(q, k, v, 1, np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"index_scores must have the scores' shape \(3, 3\)"):
        sparse.topk_attention(q, k, v, 1, index_scores=np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"not NaN or \+inf"):
        sparse.topk_mask([[0.0, np.nan]], 1)
    with pytest.raises(ValueError, match=r"w_index must have shape \(\.\.\., L_q, H_I\)"):
        sparse.indexer_scores(np.ones((2, 3, 4)), np.ones((2, 2)), np.ones((5, 4)))
    with pytest.raises(ValueError, match="q_index and k_index must share d_I"):
        sparse.indexer_scores(np.ones((2, 3, 4)), np.ones((2, 3)), np.ones((5, 3)))
    with pytest.raises(ValueError, match="each row summing to 1"):
        sparse.topk_error([0.5, 0.6], np.eye(2), np.array([True, False]))
    with pytest.raises(TypeError, match="kept must be boolean"):
        sparse.topk_error([0.5, 0.5], np.eye(2), np.array([1, 0]))
    with pytest.raises(ValueError, match="must keep some weight"):
        sparse.topk_error([1.0, 0.0], np.eye(2), np.array([False, True]))
    with pytest.raises(ValueError, match=r"v must have L_k = 2 rows"):
        sparse.topk_error([0.5, 0.5], np.eye(3), np.array([True, False]))
    with pytest.raises(ValueError, match="stride must be at most block"):
        sparse.compress_blocks(np.ones((8, 2)), block=2, stride=4)
    with pytest.raises(ValueError, match=r"eq\. \(9\) needs stride d dividing"):
        sparse.selection_scores(np.ones((2, 3)), block=4, stride=3, select_block=6, n_select=2)
    with pytest.raises(ValueError, match="gates must lie in"):
        sparse.nsa_attention(
            q, k, v, np.full((3, 3), 2.0), block=2, stride=1, select_block=2, top_n=3, window=2
        )
    with pytest.raises(ValueError, match=r"gates must have shape \(\.\.\., L, 3\)"):
        sparse.nsa_attention(
            q, k, v, np.ones((3, 2)), block=2, stride=1, select_block=2, top_n=3, window=2
        )
    with pytest.raises(ValueError, match="n_k must be a non-negative integer"):
        sparse.decode_cost(-1, n_heads=1, d_k=1, d_v=1, cache_dim=2)
