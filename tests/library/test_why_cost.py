"""The cost model: symbolic FLOPs and memory, checked against NumPy's own counts."""

import numpy as np
import sympy as sp

from attention_math.derivations import cost
from attention_math.derivations.cost import L, L_k, L_q, d_k, d_model, d_v, h
from attention_math.derivations.multihead import shape_trace
from attention_math.multihead import AttentionParams

SIZES = {L_q: 3, L_k: 5, d_k: 4, d_v: 2, h: 2, d_model: 6}


def _step(name):
    return next(s for s in cost.STEPS if s.name == name)


def test_matmul_flops_match_einsum_path():
    z = np.zeros
    cases = {
        "scores": ("hqd,hkd->hqk", z((2, 3, 4)), z((2, 5, 4))),
        "weighted sum": ("hqk,hkv->hqv", z((2, 3, 5)), z((2, 5, 2))),
        "query projection": ("qm,md->qd", z((3, 6)), z((6, 8))),
        "value projection": ("km,md->kd", z((5, 6)), z((6, 4))),
        "output projection": ("qd,dm->qm", z((3, 4)), z((4, 6))),
    }
    for name, (spec, a, b) in cases.items():
        report = np.einsum_path(spec, a, b, optimize="greedy")[1]
        naive = float(next(x for x in report.splitlines() if "Naive FLOP" in x).split(":")[1])
        assert _step(name).flops.subs(SIZES) == int(naive), name


def test_memory_matches_the_arrays_the_code_builds():
    rng = np.random.default_rng(0)
    x_q, x_kv = rng.standard_normal((3, 6)), rng.standard_normal((5, 6))
    w_q, w_k, w_v = (rng.standard_normal((6, n)) for n in (8, 8, 4))
    w_o = rng.standard_normal((4, 6))
    trace = dict(shape_trace(x_q, x_kv, AttentionParams(w_q, w_k, w_v, w_o), 2))
    assert np.prod(trace["scores Q⁽ⁱ⁾K⁽ⁱ⁾ᵀ per head"]) == _step("scores").memory.subs(SIZES)
    assert np.prod(trace["Q split into heads"]) == _step("query projection").memory.subs(SIZES)
    assert np.prod(trace["heads softmax(·) V⁽ⁱ⁾"]) == _step("weighted sum").memory.subs(SIZES)
    assert np.prod(trace["output Concat · W_O"]) == _step("output projection").memory.subs(SIZES)


def test_quadratic_term_identified():
    deg, coeff = cost.leading_in_L(cost.total_flops())
    assert deg == 2
    assert sp.expand(coeff - h * (2 * d_k + 2 * d_v + 7)) == 0
    deg_m, coeff_m = cost.leading_in_L(cost.total_memory())
    assert (deg_m, coeff_m) == (2, h)


def test_projections_are_linear_in_L():
    for name in ("query projection", "key projection", "value projection", "output projection"):
        e = _step(name).flops.subs({L_q: L, L_k: L})
        assert sp.degree(e, L) == 1


def test_the_crossover_is_twice_the_width_for_attention_six_times_with_the_feed_forward():
    alone, layer = cost.crossover(), cost.crossover(with_feed_forward=True)
    for dm, hh in ((512, 8), (4096, 32), (768, 12)):
        at = {d_model: dm, h: hh}
        # the quadratic and the linear FLOPs are equal at L*, by direct substitution
        f = sp.expand(cost.total_flops().subs({L_q: L, L_k: L, d_k: dm / hh, d_v: dm / hh}))
        f = f.subs(at)
        quad, lin = f.coeff(L, 2), f.coeff(L, 1)
        assert sp.simplify(quad * alone.subs(at) - lin) == 0
        ff = cost.feed_forward_flops().subs({L_q: L, d_model: dm, cost.d_ff: 4 * dm})
        assert sp.simplify(quad * layer.subs(at) - (lin + ff.coeff(L, 1))) == 0
        assert layer.subs(at) > 2.9 * alone.subs(at)  # the MLP's linear FLOPs triple L*
    assert sp.limit(alone / d_model, d_model, sp.oo) == 2
    assert sp.limit(layer / d_model, d_model, sp.oo) == 6
