"""The build's bytecode for the in-browser runtime is cached by what it depends on
(hooks/live.py): a change to any input makes a new key, so a stale archive is never served."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("live_hook_key", ROOT / "hooks" / "live.py")
    assert spec is not None and spec.loader is not None
    live = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(live)
    return live


def test_the_key_changes_with_every_input(tmp_path: Path) -> None:
    live = _hook()
    src = tmp_path / "sympy-1.0-py3-none-any.whl"
    src.write_bytes(b"one wheel")
    key = live.bytecode_key(src, live.SITE_PACKAGES, "sha512-pin")
    assert key == live.bytecode_key(src, live.SITE_PACKAGES, "sha512-pin")  # stable
    assert key != live.bytecode_key(src, live.STDLIB, "sha512-pin")  # another place
    assert key != live.bytecode_key(src, live.SITE_PACKAGES, "sha512-other")  # interpreter
    src.write_bytes(b"another wheel")
    assert key != live.bytecode_key(src, live.SITE_PACKAGES, "sha512-pin")  # the input
    # and the compiling scripts themselves are hashed in
    assert {p.name for p in live.COMPILE} == {"live_compile.mjs", "live_compile.py"}
    assert all(p.is_file() for p in live.COMPILE)


def test_without_node_the_build_serves_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No way to compile: the sources are served (the page still works) and the build says
    why, except under CI, which must exercise the bytecode."""
    live = _hook()
    monkeypatch.setattr(live, "CACHE", tmp_path)
    monkeypatch.setattr(live, "_node", lambda: str(tmp_path / "no-node-here"))
    core = tmp_path / "core"
    core.mkdir()
    (core / "python_stdlib.zip").write_bytes(b"stdlib")
    wheel = tmp_path / "w-1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    lock = {"pyodide": {"integrity": "sha512-pin"}}
    monkeypatch.delenv("CI", raising=False)
    served, bytecode = live.served_archives(core, lock, [wheel])
    assert (served, bytecode) == ([core / "python_stdlib.zip", wheel], False)
    monkeypatch.setenv("CI", "1")
    with pytest.raises(live.LiveError, match=r"bytecode.*required under CI"):
        live.served_archives(core, lock, [wheel])
