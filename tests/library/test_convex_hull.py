"""The convex hull of the value rows (derivations.convex_hull): stricter than per-column
ranges; every attention output lies in it, a fully masked row (zeros) need not."""

from __future__ import annotations

import numpy as np
import pytest

from attention_math import numeric
from attention_math.derivations.convex_hull import in_column_ranges, in_hull


def test_hull_test_is_stricter_than_column_ranges() -> None:
    segment = [[0.0, 0.0], [1.0, 1.0]]
    assert in_column_ranges(segment, [1.0, 0.0]) and not in_hull(segment, [1.0, 0.0])
    assert in_hull(segment, [0.25, 0.25])
    triangle = [[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]]
    assert in_hull(triangle, [1.0, 1.0]) and not in_hull(triangle, [3.0, 3.0])
    assert in_hull(triangle, [4.0, 0.0])  # a vertex is in the hull


def test_attention_outputs_in_hull_and_fully_masked_row_is_not() -> None:
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 5, 3))  # (2, L, d_k)
    v = 1 + rng.random((5, 3))  # (L, d_v): positive, so 0 lies outside their hull
    mask = np.ones((5, 5), dtype=bool)  # (L_q, L_k)
    mask[2] = False
    out = numeric.attention(q, k, v, mask=mask)  # (L, d_v)
    assert [in_hull(v, o) for o in out] == [True, True, False, True, True]


def test_in_hull_rejects_mismatched_point() -> None:
    with pytest.raises(ValueError, match="coordinates"):
        in_hull([[0.0, 0.0], [1.0, 1.0]], [1.0, 2.0, 3.0])
