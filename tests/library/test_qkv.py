"""What distinguishes Q, K and V (derivations.qkv): queries and keys enter the scores only
through a rank-d_k bilinear form; the values enter linearly."""

from __future__ import annotations

import pytest


# (4, 3): the old rank, read at one integer point, was 2 there (W_K lost rank at that point)
@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
@pytest.mark.parametrize(("d_model", "d_k"), [(4, 1), (4, 3)])  # (3, 2): the doctest
def test_queries_and_keys_enter_only_through_a_rank_d_k_form(d_model: int, d_k: int) -> None:
    from attention_math.derivations.qkv import qkv_roles

    r = qkv_roles(d_model=d_model, d_k=d_k)
    assert r.scores_through_form and r.minors_vanish and r.invariant and r.linear_in_v
    assert r.rank == d_k and r.form.shape == (d_model, d_model)


def test_qkv_roles_rejects_d_k_not_below_d_model() -> None:
    from attention_math.derivations.qkv import qkv_roles

    with pytest.raises(ValueError, match="d_k"):
        qkv_roles(d_model=2, d_k=2)
