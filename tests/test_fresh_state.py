"""Each markdown-exec page starts from fresh state, in one build and across rebuilds.

The pages never use ``session=`` (the brief forbids it), so these tests build a tiny site
that does, in one Python process built twice (as ``mkdocs serve`` does), and show that
``hooks/fresh_state.py`` stops state leaking from page to page and from build to build,
while blocks on one page can still share a session. The same site built without the hook
shows the leak, so the tests can fail.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from attention_site.checks.hooks import load_hook

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "hooks" / "fresh_state.py"

# Each page reports what it saw under the shared session name, then leaves a mark.
PAGE = """\
# {name}

```python exec="on" session="shared"
print("{name} saw", globals().get("mark", "nothing"), "|")
mark = "{name}-mark"
```

```python exec="on" session="shared"
print("{name} second block saw", mark, "|")
```
"""

# Builds the site twice in one process, like `mkdocs serve` rebuilding after an edit.
DRIVER = """\
import sys
from mkdocs.commands.build import build
from mkdocs.config import load_config
for run in ("one", "two"):
    cfg = load_config(sys.argv[1], site_dir=sys.argv[2] + "/" + run)
    build(cfg)
"""


def _site(tmp_path: Path, *, hook: bool) -> dict[str, str]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("alpha", "beta"):
        (docs / f"{name}.md").write_text(PAGE.format(name=name), encoding="utf-8")
    hooks = f"hooks: [{HOOK.as_posix()}]\n" if hook else ""
    (tmp_path / "mkdocs.yml").write_text(
        textwrap.dedent(
            """\
            site_name: fresh-state probe
            theme: mkdocs
            nav: [alpha.md, beta.md]
            plugins: [markdown-exec]
            markdown_extensions: [pymdownx.superfences]
            """
        )
        + hooks,
        encoding="utf-8",
    )
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-c", DRIVER, str(tmp_path / "mkdocs.yml"), str(out)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    seen = {}
    for run in ("one", "two"):
        for name in ("alpha", "beta"):
            html = (out / run / name / "index.html").read_text(encoding="utf-8")
            seen[f"{run}/{name}"] = " ".join(re.findall(r"\w+ (?:second block )?saw [\w-]+", html))
    return seen


@pytest.mark.docs
def test_pages_start_fresh_in_one_build_and_across_rebuilds(tmp_path: Path) -> None:
    seen = _site(tmp_path, hook=True)
    for run in ("one", "two"):
        for name in ("alpha", "beta"):
            assert seen[f"{run}/{name}"] == (
                f"{name} saw nothing {name} second block saw {name}-mark"
            ), (run, seen)


@pytest.mark.docs
def test_without_the_hook_state_leaks(tmp_path: Path) -> None:
    """The control: markdown-exec alone leaks, so the test above is not vacuous."""
    seen = _site(tmp_path, hook=False)
    assert seen["one/beta"].startswith("beta saw alpha-mark")  # another page's variable
    assert seen["two/alpha"].startswith("alpha saw beta-mark")  # an earlier build's


def _load_hook() -> ModuleType:
    return load_hook("fresh_state")


def test_forget_package_makes_the_next_import_read_the_edited_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `mkdocs serve` relies on when a file under src/ changes between builds."""
    pkg = tmp_path / "probe_pkg_fresh"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlib.import_module("probe_pkg_fresh").VALUE == 1
    (pkg / "__init__.py").write_text("VALUE = 2  # edited\n", encoding="utf-8")
    importlib.invalidate_caches()
    assert importlib.import_module("probe_pkg_fresh").VALUE == 1  # cached: stale
    _load_hook().forget_package("probe_pkg_fresh")
    importlib.invalidate_caches()
    assert importlib.import_module("probe_pkg_fresh").VALUE == 2
    sys.modules.pop("probe_pkg_fresh", None)
