"""Every public module has its reference page, linked from the index and the navigation.

The API and the derivations are one page per module (a single page of them all took seconds
to lay out on a phone); a module added without its page would be missing from the site.
"""

from __future__ import annotations

import ast
import pkgutil
import re
from pathlib import Path

import pytest

import attention_math.derivations

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: object) -> set[str]:
    path = package.__path__  # type: ignore[attr-defined]
    return {m.name for m in pkgutil.iter_modules(path) if not m.name.startswith("_")}


def _index_list(index: Path) -> list[str]:
    """The MODULES list printed by the index page's executed block (parsed, not run)."""
    block = re.search(r"MODULES = (\[.*?\])", index.read_text(encoding="utf-8"), re.S)
    assert block, f"{index}: no MODULES list"
    return list(ast.literal_eval(block.group(1)))


@pytest.mark.parametrize("folder", ["api", "derivations"])
def test_every_listed_module_has_its_page_in_the_navigation(folder: str) -> None:
    pages = ROOT / "docs" / "reference" / folder
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for name in _index_list(pages / "index.md"):
        page = pages / f"{name}.md"
        assert page.is_file(), f"{name} is listed but has no page {page}"
        assert f"reference/{folder}/{name}.md" in nav, f"{page} is not in the navigation"
        assert (
            f"::: attention_math.{'derivations.' if folder == 'derivations' else ''}{name}\n"
            in (page.read_text(encoding="utf-8"))
        ), f"{page} does not render attention_math's {name}"


def test_every_derivation_module_is_listed() -> None:
    listed = _index_list(ROOT / "docs" / "reference" / "derivations" / "index.md")
    assert len(listed) == len(set(listed)), "a module listed twice"
    assert set(listed) == _modules(attention_math.derivations)


def test_every_public_constant_has_a_docstring_the_reference_can_render() -> None:
    """A constant in ``__all__`` is documented by a string right after it (a ``#:`` comment
    above it is Sphinx's convention, which mkdocstrings does not read: the page showed
    nothing)."""
    bare = []
    for path in sorted((ROOT / "src" / "attention_math").rglob("*.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        public: set[str] = set()
        for node in body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                public = set(ast.literal_eval(node.value))
        for node, after in zip(body, [*body[1:], None], strict=True):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)} & public
            documented = (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            )
            if names and not documented:
                bare.append(f"{path.relative_to(ROOT)}: {sorted(names)}")
    assert not bare, bare
