"""Every PyTorch oracle test skips with one message, naming an install command that works."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import TORCH_MISSING

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def test_oracle_tests_share_one_skip_message() -> None:
    own = re.compile(
        r"""importorskip\(\s*["']torch|require_or_skip\(\s*["']torch|pip install torch"""
    )
    offenders = [
        str(p.relative_to(ROOT))
        for p in TESTS.rglob("*.py")
        if p.name not in ("conftest.py", Path(__file__).name)
        and own.search(p.read_text(encoding="utf-8"))
    ]
    assert not offenders, f"ask for the torch fixture (conftest.py) instead: {offenders}"


def test_the_message_names_the_version_ci_installs() -> None:
    # the uv-made .venv has no pip: the command must be uv's, for the version CI pins
    pinned = re.search(r"torch==[\d.]+", (ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert pinned is not None
    assert f"python3 -m uv pip install --python .venv/bin/python {pinned[0]}" in TORCH_MISSING
