"""The suite builds the site once: every test that needs it is a ``docs`` test on one worker;
and it imports PyTorch once: the tests whose oracle it is run on one worker too.

A browser test that asks for its tab at run time (``request.getfixturevalue``) does not name
the built site among its fixtures; left ungrouped, it ran on the other pytest-xdist worker and
built the site a second time there (about two minutes of a loaded machine).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import test_backward_oracle, test_heads, test_numeric
from tests.conftest import uses_torch

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


def test_the_tests_whose_oracle_is_pytorch_are_told_apart() -> None:
    asks = SimpleNamespace(fixturenames=("torch", "tmp_path"), module=test_backward_oracle)
    imports = SimpleNamespace(fixturenames=(), module=test_heads)  # calls require_torch
    neither = SimpleNamespace(fixturenames=("tmp_path",), module=test_numeric)
    doctest = SimpleNamespace(fixturenames=())  # a doctest item has no module
    assert uses_torch(asks) and uses_torch(imports)  # type: ignore[arg-type]
    assert not uses_torch(neither) and not uses_torch(doctest)  # type: ignore[arg-type]
    # and none imports torch at its top, which every worker would pay while collecting
    assert not hasattr(test_backward_oracle, "torch")
