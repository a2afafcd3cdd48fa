"""The exercises, chapter by chapter. Every reference answer is computed, never typed.

Inputs are small integer or logarithmic matrices so that the exact answers stay short
(``softmax(0, log 2, log 3) = (1/6, 1/3, 1/2)``). Symbolic exercises declare the symbol
names a learner may type.
"""

from __future__ import annotations

from functools import cache

from attention_math.exercises.chapters import (
    examples,
    forward,
    gradients,
    masks,
    multihead,
    positions,
    scaling,
    softmax,
    views,
)
from attention_math.exercises.model import Exercise

__all__ = ["catalogue"]

_CHAPTERS = (
    forward,
    examples,
    scaling,
    masks,
    softmax,
    multihead,
    gradients,
    positions,
    views,
)


@cache
def catalogue() -> dict[str, Exercise]:
    """Every exercise by id, in reading order (built once, on first use).

    Examples:
        >>> from attention_math.exercises.catalogue import catalogue
        >>> len(catalogue()) >= 20
        True
    """
    out: dict[str, Exercise] = {}
    for chapter in _CHAPTERS:
        for ex in chapter.exercises():
            if ex.id in out:
                raise ValueError(f"duplicate exercise id {ex.id!r}")
            out[ex.id] = ex
    return out
