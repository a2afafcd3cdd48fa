"""The online softmax's tile grid: the causal tiles it skips and the state it carries."""

from __future__ import annotations

import pytest

from attention_site.figures.tiles import tile_grid


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
