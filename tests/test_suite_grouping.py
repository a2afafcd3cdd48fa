"""The suite builds the site once: every test that needs it is a ``docs`` test on one worker;
and it imports PyTorch once: the tests whose oracle it is run on one worker too.

A browser test that asks for its tab at run time (``request.getfixturevalue``) does not name
the built site among its fixtures; left ungrouped, it ran on the other pytest-xdist worker and
built the site a second time there (about two minutes of a loaded machine).
"""

from __future__ import annotations

import ast
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


def _imports_torch_at_top(tree: ast.Module) -> bool:
    """A module-level ``import torch`` (or ``from torch …``) or ``require_torch()`` call."""
    for node in tree.body:  # the module's own statements, not the functions' bodies
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "torch" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            return True
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            continue  # a body runs when called, not while the module is collected
        if any(
            isinstance(c, ast.Call)
            and isinstance(c.func, ast.Name)
            and c.func.id == "require_torch"
            for c in ast.walk(node)
        ):
            return True
    return False


def test_no_test_module_imports_torch_at_its_top() -> None:
    found = [
        p.name
        for p in sorted((ROOT / "tests").rglob("test_*.py"))
        if _imports_torch_at_top(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert found == [], f"ask for the torch fixture instead (CONTRIBUTING.md): {found}"
    assert _imports_torch_at_top(ast.parse("torch = require_torch()\n"))
    assert _imports_torch_at_top(ast.parse("import torch.nn\n"))
    assert not _imports_torch_at_top(ast.parse("def test(torch):\n    F = require_torch()\n"))
