"""mypy in strict mode (configured in pyproject.toml) finds no error in ``src/`` and ``hooks/``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from attention_math._cache import user_cache

ROOT = Path(__file__).resolve().parents[1]


def mypy_cache() -> Path:
    """mypy's incremental cache, shared by every clone on the machine as uv's cache is:
    ``$XDG_CACHE_HOME/attention-math/mypy`` (``~/.cache/…`` without it). mypy checks each
    entry against the hash of the file it was made from (and its own version and options), so
    a clean clone reuses what another clone's run learnt about NumPy and SymPy and never an
    answer about code that changed."""
    return user_cache() / "mypy"


def test_mypy_strict_passes_on_src():
    # the configuration ([tool.mypy] strict = true, files = src and hooks) from pyproject.toml
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(mypy_cache()),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, f"mypy --strict found errors:\n{run.stdout}{run.stderr}"
    assert "Success: no issues found" in run.stdout


def test_mypy_is_strict_and_checks_src():
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert conf["strict"] is True
    assert conf["files"] == ["src", "hooks"]
    # untyped third-party libraries may be exempted; our own code never is
    for override in conf.get("overrides", []):
        modules = override["module"]
        modules = [modules] if isinstance(modules, str) else modules
        assert not any(m.startswith("attention_math") for m in modules), override
