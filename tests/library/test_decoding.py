"""Decoding: the sliding-window mask, the KV cache and incremental attention."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.decoding import KVCache, incremental_attention
from attention_math.numeric import attention, causal_mask, sliding_window_mask


def test_sliding_window_hand_case():
    want = np.array(
        [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1]]
    )
    np.testing.assert_array_equal(sliding_window_mask(5, window=3), want.astype(bool))
    np.testing.assert_array_equal(sliding_window_mask(2, 4, window=1), np.eye(2, 4, dtype=bool))


@pytest.mark.parametrize(("n_q", "n_k"), [(4, 4), (3, 6), (6, 3)])
def test_large_window_is_causal(n_q, n_k):
    for w in (max(n_q, n_k), 100):
        np.testing.assert_array_equal(
            sliding_window_mask(n_q, n_k, window=w), causal_mask(n_q, n_k)
        )
    assert (sliding_window_mask(n_q, n_k, window=2).sum(axis=1) <= 2).all()


@pytest.mark.parametrize(
    ("bad", "exc"),
    [(0, ValueError), (-1, ValueError), (2.5, TypeError), (True, TypeError), (None, TypeError)],
)
def test_sliding_window_bad_window(bad, exc):
    with pytest.raises(exc, match="window must be a positive integer"):
        sliding_window_mask(4, window=bad)


def test_cache_rolls_and_keeps_the_last_tokens_in_order():
    cache = KVCache(window=3)
    for t in range(7):
        cache.append(np.array([t, -t], dtype=float), np.array([10.0 * t]))
    assert len(cache) == 3 and cache.n_seen == 7
    np.testing.assert_array_equal(cache.positions, [4, 5, 6])
    np.testing.assert_array_equal(cache.keys[:, 0], [4, 5, 6])
    np.testing.assert_array_equal(cache.values[:, 0], [40, 50, 60])


def test_cache_grows_past_its_first_capacity():
    cache = KVCache()
    rng = np.random.default_rng(0)
    ks = rng.standard_normal((40, 2, 3))  # (L, heads, d_k): leading axes are kept
    for t in range(40):
        cache.append(ks[t], ks[t, :, :1])
    assert len(cache) == 40
    np.testing.assert_array_equal(cache.keys, np.swapaxes(ks, 0, 1))


def test_cache_bad_input():
    with pytest.raises(ValueError, match="window must be a positive integer or None"):
        KVCache(window=0)
    cache = KVCache()
    with pytest.raises(ValueError, match="the cache is empty"):
        cache.attend(np.ones(2))
    cache.append(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"holds keys of shape \(2,\)"):
        cache.append(np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match="k and v must share their leading axes"):
        cache.append(np.ones((2, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="q and k must share d_k"):
        cache.attend(np.ones(5))


def test_incremental_hand_case():
    # one-dimensional keys and queries of 0: every visible key has equal weight
    q = np.zeros((4, 1))
    k = np.zeros((4, 1))
    v = np.arange(4.0)[:, None]
    np.testing.assert_array_equal(incremental_attention(q, k, v)[:, 0], [0, 0.5, 1, 1.5])
    np.testing.assert_array_equal(
        incremental_attention(q, k, v, window=2)[:, 0], [0, 0.5, 1.5, 2.5]
    )


def test_incremental_needs_self_attention():
    with pytest.raises(ValueError, match="decoding is self-attention"):
        incremental_attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 3)))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 24),  # L
    st.integers(1, 6),  # d_k
    st.integers(1, 5),  # d_v
    st.one_of(st.none(), st.integers(1, 30)),  # window
    st.sampled_from([np.float64, np.float32]),
    st.booleans(),  # batch and head axes
    st.integers(0, 2**31 - 1),
)
def test_incremental_equals_full_masked_attention(L, d_k, d_v, window, dtype, batched, seed):
    rng = np.random.default_rng(seed)
    lead = (2, 3) if batched else ()
    q = rng.standard_normal((*lead, L, d_k)).astype(dtype)
    k = (rng.standard_normal((*lead, L, d_k)) * rng.uniform(0.5, 3)).astype(dtype)
    v = rng.standard_normal((*lead, L, d_v)).astype(dtype)
    mask = causal_mask(L) if window is None else sliding_window_mask(L, window=window)
    full = attention(q, k, v, mask=mask)
    inc = incremental_attention(q, k, v, window=window)
    assert inc.dtype == dtype and inc.shape == full.shape
    # normwise per row, in units of the format's ε (values are O(1))
    err = np.abs(inc - full).max() / np.finfo(dtype).eps / max(1.0, np.abs(v).max())
    assert err <= 8


def test_appending_a_token_leaves_earlier_rows_unchanged_only_with_the_mask():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((5, 3)) for _ in range(3))
    short = attention(q[:4], k[:4], v[:4], mask=causal_mask(4))
    long = attention(q, k, v, mask=causal_mask(5))
    np.testing.assert_allclose(short, long[:4], rtol=1e-14, atol=1e-15)
    unmasked_short = attention(q[:4], k[:4], v[:4])
    unmasked_long = attention(q, k, v)
    assert not np.allclose(unmasked_short, unmasked_long[:4])


def test_sliding_window_edge_differs_by_one_key():
    from attention_math.derivations.sliding_window import edge_conventions
    from attention_math.numeric import sliding_window_mask

    for length, w in ((8, 3), (20, 5), (6, 1)):
        ours, inclusive = edge_conventions(length, w).values()
        assert (ours == sliding_window_mask(length, window=w)).all()
        assert (inclusive == sliding_window_mask(length, window=w + 1)).all()
        assert ours[-1].sum() == w and inclusive[-1].sum() == w + 1
    with pytest.raises(ValueError, match="window"):
        edge_conventions(4, 0)


def test_sinks_first_token_and_positions_within_the_cache():
    from attention_math.derivations.decoding import streaming_positions
    from attention_math.numeric import causal_mask

    seen = causal_mask(6).sum(axis=0)
    assert seen[0] == 6 and (seen[1:] < 6).all()
    kept = streaming_positions(9, 4, 3)  # the paper's example: tokens 0-3 and 6-8 cached
    assert [t for t, _ in kept] == [0, 1, 2, 3, 6, 7, 8]
    assert [c for _, c in kept] == list(range(7))
