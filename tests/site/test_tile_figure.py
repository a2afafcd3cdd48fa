"""The online softmax's figures: the tile grid (the causal tiles it skips and the state it
carries) and the carried state (λ falls only when the running maximum moves)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_site.figures.diagrams import tile_grid


@pytest.mark.parametrize(("length", "block"), [(8, 2), (6, 3)])
def test_the_tiles_above_the_diagonal_are_marked_skipped(length: int, block: int) -> None:
    n = length // block
    text = tile_grid(length=length, block_size=block)
    assert text.count(">skipped<") == n * (n - 1) // 2
    assert text.count(">masked in part<") == n
    assert text.count("λ = ") == n  # the last query's state after each of its n tiles


def test_a_length_that_is_not_a_multiple_of_the_block_is_refused() -> None:
    with pytest.raises(ValueError, match="length 7 must be a multiple of block_size 2"):
        tile_grid(length=7, block_size=2)


def test_online_softmax_figure_shows_lambda_falling_when_the_maximum_moves():
    from attention_site.figures.online_state import state_steps

    _, steps = state_steps()
    falls = [s for s in steps if s["ell"] < s["ell_old"]]
    assert falls and all(s["m"] > s["m_old"] for s in falls)  # λ falls only when m moves
    assert all(np.isclose(s["carried"] + s["new"], s["ell"]) for s in steps)
