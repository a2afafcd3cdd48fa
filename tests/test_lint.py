"""The code is ruff-clean and ruff-formatted (configuration in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    try:  # the ruff of this environment, whether or not its bin directory is on PATH
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        pytest.skip("ruff is not installed (it is in the docs and test groups)")
    exe = find_ruff_bin()
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check():
    proc = _ruff("check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format():
    proc = _ruff("format", "--check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_python_version_floor():
    assert sys.version_info >= (3, 11)
