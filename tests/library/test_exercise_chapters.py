"""One chapter built alone holds what the whole catalogue holds for it (the browser's
checker builds only the chapter of the page it is on), and a check names it or not alike."""

from __future__ import annotations

import pkgutil

import pytest

from attention_math.exercises import chapters
from attention_math.exercises.catalogue import by_chapter, catalogue
from attention_math.exercises.live import check_text
from attention_math.exercises.model import CHAPTERS


def test_each_chapter_alone_is_its_part_of_the_catalogue() -> None:
    whole = catalogue()
    for name in CHAPTERS:
        alone = by_chapter(name)
        assert list(alone) == [i for i, ex in whole.items() if ex.chapter == name], name
        assert all(whole[i] is ex for i, ex in alone.items())
    assert sum(len(by_chapter(name)) for name in CHAPTERS) == len(whole)


def test_a_check_says_the_same_with_or_without_its_chapter() -> None:
    for exercise_id, text in [
        ("softmax-logs", "[1/6, 1/3, 1/2]"),
        ("softmax-logs", "[1/6, 1/3, 1/3]"),
        ("softmax-logs", "[0.1667, 0.3333, 0.5]"),
        ("scaling-factor", "1/8"),
        ("scaling-factor", "import os"),
    ]:
        plain = check_text(exercise_id, text)
        chapter = catalogue()[exercise_id].chapter
        assert check_text(exercise_id, text, chapter) == plain
        assert check_text(exercise_id, text, "masks") == plain  # the wrong chapter: found anyway
        assert check_text(exercise_id, text, "no-such-chapter") == plain


def test_the_chapters_are_the_modules_of_the_chapters_package() -> None:
    """`CHAPTERS` is the one list of chapters: each has its module, and a module not in it
    would never be built."""
    modules = {m.name for m in pkgutil.iter_modules(chapters.__path__)}
    assert modules == set(CHAPTERS)


def test_an_unknown_chapter_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown chapter 'nope'; chapters: forward, examples"):
        by_chapter("nope")
