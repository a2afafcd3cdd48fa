"""mypy in strict mode (configured in pyproject.toml) finds no error in ``src/`` and ``hooks/``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from attention_math._cache import user_cache

ROOT = Path(__file__).resolve().parents[1]


def mypy_cache() -> Path:
    """mypy's incremental cache, shared by every clone on the machine as uv's cache is:
    ``$XDG_CACHE_HOME/attention-math/mypy`` (``~/.cache/…`` without it). mypy checks each
    entry against the hash of the file it was made from (and its own version and options), so
    a clean clone reuses what another clone's run learnt about NumPy and SymPy and never an
    answer about code that changed."""
    return user_cache() / "mypy"


def _mypy(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(cache),
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


#: each snippet breaks one of the settings [tool.mypy] asks for (strict, warn_unreachable,
#: the error codes ignore-without-code and truthy-bool): the code mypy reports it with
FAULTS = {
    "def untyped(x):\n    return x\n": "no-untyped-def",
    "n: int = 'a'  # type: ignore\n": "ignore-without-code",
    "def f(x: int) -> int:\n    return x\n    x += 1\n": "unreachable",
    "class C: ...\n\n\ndef g(c: C) -> int:\n    return 1 if c else 0\n": "truthy-bool",
}


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_mypy_settings(tmp_path: Path) -> None:
    """mypy run with the project's settings reports each planted fault, by its code."""
    for n, code in enumerate(FAULTS):
        (tmp_path / f"fault_{n}.py").write_text(code)
    run = _mypy(str(tmp_path), cache=tmp_path / ".mypy_cache")
    for n, error in enumerate(FAULTS.values()):
        assert re.search(rf"fault_{n}\.py:\d+: error: .*\[{error}\]", run.stdout), run.stdout


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_mypy_is_strict_and_checks_src():
    """A plain run (the configuration's files) checks every module of src/ and hooks/, and no
    module of ours is exempted from the strict checks."""
    import tomllib

    run = _mypy(cache=mypy_cache())
    assert run.returncode == 0, f"mypy --strict found errors:\n{run.stdout}{run.stderr}"
    files = [p for d in ("src", "hooks") for p in (ROOT / d).rglob("*.py")]
    assert f"Success: no issues found in {len(files)} source files" in run.stdout, run.stdout
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    # untyped third-party libraries may be exempted; our own code never is
    for override in conf.get("overrides", []):
        modules = override["module"]
        modules = [modules] if isinstance(modules, str) else modules
        assert not any(m.startswith(("attention_math", "attention_site")) for m in modules)
