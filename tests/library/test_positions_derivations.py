"""The exact derivations of chapter "Positions and decoding", cross-checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from attention_math import numeric, positional
from attention_math.crosscheck import crosscheck
from attention_math.decoding import KVCache
from attention_math.derivations import block, decoding, gqa, sliding_window
from attention_math.derivations import positional as dpos
from attention_math.multihead import AttentionParams, multi_head_attention


def test_sinusoidal_exact_matches_numpy():
    crosscheck(dpos.sinusoidal_exact(6, 6, base=100), positional.sinusoidal(6, 6, base=100.0))


def test_shift_relative_and_conjugacy_hold():
    assert dpos.sinusoidal_shift_holds(2)
    assert dpos.rope_relative_holds(2) and dpos.rope_relative_holds(2, interleaved=True)
    assert dpos.rope_keeps_norms(2)
    assert dpos.conventions_conjugate(3)


def test_shift_matrix_is_not_the_identity_and_depends_on_delta_only():
    m = dpos.shift_matrix(sp.Integer(3), [sp.Integer(1)])
    pe = dpos.sinusoidal_exact(8, 2, base=10)  # one frequency: ω = 1
    for p in range(5):
        assert sp.simplify(sp.expand_trig(m * pe.row(p).T - pe.row(p + 3).T)) == sp.zeros(2, 1)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rope_matrix_matches_numpy_rope(interleaved):
    d, base = 4, 100
    thetas = [sp.Integer(base) ** sp.Rational(-2 * i, d) for i in range(d // 2)]
    x = sp.Matrix([[1, -2, 3, 5], [2, 0, -1, 4], [7, 1, 1, -3]])
    exact = sp.Matrix.vstack(
        *(
            (dpos.rope_matrix(p, thetas, interleaved=interleaved) * x.row(p).T).T
            for p in range(x.rows)
        )
    )
    got = positional.rope(np.array(x, dtype=float), base=float(base), interleaved=interleaved)
    crosscheck(exact, got)


def test_layout_mismatch_is_large_and_fixed_by_permuting():
    r = dpos.layout_mismatch()
    assert r["wrong layout"] > 0.1 and r["permuted weights"] < 1e-12
    assert r["wrong layout"] > r["largest score"] / 2  # as large as the scores themselves


def test_alibi_exact():
    assert dpos.alibi_slopes_exact(8) == [sp.Rational(1, 2**i) for i in range(1, 9)]
    crosscheck(sp.Matrix([dpos.alibi_slopes_exact(12)]), positional.alibi_slopes(12))
    assert dpos.alibi_toeplitz(6, 5)
    assert dpos.alibi_toeplitz(12, 24)  # irrational slopes: NumPy is 1 ulp off somewhere
    m, i = sp.Symbol("m", positive=True), sp.Symbol("i", integer=True, nonnegative=True)
    summed, closed = dpos.alibi_row_normaliser(m, i)
    assert sp.simplify(summed - closed) == 0


def test_alibi_weights_with_equal_content_scores_match_numpy():
    n_heads, length = 4, 5
    bias = positional.alibi_bias(n_heads, length)
    q = np.zeros((n_heads, length, 2))  # equal content scores: only the bias matters
    v = np.eye(length)  # the output rows are the weights
    out = numeric.attention(q, q, v, mask=bias + np.where(numeric.causal_mask(length), 0, -np.inf))
    for h, m in enumerate(dpos.alibi_slopes_exact(n_heads)):
        row = dpos.alibi_row_weights(m, length - 1)
        crosscheck(row, out[h, -1])


def test_kv_cache_exactness_and_counterexample():
    assert decoding.cache_rows_exact(3)
    assert not decoding.append_changes_earlier_rows(3, is_causal=True)
    assert decoding.append_changes_earlier_rows(3, is_causal=False)
    c = decoding.counterexample()
    assert c["row 1, 2 tokens"] != c["row 1, 3 tokens"]
    assert c["row 1, 3 tokens, causal"] == sp.Matrix([[1]])
    q, k, v = (np.array(c[n], dtype=float) for n in "qkv")
    crosscheck(c["row 1, 3 tokens"], numeric.attention(q, k, v, scale=1.0)[0])
    crosscheck(c["row 1, 2 tokens"], numeric.attention(q[:2], k[:2], v[:2], scale=1.0)[0])
    assert decoding.decode_step_is_merge(3)


def test_cache_formulas_for_real_models():
    llama = next(m for m in decoding.MODELS if m.name == "Llama 2 7B")
    s = decoding.symbols()
    size = decoding.cache_bytes().subs(
        {
            s["n_layers"]: llama.n_layers,
            s["h_kv"]: llama.n_kv_heads,
            s["d_head"]: llama.d_head,
            s["L"]: 4096,
            s["n_bytes"]: 2,
        }
    )
    assert size == 2**31  # 2 GiB in float16: the well-known figure
    lead_cached = sp.Poly(decoding.generation_flops(cached=True), s["L"])
    lead_full = sp.Poly(decoding.generation_flops(cached=False), s["L"])
    assert (lead_cached.degree(), lead_full.degree()) == (2, 3)


def test_decode_flops_agree_with_cost_module_at_t_equal_one():
    from attention_math.derivations import cost

    one_token = cost.total_flops().subs({cost.L_q: 1, cost.L_k: 1})
    assert sp.expand(decoding.decode_flops().subs(decoding.t, 1) - one_token) == 0


def test_softmax_one_and_eviction():
    assert decoding.softmax_one_is_padded_softmax(3)
    z = [sp.log(4), 0, sp.log(3)]
    w, factor = decoding.evicted_weights(z, evict=[0])
    assert factor == 2 and w == sp.Matrix([[sp.Rational(1, 4), sp.Rational(3, 4)]])
    # the rolling cache drops exactly those tokens: its weights are the renormalised ones
    cache = KVCache(window=2)
    for j, s in enumerate([np.log(4), 0.0, np.log(3)]):
        cache.append(np.array([s]), np.eye(3)[j])
    crosscheck(
        sp.Matrix([[0, sp.Rational(1, 4), sp.Rational(3, 4)]]), cache.attend([1.0], scale=1.0)
    )


def test_sliding_window_receptive_field_and_band():
    assert sliding_window.receptive_field_holds(4, (1, 2, 3, 5))
    formula = sliding_window.band_entries_formula()
    for length, win in ((8, 3), (10, 10), (12, 1)):
        want = formula.subs({sliding_window.L: length, sliding_window.w: win})
        assert sliding_window.band_entries(length, win) == want


def test_gqa_tying_exact_and_numpy_matches_exact():
    assert gqa.tying_holds(2, 1)
    x = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    w_q = sp.Matrix([[1, 0, 2, 1], [0, 1, 1, 0]])  # 4 heads of width 1
    w_k = sp.Matrix([[1, 0], [1, 1]])  # 2 kv heads
    w_v = sp.Matrix([[2, 0], [0, 1]])
    exact = gqa.gqa_exact(x, w_q, w_k, w_v, 4, 2)
    f = [np.array(a, dtype=float) for a in (x, w_q, w_k, w_v)]
    got = multi_head_attention(f[0], f[0], AttentionParams(*f[1:], np.eye(4)), 4, n_kv_heads=2)
    crosscheck(exact, got)
    ratio = sp.simplify(gqa.cache_per_token().subs(gqa.h_kv, gqa.h) / gqa.cache_per_token())
    assert ratio == gqa.h / gqa.h_kv


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_layer_norm_fixes_the_norm_and_the_score_scale():
    assert block.norm_after_layer_norm(3) == 3
    assert block.mean_after_layer_norm(3) == 0 and block.mean_after_layer_norm(5) == 0
    r = block.scores_scale(sp.Matrix([[1, 0, 2], [0, 1, 1]]))
    assert r["factor without LayerNorm"] == sp.Symbol("c", positive=True) ** 2
    assert r["factor with LayerNorm"] == 1
    from attention_math.block import layer_norm

    x = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
    y = layer_norm(x, np.ones(3), np.zeros(3), eps=0.0)
    crosscheck(r["scores after LayerNorm"], y @ y.T / np.sqrt(3))


def test_rope_frequencies_correctly_rounded_only_for_powers_of_two():
    """The RoPE page once said rope_frequencies rounds every θ_i once, correctly: true when d
    is a power of two (the exponent −2i/d is then exact), not for d = 80 (23 of 40 differ)."""
    from attention_math.derivations.positional import theta_rounding

    for d in (2, 8, 64, 128, 256):
        assert theta_rounding(d)["differ"] == 0
    assert theta_rounding(80) == {"pairs": 40, "differ": 23}
    assert theta_rounding(96)["differ"] > 0


def test_float32_path_gap_grows_with_position():
    from attention_math.derivations.positional import float32_path_gap

    near, far = float32_path_gap(64, 128), float32_path_gap(64, 8192)
    assert far["between"] > 20 * near["between"]
    assert far["ours_exact"] <= 0.5 and near["ours_exact"] <= 0.5
    with pytest.raises(ValueError, match="p_max"):
        float32_path_gap(64, 0)
