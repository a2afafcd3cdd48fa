"""A strict build fails on what a page logs, with either generator: a markdown-exec block that
raised (as a failed cross-check does) or a TeX error. ``mkdocs build --strict`` counts the
warnings itself; Zensical prints them and exits with status 0 (zensical/zensical#491), so the
build command runs it through ``attention_site.strict``, which counts them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = """site_name: strict
plugins:
  - markdown-exec
markdown_extensions:
  - pymdownx.arithmatex:
      generic: true
  - pymdownx.superfences
  - attention_site.extensions.typeset
"""
COMMANDS = {
    "mkdocs": [sys.executable, "-m", "mkdocs", "build", "--strict"],
    "zensical": [sys.executable, "-m", "attention_site.strict", "build", "--strict", "--clean"],
}


def _build(project: Path, engine: str, page: str) -> subprocess.CompletedProcess[str]:
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs" / "index.md").write_text(f"# A page\n\n{page}\n", encoding="utf-8")
    (project / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    return subprocess.run(
        COMMANDS[engine], cwd=project, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
@pytest.mark.parametrize("engine", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("page", "shown"),
    [
        ('```python exec="on"\nraise ValueError("exact and numeric disagree")\n```', "disagree"),
        ("Typeset $\\nosuchmacro{x}$.", "nosuchmacro"),
    ],
)
def test_what_a_page_logs_fails_the_strict_build(
    tmp_path: Path, engine: str, page: str, shown: str
) -> None:
    good = _build(tmp_path, engine, '$x$ and\n\n```python exec="on"\nprint(1 + 1)\n```')
    assert good.returncode == 0, good.stderr
    assert "<mjx-container" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    bad = _build(tmp_path, engine, page)
    assert bad.returncode == 1, bad.stderr
    assert shown in bad.stderr  # the warning is shown, not swallowed
