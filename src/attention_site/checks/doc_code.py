"""The Python inside ``docs/``, linted like the rest: ``python -m attention_site.checks.doc_code``.

Every executed block of a page (a ```` ```python exec="on" ```` fence, indented or not), and
every Python block of a ``=== "PyTorch"`` content tab (shown, not run: the build has no
PyTorch; ``tests/site/test_pytorch_tabs.py`` runs it), is written into a ``.py`` file in a
temporary folder, and ruff checks those files with the
project's configuration (``pyproject.toml``) but for ``IGNORED``. The blocks of one
markdown-exec ``session`` run one after the other in one namespace, so they go into one file,
in order; every other block is a file of its own. Each finding is reported at its line of the
page (``docs/forward/softmax.md:42:5: F401 …``); the exit status is 1 when there is one.

``--fix`` applies ruff's safe fixes (sorted imports, say) to each block on its own and writes
the block back into its page, indentation kept; what it cannot fix is then reported.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["IGNORED", "Block", "blocks", "fix", "lint", "main"]

ROOT = Path(__file__).resolve().parents[3]  # the checkout (the package is installed editable)
DOCS = ROOT / "docs"

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?:python|py)\b(?P<options>.*)$")
_EXEC = re.compile(r"""\bexec=["']?(?:on|1|true|yes)\b""", re.IGNORECASE)
# long lines are allowed in the pages as in docs/ (pyproject.toml); a session's blocks are
# cells, so a later block's imports come after the code of the blocks before it
IGNORED = ("E501", "E402", "E741")  # E741: the papers' names (O, the output), as in exercises
_SESSION = re.compile(r"""\bsession=["']?([\w.-]+)""")
_TAB = re.compile(r'^(?P<indent>[ \t]*)===\+?\s+"(?P<title>[^"]*)"')


@dataclass
class Block:
    """One executed block: its page, first line's number there, session, and code lines."""

    page: Path
    line: int  # of the block's first code line in the page, from 1
    session: str | None
    indent: str = ""
    code: list[str] = field(default_factory=list)


def blocks(page: Path) -> Iterator[Block]:
    """The executed Python blocks of the markdown page ``page``, and the Python blocks of its
    PyTorch tabs, in order.

    Examples:
        >>> import tempfile
        >>> page = [
        ...     "Text", '```python exec="on"', "x = 1", "```", "```python", "shown only", "```",
        ...     '=== "Tab"', "", '    ```python exec="on" session="s"', "    print(x)", "    ```",
        ...     '=== "PyTorch"', "", "    ```python", "    print(2)", "    ```",
        ... ]
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     md = Path(tmp) / "p.md"
        ...     _ = md.write_text("\\n".join(page))
        ...     [(b.line, b.session, b.code) for b in blocks(md)]
        [(3, None, ['x = 1']), (11, 's', ['print(x)']), (16, None, ['print(2)'])]
    """
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    tab: str | None = None  # the indent of the PyTorch tab the line is in
    while i < len(lines):
        line = lines[i]
        if line.strip() and tab is not None and not line.startswith(tab + "    "):
            tab = None
        titled = _TAB.match(line)
        if titled:
            tab = titled["indent"] if titled["title"] == "PyTorch" else None
        opened = _OPEN.match(line)
        i += 1
        if not opened:
            continue
        in_tab = tab is not None and opened["indent"] == tab + "    "
        if not (_EXEC.search(opened["options"]) or in_tab):
            continue
        indent, fence = opened["indent"], opened["fence"]
        session = _SESSION.search(opened["options"])
        block = Block(page, i + 1, session[1] if session else None, indent)
        closing = re.compile(rf"^{re.escape(indent)}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        while i < len(lines) and not closing.match(lines[i]):
            block.code.append(lines[i].removeprefix(indent))
            i += 1
        i += 1  # the closing fence
        yield block


# the three folders lint writes, and what ruff is asked there: blocks run alone; each
# session's blocks as one file, import order aside (a block ends where a cell ends, not with
# the blank line isort wants after imports); each block of a session alone, import order only
_KINDS = {"alone": (), "sessions": ("--extend-ignore", "I001"), "session_blocks": ("--select", "I")}


def _files(docs: Path, out: Path) -> dict[str, list[tuple[Path, int]]]:
    """Write each page's blocks into the folders of ``_KINDS`` under ``out``; return, per file
    written (its path under ``out``), the page and line of each of its lines."""
    where: dict[str, list[tuple[Path, int]]] = {}
    for kind in _KINDS:
        (out / kind).mkdir()
    for page in sorted(docs.rglob("*.md")):
        stem = re.sub(r"\W", "_", page.relative_to(docs).with_suffix("").as_posix())
        grouped: dict[str, list[Block]] = {}
        for n, block in enumerate(blocks(page)):
            if block.session:
                grouped.setdefault(f"sessions/{stem}__{block.session}.py", []).append(block)
                grouped[f"session_blocks/{stem}__{n}.py"] = [block]
            else:
                grouped[f"alone/{stem}__{n}.py"] = [block]
        for name, group in grouped.items():
            text: list[str] = []
            origin: list[tuple[Path, int]] = []
            for block in group:
                text += block.code
                origin += [(page, block.line + k) for k in range(len(block.code))]
            (out / name).write_text("\n".join(text) + "\n", encoding="utf-8")
            where[name] = origin
    return where


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    """ruff of this environment (the test group) with the project's settings but ``IGNORED``."""
    config = ["--config", str(ROOT / "pyproject.toml"), "--ignore", ",".join(IGNORED)]
    return subprocess.run(
        [
            str(Path(sysconfig.get_path("scripts")) / "ruff"),
            "check",
            *config,
            "--no-cache",
            "--exit-zero",
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
    )


def fix(docs: Path = DOCS) -> int:
    """Apply ruff's safe fixes to every executed block under ``docs``, each block alone, and
    write the changed blocks back into their pages; the number of blocks changed."""
    changed = 0
    for page in sorted(docs.rglob("*.md")):
        found = list(blocks(page))
        with tempfile.TemporaryDirectory(prefix="doc-code-") as tmp:
            files = []
            for n, block in enumerate(found):
                # a session's import may serve a later block: not removed as unused
                folder = Path(tmp) / ("session" if block.session else "alone")
                folder.mkdir(exist_ok=True)
                files.append(folder / f"block_{n}.py")
                files[-1].write_text("\n".join(block.code) + "\n", encoding="utf-8")
            for kind, keep in (("alone", ()), ("session", ("--unfixable", "F401"))):
                if (Path(tmp) / kind).is_dir():
                    _ruff("--fix", "--quiet", *keep, str(Path(tmp) / kind))
            fixed = [p.read_text(encoding="utf-8").rstrip("\n").split("\n") for p in files]
        lines = page.read_text(encoding="utf-8").split("\n")
        for block, code in reversed(list(zip(found, fixed, strict=True))):  # from the end
            if code != block.code:
                start = block.line - 1
                indented = [block.indent + c if c else c for c in code]
                lines[start : start + len(block.code)] = indented
                changed += 1
        page.write_text("\n".join(lines), encoding="utf-8")
    return changed


def lint(docs: Path = DOCS) -> list[str]:
    """ruff's findings in the executed blocks of the pages under ``docs``, each as
    ``page:line:column: CODE message`` with the page's own line."""
    found: list[tuple[str, int, int, str]] = []
    with tempfile.TemporaryDirectory(prefix="doc-code-") as tmp:
        out = Path(tmp)
        where = _files(docs, out)
        for kind, options in _KINDS.items():
            run = _ruff(*options, "--output-format", "json", str(out / kind))
            for item in json.loads(run.stdout):
                name = Path(item["filename"]).relative_to(out.resolve()).as_posix()
                page, line = where[name][item["location"]["row"] - 1]
                shown = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
                column = item["location"]["column"]
                found.append((str(shown), line, column, f"{item['code']} {item['message']}"))
    return [f"{page}:{line}:{column}: {what}" for page, line, column, what in sorted(found)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--fix"]:
        print(f"{fix()} block(s) fixed")
    elif args:
        print(__doc__)
        return 2
    found = lint()
    for finding in found:
        print(finding)
    count = sum(len(list(blocks(page))) for page in DOCS.rglob("*.md"))
    print(f"{len(found)} finding(s) in the {count} executed and PyTorch-tab blocks of docs/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
