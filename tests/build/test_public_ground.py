"""No file the build runs reaches a private name of the generators and their plugins.

MkDocs, Material, mkdocstrings and its Python handler, markdown-exec, pymdown-extensions,
gen-files, literate-nav, Zensical and matplotlib (which draws the figures) are used through
what they document: configuration,
hook events, Python-Markdown extensions. So no module of ``src/``, ``hooks/`` or
``benchmarks/`` (and no name ``mkdocs.yml`` points to) imports one of their private modules (a
dotted part with a leading underscore: ``markdown_exec._internal``), reads a private attribute
of one of them (``module._name``, ``Class.__dict__["_name"]``, ``getattr(module, "_name")``),
or assigns an attribute of theirs (``Highlight.highlight = …``,
``setattr(module, …)``): a patch release of any of them cannot break the build.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUARDED = {
    "mkdocs",
    "material",
    "mkdocstrings",
    "mkdocstrings_handlers",
    "markdown_exec",
    "pymdownx",
    "mkdocs_gen_files",
    "mkdocs_literate_nav",
    "zensical",
    "matplotlib",
}


def _guarded(dotted: str) -> bool:
    return dotted.split(".", 1)[0] in GUARDED


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from: ``a`` for ``a.b.c``."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def violations(source: str, where: str) -> list[str]:
    """``where:line: what`` for each private access or replaced attribute in ``source``.

    Examples:
        >>> violations("from markdown_exec._internal import x", "f.py")
        ['f.py:1: imports markdown_exec._internal']
        >>> violations("import pymdownx.highlight as h\\nh.Highlight.highlight = 1", "f.py")
        ['f.py:2: assigns h.Highlight.highlight of pymdownx.highlight']
        >>> violations("import numpy._core\\nfrom markdown import Extension", "f.py")
        []
    """
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # local name -> the guarded module (or object) it stands for
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _guarded(alias.name):
                    if _private(alias.name):
                        found.append(f"{where}:{node.lineno}: imports {alias.name}")
                    local = alias.asname or alias.name.split(".", 1)[0]
                    bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and _guarded(node.module):
            if _private(node.module):
                found.append(f"{where}:{node.lineno}: imports {node.module}")
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _private(alias.name):
                    found.append(f"{where}:{node.lineno}: imports {full}")
                bound[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            root = _root(node)
            if root in bound and not node.attr.startswith("__"):
                found.append(f"{where}:{node.lineno}: reads {ast.unparse(node)} of {bound[root]}")
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and _root(target) in bound:
                root = _root(target)
                assert root is not None
                found.append(
                    f"{where}:{node.lineno}: assigns {ast.unparse(target)} of {bound[root]}"
                )
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"setattr", "delattr"}
            and node.args
            and _root(node.args[0]) in bound
        ):
            found.append(f"{where}:{node.lineno}: {node.func.id} on {ast.unparse(node.args[0])}")
        if (  # Class.__dict__["_name"]
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "__dict__"
            and _root(node.value) in bound
            and isinstance(node.slice, ast.Constant)
            and _private(str(node.slice.value))
        ):
            found.append(f"{where}:{node.lineno}: reads {ast.unparse(node)}")
        if (  # getattr(module, "_name")
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr"}
            and len(node.args) >= 2
            and _root(node.args[0]) in bound
            and isinstance(node.args[1], ast.Constant)
            and _private(str(node.args[1].value))
        ):
            found.append(f"{where}:{node.lineno}: reads {ast.unparse(node)}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for name in re.findall(r"\b[a-z_]+(?:\.\w+)+", node.value):
                if _guarded(name) and _private(name):
                    found.append(f"{where}:{node.lineno}: names {name}")
    return sorted(set(found), key=lambda line: int(line.split(":")[1]))


def _built_files() -> list[Path]:
    """What the build runs, and the benchmarks that time it."""
    return sorted(
        path for part in ("src", "hooks", "benchmarks") for path in (ROOT / part).rglob("*.py")
    )


def test_no_file_the_build_runs_reaches_a_private_name() -> None:
    found = [
        line
        for path in _built_files()
        for line in violations(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert found == [], "private names of the generators or their plugins:\n" + "\n".join(found)


def test_mkdocs_yml_names_no_private_module() -> None:
    """Python names in ``mkdocs.yml`` (``!!python/name:…``, extension paths) are public."""
    found = [
        f"mkdocs.yml:{n}: {name}"
        for n, line in enumerate((ROOT / "mkdocs.yml").read_text(encoding="utf-8").splitlines(), 1)
        for name in re.findall(r"\b[a-z_]+(?:\.\w+)+", line.split("#", 1)[0])
        if _guarded(name) and _private(name)
    ]
    assert found == []


def test_the_scan_finds_each_kind_of_access() -> None:
    source = "\n".join(
        [
            "from markdown_exec._internal.formatters import python",  # 1: a private module
            "from material.plugins.search import plugin",
            "plugin.Parser = object",  # 3: a replaced class
            "import mkdocstrings_handlers.python as h",
            "h._get_formatter()",  # 5: a private function
            "setattr(plugin, 'x', 1)",  # 6
            "import importlib; importlib.import_module('pymdownx._bypass')",  # 7
            "from pymdownx.highlight import Highlight",
            "Highlight.highlight = len",  # 9: monkeypatching
            "import numpy._core; numpy._core.x = 1",  # another library's: not guarded here
            "from matplotlib.mathtext import MathTextParser",
            "parse = MathTextParser.__dict__['_parse_cached']",  # 12: a private member
            "setattr(MathTextParser, '_parse_cached', parse)",  # 13
            "getattr(MathTextParser, '_parser')",  # 14
            "MathTextParser.__dict__['parse']",  # public
        ]
    )
    lines = [int(v.split(":")[1]) for v in violations(source, "probe.py")]
    assert lines == [1, 3, 5, 6, 7, 9, 12, 13, 14]
