"""Lesson pages teach first: the machinery that checks them is folded away.

Every lesson (the pages under forward/, why/, positions/, gradients/, long/, examples/, and
"Attention as …") keeps its verification evidence in one folded block at its end, "How we know
this is right" (a ``<details>``), and nothing comes after it. Which words the main line uses
is for review, not for a test.

The same rule is read in each lesson's Markdown (no build needed). Timings and the load
averages that qualify them stay in the Appendix, and a block whose source a page shows never
depends on a hidden block of the same session (copying the shown source must work).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attention_site.notebook_link import title as title_of
from tests.built_pages import page as page_text
from tests.conftest import mkdocs_config, nav_pages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: the sections whose pages are lessons (a page's source path starts with one of these)
LESSONS = ("forward/", "why/", "positions/", "gradients/", "long/", "examples/", "attention-as.md")


def lesson_sources() -> list[str]:
    """The lesson pages, as sources under docs/, in nav order."""
    return [p for p in nav_pages(mkdocs_config()["nav"]) if p.startswith(LESSONS)]


def built(site: Path, source: str) -> Path:
    stem = source.removesuffix(".md")
    return (
        site / (stem.removesuffix("index") if stem.endswith("index") else stem + "/") / "index.html"
    )


def lesson_pages(site: Path) -> list[str]:
    return [str(built(site, s).relative_to(site)) for s in lesson_sources()]


@pytest.mark.parametrize("source", lesson_sources())
def test_evidence_is_one_folded_block_at_the_end(built_site, source):
    """At most one "How we know this is right", folded (closed), and nothing after it."""
    html = built(built_site, source).read_text("utf-8")
    article = html[html.index("<article") : html.index("</article>")]
    blocks = re.findall(
        r'<details class="abstract"(?: open)?>\s*<summary>How we know this is right', article
    )
    assert len(blocks) <= 1, f"{source}: {len(blocks)} evidence blocks, one expected"
    if blocks:
        assert " open" not in blocks[0], f"{source}: the evidence block is open"
        tail = article[article.index(blocks[0]) :]
        depth, i = 0, 0
        for m in re.finditer(r"<(/?)details\b[^>]*>", tail):
            depth += -1 if m.group(1) else 1
            if depth == 0:
                i = m.end()
                break
        rest = re.sub(r"<[^>]+>", " ", tail[i:])
        assert not rest.split(), f"{source}: text after the evidence block: {rest.split()[:12]}"


@pytest.mark.docs
def test_load_averages_stay_in_the_appendix(built_site: Path) -> None:
    """A load average qualifies a timing; the lesson pages show errors, not timings, so the
    engineering figures live in the Appendix (issue 15: reports out of the lesson)."""
    from tests.conftest import mkdocs_config, nav_pages

    nav = mkdocs_config()["nav"]
    appendix = {
        p
        for entry in nav
        if isinstance(entry, dict) and "Appendix" in entry
        for p in nav_pages(entry)
    }
    lesson = [p for p in nav_pages(nav) if p not in appendix]
    assert len(lesson) > 40 and appendix
    shown = [
        p
        for p in lesson
        if "load average" in page_text(built_site, p.removesuffix(".md").removesuffix("index"))
    ]
    assert not shown, shown


FENCE = re.compile(r"^(?P<indent>[ \t]*)```python (?P<info>[^\n]*)$", re.M)


def _blocks(markdown: str) -> list[str]:
    return [m.group("info") for m in FENCE.finditer(markdown)]


def test_a_shown_source_never_depends_on_a_hidden_block():
    """why/multi-head's Source tab used names set by a hidden block of the same session:
    copying the Source failed. A session shared by a shown block holds no hidden one."""
    sources = sorted(DOCS.rglob("*.md"))
    assert len(sources) > 40
    for source in sources:
        infos = [i for i in _blocks(source.read_text(encoding="utf-8")) if 'exec="on"' in i]
        sessions: dict[str, list[bool]] = {}
        for info in infos:
            m = re.search(r'session="([^"]+)"', info)
            if m:
                sessions.setdefault(m.group(1), []).append("source=" in info)
        for name, shown in sessions.items():
            assert all(shown) or not any(shown), f"{source}: session {name} mixes hidden and shown"


#: the Markdown source of every lesson (docs/…), for the checks that need no build
LESSON_SOURCES = sorted(
    str(p.relative_to(DOCS))
    for p in DOCS.rglob("*.md")
    if str(p.relative_to(DOCS)).startswith(LESSONS)
)
FOLD = '??? abstract "How we know this is right"'


@pytest.mark.parametrize("page", LESSON_SOURCES)
def test_a_lessons_source_keeps_its_evidence_in_one_fold_at_the_end(page):
    """The same rule read in the Markdown, without a build: at most one evidence block, and
    every line after it inside it."""
    text = (DOCS / page).read_text(encoding="utf-8")
    assert text.count(FOLD) <= 1
    main = text
    if FOLD in text:
        tail = text[text.index(FOLD) :]
        assert all(not line or line.startswith("    ") for line in tail.splitlines()[1:])
        main = text[: text.index(FOLD)]
    if "positions_oracle.json" in text or "_bench" in text:  # evidence lives in the fold
        assert "positions_oracle.json" not in main and "_bench" not in main


def test_no_two_pages_share_a_title() -> None:
    """A reader tells pages apart by their titles (browser tabs, search results, links), and
    ``zensical serve`` finds an edited page's notebook by its title
    (``attention_site.notebook_link``)."""
    titles: dict[str, list[str]] = {}
    for source in nav_pages(mkdocs_config()["nav"]):
        path = DOCS / source
        if path.is_file():
            title = title_of(path.read_text(encoding="utf-8"))
            titles.setdefault(title, []).append(source)
    shared = {t: s for t, s in titles.items() if t and len(s) > 1}
    assert not shared, f"pages sharing a title: {shared}"
