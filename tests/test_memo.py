"""The build memos (``hooks/memo.py``) never serve stale output.

A tiny site is built several times in one process, as ``mkdocs serve`` does, with edits
in between to each input a memo depends on: a page's text (search sections), a code block
(highlighting), a function's signature and ruff's configuration (the signature's
formatting), and a theme template. Every rebuild must equal a fresh build of the same
files, byte for byte, and the unchanged rebuild must actually have used the memos. Then a
new process (a restarted ``serve``) must answer from the memos that the first one left on
disk, and still build what a fresh process builds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "hooks" / "memo.py"

PAGE = """\
# Probe

Searchable word: WORD_{n}. Inline: `#!python same_{n}` one, `#!python same_{n}` two.

```python
value = "CODE_{n}"
```

::: memo_pkg.f
"""

MODULE = '''\
def f(first_long_argument_{n}: int = 1, second_long_argument: str = "x", third: float = 2.0):
    """A function whose signature is longer than the line length, so ruff formats it."""
'''

RUFF = '[tool.ruff.format]\nquote-style = "{quotes}"\n'

TEMPLATE = '{{% extends "base.html" %}}{{% block footer %}}FOOTER_{n}{{% endblock %}}'

# Builds the site in one process once per argument, each time after writing the files of
# version n (an argument "n"), then prints, for every build, the memo hits (sections,
# signatures, highlighted blocks) and how many signatures it formatted.
DRIVER = """\
import json, sys
from pathlib import Path
from mkdocs.commands.build import build
from mkdocs.config import load_config
root, out, *versions = sys.argv[1:]
hits = []
for i, n in enumerate(versions):
    exec(Path(root, "write.py").read_text(), {"root": root, "n": n})
    cfg = load_config(f"{root}/mkdocs.yml", site_dir=f"{out}/{i}")
    cfg.plugins.on_startup(command="serve", dirty=False)
    build(cfg)
    memo = next(m for k, m in cfg["hooks"].items() if k.endswith("memo.py"))
    s, g, h = memo._SECTIONS, memo._SIGNATURES, memo._HIGHLIGHTED
    hits.append([s["hits"], g["hits"], h["hits"], len(g["used"])])
print(json.dumps(hits))
"""

WRITE = f"""\
from pathlib import Path
# version "1s" is version 1 with only ruff's quote style changed
quotes = "single" if n == "2" or n.endswith("s") else "double"
n = n.removesuffix("s")
Path(root, "docs", "index.md").write_text({PAGE!r}.format(n=n))
Path(root, "src", "memo_pkg", "__init__.py").write_text({MODULE!r}.format(n=n))
Path(root, "overrides", "main.html").write_text({TEMPLATE!r}.format(n=n))
Path(root, "pyproject.toml").write_text({RUFF!r}.format(quotes=quotes))
"""


def _site(tmp_path: Path) -> Path:
    for d in ("docs", "src/memo_pkg", "overrides"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    (tmp_path / "write.py").write_text(WRITE, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        textwrap.dedent(
            f"""\
            site_name: memo probe
            theme:
              name: material
              custom_dir: overrides
            plugins:
              - search
              - mkdocstrings:
                  handlers:
                    python:
                      paths: [src]
                      options:
                        separate_signature: true
                        show_root_heading: true
                        show_source: false
                        show_signature_annotations: true
            markdown_extensions:
              - pymdownx.highlight
              - pymdownx.inlinehilite
              - pymdownx.superfences
            hooks: [{HOOK.as_posix()}]
            """
        ),
        encoding="utf-8",
    )
    return tmp_path


def _build(site: Path, out: Path, versions: list[str], cache: Path) -> list[list[int]]:
    """Build ``versions`` in one new process whose user cache (the memos' file) is ``cache``."""
    env = {k: v for k, v in os.environ.items() if k != "ATTENTION_MATH_EXEC_CACHE"} | {
        "SOURCE_DATE_EPOCH": "0",
        "NO_MKDOCS_2_WARNING": "1",
        "XDG_CACHE_HOME": str(cache),
    }
    cmd = [sys.executable, "-c", DRIVER, str(site), str(out), *versions]
    # run in the site, where ruff finds the site's pyproject.toml
    proc = subprocess.run(
        cmd, cwd=site, env=env, check=True, capture_output=True, text=True, timeout=300
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _files(directory: Path) -> dict[str, bytes]:
    files = (p for p in directory.rglob("*") if p.is_file())
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in files}


@pytest.mark.docs
def test_rebuilds_equal_fresh_builds_and_use_the_memos(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    versions = ["1", "1", "2", "1", "1s"]
    hits = _build(site, tmp_path / "serve", versions, tmp_path / "cache")
    # nothing to reuse at first; an unchanged rebuild reuses the page, signature and code
    assert hits[0][:3] == [0, 0, 0] and hits[0][3] >= 1, hits  # [3]: signatures formatted
    assert all(h > 0 for h in hits[1]), hits
    fresh = {}  # one fresh build of each version, in a process of its own with no memo file
    for n in dict.fromkeys(versions):
        _build(site, tmp_path / f"fresh-{n}", [n], tmp_path / f"empty-{n}")
        fresh[n] = _files(tmp_path / f"fresh-{n}" / "0")
    for i, n in enumerate(versions):
        assert _files(tmp_path / "serve" / str(i)) == fresh[n], f"build {i}"
    page = (tmp_path / "serve" / "2" / "index.html").read_text(encoding="utf-8")
    index = (tmp_path / "serve" / "2" / "search" / "search_index.json").read_text()
    assert "WORD_2" in index and "WORD_1" not in index
    assert "CODE_2" in page and "CODE_1" not in page
    assert "first_long_argument_2" in page and "first_long_argument_1" not in page
    assert "FOOTER_2" in page and "FOOTER_1" not in page
    single, double = """class="s1">'x'""", 'class="s2">"x"'  # ruff's quote style
    assert single in page and double not in page
    # the same inline code twice: two separate elements, the text between them once
    assert page.count(" one, ") == 1 and page.count("same_2") == 2
    # and back: version 1 again gives version 1's site
    back = (tmp_path / "serve" / "3" / "index.html").read_text(encoding="utf-8")
    assert "FOOTER_1" in back and "first_long_argument_1" in back
    assert double in back
    requoted = (tmp_path / "serve" / "4" / "index.html").read_text(encoding="utf-8")
    assert single in requoted and double not in requoted

    # a restarted `serve`: a new process, the memo file of the one before (last: version 1s)
    assert list((tmp_path / "cache" / "attention-math" / "memo").glob("*.pickle"))
    restarted = _build(site, tmp_path / "restart", ["1s"], tmp_path / "cache")
    assert all(h > 0 for h in restarted[0][:3]), restarted
    assert _files(tmp_path / "restart" / "0") == fresh["1s"]


@pytest.mark.parametrize(
    ("command", "setting", "kept"),
    [("serve", None, True), ("build", None, False), ("build", "1", True), ("serve", "0", False)],
)
def test_the_memos_outlive_the_process_as_the_execution_cache_does(
    monkeypatch: pytest.MonkeyPatch, command: str, setting: str | None, kept: bool
) -> None:
    """On disk under ``serve`` or ``ATTENTION_MATH_EXEC_CACHE=1``, never in a plain build."""
    from attention_site.checks.hooks import load_hook

    if setting is None:
        monkeypatch.delenv("ATTENTION_MATH_EXEC_CACHE", raising=False)
    else:
        monkeypatch.setenv("ATTENTION_MATH_EXEC_CACHE", setting)
    memo = load_hook("memo")
    memo.on_startup(command=command, dirty=False)
    assert (memo._disk["file"] is not None) == kept
