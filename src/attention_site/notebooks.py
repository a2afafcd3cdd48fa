"""Every page that runs code can be downloaded as a Jupyter notebook.

A page's executed blocks (```` ```python exec="on" ````) become code cells, in order; the
prose between them becomes Markdown cells, with admonitions and tabs turned into bold
headings (Jupyter does not know them) and links to other pages made absolute; a block shown
and not run, such as a forward page's PyTorch tab (the notebook runs without PyTorch), stays
a Markdown code block. A hidden block
(no ``source=``) that is the site's own work (it imports ``attention_site`` or reads the
repository's files) is left out: the notebook holds what a learner runs, and runs top to bottom
in Jupyter after ``pip install attention-math[notebook]``, its first code cell making the
pages' ``print`` show maths and figures (``attention_math.display.show``).
``tests/build/test_notebooks.py`` executes every one, from the wheel alone.
``attention_site.prepare`` writes it into ``docs/``, in the folder of the page's HTML
(`notebook_path`); the Markdown extension ``attention_site.notebook_link`` gives the page a
"Download notebook" link under its title (the home page, at its end).

Entry points, plain functions of a page's Markdown: ``cells`` (the cells), ``notebook`` (the
whole notebook), ``runs_code`` (whether a page has one).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

import nbformat
from nbformat import v4 as _v4

__all__ = [
    "LINK_CLASS",
    "cells",
    "notebook",
    "notebook_name",
    "notebook_path",
    "page_address",
    "runs_code",
]

# nbformat's functions carry no type annotations
v4: Any = _v4

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})\s*(?P<info>.*)$")
CONTAINER = re.compile(
    r'^(?P<indent>[ \t]*)(?:(?:!!!|\?\?\?\+?)\s*(?P<kind>[\w-]+)|===)\s*(?:"(?P<title>[^"]*)")?'
)
LINK = re.compile(r"\]\((?P<target>[^)\s:#]+\.md)(?P<anchor>#[^)\s]*)?\)")
ATTRS = re.compile(r"\s*\{[:#.][^}\n]*\}\s*$")  # attr_list: { #eq-x } and friends
LINK_CLASS = "notebook-link"
# code reading the repository's committed data (benchmark results), or the site's own
# machinery (attention_site, which the wheel does not hold), not only the library
SITE_CODE = re.compile(r"""Path\(["'](benchmarks|data|docs|src)/|\battention_site\b""")
INSTALL = "pip install attention-math[notebook]"
# the one line a notebook adds to the page's code: the pages print Markdown, shown typeset
RICH_PRINT = (
    "from attention_math.display import show\n\n"
    "print = show  # in Jupyter, print shows the maths, tables and figures the page prints"
)


def _executed(info: str) -> bool:
    return info.startswith("python") and re.search(r'\bexec="(on|1|true)"', info) is not None


def site_only(info: str, code: str) -> bool:
    """Whether an executed block is the site's own work, left out of the notebook: hidden
    (no ``source=``), and importing ``attention_site`` or reading the repository's files.

    Examples:
        >>> site_only('python exec="on"', "from attention_site.pages import x")
        True
        >>> site_only('python exec="on" source="tabbed-right"', "import attention_site")
        False
        >>> site_only('python exec="on"', "from attention_math.display import table")
        False
    """
    return "source=" not in info and SITE_CODE.search(code) is not None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def cells(markdown: str, src_uri: str = "page.md", site_url: str = "/") -> list[Any]:
    """The notebook cells of a page's Markdown source: prose and executed code, in order.

    Examples:
        >>> source = 'Text [a](b.md).\\n\\n```python exec="on"\\nprint(1)\\n```\\n'
        >>> source += '\\n!!! note "N"\\n    more\\n'
        >>> for c in cells(source, "p/index.md", "https://x.org/"):
        ...     print(c.cell_type, repr(c.source))
        markdown 'Text [a](https://x.org/p/b/).'
        code 'print(1)'
        markdown '**N**\\n\\nmore'
    """
    out: list[Any] = []
    prose: list[str] = []
    containers: list[int] = []  # indents of the admonitions and tabs the line is in
    lines = markdown.splitlines()
    i = 0

    def flush() -> None:
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(prose)).strip("\n")
        if text.strip():
            out.append(v4.new_markdown_cell(text))
        prose.clear()

    while i < len(lines):
        line = lines[i]
        if line.strip():
            while containers and _indent(line) <= containers[-1]:
                containers.pop()
        depth = 4 * len(containers)
        fence = FENCE.match(line)
        if fence:
            indent, ticks = fence["indent"], fence["ticks"]
            body = []
            i += 1
            while i < len(lines) and not re.match(
                rf"^[ \t]*{ticks[0]}{{{len(ticks)},}}\s*$", lines[i]
            ):
                body.append(
                    lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip()
                )
                i += 1
            i += 1  # the closing fence
            if _executed(fence["info"]):
                code = "\n".join(body).strip("\n")
                if not site_only(fence["info"], code):
                    flush()
                    out.append(v4.new_code_cell(code))
            else:
                prose.extend([ticks + fence["info"], *body, ticks])
            continue
        container = CONTAINER.match(line)
        if container:
            title = container["title"] or (container["kind"] or "").replace("-", " ").capitalize()
            prose.extend(["", f"**{title}**", ""] if title else [])
            containers.append(_indent(line))
        else:
            prose.append(line[depth:] if line[:depth].strip() == "" else line.lstrip())
        i += 1
    flush()
    for cell in out:
        if cell.cell_type == "markdown":
            text = ATTRS.sub("", cell.source) if "\n" not in cell.source else cell.source
            text = "\n".join(ATTRS.sub("", t) for t in text.split("\n"))
            cell.source = LINK.sub(lambda m: _absolute(m, src_uri, site_url), text)
    return out


def page_address(src_uri: str, site_url: str) -> str:
    """The address of the page built from ``src_uri`` ("forward/scores.md"): directory URLs.

    Examples:
        >>> page_address("forward/scores.md", "https://x.org/s/"), page_address("why/index.md", "/")
        ('https://x.org/s/forward/scores/', '/why/')
    """
    path = re.sub(r"(^|/)index$", r"\1", src_uri.removesuffix(".md"))
    return site_url.rstrip("/") + "/" + (path.rstrip("/") + "/" if path else "")


def _absolute(m: re.Match[str], src_uri: str, site_url: str) -> str:
    """A link to another page's source, as that page's address on the site."""
    target = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), m["target"]))
    return f"]({page_address(target, site_url)}{m['anchor'] or ''})"


def notebook(markdown: str, src_uri: str, site_url: str, title: str) -> Any:
    """The page as a notebook: a first cell saying where it comes from, then its cells."""
    nb = v4.new_notebook()
    page_url = page_address(src_uri, site_url)
    intro = (
        f"# {title}\n\nThis notebook is the page [{page_url}]({page_url}) of attention-math, "
        "with its code as cells. Install the package in the kernel's environment, "
        f"`{INSTALL}`; every cell runs top to bottom. The page's code prints Markdown (the "
        "site shows it as maths and tables): the first cell makes `print` show it so here."
    )
    body = cells(markdown, src_uri, site_url)
    if body and body[0].cell_type == "markdown" and body[0].source.startswith("# "):
        body[0].source = (
            body[0].source.split("\n", 1)[1].lstrip("\n") if "\n" in body[0].source else ""
        )
        if not body[0].source:
            body.pop(0)
    nb.cells = [v4.new_markdown_cell(intro), v4.new_code_cell(RICH_PRINT), *body]
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"  # not nbformat's random ids: two builds give the same file
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["attention_math"] = {"page": page_url}
    nbformat.validate(nb)
    return nb


def notebook_name(src_uri: str) -> str:
    """The notebook's file name: the page's path with dashes (``forward-softmax.ipynb``), and
    the folder's name for an index page (``why.ipynb``; the home page's is ``index.ipynb``).

    Examples:
        >>> notebook_name("forward/softmax.md"), notebook_name("why/index.md")
        ('forward-softmax.ipynb', 'why.ipynb')
        >>> notebook_name("index.md")
        'index.ipynb'
    """
    stem = Path(src_uri).with_suffix("").as_posix().replace("/", "-")
    return (stem.removesuffix("-index") or "index") + ".ipynb"


def notebook_path(src_uri: str) -> str:
    """Where the notebook goes under ``docs/``: in the folder of the page's HTML (directory
    URLs: ``forward/softmax.md`` is ``forward/softmax/index.html``), so that the page links it
    by its bare name.

    Examples:
        >>> notebook_path("forward/softmax.md"), notebook_path("why/index.md")
        ('forward/softmax/forward-softmax.ipynb', 'why/why.ipynb')
        >>> notebook_path("index.md")
        'index.ipynb'
    """
    page = src_uri.removesuffix(".md")
    folder = page.removesuffix("index").rstrip("/") if page.endswith("index") else page
    return posixpath.join(folder, notebook_name(src_uri))


def runs_code(markdown: str) -> bool:
    """Whether a page's source has a block that a learner runs: executed by the build and not
    the site's own work (a page whose code is all the site's has no notebook).

    Examples:
        >>> runs_code('```python exec="on"\\nprint(1)\\n```\\n')
        True
        >>> runs_code('```python exec="on"\\nfrom attention_site.pages import x\\n```\\n')
        False
    """
    return any(c.cell_type == "code" for c in cells(markdown))
