"""Benchmark results: one folder, one naming rule, readers that find them, and no benchmark
reaching into the tests (nor the tests into the benchmarks).

The rule (CONTRIBUTING.md, ``benchmarks/_common.py``): ``benchmarks/<name>.py`` writes
``benchmarks/results/<name>.json`` and, for a page, ``benchmarks/results/<name>.md``; a second
set of results of the same script is ``benchmarks/results/<name>.<variant>.json``. These tests
read the scripts' source; they import nothing from ``benchmarks/``.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"
SCRIPTS = {p.stem: p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_")}
RESULT_NAME = re.compile(r"(?P<script>\w+)(?:\.(?P<variant>[\w-]+))?\.(?P<kind>json|md)")
# where the repository names a results file: pages, site code, tests, hooks, the guides
READERS = ("docs", "src", "tests", "hooks", "README.md", "CONTRIBUTING.md", "noxfile.py")
NAMED = re.compile(r"benchmarks/results/([\w.-]+\.(?:json|md))\b")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _writes_files(tree: ast.Module) -> bool:
    """The script writes a file: ``.write_text``, ``.write_bytes``, ``json.dump`` or ``open``
    for writing."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("write_text", "write_bytes", "dump"):
            return True
        if isinstance(f, ast.Name) and f.id == "open" and len(node.args) > 1:
            mode = node.args[1]
            if isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax"):
                return True
    return False


def _calls_result_path_of_itself(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "result_path"
        and node.args
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "__file__"
        for node in ast.walk(tree)
    )


def _imported_modules(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_every_result_is_named_after_the_script_that_writes_it() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "benchmarks"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    outside = [
        f
        for f in tracked
        if f.endswith((".json", ".md")) and not f.startswith("benchmarks/results/")
    ]
    assert outside == [], f"results outside benchmarks/results/: {outside}"
    bad = {}
    for path in sorted(RESULTS.iterdir()):
        match = RESULT_NAME.fullmatch(path.name)
        if match is None:
            bad[path.name] = "not <script>[.<variant>].json|md"
        elif match["script"] not in SCRIPTS:
            bad[path.name] = f"no benchmarks/{match['script']}.py"
        elif match["kind"] == "md" and not path.with_suffix(".json").is_file():
            bad[path.name] = "a table without its data (.json)"
    assert bad == {}, bad


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_that_writes_results_writes_them_to_its_own_name(name: str) -> None:
    """Every file a script writes by default is ``result_path(__file__, ...)``; a script that
    writes nothing (it prints) has no result to name."""
    tree = _tree(SCRIPTS[name])
    if _writes_files(tree):
        assert _calls_result_path_of_itself(tree), (
            f"benchmarks/{name}.py writes files but not to result_path(__file__): its results "
            f"belong in benchmarks/results/{name}.json"
        )


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_benchmarks_set_no_sys_path_and_import_no_tests(name: str) -> None:
    text = SCRIPTS[name].read_text(encoding="utf-8")
    assert "sys.path" not in text, f"benchmarks/{name}.py changes sys.path"
    imported = _imported_modules(_tree(SCRIPTS[name]))
    reaching = {m for m in imported if m.split(".")[0] in ("tests", "benchmarks")}
    assert reaching == set(), f"benchmarks/{name}.py imports {reaching}"


def test_the_tests_import_nothing_from_benchmarks() -> None:
    """What both need lives in ``attention_site.checks``; no test imports a benchmark script,
    by name or by its file."""
    scripts = set(SCRIPTS) | {"_common", "benchmarks"}
    reaching = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found = {m for m in _imported_modules(_tree(path)) if m.split(".")[0] in scripts}
        if "spec_from_file_location" in text and re.search(r"[\"/]benchmarks[\"/]", text):
            found.add("a benchmark loaded from its file")
        if found and path != Path(__file__):
            reaching[str(path.relative_to(ROOT))] = found
    assert reaching == {}, reaching


def test_every_results_file_a_reader_names_exists() -> None:
    """The pages (``--8<--`` includes and executed blocks), the site's code, the tests and the
    guides name results by path: each named file is there, so a rename cannot leave a reader
    behind (a missing include would only warn)."""
    missing = {}
    for where in READERS:
        base = ROOT / where
        files = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file()]
        for path in files:
            if path.suffix not in (".md", ".py", ".html", ".yml") or path == Path(__file__):
                continue
            for name in NAMED.findall(path.read_text(encoding="utf-8", errors="replace")):
                if "{" not in name and not (RESULTS / name).is_file():
                    missing.setdefault(str(path.relative_to(ROOT)), []).append(name)
    assert missing == {}, missing


def test_the_readme_states_the_loop_times_of_the_committed_run() -> None:
    """README.md's durations of the test command and the quick loop are those of
    ``loop_time.json`` (``benchmarks/loop_time.py`` writes both): none is typed by hand."""
    figures = json.loads((RESULTS / "loop_time.json").read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"<!-- loop-time:[^\n]*-->\n(.*?)<!-- /loop-time -->", readme, re.S)
    stated = [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) s\b", block)]
    keys = ("test_command_first_s", "test_command_s", "quick_loop_s")
    assert stated == [round(figures[k], 1) for k in keys]
    assert figures["date"] in block
