"""The project settings the Scientific Python development guide asks for (sp-repo-review).

sp-repo-review itself is not a test dependency; this checks the settings it reads, so that a
change that would make one of its checks fail fails here first.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONF = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
TOOL = CONF["tool"]


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_pytest_is_strict(tmp_path: Path) -> None:
    """With the project's settings an unregistered marker is an error (PP306) and an xfail test
    that passes fails the run (PP305): a typo in a marker never silently selects nothing."""
    (tmp_path / "test_marker.py").write_text(
        "import pytest\n\n\n@pytest.mark.not_registered\ndef test_a():\n    pass\n"
    )
    (tmp_path / "test_xpass.py").write_text(
        "import pytest\n\n\n@pytest.mark.xfail\ndef test_b():\n    pass\n"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "--continue-on-collection-errors",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "'not_registered' not found in `markers`" in out, out
    assert "XPASS(strict)" in out, out


def test_ruff_reads_the_python_version_from_the_project() -> None:
    """ruff lints for the oldest Python the project supports, which requires-python names
    (RF002: one place says it)."""
    from ruff.__main__ import find_ruff_bin

    floor = re.fullmatch(r">=\s*(\d+\.\d+)", CONF["project"]["requires-python"])
    assert floor, CONF["project"]["requires-python"]
    run = subprocess.run(
        [find_ruff_bin(), "check", "--show-settings", "tests/build/test_hygiene.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"linter.unresolved_target_version = {floor[1]}\n" in run.stdout


def test_every_ignored_check_says_why() -> None:
    for check, reason in TOOL["repo-review"]["ignore"].items():
        assert re.fullmatch(r"[A-Z]+\d+", check), check
        assert len(reason.split()) >= 4, (check, reason)


def test_task_runner_and_hooks_exist() -> None:
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    for session in ("lint", "types", "tests", "docs", "bench"):
        assert f"def {session}(session: nox.Session)" in noxfile, session
    hooks = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    for tool in ("ruff check", "ruff format", "mypy"):
        assert f"--group test {tool}" in hooks, tool


def test_installed_packages_are_compiled_to_bytecode_once() -> None:
    # a build and the tests start dozens of Python processes; where .pyc files cannot be
    # written (PYTHONDONTWRITEBYTECODE, read-only site-packages) each one recompiled SymPy,
    # matplotlib and MkDocs from source: 4× the CPU to import them
    # once, at install: in [tool.uv] uv would recompile everything at every `uv run`
    # (uv issue 12202), so CI's sync asks for it and a reader's Python writes its own .pyc
    assert "compile-bytecode" not in TOOL["uv"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "uv sync --locked --group test --compile-bytecode" in ci
    assert TOOL["uv"]["pip"]["compile-bytecode"] is True  # uv pip: the PyTorch oracle


def test_no_strict_build_is_run_quietly() -> None:
    # `mkdocs build --strict --quiet` drops the warnings --strict counts: a block that raises
    # then builds with exit status 0. Every build the project runs or tells a reader to run
    # is loud.
    quiet = re.compile(r"mkdocs\W+build\b.*(\s-q\b|--quiet|\"-q\")")
    places = [*ROOT.glob("*.md"), ROOT / ".ci" / "run", *(ROOT / "docs").rglob("*.md")]
    for folder in ("benchmarks", "tests", "hooks", "src"):
        places += [*(ROOT / folder).rglob("*.py")]
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in places
        if path != Path(__file__).resolve()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if quiet.search(line)
    ]
    assert not found, "mkdocs build run with --quiet: " + ", ".join(found)
