"""The wheel a learner installs, and the page's Python runtime loads, holds the library only.

hatchling builds it from ``src/`` as ``attention_site.live_runtime`` does for the answer
boxes; every file in it belongs to ``attention_math`` (or its ``.dist-info``), and no module in
it imports the site's tools (read with ``ast``, imports inside functions included). The one
exception: the figures a learner redraws (``attention_math/plot/``) import matplotlib, the
``notebook`` extra, inside the functions that draw, never at a module's top, so the library
imports without it.
"""

from __future__ import annotations

import ast
import re
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE_TOOLS = {"attention_site", "matplotlib", "mkdocs", "markdown", "markdown_exec", "pymdownx"}
PLOTTING = "matplotlib"  # allowed in attention_math/plot/, inside functions only


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hatchling.builders.wheel import WheelBuilder

    out = tmp_path_factory.mktemp("wheel")
    (built,) = WheelBuilder(str(ROOT)).build(directory=str(out), versions=["standard"])
    return Path(built)


def imported_roots(source: str) -> set[str]:
    """The top-level packages ``source`` imports, anywhere in it (absolute imports only).

    Examples:
        >>> sorted(imported_roots("import numpy as np\\ndef f():\\n    from mkdocs.x import y"))
        ['mkdocs', 'numpy']
    """
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_wheel_holds_the_library_only(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        tops = {name.split("/")[0] for name in z.namelist()}
    (metadata,) = tops - {"attention_math"}  # one more entry: the wheel's own metadata
    assert metadata.startswith("attention_math-") and metadata.endswith(".dist-info"), sorted(tops)


def top_level_roots(source: str) -> set[str]:
    """The top-level packages ``source`` imports when it is imported: at the module's top,
    not inside a function nor under ``if TYPE_CHECKING:``.

    Examples:
        >>> text = "import numpy\\nif TYPE_CHECKING:\\n    import a\\ndef f():\\n    import b"
        >>> sorted(top_level_roots(text))
        ['numpy']
    """
    tree = ast.parse(source)
    body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))
    ]
    roots: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        roots |= imported_roots(ast.unparse(node))
    return roots


def allowed_tools(name: str) -> set[str]:
    """What of the site's tools a module of the wheel may import (inside functions)."""
    return {PLOTTING} if name.startswith("attention_math/plot/") else set()


def test_no_module_in_the_wheel_imports_the_site_tools(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        modules = {n: z.read(n).decode("utf-8") for n in z.namelist() if n.endswith(".py")}
    assert "attention_math/numeric.py" in modules and "attention_math/exercises/live.py" in modules
    assert PLOTTING in imported_roots(modules["attention_math/plot/heatmap.py"])
    found = {
        name: sorted(imported_roots(text) & (SITE_TOOLS - allowed_tools(name)))
        for name, text in modules.items()
        if imported_roots(text) & (SITE_TOOLS - allowed_tools(name))
    }
    assert not found, f"modules of the wheel that import the site's tools: {found}"
    eager = {name: PLOTTING for name, text in modules.items() if PLOTTING in top_level_roots(text)}
    assert not eager, f"modules that import matplotlib when imported, not when drawing: {eager}"


def requirement_names(metadata: str, extra: str | None = None) -> set[str]:
    """The distributions a wheel's ``METADATA`` requires (``extra=None``) or its ``extra``
    adds, lower case, versions off.

    Examples:
        >>> meta = "Name: x\\nRequires-Dist: NumPy>=2.0\\nRequires-Dist: a[b]; extra == 'c'"
        >>> sorted(requirement_names(meta)), sorted(requirement_names(meta, "c"))
        (['numpy'], ['a'])
    """
    found = set()
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist:"):
            spec, _, marker = line.removeprefix("Requires-Dist:").partition(";")
            wanted = re.search(r"extra == ['\"]([\w-]+)['\"]", marker)
            if (wanted[1] if wanted else None) == extra:
                found.add(re.split(r"[\s\[<>=!~(]", spec.strip(), maxsplit=1)[0].lower())
    return found


def test_the_wheel_requires_what_its_modules_import_and_no_site_tool(wheel: Path) -> None:
    """``pip install attention-math`` brings what the library imports and nothing the site
    alone needs: a learner (or the page's Python runtime) installs no plotting library."""
    with zipfile.ZipFile(wheel) as z:
        (meta,) = (n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        required = requirement_names(z.read(meta).decode("utf-8"))
        imported = set().union(
            *(imported_roots(z.read(n).decode("utf-8")) for n in z.namelist() if n.endswith(".py"))
        )
        notebook = requirement_names(z.read(meta).decode("utf-8"), "notebook")
    assert not required & SITE_TOOLS, sorted(required & SITE_TOOLS)
    third_party = imported - set(sys.stdlib_module_names) - {"attention_math", "__future__"}
    # matplotlib comes with the notebook extra (and ipykernel, which runs its cells)
    assert {PLOTTING, "ipykernel"} <= notebook, sorted(notebook)
    third_party -= {PLOTTING}
    assert third_party <= required, f"imported but not required: {sorted(third_party - required)}"
    assert required <= third_party, f"required but never imported: {sorted(required - third_party)}"


def test_the_site_is_importable_from_the_checkout() -> None:
    """Not in the wheel, yet the docs build and the tests import it: the editable install
    (``dev-mode-dirs`` in pyproject.toml) puts ``src/`` on the path."""
    import attention_site

    assert Path(attention_site.__file__).parent == ROOT / "src" / "attention_site"


def test_the_check_finds_a_site_import() -> None:
    text = "def f():\n    import matplotlib.pyplot as plt\n    from attention_site import render\n"
    assert imported_roots(text) & SITE_TOOLS == {"matplotlib", "attention_site"}
