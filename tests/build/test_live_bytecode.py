"""The bytecode of the in-browser runtime is kept by what it depends on
(attention_site.live_runtime): a change to any input makes a new key, so a stale archive is
never served."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attention_site import live_runtime as live


def test_the_key_changes_with_every_input(tmp_path: Path) -> None:
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
    """No way to compile: the sources are served (the page still works) and prepare says
    why, except under CI, which must exercise the bytecode."""
    monkeypatch.setattr(live, "_node", lambda: str(tmp_path / "no-node-here"))
    core = tmp_path / "core"
    core.mkdir()
    (core / "python_stdlib.zip").write_bytes(b"stdlib")
    wheel = tmp_path / "w-1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    lock = {"pyodide": {"integrity": "sha512-pin"}}
    monkeypatch.delenv("CI", raising=False)
    served, bytecode, why = live.served_archives(core, lock, [wheel], tmp_path)
    assert (served, bytecode) == ([core / "python_stdlib.zip", wheel], False)
    assert "no-node-here" in why
    monkeypatch.setenv("CI", "1")
    with pytest.raises(live.LiveError, match=r"bytecode.*required under CI"):
        live.served_archives(core, lock, [wheel], tmp_path)


def test_pruning_keeps_this_builds_archives_however_old(tmp_path: Path) -> None:
    """Each edit of the sources compiles a new project wheel; the old ones go, but never an
    archive this build serves (SymPy's is compiled once and then the oldest: pruning it by age
    alone broke the build with FileNotFoundError after a few edits)."""
    folder = tmp_path / "bytecode"
    folder.mkdir()
    names = ["a-sympy.whl", "b-stdlib.zip"] + [f"p{i}-project.whl" for i in range(6)]
    for age, name in enumerate(reversed(names)):  # the first names are the oldest
        (folder / name).write_bytes(b"x")
        os.utime(folder / name, (1000.0 - age, 1000.0 - age))
    keep = [folder / n for n in ("a-sympy.whl", "b-stdlib.zip", "p5-project.whl")]
    live.prune(folder, keep)
    left = sorted(p.name for p in folder.iterdir())
    # this build's three, and the newest three others (p2 … p4); p0, p1 are gone
    gone = {"p0-project.whl", "p1-project.whl"}
    assert left == sorted(set(names) - gone)
