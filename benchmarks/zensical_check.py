"""Non-blocking check: does the site also build with Zensical?

Installs ``zensical`` from PyPI with the site's own dependencies into a throwaway virtual
environment (never a project dependency), builds the site with it, and counts the build as
failed if Zensical exits non-zero, if its log shows any markdown-exec execution error, or if
a built page contains a Python traceback (markdown-exec renders failures into the page).
Writes ``benchmarks/results/zensical_check.json`` and ``zensical_check.md`` (shown on the About
page), with the date and the commit checked. Run from the project root::

    uv run python benchmarks/zensical_check.py
    uv run python benchmarks/zensical_check.py --table  # the .md again from the JSON
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, result_path  # benchmarks/, the script's directory

from attention_site.checks.zensical import BLOCK_TRACEBACK, exec_errors, summary

OUT = result_path(__file__)
DEPENDENCIES = [
    "zensical",
    "markdown-exec",
    "mkdocstrings[python]",
    "pymdown-extensions",
    "django-static-mathjax==3.2.2.1",
    # the API reference's generated pages and nav (pyproject.toml says why these versions)
    "mkdocs-gen-files>=0.5,<0.6",
    "mkdocs-literate-nav>=0.6.1,<0.6.2",
]


def checked_commit() -> str:
    """The checkout's commit, ``-dirty`` if files differ from it (what the check builds).

    Examples:
        >>> len(checked_commit()) >= 7
        True
    """
    cmd = ["git", "describe", "--always", "--dirty", "--abbrev=7"]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout.strip()


def check() -> dict[str, Any]:
    when = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": checked_commit()}
    with tempfile.TemporaryDirectory(prefix="zensical-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run(["uv", "venv", "-q", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        install = subprocess.run(
            # editable: the pages also import attention_site, which the wheel does not hold
            ["uv", "pip", "install", "-q", "--python", python, "-e", str(ROOT), *DEPENDENCIES],
            capture_output=True,
            text=True,
        )
        if install.returncode != 0:
            return {"status": "not installed", "log": install.stderr[-2000:]} | when
        version = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(m.version('zensical'))"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        start = time.perf_counter()
        build = subprocess.run(
            [str(venv / "bin" / "zensical"), "build", "--clean", "-f", "mkdocs.yml"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": tmp, "NO_COLOR": "1"},
        )
        seconds = time.perf_counter() - start
        log = build.stdout + build.stderr
        errors = exec_errors(log)
        built = ROOT / "site"  # Zensical writes to the configured site_dir
        pages = list(built.rglob("*.html")) if built.is_dir() else []
        errors += [
            f"{p.relative_to(built)}: a code block's traceback in the page"
            for p in pages
            if BLOCK_TRACEBACK.search(p.read_text(encoding="utf-8", errors="replace"))
        ]
        shutil.rmtree(built, ignore_errors=True)  # Zensical's output, not the project's
        ok = build.returncode == 0 and not errors and len(pages) > 10
        return {
            "status": "passed" if ok else "failed",
            "zensical": version,
            "returncode": build.returncode,
            "pages": len(pages),
            "seconds": round(seconds, 1),
            "exec_errors": errors[:20],
            "log_tail": log[-3000:],
        } | when


def main() -> int:
    if sys.argv[1:] == ["--table"]:  # the .md again from the .json, nothing checked
        kept = json.loads(OUT.read_text(encoding="utf-8"))
        OUT.with_suffix(".md").write_text(summary(kept), encoding="utf-8")
        return 0
    result = check()
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    OUT.with_suffix(".md").write_text(summary(result), encoding="utf-8")
    print(summary(result))
    return 0 if result["status"] == "passed" else 1


if __name__ == "__main__":
    sys.exit(main())
