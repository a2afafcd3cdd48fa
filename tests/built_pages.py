"""A built page read as a test reads it: its HTML, or its text with the tags taken out."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["page", "raw"]


def page(site: Path, path: str) -> str:
    """The text of a built page, tags removed, whitespace collapsed (so prose greps work)."""
    html = (site / path / "index.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def raw(site: Path, path: str) -> str:
    """The HTML of the built page at ``path`` (``""`` for the home page)."""
    return (site / path / "index.html").read_text(encoding="utf-8")
