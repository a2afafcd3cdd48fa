"""A markdown-exec ``session=`` belongs to one page.

markdown-exec keeps a session's globals for as long as the build's process (the build does not
reset its state: that would reach into its internals), so two pages naming the same session
would share variables, and a page's output could depend on the pages built before it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SESSION = re.compile(r'^\s*`{3,}python\b[^\n]*\bsession="([^"]+)"', re.M)


def sessions_by_page(docs: Path) -> dict[str, set[str]]:
    """``{session name: the pages (paths under docs) whose executed blocks name it}``."""
    found: dict[str, set[str]] = defaultdict(set)
    for page in sorted(docs.rglob("*.md")):
        for name in SESSION.findall(page.read_text(encoding="utf-8")):
            found[name].add(page.relative_to(docs).as_posix())
    return dict(found)


def test_no_session_is_shared_between_pages() -> None:
    shared = {n: sorted(p) for n, p in sessions_by_page(ROOT / "docs").items() if len(p) > 1}
    assert shared == {}, f"session names used on several pages (rename one): {shared}"


def test_the_scan_sees_a_shared_session(tmp_path: Path) -> None:
    block = '```python exec="on" session="s"\nx = 1\n```\n'
    (tmp_path / "a.md").write_text(block)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("text\n\n  " + block)
    assert sessions_by_page(tmp_path) == {"s": {"a.md", "sub/b.md"}}
