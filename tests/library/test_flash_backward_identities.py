"""The exact identities of the FlashAttention backward page can come out False.

``derivations.flash_backward`` decides them with ``symbolic.is_zero`` (exponentials as
powers of fresh symbols, ``exp(c·log X)`` as ``X^c``, then cancelled), not ``simplify``.
"""

from __future__ import annotations

import sympy as sp

from attention_math.derivations import flash_backward as fb
from attention_math.symbolic import is_zero


def test_the_identities_hold_on_the_page_case():
    c = fb.case()
    assert fb.lse_recomputes_softmax(c) and fb.d_two_ways(c)[1]
    assert all(fb.tiles_sum_to_full(c).values())


def test_tiles_that_miss_a_key_do_not_sum_to_the_full_gradients():
    found = fb.tiles_sum_to_full(fb.case(), k_tiles=((0,), (1,)))  # key 3 in no tile
    assert found["dS"] is False and found["dK"] is False and found["dV"] is False


def test_is_zero_reads_exp_of_a_log_exactly():
    x, y = sp.symbols("x y", real=True)
    s = sp.exp(x) + sp.exp(y)
    assert is_zero(sp.exp(x - sp.log(s)) * s - sp.exp(x))
    assert is_zero(sp.exp(2 * x - 2 * sp.log(s)) - (sp.exp(x) / s) ** 2)
    assert not is_zero(sp.exp(x - sp.log(s)) - sp.exp(x))
    assert not is_zero(sp.exp(x - sp.log(s)) - sp.exp(y) / s)
