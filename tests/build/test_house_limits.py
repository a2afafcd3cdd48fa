"""The house's limits (issue 51), counted in the code, not in the prose: at most two disk
caches, at most three environment variables the project reads.

A variable is read where the code asks ``os.environ`` (``.get``, ``[...]``, ``in``) or
``os.getenv`` for it, in ``src/``, ``hooks/``, ``tests/`` and ``benchmarks/``, or where
``.ci/run`` expands it (an upper-case shell variable). A disk cache is a folder the code keeps
between runs: under the user's cache (``user_cache() / "name"``) or a git-ignored dot-folder
of the clone (``ROOT / ".name"``; ``.ci/`` is committed, not kept).
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = ("src", "hooks", "tests", "benchmarks")
OTHERS = {
    "XDG_CACHE_HOME": "the XDG Base Directory Specification's: where user caches go",
    "SOURCE_DATE_EPOCH": "reproducible-builds.org's: MkDocs honours it, hooks/reproducible.py",
    "PYTHONHASHSEED": "Python's own: the reproducibility test passes it on",
}
"""Variables of other tools' conventions that the code honours: not the project's own."""


def _is_environ(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def env_reads(source: str) -> set[str]:
    """The environment variables ``source`` reads, by name.

    Examples:
        >>> sorted(env_reads('import os\\nos.environ.get("A"); os.getenv("B"); os.environ["C"]'))
        ['A', 'B', 'C']
        >>> sorted(env_reads('import os\\nif "D" in os.environ: os.environ["E"] = "1"'))
        ['D']
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        name: ast.expr | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            method = node.func.attr
            if method == "getenv" or (
                method in {"get", "pop", "setdefault"} and _is_environ(node.func.value)
            ):
                name = node.args[0]
        elif (
            isinstance(node, ast.Subscript)
            and _is_environ(node.value)
            and isinstance(node.ctx, ast.Load)
        ):
            name = node.slice
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and _is_environ(node.comparators[0])
        ):
            name = node.left
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            found.add(name.value)
    return found


def caches(source: str) -> set[str]:
    """The disk caches ``source`` names: ``user_cache() / "x"`` and ``ROOT / ".x"``.

    Examples:
        >>> sorted(caches('a = user_cache() / "toy" / "f.npz"\\nb = ROOT / ".prepare" / "k"'))
        ['.prepare', '~/.cache/attention-math/toy']
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            continue
        right = node.right
        if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
            continue
        left = node.left
        if isinstance(left, ast.Call) and getattr(left.func, "id", None) == "user_cache":
            found.add(f"~/.cache/attention-math/{right.value}")
        elif isinstance(left, ast.Name) and left.id in {"ROOT", "root"}:
            if re.fullmatch(r"\.[a-z][a-z0-9_-]*", right.value):
                found.add(right.value)
    return found


def _python_files() -> list[Path]:
    return sorted(p for part in PARTS for p in (ROOT / part).rglob("*.py"))


def test_the_project_reads_at_most_three_environment_variables() -> None:
    read: dict[str, list[str]] = {}
    for path in _python_files():
        for name in env_reads(path.read_text(encoding="utf-8")):
            read.setdefault(name, []).append(str(path.relative_to(ROOT)))
    shell = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for name in re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", shell):
        if name != "STEPS":  # the script's own list of steps
            read.setdefault(name, []).append(".ci/run")
    own = {name: where for name, where in read.items() if name not in OTHERS}
    assert "SITE_URL" in own and "CI" in own  # the scan sees what it must
    assert len(own) <= 3, f"{len(own)} environment variables: {own}"


def test_there_are_at_most_two_disk_caches() -> None:
    found: dict[str, list[str]] = {}
    for path in _python_files():
        for cache in caches(path.read_text(encoding="utf-8")):
            found.setdefault(cache, []).append(str(path.relative_to(ROOT)))
    # asked as folders (``.prepare/``): `/.prepare/` ignores a folder only, and the folder may
    # not be there yet (a fresh clone, or before a test of this run made it)
    ignored = subprocess.run(
        ["git", "check-ignore", *(f"{c}/" for c in found if c.startswith("."))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    found = {c: w for c, w in found.items() if not c.startswith(".") or f"{c}/" in ignored}
    assert ".prepare" in found  # the scan sees what it must
    assert len(found) <= 2, f"{len(found)} disk caches: {found}"
