"""The suite builds the site once: every test that needs it is a ``docs`` test on one worker.

A browser test that asks for its tab at run time (``request.getfixturevalue``) does not name
the built site among its fixtures; left ungrouped, it ran on the other pytest-xdist worker and
built the site a second time there (about two minutes of a loaded machine).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_no_browser_test_runs_without_the_docs_marker() -> None:
    # collecting only: -m "not docs" must leave no browser test to run
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "tests/browser",
            "-m",
            "not docs",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "no tests collected" in proc.stdout, proc.stdout[-2000:]
    assert "deselected" in proc.stdout  # it did collect the browser tests, then left them all
