"""Docstrings use mkdocstrings cross-references, never Sphinx roles.

mkdocstrings reads docstrings as Markdown: a Sphinx role such as ``:func:`softmax``` is shown
as raw text on the API pages. A cross-reference is written
``[`softmax`][attention_math.numeric.softmax]`` (or ``[`attention_math.tiled`][]`` for a
module) and becomes a link; ``mkdocs build --strict`` fails if its target is not rendered on
some page.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

#: A Sphinx role (``:func:`x```, ``:py:meth:`x```, ...) as it would appear in source or on a page.
ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const|ref)\s*:`")


def test_no_docstring_or_comment_uses_a_sphinx_role() -> None:
    found = [
        f"{path.relative_to(SRC)}:{n}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if ROLE.search(line)
    ]
    assert not found, "Sphinx roles show as raw text on the API pages:\n" + "\n".join(found)


def test_the_pattern_catches_the_roles_it_is_meant_to() -> None:
    for text in (":func:`softmax`", ":mod:`attention_math.tiled`", ":py:meth:`x.y`"):
        assert ROLE.search(text), text
    assert not ROLE.search("[`softmax`][attention_math.numeric.softmax]")


_SKIP = ("script", "style", "pre", "code")


class _Text(HTMLParser):
    """The prose of a page (outside ``<script>``, ``<style>``, ``<pre>`` and ``<code>``: code
    may index ``a[0][1]``) and its link targets."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.hrefs: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def problems(html: str) -> list[str]:
    """What a reader would see as markup in ``html``'s prose: a Sphinx role (Markdown has
    turned its backticks into ``<code>``, so the role name is what is left) or a
    cross-reference autorefs did not resolve (``[<code>x</code>][target]``)."""
    parsed = _Text()
    parsed.feed(html)
    text = "".join(parsed.text)
    roles = re.findall(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const|ref):", text)
    refs = re.findall(r"\]\[[A-Za-z_][\w.]*\]", text)
    return sorted(set(roles + refs))


def test_the_page_check_sees_what_a_reader_would() -> None:
    assert problems("<p>see :func:<code>softmax</code> for</p>") == [":func:"]
    assert problems("<p>[<code>x</code>][attention_math.x] and</p>") == ["][attention_math.x]"]
    assert not problems('<p><a href="#a"><code>softmax</code></a>, <code>a[0][1]</code></p>')


def _api_pages(site: Path) -> dict[str, str]:
    """Every built page that holds mkdocstrings output, as HTML."""
    pages = {}
    for page in sorted(site.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        if 'class="doc doc-' in html:
            pages[str(page.relative_to(site))] = html
    return pages


@pytest.mark.docs
def test_the_api_pages_show_no_sphinx_role_and_link_the_cross_references(built_site) -> None:
    pages = _api_pages(built_site)
    assert "reference/api/numeric/index.html" in pages, sorted(pages)
    for name, html in pages.items():
        assert not problems(html), f"{name} shows markup as text: {problems(html)}"
    # the converted references are links, to an API page and to another page (tiled is on
    # Long sequences); the API reference is one page per module
    api = _Text()
    for name, html in pages.items():
        if name.startswith("reference/api/"):
            api.feed(html)
    anchors = {href.rpartition("#")[2] for href in api.hrefs}
    assert {"attention_math.numeric.attention", "attention_math.tiled.takes_tiles"} <= anchors


def _returns_items(docstring: str) -> list[object]:
    import griffe

    sections = griffe.Docstring(docstring).parse("google", warnings=False)
    return [item for s in sections if s.kind.value == "returns" for item in s.value]


def test_every_returns_section_is_one_item() -> None:
    # mkdocstrings' Google parser reads every line of a Returns section written at the first
    # line's indent as a new item: prose wrapped that way became a table of broken rows.
    import griffe

    package = griffe.load("attention_math", search_paths=[str(SRC)], docstring_parser="google")
    split = []

    def walk(obj: griffe.Object) -> None:
        for member in obj.members.values():
            if member.is_alias:
                continue
            if member.docstring and len(_returns_items(member.docstring.value)) > 1:
                split.append(member.path)
            if member.is_module or member.is_class:
                walk(member)  # type: ignore[arg-type]

    walk(package)
    assert not split, f"Returns sections split into several items: {split}"


def test_the_returns_check_sees_a_split_section() -> None:
    wrapped = "Attention.\n\nReturns:\n    The output, followed by\n    the weights.\n"
    assert len(_returns_items(wrapped)) == 2
    assert len(_returns_items(wrapped.replace("\n    the", "\n        the"))) == 1
