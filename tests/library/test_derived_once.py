"""The derivations and figures kept in memory (`derived_once`, `drawn_once`): a second call
gives the same object, and what is kept cannot be changed by a caller; a check that fails
still raises, every time, and a list result is a new list."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from attention_math import _once, latent, precision
from attention_math.derivations import _once as derivations_once
from attention_math.derivations import gates, sparse, ssd


def test_the_derivations_import_the_one_derived_once():
    assert derivations_once.derived_once is _once.derived_once
    assert derivations_once.frozen is _once.frozen


def test_the_absorption_proof_is_kept_and_its_matrices_cannot_change():
    sizes = {"length": 2, "d_c": 2, "d_nope": 1, "d_rope": 1, "d_v": 1, "hidden": 1, "n_heads": 1}
    p = latent.absorption_proof(**sizes)
    assert latent.absorption_proof(**dict(reversed(sizes.items()))) is p  # keyed by value
    assert latent.absorption_proof(**{**sizes, "length": 3}) is not p
    with pytest.raises(TypeError):
        p.w_q_uk[0, 0] = 1
    with pytest.raises(TypeError):
        p.scores[0, 0] = 0
    assert (p.scores - p.scores_absorbed).expand().is_zero_matrix


def test_rope_breaks_absorption_is_kept_immutable():
    m, dm = latent.rope_breaks_absorption(d_q=1, d_c=1)
    assert latent.rope_breaks_absorption(d_q=1, d_c=1)[0] is m
    with pytest.raises(TypeError):
        dm[0, 0] = 0
    assert sp.diff(m[0, 0], sp.Symbol("Delta", real=True)) == dm[0, 0]


def test_the_intensity_formula_is_kept_and_bad_kinds_raise_each_time():
    assert latent.intensity_formula("mla") is latent.intensity_formula("mla")
    for _ in range(2):  # an error is not kept: the check runs again
        with pytest.raises(ValueError, match="kind must be one of"):
            latent.intensity_formula("mlx")


def test_the_rotation_proof_raises_on_bad_input_each_time():
    assert precision.rotation_keeps_scores(2) is True
    for _ in range(2):
        with pytest.raises(ValueError):
            precision.rotation_keeps_scores(3)


def test_ssd_results_are_kept_by_their_sizes():
    assert ssd.off_diagonal_rank(4, 2, 1) == 1
    assert ssd.off_diagonal_rank(6, 3, 2) == 2  # another key, another derivation
    assert ssd.chunked_equals_masked_attention(4, 2, 1) is True


def test_the_sink_row_is_a_new_list_each_call_over_one_kept_derivation():
    z, s = [0, sp.log(2)], sp.log(5)
    first = gates.sink_softmax(z, s)
    first[0] = sp.Integer(7)  # the caller's own list
    again = gates.sink_softmax(z, s)
    assert again == [sp.Rational(1, 8), sp.Rational(1, 4)]
    assert again is not first
    assert gates.sink_weight(z, s) is gates.sink_weight(list(z), s)
    check = gates.crosscheck_sink(z, s)
    assert gates.crosscheck_sink(z, s) is check and check.passed


def test_sparse_derivations_are_kept_and_bad_sizes_raise_each_time():
    assert sparse.tight_example() is sparse.tight_example()
    assert sparse.pairs_formula() is sparse.pairs_formula()
    for _ in range(2):
        with pytest.raises(ValueError, match="keep between 1 and n − 1 keys"):
            sparse.error_identity(3, 3)


def test_a_figure_is_drawn_once_for_equal_content():
    from attention_math.plot.precision import rotation_figure
    from attention_math.plot.sparse import nsa_figure

    e = precision.outlier_errors(8, [1.0, 10.0], n=8, d=8, seeds=1)
    svg = rotation_figure([("int8", e)])
    again = precision.outlier_errors(8, [1.0, 10.0], n=8, d=8, seeds=1)  # equal, not the same
    assert again is not e and rotation_figure([("int8", again)]) is svg
    mask = np.tri(4, dtype=bool)
    drawn = nsa_figure({"window": mask})
    assert nsa_figure({"window": mask.copy()}) is drawn
    assert nsa_figure({"window": ~mask}) is not drawn
