"""The Zensical check's guard: what counts as a markdown-exec execution error."""

from __future__ import annotations

from attention_site.checks import zensical as check


def test_log_lines_reporting_a_failed_block_are_errors() -> None:
    log = "\n".join(
        [
            "Build started",
            "WARNING markdown_exec: Execution of python code block exited with errors",
            "Build finished in 12s",
            "No issues found",
        ]
    )
    assert check.exec_errors(log) == [log.splitlines()[1]]
    assert check.exec_errors("Build started\nBuild finished in 12s\nNo issues found") == []


def test_a_blocks_traceback_in_a_page_is_caught_but_a_doctest_is_not() -> None:
    pattern = check.BLOCK_TRACEBACK
    assert pattern.search('File "&lt;code block: n3&gt;", line 2, in &lt;module&gt;')
    assert not pattern.search(">>> f()\nTraceback (most recent call last):\nValueError: x")


def test_summary_names_the_first_error() -> None:
    failed = {"status": "failed", "zensical": "0.1", "exec_errors": ["a.html: boom"]}
    assert "a.html: boom" in check.summary(failed)
    passed = {"status": "passed", "zensical": "0.1", "pages": 40}
    assert check.summary(passed).startswith("**Passed** with Zensical 0.1: 40 pages")
