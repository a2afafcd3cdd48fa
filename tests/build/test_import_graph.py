"""The packages import each other one way, as pyproject.toml's import-linter contracts say.

The contracts (``[tool.importlinter]``): ``attention_site`` imports ``attention_math``, never
the reverse; the library imports no plotting, MkDocs or Markdown tool; inside the library the
command line sits over the exercises, the exercises over the derivations, the derivations over
the core; no cycle between the modules of a package. ``lint-imports`` checks them with grimp,
which counts every import, also those inside functions; CI runs it as a step of its own
(``.ci/run``), not here.

Beside them, a cycle among *module-level* imports is found here by reading the source with
``ast`` (nothing is imported), counting the parent packages an import runs first, so a cycle
that only works because of import order is caught before it bites. Imports inside functions
and under ``if TYPE_CHECKING:`` are not edges for this one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PKG = SRC / "attention_math"
SITE = SRC / "attention_site"


def test_every_lazy_module_is_an_edge_the_linter_sees() -> None:
    """``_lazy`` hands out modules by name (``_OnFirstUse("attention_math.numeric")``): grimp
    cannot read a string, so each one must also be imported under ``TYPE_CHECKING``, where it
    can; otherwise a cycle through ``_lazy`` would pass the contracts unseen."""
    tree = ast.parse((PKG / "_lazy.py").read_text(encoding="utf-8"))
    by_name = {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "_OnFirstUse"
        and isinstance(node.args[0], ast.Constant)
    }
    assert "attention_math.numeric" in by_name
    seen: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.Import):
                    seen |= {a.name for a in imp.names}
                elif isinstance(imp, ast.ImportFrom) and imp.module:
                    seen |= {imp.module} | {f"{imp.module}.{a.name}" for a in imp.names}
    assert by_name <= seen, f"lazy modules the linter cannot see: {sorted(by_name - seen)}"


def test_no_import_is_waived() -> None:
    """No contract waives an import: every cycle is gone, none is excused. One exception,
    declared: the library's figures (``attention_math.plot``) import matplotlib, the wheel's
    optional ``notebook`` extra, inside the functions that draw (tests/build/test_wheel.py)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    waived = {
        c["id"]: c["ignore_imports"]
        for c in config["tool"]["importlinter"]["contracts"]
        if "ignore_imports" in c
    }
    assert waived == {"library-imports-no-site-tools": ["attention_math.plot.** -> matplotlib"]}


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements executed when the module is imported (not inside def/class or
    ``if TYPE_CHECKING``)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for b in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                    visit(b)
            elif isinstance(node, ast.With):
                visit(node.body)

    visit(tree.body)
    return found


def import_graph(root: Path = PKG) -> dict[str, set[str]]:
    """``module → modules of attention_math it imports at module level``."""
    modules = {_module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in _top_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:  # relative import
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join([*pkg, base] if base else pkg)
                # "from pkg import mod" imports the submodule when there is one
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            for t in targets:
                if t in modules and t != mod:
                    graph[mod].add(t)
                    # importing a.b.c runs a/__init__ and a/b/__init__ first
                    parts = t.split(".")
                    for i in range(1, len(parts)):
                        parent = ".".join(parts[:i])
                        if parent in modules and parent != mod and not mod.startswith(parent + "."):
                            graph[mod].add(parent)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for w in sorted(graph[u]):
            if state.get(w) == 1:
                return [*stack[stack.index(w) :], w]
            if w not in state and (c := dfs(w)):
                return c
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state and (c := dfs(u)):
            return c
    return None


@pytest.mark.parametrize("package", [PKG, SITE], ids=lambda p: p.name)
def test_no_module_level_import_cycle(package: Path) -> None:
    cycle = find_cycle(import_graph(package))
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_checks_module_imports_nothing_of_ours():
    assert import_graph()["attention_math._checks"] == set()


@pytest.mark.parametrize(
    "modules",
    [
        {"a": "from pkg import b\n", "b": "import pkg.a\n"},
        {"a": "from . import b\n", "b": "from .a import f\n"},
        {
            "a": "from pkg.b import x\n",
            "b": "try:\n    from pkg.c import y\nexcept ImportError:\n    pass\n",
            "c": "import pkg.a\n",
        },
    ],
)
def test_the_detector_finds_planted_cycles(tmp_path, modules):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    for name, src in modules.items():
        (root / f"{name}.py").write_text(src)
    cycle = find_cycle(import_graph(root))
    assert cycle is not None and cycle[0] == cycle[-1]


def test_lazy_and_type_checking_imports_are_not_edges(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("import pkg.b\n")
    (root / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n"
        "def f():\n    import pkg.a\n"
    )
    assert find_cycle(import_graph(root)) is None
