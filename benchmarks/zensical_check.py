"""Non-blocking check: does the site also build with Zensical?

Installs ``zensical`` from PyPI with the site's own dependencies into a throwaway virtual
environment (never a project dependency), builds the site with it, and counts the build as
failed if Zensical exits non-zero, if its log shows any markdown-exec execution error, or if
a built page contains a Python traceback (markdown-exec renders failures into the page).

Zensical runs neither MkDocs hooks nor the ``gen-files`` plugin (it ignores plugins it does
not implement; ``literate-nav`` it does). The API reference's pages and their ``SUMMARY.md``
are generated at build time by ``gen-files`` (``hooks/gen_reference.py``), so the check builds
a copy of the checkout into which it first writes those files, from the same generator
(``attention_site.pages.reference``), as ``gen-files`` would hand them to MkDocs.
Writes ``data/zensical_check.json`` and ``zensical_check.md`` (shown on the About
page), with the date and the commit checked. Run from the project root::

    uv run python benchmarks/zensical_check.py
    uv run python benchmarks/zensical_check.py --table  # the .md again from the JSON
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, result_path  # benchmarks/, the script's directory

from attention_site.checks.zensical import BLOCK_TRACEBACK, exec_errors, summary
from attention_site.pages.reference import generated_files

OUT = result_path(__file__)
# the site's own dependencies: the docs group of pyproject.toml (bibtexparser for the
# references page, the reference's plugins, ...), never copied here by hand
DOCS_GROUP = f"{ROOT / 'pyproject.toml'}:docs"


def checked_commit() -> str:
    """The checkout's commit, ``-dirty`` if files differ from it (what the check builds).

    Examples:
        >>> len(checked_commit()) >= 7
        True
    """
    cmd = ["git", "describe", "--always", "--dirty", "--abbrev=7"]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout.strip()


def checkout_copy(dest: Path) -> Path:
    """The checkout's files as they are now (tracked and new, not ignored) copied to ``dest``,
    with the reference pages ``gen-files`` would generate written into its ``docs/``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted in the work tree is still listed as tracked
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    for path, text in generated_files().items():
        (dest / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / "docs" / path).write_text(text, encoding="utf-8")
    return dest


def check() -> dict[str, Any]:
    when = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": checked_commit()}
    with tempfile.TemporaryDirectory(prefix="zensical-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run(["uv", "venv", "-q", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        install = subprocess.run(
            # editable: the pages also import attention_site, which the wheel does not hold
            [
                *("uv", "pip", "install", "-q", "--python", python, "-e", str(ROOT), "zensical"),
                *("--group", DOCS_GROUP),
            ],
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
        project = checkout_copy(Path(tmp) / "project")
        start = time.perf_counter()
        build = subprocess.run(
            [str(venv / "bin" / "zensical"), "build", "--clean", "-f", "mkdocs.yml"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=900,
            env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": tmp, "NO_COLOR": "1"},
        )
        seconds = time.perf_counter() - start
        # Zensical colours its log even with NO_COLOR set
        log = re.sub(r"\x1b\[[0-9;]*m", "", build.stdout + build.stderr)
        errors = exec_errors(log)
        built = project / "site"  # Zensical writes to the configured site_dir
        pages = list(built.rglob("*.html")) if built.is_dir() else []
        errors += [
            f"{p.relative_to(built)}: a code block's traceback in the page"
            for p in pages
            if BLOCK_TRACEBACK.search(p.read_text(encoding="utf-8", errors="replace"))
        ]
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
