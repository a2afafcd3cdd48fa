"""The API reference, generated from the packages: one page per public module, and its nav.

``hooks/gen_reference.py`` (run by the ``gen-files`` plugin) writes, for each section, a
page per module that holds only mkdocstrings' ``::: module`` and a ``SUMMARY.md`` that
``literate-nav`` reads as the section's navigation. Adding a module to a package adds its
page: nothing is listed by hand. A module is public when no part of its dotted name starts
with ``_``, and a module that a lesson page renders in full (its ``::: module`` line is in
``docs/``, as ``attention_math.tiled`` on "Online softmax") has no second page. Each section's
index page prints [`summary_list`][attention_site.pages.reference.summary_list].
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = [
    "OPTIONS",
    "SECTIONS",
    "Section",
    "module_page",
    "modules",
    "nav_file",
    "rendered_in_docs",
    "summary_list",
]


@dataclass(frozen=True)
class Section:
    """One section of the reference: the package it documents and its folder under docs/."""

    folder: str
    """The folder under ``docs/`` (``reference/api``): its pages are ``<module>.md``."""
    package: str
    """The package whose public modules the section documents."""
    title: str
    """The section's name in the navigation."""
    recursive: bool = False
    """Whether modules of subpackages are documented too (named by their dotted path)."""
    skip: tuple[str, ...] = ()
    """Subpackages documented elsewhere (a section of their own, or a page of their own)."""


SECTIONS = (
    # the learner's library: its top-level modules; the derivations in a section of their
    # own, the exercises on their own page (docs/exercises/api.md), the command line on
    # the "Command line" page
    Section("reference/api", "attention_math", "API", skip=("derivations", "exercises")),
    Section("reference/derivations", "attention_math.derivations", "Derivations"),
    # the site's machinery is not a reader's API: its modules are documented in their
    # docstrings and CONTRIBUTING.md (a generated section of it listed imported names in
    # objects.inv differently from one build to the next)
)
"""The sections of the reference, in the order of the navigation."""


DOCS = Path(__file__).resolve().parents[3] / "docs"


@cache
def rendered_in_docs(docs: Path = DOCS) -> frozenset[str]:
    """The modules that a page in ``docs`` renders with mkdocstrings' ``::: module`` line.

    Examples:
        >>> from attention_site.pages.reference import rendered_in_docs
        >>> "attention_site.pages.conventions" in rendered_in_docs()
        True
    """
    return frozenset(
        m
        for page in docs.rglob("*.md")
        for m in re.findall(r"^::: ([\w.]+)\s*$", page.read_text(encoding="utf-8"), re.M)
    )


def modules(section: Section) -> list[str]:
    """The public modules of ``section``'s package, relative to it, sorted by name.

    Examples:
        >>> from attention_site.pages.reference import SECTIONS, modules
        >>> api = modules(SECTIONS[0])
        >>> "numeric" in api, "derivations" in api, "_checks" in api, "__main__" in api
        (True, False, False, False)
    """
    package = importlib.import_module(section.package)
    found = []
    walk = pkgutil.walk_packages if section.recursive else pkgutil.iter_modules
    for info in walk(package.__path__, section.package + "."):
        name = info.name.removeprefix(section.package + ".")
        if any(part.startswith("_") for part in name.split(".")) or name in section.skip:
            continue
        if info.ispkg and section.recursive:
            continue  # a subpackage's modules have pages; its __init__ only says what it holds
        if f"{section.package}.{name}" in rendered_in_docs():
            continue  # rendered in full on a lesson page: one page per module
        found.append(name)
    return sorted(found)


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


def nav_file(section: Section) -> str:
    """``SUMMARY.md`` for ``literate-nav``: the section's index page, then one link per module.

    Examples:
        >>> from attention_site.pages.reference import SECTIONS, nav_file
        >>> print(nav_file(SECTIONS[1]).splitlines()[1])
        - [bias_gradients](bias_gradients.md)
    """
    lines = [f"- [{section.title}](index.md)"]
    lines += [f"- [{name}]({name}.md)" for name in modules(section)]
    return "\n".join(lines) + "\n"


def summary_list(folder: str) -> str:
    """The index page's list: each module of the section in ``folder``, linked, with the first
    paragraph of its docstring.

    Examples:
        >>> from attention_site.pages.reference import summary_list
        >>> line = summary_list("reference/api").splitlines()[0]
        >>> line.startswith("- [`attention_math.audit`](audit/): ")
        True
    """
    (section,) = [s for s in SECTIONS if s.folder == folder]
    out = []
    for name in modules(section):
        doc = importlib.import_module(f"{section.package}.{name}").__doc__ or ""
        summary = " ".join(doc.strip().split("\n\n")[0].split())
        out.append(f"- [`{section.package}.{name}`]({name}/): {summary}")
    return "\n".join(out) + "\n"
