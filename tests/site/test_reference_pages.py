"""Every public module has its reference page, generated, and in the navigation.

The API (its subpackages' modules included: the exercises, the toy model) and the
derivations are one page per module (a single page of them all took seconds to lay out on a
phone), written before the build by ``attention_site.prepare`` from
`attention_site.pages.reference`: a module added to a package gets its page, and no page is
written by hand.
"""

from __future__ import annotations

import ast
import pkgutil
import re
import zlib
from pathlib import Path

import pytest

import attention_math
import attention_math.derivations
from attention_site.pages.reference import (
    SECTIONS,
    generated_files,
    is_package,
    module_page,
    modules,
    nav_file,
    page_path,
    summary_list,
)
from tests.conftest import mkdocs_config

ROOT = Path(__file__).resolve().parents[2]


def _public(package: object) -> set[str]:
    """Every module under ``package``, its subpackages' included, no part of its name private."""
    name = package.__name__  # type: ignore[attr-defined]
    found = pkgutil.walk_packages(package.__path__, name + ".")  # type: ignore[attr-defined]
    return {m.name for m in found if not any(p.startswith("_") for p in m.name.split("."))}


@pytest.mark.parametrize(
    ("section", "package"),
    [(SECTIONS[0], attention_math), (SECTIONS[1], attention_math.derivations)],
    ids=lambda x: getattr(x, "folder", ""),
)
def test_every_public_module_has_one_page(section, package) -> None:
    """Subpackages and their modules included (``attention_math.toy.train``): each has a page
    of this section, or of the section of its own that ``skip`` names."""
    generated = {f"{section.package}.{m}" for m in modules(section)}
    skipped = {m for m in _public(package) if m.split(".")[1] in section.skip}
    assert generated | skipped == _public(package)
    assert not generated & skipped
    paths = [page_path(section, name) for name in modules(section)]
    assert len(set(paths)) == len(paths)  # no two modules on one page
    for name, path in zip(modules(section), paths, strict=True):
        assert module_page(section, name).startswith(f"::: {section.package}.{name}\n")
        depth = "    " * (name.count(".") + is_package(section, name))  # under its section
        assert f"{depth}- [{name.rpartition('.')[2]}]({path})" in nav_file(section).splitlines()
        assert f"[`{section.package}.{name}`](" in summary_list(section.folder)


def test_a_subpackage_is_the_index_of_its_modules_folder() -> None:
    api = SECTIONS[0]
    assert is_package(api, "exercises") and not is_package(api, "exercises.parse")
    assert "toy.train" in modules(api)  # the docs name attention_math.toy.train.train
    assert page_path(api, "exercises") == "exercises/index.md"
    assert page_path(api, "exercises.chapters.views") == "exercises/chapters/views.md"
    lines = nav_file(api).splitlines()
    at = lines.index("- exercises")  # a section of the navigation, its page first
    assert lines[at + 1 : at + 3] == [
        "    - [exercises](exercises/index.md)",
        "    - [build](exercises/build.md)",
    ]


def test_every_navigation_link_names_a_generated_page() -> None:
    """What ``attention_site.prepare`` writes is one list: each
    section's ``SUMMARY.md`` links its index page (in ``docs/``) and exactly the module pages
    generated for it."""
    files = generated_files()
    docs = Path(__file__).resolve().parents[2] / "docs"
    for section in SECTIONS:
        folder = section.folder
        links = re.findall(r"\]\(([^)]+)\)", files[f"{folder}/SUMMARY.md"])
        assert links[0] == "index.md" and (docs / folder / "index.md").is_file()
        pages = {path for path in files if path.startswith(f"{folder}/")} - {f"{folder}/SUMMARY.md"}
        assert {f"{folder}/{link}" for link in links[1:]} == pages


def test_no_page_in_docs_renders_a_module_itself() -> None:
    """Every module's page is generated: a page in ``docs/`` links to it, and never renders a
    module with mkdocstrings' ``::: module`` (the site's own machinery least of all)."""
    generated = {ROOT / "docs" / path for path in generated_files()}  # written by prepare
    found = [
        f"{page.relative_to(ROOT)}: {line}"
        for page in sorted(set((ROOT / "docs").rglob("*.md")) - generated)
        for line in page.read_text(encoding="utf-8").splitlines()
        if re.match(r"::: [\w.]+\s*$", line)
    ]
    assert not found, found


def test_no_reference_page_is_written_by_hand() -> None:
    nav = mkdocs_config()["nav"]
    reference = next(e["Reference"] for e in nav if isinstance(e, dict) and "Reference" in e)
    for section in SECTIONS:
        folder = ROOT / "docs" / section.folder
        generated = {ROOT / "docs" / path for path in generated_files()}  # written by prepare
        by_hand = {p for p in folder.rglob("*") if p.is_file()} - generated
        assert sorted(p.name for p in by_hand if p.suffix != ".ipynb") == ["index.md"], folder
        assert {section.title: section.folder + "/"} in reference  # literate-nav's SUMMARY.md


@pytest.mark.docs
def test_the_built_reference_has_every_page_in_its_navigation(built_site: Path) -> None:
    for section in SECTIONS:
        assert not (built_site / section.folder / "SUMMARY").exists()  # the nav, not a page
        index = (built_site / section.folder / "index.html").read_text(encoding="utf-8")
        for name in modules(section):
            address = page_path(section, name).removesuffix(".md").removesuffix("index")
            page = built_site / section.folder / address.rstrip("/") / "index.html"
            assert f'id="{section.package}.{name}"' in page.read_text(encoding="utf-8"), page
            href = address.rstrip("/") + "/"
            assert f'href="{href}"' in index, f"{section.folder}: no link to {name}"


@pytest.mark.docs
def test_the_inventory_names_the_library_only(built_site: Path) -> None:
    """``objects.inv`` (what other sites link to) holds the documented library's names, not the
    site's: no page renders a module of ``attention_site``, so mkdocstrings never loads it."""
    head, _, body = (built_site / "objects.inv").read_bytes().partition(b"zlib.\n")
    assert head.startswith(b"# Sphinx inventory version 2")
    names = [line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines()]
    assert "attention_math.exercises.catalogue.catalogue" in names
    assert "attention_math.toy.train.train" in names
    assert not [n for n in names if not n.startswith("attention_math")], names[:20]


@pytest.mark.docs
def test_a_function_with_overloads_shows_one_signature(built_site: Path) -> None:
    """A function's reference entry shows the one signature a reader calls, as every
    function's does (``show_overloads: false``: a typing overload is for the type checker)."""
    page = (built_site / "reference/api/tiled/index.html").read_text(encoding="utf-8")
    assert 'id="attention_math.tiled.tiled_attention"' in page
    entry = page.split('id="attention_math.tiled.tiled_attention"', 1)[1]
    entry = entry.split('id="attention_math.', 1)[0]  # up to the next object's heading
    assert entry.count('class="doc-signature') == 1
    assert "doc-overloads" not in page


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
