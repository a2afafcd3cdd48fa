"""The exercises, chapter by chapter. Every reference answer is computed, never typed.

Inputs are small integer or logarithmic matrices so that the exact answers stay short
(``softmax(0, log 2, log 3) = (1/6, 1/3, 1/2)``). Symbolic exercises declare the symbol
names a learner may type.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from attention_math.exercises.model import CHAPTERS, Exercise

__all__ = ["by_chapter", "catalogue", "find"]


def _exercises(name: str) -> list[Exercise]:
    """What ``exercises()`` of chapter ``name``'s module (``exercises/chapters/<name>.py``)
    returns: the chapters are the keys of `CHAPTERS`, listed there only."""
    module: ModuleType = importlib.import_module(f"attention_math.exercises.chapters.{name}")
    made: list[Exercise] = module.exercises()
    return made


#: the chapters built so far in this process, by name (``by_chapter`` builds each once)
_BUILT: dict[str, dict[str, Exercise]] = {}


def by_chapter(name: str) -> dict[str, Exercise]:
    """The exercises of one chapter by id, in reading order, built without the others.

    A page's answer boxes all belong to one chapter: the checker in the reader's browser
    builds that chapter only (the others' reference answers can take seconds of SymPy).

    Examples:
        >>> from attention_math.exercises.catalogue import by_chapter
        >>> "softmax-logs" in by_chapter("softmax"), "softmax-logs" in by_chapter("masks")
        (True, False)
    """
    if name not in CHAPTERS:
        raise ValueError(f"unknown chapter {name!r}; chapters: {', '.join(CHAPTERS)}")
    if name not in _BUILT:
        out: dict[str, Exercise] = {}
        for ex in _exercises(name):
            if ex.id in out or ex.chapter != name:
                raise ValueError(f"exercise {ex.id!r}: duplicate, or not of chapter {name!r}")
            out[ex.id] = ex
        _BUILT[name] = out
    return _BUILT[name]


def find(exercise_id: str) -> Exercise | None:
    """The exercise with id ``exercise_id``, or None: the chapters built already are searched
    first, then the others in reading order until it is found, so that a page of one chapter
    builds that chapter only (``catalogue`` checks that no id is in two chapters).

    Examples:
        >>> from attention_math.exercises.catalogue import find
        >>> find("softmax-logs").chapter, find("no-such-exercise")
        ('softmax', None)
    """
    for name in [*_BUILT, *(n for n in CHAPTERS if n not in _BUILT)]:
        found = by_chapter(name).get(exercise_id)
        if found is not None:
            return found
    return None


@cache
def catalogue() -> dict[str, Exercise]:
    """Every exercise by id, in reading order (built once, on first use).

    Examples:
        >>> from attention_math.exercises.catalogue import catalogue
        >>> len(catalogue()) >= 20
        True
    """
    out: dict[str, Exercise] = {}
    for name in CHAPTERS:
        for ex in by_chapter(name).values():
            if ex.id in out:
                raise ValueError(f"duplicate exercise id {ex.id!r}")
            out[ex.id] = ex
    return out
