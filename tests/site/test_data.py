"""data/: what the pages read, in one folder, named by the scripts that write it.

The pages, the site's code, the tests and the guides name data files by path: each named file
is there, so a rename cannot leave a reader behind. The benchmark scripts and the tests share
code through ``attention_site``, never through each other.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from attention_site.data import DATA

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = {p.stem: p for p in (ROOT / "benchmarks").glob("*.py") if not p.stem.startswith("_")}
READERS = ("docs", "src", "tests", "hooks", "README.md", "CONTRIBUTING.md")
SELF = ("test_data.py", "data.py")
NAMED = re.compile(r"(?<![\w/])data/([\w.-]+\.(?:json|md))\b")


def _imported(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
    return modules


def test_every_data_file_a_reader_names_exists() -> None:
    missing: dict[str, list[str]] = {}
    for where in READERS:
        base = ROOT / where
        files = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file()]
        for path in files:
            # the loader's own examples name a file that is not there, on purpose
            if path.suffix not in (".md", ".py", ".yml") or path.name in SELF:
                continue
            for name in NAMED.findall(path.read_text(encoding="utf-8", errors="replace")):
                if not (DATA / name).is_file():
                    missing.setdefault(str(path.relative_to(ROOT)), []).append(name)
    assert missing == {}, missing


def test_every_data_file_is_written_by_a_script() -> None:
    """``data/<name>.json`` (or ``.md``, ``<name>.<variant>.json``) comes from
    ``benchmarks/<name>.py``: a file no script writes could never be measured again."""
    orphans = [p.name for p in DATA.iterdir() if p.name.split(".")[0] not in SCRIPTS]
    assert orphans == []


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_benchmarks_set_no_sys_path_and_import_no_tests(name: str) -> None:
    assert "sys.path" not in SCRIPTS[name].read_text(encoding="utf-8")
    reaching = {m for m in _imported(SCRIPTS[name]) if m.split(".")[0] in ("tests", "benchmarks")}
    assert reaching == set(), f"benchmarks/{name}.py imports {reaching}"


def test_the_tests_import_nothing_from_benchmarks() -> None:
    scripts = set(SCRIPTS) | {"benchmarks", "_common"}
    # a file that imports a script names it: parse only those that name one
    naming = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(scripts)))})\b")
    reaching = {
        str(path.relative_to(ROOT)): found
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if naming.search(path.read_text(encoding="utf-8"))
        and (found := {m for m in _imported(path) if m.split(".")[0] in scripts})
    }
    assert reaching == {}, reaching
