"""The Zensical check's guard and summary: does the site also build with Zensical?

markdown-exec logs a failed block, or renders its traceback into the page; a doctest's
traceback in an API page is not a failure. ``benchmarks/zensical_check.py`` applies these to
Zensical's log and pages and writes ``summary`` for the About page;
``tests/test_zensical_guard.py`` pins what they catch.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["BLOCK_TRACEBACK", "EXEC_ERRORS", "exec_errors", "summary"]

# What markdown-exec logs, or leaves in a page, when an executed block fails.
EXEC_ERRORS = re.compile(
    r"markdown[_-]exec.*(error|fail)|Execution of \w+ code block|Traceback \(most recent",
    re.IGNORECASE,
)
# A failed block's traceback names its file "<code block: n1>" (escaped in HTML); doctest
# tracebacks in the API pages do not.
BLOCK_TRACEBACK = re.compile(r"(<|&lt;)code block: ")


def exec_errors(text: str) -> list[str]:
    """Lines of ``text`` that report a markdown-exec execution error.

    Examples:
        >>> exec_errors("INFO built\\nWARNING markdown_exec: Execution of python code block failed")
        ['WARNING markdown_exec: Execution of python code block failed']
        >>> exec_errors("INFO built in 3 s")
        []
    """
    return [line for line in text.splitlines() if EXEC_ERRORS.search(line)]


def summary(result: dict[str, Any]) -> str:
    """One Markdown paragraph for the About page, saying when and on which commit.

    Examples:
        >>> line = summary({"status": "passed", "zensical": "0.0.73", "pages": 41,
        ...     "date": "2026-11-21", "commit": "82ce2c6"})
        >>> line.startswith("**Passed** with Zensical 0.0.73: 41 pages built")
        True
        >>> line.split(". ")[-1].strip()
        'Checked on 2026-11-21, commit 82ce2c6.'
    """
    when = (
        f" Checked on {result['date']}, commit {result['commit']}."
        if "date" in result and "commit" in result
        else ""
    )
    if result["status"] == "passed":
        return (
            f"**Passed** with Zensical {result['zensical']}: {result['pages']} pages built, "
            f"no markdown-exec execution error.{when}\n"
        )
    why = result.get("exec_errors") or [f"exit status {result.get('returncode')}"]
    return (
        f"**{result['status'].capitalize()}** with Zensical {result.get('zensical', '?')} "
        f"(non-blocking): {why[0]}{when}\n"
    )
