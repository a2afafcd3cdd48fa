"""The suite builds the site once: every test that needs it is a ``docs`` test on one worker;
and it imports PyTorch once: the tests whose oracle it is run on one worker too.

A browser test that asks for its tab at run time (``request.getfixturevalue``) does not name
the built site among its fixtures; left ungrouped, it ran on the other pytest-xdist worker and
built the site a second time there (about two minutes of a loaded machine).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import uses_torch

ROOT = Path(__file__).resolve().parents[2]


def _collect(*args: str) -> str:
    """What ``pytest --collect-only -q`` prints, in one process, for ``args``."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0"]
    command += ["-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False).stdout


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_no_browser_test_runs_without_the_docs_marker() -> None:
    # collecting only: -m "not docs" must leave no browser test to run
    out = _collect("tests/browser", "-m", "not docs")
    assert "no tests collected" in out, out[-2000:]
    assert "deselected" in out  # it did collect the browser tests, then left them all


@pytest.mark.slow  # collects the whole suite
def test_the_test_command_collects_every_test_file() -> None:
    # pytest skips a folder named build/ by default (norecursedirs): tests/build/ went
    # uncollected, without a word, until pyproject.toml named the folders to skip itself
    out = _collect()
    collected = {line.split("::")[0] for line in out.splitlines() if "::" in line}
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py")}
    assert len(files) > 50 and files <= collected, sorted(files - collected)


def test_the_tests_whose_oracle_is_pytorch_are_told_apart() -> None:
    asks = SimpleNamespace(fixturenames=("torch", "tmp_path"))
    neither = SimpleNamespace(fixturenames=("tmp_path",))
    doctest = SimpleNamespace(dtest=SimpleNamespace(examples=[SimpleNamespace(source="1 + 1\n")]))
    oracle = SimpleNamespace(
        dtest=SimpleNamespace(examples=[SimpleNamespace(source="torch = torch_or_none()\n")])
    )
    assert uses_torch(asks) and uses_torch(oracle)  # type: ignore[arg-type]
    assert not uses_torch(neither) and not uses_torch(doctest)  # type: ignore[arg-type]


def test_a_doctest_gets_pytorch_from_torch_or_none_only() -> None:
    """A doctest's examples cannot ask for the fixture: they call ``torch_or_none()``, which
    ``uses_torch`` sees; an example importing torch itself would run on any worker."""
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted((ROOT / "src").rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"(>>>|\.\.\.) .*\b(import|from) torch\b", line)
    ]
    assert found == [], f"call torch_or_none() in the example instead: {found}"


def _imports_torch(tree: ast.AST) -> bool:
    """An ``import torch`` (or ``from torch …``) outside a function that asks for the
    ``torch`` fixture (which may import a submodule, ``torch.nn.attention.bias`` say)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef) and any(a.arg == "torch" for a in node.args.args):
            continue
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "torch" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            return True
        if _imports_torch(node):
            return True
    return False


def test_a_test_gets_pytorch_from_the_fixture_only() -> None:
    """The ``torch`` fixture is the one way: a module importing torch at its top would import
    it in every pytest-xdist worker while collecting, and a test importing it in its body
    without the fixture would not be told apart (``uses_torch``) and run on any worker."""
    found = [
        p.name
        for p in sorted((ROOT / "tests").rglob("*.py"))
        if p.name != "conftest.py" and _imports_torch(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert found == [], f"ask for the torch fixture instead (CONTRIBUTING.md): {found}"
    assert _imports_torch(ast.parse("import torch.nn\n"))
    assert _imports_torch(ast.parse("def test():\n    from torch import nn\n"))
    assert not _imports_torch(ast.parse("def test(torch):\n    from torch import nn\n"))
