"""The build's hooks reach other libraries' private internals through one adapter module per
library (``hooks/*_adapter.py``), each written against one version of that library. When the
installed version changes, these tests fail and say which file to read again.

Nothing else touches them: no module of the project imports a library's private module
(``markdown_exec._internal``, ``numpy._core``: a name part with one leading underscore) but its
adapter (pytest's own ``_pytest``, in the suite's conftest, aside), and no other hook assigns
to an attribute of a library's module or class (a monkeypatch). ``overrides/main.html``
depends on texts of mkdocs-material's own templates and script, listed in
``hooks/material_adapter.py`` and held to the theme here.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest

from attention_site.checks.hooks import HOOKS, load_hook

ROOT = HOOKS.parent

ADAPTERS = {
    "markdown_exec_adapter": "markdown-exec",
    "material_adapter": "mkdocs-material",
    "mkdocstrings_adapter": "mkdocstrings-python",
    "pymdownx_adapter": "pymdown-extensions",
}


@pytest.mark.parametrize(("adapter", "library"), ADAPTERS.items())
def test_the_installed_library_is_the_one_the_adapter_was_written_against(
    adapter: str, library: str
) -> None:
    module = load_hook(adapter)
    assert module.installed() == module.PINNED, (
        f"{library} {module.installed()} is installed, but hooks/{adapter}.py was written "
        f"against {library} {module.PINNED}: check that the private names it uses "
        f"({', '.join(module.private_names())}) still mean the same in {module.installed()}, "
        f"then set PINNED there to {module.installed()!r}"
    )


@pytest.mark.parametrize(("adapter", "library"), ADAPTERS.items())
def test_every_private_name_the_adapter_uses_exists(adapter: str, library: str) -> None:
    module = load_hook(adapter)
    missing = [name for name, obj in module.private_names().items() if obj is None]
    assert not missing, f"{library} {module.installed()} has no {missing} (hooks/{adapter}.py)"


def _python_files() -> list[Path]:
    """The project's own Python: hooks, library and site, tests, benchmarks."""
    dirs = ("hooks", "src", "tests", "benchmarks")
    return sorted(path for d in dirs for path in (ROOT / d).rglob("*.py"))


@functools.cache
def _ours() -> frozenset[str]:
    """The project's top-level module names: hooks and benchmarks import their folder's
    modules (``_common``) by name."""
    folders = (HOOKS, ROOT / "benchmarks")
    stems = {path.stem for d in folders for path in d.glob("*.py")}
    return frozenset({"attention_math", "attention_site", "tests", *stems})


def _private(module: str) -> bool:
    """A library's private module: a part of its dotted name starts with one underscore
    (``markdown_exec._internal``, ``numpy._core``); the project's own modules are not.

    Examples:
        >>> _private("numpy._core._multiarray_umath"), _private("numpy.lib.introspect")
        (True, False)
        >>> _private("attention_math._checks"), _private("__future__")
        (False, False)
    """
    parts = module.split(".")
    if parts[0] in _ours() | sys.stdlib_module_names:
        return False
    return any(p.startswith("_") and not p.startswith("__") for p in parts)


def _private_imports(tree: ast.AST) -> list[str]:
    """The private modules of other libraries that ``tree`` imports."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _private(node.module):
                found.append(node.module)
    return found


#: pytest's plugin API is its ``_pytest`` package; the suite's one use is the workaround for
#: pytest-xdist's groups in ``tests/conftest.py`` (``coerce_node_id``, pytest >= 9.2)
PYTEST_OWN = {"tests/conftest.py": ["_pytest.nodeid"]}


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_no_other_module_imports_a_private_module() -> None:
    bad = {
        str(path.relative_to(ROOT)): names
        for path in _python_files()
        if path.parent != HOOKS or path.stem not in ADAPTERS
        if (names := _private_imports(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert bad == PYTEST_OWN, f"private modules of a library imported outside its adapter: {bad}"


def _third_party_names(tree: ast.AST) -> set[str]:
    """The names ``tree`` binds to another library's modules or objects by importing them."""
    ours = {path.stem for path in HOOKS.glob("*.py")} | {"attention_math", "attention_site"}
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.partition(".")[0]
                if top not in ours and top not in sys.stdlib_module_names:
                    names.add(alias.asname or top)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.partition(".")[0]
            if top not in ours and top not in sys.stdlib_module_names:
                names.update(alias.asname or alias.name for alias in node.names)
    return names


def _root(node: ast.expr) -> str | None:
    """The name an attribute or item chain starts from (``a`` of ``a.b[c].d``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _monkeypatches(source: str) -> list[str]:
    """Each place ``source`` assigns to (or deletes, or ``setattr``s) an attribute or item of a
    module or object it imported from another library."""
    tree = ast.parse(source)
    theirs = _third_party_names(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
            and node.args
            and _root(node.args[0]) in theirs
        ):
            found.append((node.lineno, f"{node.func.id}({ast.unparse(node.args[0])}, ...)"))
        while targets:
            target = targets.pop()
            if isinstance(target, ast.Tuple | ast.List):
                targets += target.elts
            elif isinstance(target, ast.Attribute | ast.Subscript) and _root(target) in theirs:
                found.append((target.lineno, ast.unparse(target)))
    return [f"line {line}: {what}" for line, what in sorted(found)]


def test_no_other_hook_monkeypatches_a_library() -> None:
    bad = {
        path.name: places
        for path in sorted(HOOKS.glob("*.py"))
        if path.stem not in ADAPTERS
        if (places := _monkeypatches(path.read_text(encoding="utf-8")))
    }
    assert bad == {}, (
        f"hooks that change another library's modules or classes: {bad}; do it in that "
        "library's adapter (hooks/<library>_adapter.py, pinned in tests/test_hook_adapters.py)"
    )


def test_the_guard_sees_the_monkeypatches_the_memo_used_to_make() -> None:
    """What hooks/memo.py did itself before the Material and pymdownx adapters existed."""
    before = (
        "from material.plugins.search import plugin as _search\n"
        "from pymdownx import highlight as _highlight\n"
        "if not hasattr(_search, '_attention_math_parser'):\n"
        "    _search._attention_math_parser = _search.Parser\n"
        "def on_pre_build(config):\n"
        "    _search.Parser = MemoParser\n"
        "    _highlight.Highlight.highlight, x = _memo_highlight, 1\n"
        "    setattr(_highlight.Highlight, 'highlight', _memo_highlight)\n"
    )
    assert _monkeypatches(before) == [
        "line 4: _search._attention_math_parser",
        "line 6: _search.Parser",
        "line 7: _highlight.Highlight.highlight",
        "line 8: setattr(_highlight.Highlight, ...)",
    ]
    # the hooks' own business: the standard library, the configuration they are handed, and
    # their own modules (a hook's neighbour in hooks/, the project's packages)
    ours = (
        "import os\nimport exec_cache\nfrom attention_site import render\n"
        "os.environ['X'] = '1'\nexec_cache.STATE = 1\nrender.x = 2\n"
        "def on_config(config):\n    config.extra['y'] = 2\n"
    )
    assert _monkeypatches(ours) == []


THEME_TEXTS = load_hook("material_adapter").THEME_TEXTS


@pytest.mark.parametrize(
    ("file", "text", "relies"),
    THEME_TEXTS,
    ids=[f"{i}:{file.rsplit('/', 1)[-1]}" for i, (file, _, _) in enumerate(THEME_TEXTS)],
)
def test_what_overrides_main_html_relies_on_is_in_the_theme(
    file: str, text: str, relies: str
) -> None:
    material = load_hook("material_adapter")
    theirs = material.theme_file(file).read_text(encoding="utf-8")
    assert text in theirs, (
        f"mkdocs-material {material.installed()} (hooks/material_adapter.py was read from "
        f"{material.PINNED}) no longer has in its {file}:\n    {text}\nwhich {relies}. "
        "Re-check that against the theme, change it to match, then update THEME_TEXTS"
    )


def test_overrides_main_html_names_the_theme_s_bundle() -> None:
    """Its ``scripts`` block replaces the theme's, so it names the theme's script itself."""
    material = load_hook("material_adapter")
    main = (ROOT / "overrides" / "main.html").read_text(encoding="utf-8")
    assert material.theme_file(material.BUNDLE).is_file(), (
        f"mkdocs-material {material.installed()} has no {material.BUNDLE}: set BUNDLE in "
        "hooks/material_adapter.py and overrides/main.html to the name its base.html gives"
    )
    assert f"'{material.BUNDLE}' | url" in main, (
        f"overrides/main.html does not load the theme's script {material.BUNDLE}"
    )
    # and replaces the block rather than rewriting the theme's rendering of it
    assert "super() | replace" not in main and "super()|replace" not in main


def test_the_runner_round_trips() -> None:
    # what the execution cache and the parallel worker do: wrap the runner, then put it back
    exec_ = load_hook("markdown_exec_adapter")
    before = exec_.runner()

    def wrapper(*args: object, **kwargs: object) -> str:
        return before(*args, **kwargs)

    exec_.set_runner(wrapper)
    try:
        assert exec_.runner() is wrapper
        assert exec_.original_runner() is not wrapper
    finally:
        exec_.set_runner(before)
    assert exec_.runner() is before
