"""The project settings the Scientific Python development guide asks for (sp-repo-review).

sp-repo-review itself is not a test dependency; this checks the settings it reads, so that a
change that would make one of its checks fail fails here first.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONF = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
TOOL = CONF["tool"]


def test_pytest_is_strict() -> None:
    ini = TOOL["pytest"]["ini_options"]
    assert int(ini["minversion"].split(".")[0]) >= 6  # PP302
    assert ini["log_level"]  # PP304
    assert ini["xfail_strict"] is True  # PP305
    assert "--strict-config" in ini["addopts"] and "--strict-markers" in ini["addopts"]  # PP306


def test_ruff_reads_the_python_version_from_the_project() -> None:
    assert "target-version" not in TOOL["ruff"]  # RF002: requires-python says it once
    assert CONF["project"]["requires-python"]


def test_mypy_settings() -> None:
    mypy = TOOL["mypy"]
    assert mypy["strict"] is True and mypy["warn_unreachable"] is True  # MY101, MY103
    assert {"ignore-without-code", "truthy-bool"} <= set(mypy["enable_error_code"])


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
