"""Every public module has its reference page, generated, and in the navigation.

The API, the derivations and the site's machinery are one page per module (a single page of
them all took seconds to lay out on a phone), written at build time by
``hooks/gen_reference.py`` from `attention_site.pages.reference`: a module added to a package
gets its page, and no page is written by hand.
"""

from __future__ import annotations

import ast
import pkgutil
import re
from pathlib import Path

import pytest

import attention_math
import attention_math.derivations
from attention_site.pages.reference import (
    SECTIONS,
    module_page,
    modules,
    nav_file,
    rendered_in_docs,
    summary_list,
)
from tests.conftest import mkdocs_config

ROOT = Path(__file__).resolve().parents[1]


def _public(package: object, recursive: bool = False) -> set[str]:
    name = package.__name__  # type: ignore[attr-defined]
    walk = pkgutil.walk_packages if recursive else pkgutil.iter_modules
    found = walk(package.__path__, name + ".")  # type: ignore[attr-defined]
    return {
        m.name
        for m in found
        if not any(p.startswith("_") for p in m.name.split(".")) and not (recursive and m.ispkg)
    }


@pytest.mark.parametrize(
    ("section", "package", "recursive"),
    [
        (SECTIONS[0], attention_math, False),
        (SECTIONS[1], attention_math.derivations, False),
    ],
    ids=lambda x: getattr(x, "folder", ""),
)
def test_every_public_module_has_one_page(section, package, recursive) -> None:
    """A page generated here, or the lesson page that renders it in full; never both."""
    generated = {f"{section.package}.{m}" for m in modules(section)}
    elsewhere = _public(package, recursive) & rendered_in_docs()
    skipped = {f"{section.package}.{s}" for s in section.skip}
    assert generated | elsewhere | skipped == _public(package, recursive)
    assert not generated & elsewhere
    for name in modules(section):
        assert module_page(section, name).startswith(f"::: {section.package}.{name}\n")
        assert f"- [{name}]({name}.md)" in nav_file(section).splitlines()
        assert f"[`{section.package}.{name}`]({name}/): " in summary_list(section.folder)


def test_no_reference_page_is_written_by_hand() -> None:
    nav = mkdocs_config()["nav"]
    reference = next(e["Reference"] for e in nav if isinstance(e, dict) and "Reference" in e)
    for section in SECTIONS:
        folder = ROOT / "docs" / section.folder
        assert sorted(p.name for p in folder.iterdir()) == ["index.md"], folder
        assert {section.title: section.folder + "/"} in reference  # literate-nav's SUMMARY.md


@pytest.mark.docs
def test_the_built_reference_has_every_page_in_its_navigation(built_site: Path) -> None:
    for section in SECTIONS:
        assert not (built_site / section.folder / "SUMMARY").exists()  # the nav, not a page
        index = (built_site / section.folder / "index.html").read_text(encoding="utf-8")
        for name in modules(section):
            page = built_site / section.folder / name / "index.html"
            assert f'id="{section.package}.{name}"' in page.read_text(encoding="utf-8"), page
            assert f'href="{name}/"' in index, f"{section.folder}: no link to {name}"


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


DOCS = Path(__file__).resolve().parents[1] / "docs" / "exercises"


def test_the_api_page_documents_the_catalogue_function() -> None:
    import griffe

    src = Path(__file__).resolve().parents[1] / "src"
    package = griffe.load("attention_math", search_paths=[str(src)])
    blocks = re.findall(r"^::: (\S+)", (DOCS / "api.md").read_text(encoding="utf-8"), re.M)
    objects = [package[p.removeprefix("attention_math.")] for p in blocks]
    assert any(o.is_function and o.name == "catalogue" for o in objects)
    assert package["exercises"].members["catalogue"].is_module  # why members cannot name it
