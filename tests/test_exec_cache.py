"""The execution cache (``hooks/exec_cache.py``) reuses output only when nothing it could
depend on has changed: the block's source, the package's files, the installed versions.

A tiny site whose blocks print a fresh clock reading shows when a block really ran: the
same reading in a later build means the cache served it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from attention_site.checks.hooks import load_hook

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "hooks" / "exec_cache.py"
FRESH = ROOT / "hooks" / "fresh_state.py"  # every page starts its sessions afresh

PAGE = """\
# probe

```python exec="on"
import time, probe_pkg
print("plain", probe_pkg.VALUE, time.perf_counter_ns(), "|")
```

```python exec="on" session="s"
import time
x = 41
print("session", time.perf_counter_ns(), "|")
```

```python exec="on" session="s"
import time
print("later", x + 1, time.perf_counter_ns(), "|")
```
"""

# Builds the site several times in one process, as `mkdocs serve` does, applying an edit
# before each build: the edits are given as `path=text` pairs, one build per argument.
DRIVER = """\
import sys
from pathlib import Path
from mkdocs.commands.build import build
from mkdocs.config import load_config
config_file, out, cache, *steps = sys.argv[1:]
for n, step in enumerate(steps):
    for edit in filter(None, step.split(";;")):
        path, text = edit.split("=", 1)
        Path(path).write_text(text.replace("\\\\n", "\\n"), encoding="utf-8")
    sys.modules.pop("probe_pkg", None)  # what hooks/fresh_state.py does for attention_math
    cfg = load_config(config_file, site_dir=f"{out}/{n}")
    hook = next(m for k, m in cfg["hooks"].items() if k.endswith("exec_cache.py"))
    hook.PACKAGES, hook.CACHE_DIR = ("probe_pkg",), Path(cache)
    build(cfg)
"""


def _builds(tmp_path: Path, steps: list[str], cache: str = "1") -> list[dict[str, str]]:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "index.md").write_text(PAGE, encoding="utf-8")
    pkg = tmp_path / "pkg" / "probe_pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("VALUE = 1\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        textwrap.dedent(
            f"""\
            site_name: exec-cache probe
            theme: mkdocs
            plugins: [markdown-exec]
            markdown_extensions: [pymdownx.superfences]
            hooks: [{FRESH.as_posix()}, {HOOK.as_posix()}]
            """
        ),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "ATTENTION_MATH_EXEC_CACHE"}
    env |= {"ATTENTION_MATH_EXEC_CACHE": cache, "PYTHONPATH": str(tmp_path / "pkg")}
    # no .pyc: "VALUE = 1" and "VALUE = 2" have one size, and written in the same second the
    # second would import as the first's cached bytecode (a pyc checks mtime in whole
    # seconds, and size), whatever the cache did
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    out, store = tmp_path / "out", tmp_path / "cache"
    cmd = [sys.executable, "-c", DRIVER, str(tmp_path / "mkdocs.yml"), str(out), str(store)]
    subprocess.run(cmd + steps, env=env, check=True, capture_output=True, timeout=300)
    seen = []
    for n in range(len(steps)):
        html = (out / str(n) / "index.html").read_text(encoding="utf-8")
        seen.append(dict(re.findall(r"(plain|session|later) ([\d ]+) \|", html)))
    return seen


@pytest.mark.docs
def test_cache_reuses_output_only_while_nothing_changes(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "index.md"
    init = tmp_path / "pkg" / "probe_pkg" / "__init__.py"
    edited_block = PAGE.replace('"plain",', '"plain", ')
    edited_later = edited_block.replace('"later",', '"later", ')
    edited_first = edited_later.replace("x = 41", "x = 41  # edited")
    steps = [
        "",  # 0: first build executes
        "",  # 1: nothing changed: served from the cache
        f"{init}=VALUE = 2\\n",  # 2: the package changed: executes, sees the new value
        f"{init}=VALUE = 2  # a comment\\n",  # 3: any byte of the package counts
        f"{page}={edited_block}",  # 4: the block's source changed
        "",  # 5: unchanged again
        f"{page}={edited_later}",  # 6: a session's later block changed
        f"{page}={edited_first}",  # 7: a session's first block changed
    ]
    seen = _builds(tmp_path, steps)
    plain = [s["plain"] for s in seen]
    assert plain[0].startswith("1 ") and plain[1] == plain[0]
    assert plain[2].startswith("2 ") and plain[2] != plain[1]
    assert plain[3] != plain[2] and plain[3].startswith("2 ")
    assert plain[4] != plain[3]
    assert plain[5] == plain[4] == plain[6] == plain[7]
    # a session's blocks are served while the session's code and the package are unchanged
    first, later = [s["session"] for s in seen], [s["later"] for s in seen]
    assert first[1] == first[0] and later[1] == later[0]
    assert len({first[1], first[2], first[3]}) == 3 and len({later[1], later[2], later[3]}) == 3
    assert first[5] == first[4] == first[3] and later[5] == later[4] == later[3]
    # a later block changed: it runs, with the globals of the earlier block (run again first,
    # its served output kept); the earlier block's own output is served
    assert first[6] == first[5] and later[6] != later[5] and later[6].startswith("42 ")
    # the first block changed: the blocks after it depend on it and run again
    assert first[7] != first[6] and later[7] != later[6] and later[7].startswith("42 ")
    assert all(s.startswith("42 ") for s in later)
    assert list((tmp_path / "cache").glob("*.tmp")) == []


@pytest.mark.docs
def test_cache_off_executes_every_time(tmp_path: Path) -> None:
    seen = _builds(tmp_path, ["", ""], cache="0")
    assert seen[0]["plain"] != seen[1]["plain"]
    assert not (tmp_path / "cache").exists()


def _hook() -> ModuleType:
    return load_hook("exec_cache")


def test_key_depends_on_source_and_salt() -> None:
    hook = _hook()
    key = hook.block_key("print(1)", "salt")
    assert key == hook.block_key("print(1)", "salt")
    assert key != hook.block_key("print(2)", "salt")
    assert key != hook.block_key("print(1)", "other salt")


def test_session_key_depends_on_every_earlier_block() -> None:
    hook = _hook()
    two = [("x = 1", None, None), ("print(x)", None, None)]
    key = hook.session_key(two, "salt")
    assert key == hook.session_key(list(two), "salt")
    assert key != hook.session_key([("x = 2", None, None), two[1]], "salt")
    assert key != hook.session_key(two[1:], "salt")
    assert key != hook.block_key("print(x)", "salt")
    assert key != hook.session_key([two[0], ("print(x)", None, "a title")], "salt")
    assert key != hook.session_key(two, "other salt")


def test_environment_fingerprint_names_the_installed_versions() -> None:
    import importlib.metadata

    text = _hook().environment_fingerprint()
    assert f"numpy=={importlib.metadata.version('numpy')}" in text
    assert f"markdown-exec=={importlib.metadata.version('markdown-exec')}" in text.lower()
    assert sys.version in text


def test_package_hash_covers_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "probe_hash_pkg"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "data" / "table.json").write_text("[1]", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    hook = _hook()
    before = hook.package_hash("probe_hash_pkg")
    (pkg / "data" / "table.json").write_text("[2]", encoding="utf-8")
    assert hook.package_hash("probe_hash_pkg") != before
    with pytest.raises(RuntimeError, match="no_such_pkg"):
        hook.package_hash("no_such_pkg")
