"""The API reference, generated from the packages: one page per public module, and its nav.

``python -m attention_site.prepare`` writes into ``docs/``, for each section, a
page per module that holds only mkdocstrings' ``::: module`` and a ``SUMMARY.md`` that
``literate-nav`` reads as the section's navigation. Adding a module to a package adds its
page: nothing is listed by hand, and no page in ``docs/`` renders a module itself (a lesson
links to the module's page, as "The online softmax" links to ``reference/api/tiled/``). A
module is public when no part of its dotted name starts with ``_``; subpackages are walked
too: a subpackage's page is the index of its folder (``exercises/``), with a page per module
under it (``exercises/catalogue/``). Each section's index page prints
[`summary_list`][attention_site.pages.reference.summary_list].
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache

__all__ = [
    "OPTIONS",
    "SECTIONS",
    "Section",
    "generated_files",
    "is_package",
    "module_page",
    "modules",
    "nav_file",
    "page_path",
    "summary_list",
]


@dataclass(frozen=True)
class Section:
    """One section of the reference: the package it documents and its folder under docs/."""

    folder: str
    """The folder under ``docs/`` (``reference/api``): a module's page is ``<module>.md``, a
    subpackage's ``<subpackage>/index.md`` (see `page_path`)."""
    package: str
    """The package whose public modules, its subpackages' included, the section documents."""
    title: str
    """The section's name in the navigation."""
    skip: tuple[str, ...] = ()
    """Subpackages documented in a section of their own (with all of their modules)."""


SECTIONS = (
    # the learner's library, the exercises and the toy model included; the derivations in a
    # section of their own, the command line on the "Command line" page
    Section("reference/api", "attention_math", "API", skip=("derivations",)),
    Section("reference/derivations", "attention_math.derivations", "Derivations"),
    # the site's machinery is not a reader's API: its modules are documented in their
    # docstrings and CONTRIBUTING.md, and no reader's page renders them
)
"""The sections of the reference, in the order of the navigation."""


@cache
def _walk(package: str) -> tuple[tuple[str, bool], ...]:
    """Every module under ``package`` (dotted, relative to it) and whether it is a package."""
    path = importlib.import_module(package).__path__
    return tuple(
        (info.name.removeprefix(package + "."), info.ispkg)
        for info in pkgutil.walk_packages(path, package + ".", onerror=_unimportable)
    )


def _unimportable(name: str) -> None:
    """``walk_packages`` passes over a subpackage that fails to import: here it fails."""
    raise ImportError(f"{name} does not import: its modules' reference pages cannot be written")


def modules(section: Section) -> list[str]:
    """The public modules of ``section``'s package and of its subpackages, by dotted name
    relative to it, a subpackage just before its modules.

    Examples:
        >>> from attention_site.pages.reference import SECTIONS, modules
        >>> api = modules(SECTIONS[0])
        >>> "numeric" in api, "_checks" in api, "__main__" in api
        (True, False, False)
        >>> "derivations" in api, any(m.startswith("derivations.") for m in api)
        (False, False)
        >>> api.index("toy") < api.index("toy.train")
        True
    """
    found = []
    for name, _ in _walk(section.package):
        parts = name.split(".")
        if any(p.startswith("_") for p in parts) or parts[0] in section.skip:
            continue
        found.append(name)
    return sorted(found, key=lambda name: name.split("."))


def is_package(section: Section, name: str) -> bool:
    """Whether module ``name`` of ``section`` is a package (its page indexes a folder).

    Examples:
        >>> from attention_site.pages.reference import SECTIONS, is_package
        >>> is_package(SECTIONS[0], "toy"), is_package(SECTIONS[0], "toy.train")
        (True, False)
    """
    return dict(_walk(section.package))[name]


def page_path(section: Section, name: str) -> str:
    """The page of module ``name``, relative to the section's folder: ``<path>.md`` for a
    module, ``<path>/index.md`` for a package (its modules' pages are in that folder).

    Examples:
        >>> from attention_site.pages.reference import SECTIONS, page_path
        >>> [page_path(SECTIONS[0], m) for m in ("numeric", "exercises", "exercises.parse")]
        ['numeric.md', 'exercises/index.md', 'exercises/parse.md']
    """
    path = name.replace(".", "/")
    return f"{path}/index.md" if is_package(section, name) else f"{path}.md"


def _address(section: Section, name: str) -> str:
    """The built page's address relative to the section's index page (``exercises/parse/``)."""
    return page_path(section, name).removesuffix(".md").removesuffix("index").rstrip("/") + "/"


OPTIONS: dict[str, dict[str, object]] = {
    # the data run to hundreds of lines; the pages that use them print them
    "attention_math.examples": {"show_attribute_values": False},
}
"""mkdocstrings options of a module's page beyond the section's own (``heading_level: 1``)."""


def module_page(section: Section, name: str) -> str:
    """The page of module ``name``: mkdocstrings renders it, its name the page's title.

    Examples:
        >>> from attention_site.pages.reference import SECTIONS, module_page
        >>> print(module_page(SECTIONS[0], "numeric"), end="")
        ::: attention_math.numeric
            options:
              heading_level: 1
        >>> "show_attribute_values: false" in module_page(SECTIONS[0], "examples")
        True
    """
    options = {"heading_level": 1, **OPTIONS.get(f"{section.package}.{name}", {})}
    lines = [f"::: {section.package}.{name}", "    options:"]
    lines += [
        f"      {key}: {str(value).lower() if isinstance(value, bool) else value}"
        for key, value in options.items()
    ]
    return "\n".join(lines) + "\n"


def _indent(name: str) -> str:
    """Four spaces per level below the section's package: a subpackage's modules nest."""
    return "    " * name.count(".")


def nav_file(section: Section) -> str:
    """``SUMMARY.md`` for ``literate-nav``: the section's index page, then one link per module;
    a subpackage is a section of the navigation, its page first (the theme makes it the
    section's index: ``navigation.indexes``), then its modules. (Linked from the section's
    line, its page would be titled "Index".)

    Examples:
        >>> from attention_site.pages.reference import SECTIONS, nav_file
        >>> print(nav_file(SECTIONS[1]).splitlines()[1])
        - [bias_gradients](bias_gradients.md)
        >>> lines = nav_file(SECTIONS[0]).splitlines()
        >>> lines[lines.index("- toy") + 1]  # the subpackage's page, then its modules
        '    - [toy](toy/index.md)'
        >>> lines[lines.index("- toy") + 2].startswith("    - [")
        True
    """
    lines = [f"- [{section.title}](index.md)"]
    for name in modules(section):
        title, indent = name.rpartition(".")[2], _indent(name)
        if is_package(section, name):  # a section without a link, its page first (its index)
            lines.append(f"{indent}- {title}")
            indent += "    "
        lines.append(f"{indent}- [{title}]({page_path(section, name)})")
    return "\n".join(lines) + "\n"


def generated_files() -> dict[str, str]:
    """Every file the reference adds to ``docs/`` before the build, by its path there: each
    section's module pages and its ``SUMMARY.md``, written by ``attention_site.prepare`` for
    either generator (both read them with literate-nav).

    Examples:
        >>> from attention_site.pages.reference import generated_files
        >>> files = generated_files()
        >>> files["reference/api/exercises/parse.md"].splitlines()[0]
        '::: attention_math.exercises.parse'
        >>> "reference/api/SUMMARY.md" in files and "reference/derivations/SUMMARY.md" in files
        True
    """
    files = {}
    for section in SECTIONS:
        for name in modules(section):
            files[f"{section.folder}/{page_path(section, name)}"] = module_page(section, name)
        files[f"{section.folder}/SUMMARY.md"] = nav_file(section)
    return files


def summary_list(folder: str) -> str:
    """The index page's list: each module of the section in ``folder``, linked, with the first
    paragraph of its docstring; a subpackage's modules nested under it.

    Examples:
        >>> from attention_site.pages.reference import summary_list
        >>> lines = summary_list("reference/api").splitlines()
        >>> lines[0].startswith("- [`attention_math.audit`](audit/): ")
        True
        >>> [line[:46] for line in lines if "toy.train" in line]
        ['    - [`attention_math.toy.train`](toy/train/)']
    """
    (section,) = [s for s in SECTIONS if s.folder == folder]
    out = []
    for name in modules(section):
        doc = importlib.import_module(f"{section.package}.{name}").__doc__ or ""
        summary = " ".join(doc.strip().split("\n\n")[0].split())
        link = f"[`{section.package}.{name}`]({_address(section, name)})"
        out.append(f"{_indent(name)}- {link}: {summary}")
    return "\n".join(out) + "\n"
