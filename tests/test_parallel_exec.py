"""The parallel execution of a build's blocks (``hooks/parallel_exec.py``) changes no output.

Its worker finds the blocks by reading the Markdown; these tests check that reading against
what markdown-exec itself runs on every page of the site, the serving of outputs (sessions
included), and a small build with a failing block. The whole site built both ways, byte for
byte, is tests/test_reproducible_build.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import markdown
import pytest
from markdown_exec import formatter, validator

from attention_site.checks.hooks import load_hook

ROOT = Path(__file__).resolve().parents[1]


def _hook() -> ModuleType:
    return load_hook("parallel_exec")


def _blocks_markdown_exec_runs(text: str) -> list[Any]:
    """(session, code) of every block markdown-exec runs in ``text``, nothing executed."""
    ran: list[tuple[str, str]] = []

    def record(code: str, returncode: Any = None, session: Any = None, **_: Any) -> str:
        ran.append((session or "", code))
        return ""

    exec_ = load_hook("markdown_exec_adapter")  # markdown-exec's runner, through its adapter
    before = exec_.runner()
    exec_.set_runner(record)
    fence = {"name": "python", "class": "python", "validator": validator, "format": formatter}
    try:
        markdown.markdown(
            text,
            extensions=[
                "admonition",
                "attr_list",
                "md_in_html",
                "pymdownx.details",
                "pymdownx.tabbed",
                "pymdownx.superfences",
            ],
            extension_configs={"pymdownx.superfences": {"custom_fences": [fence]}},
        )
    finally:
        exec_.set_runner(before)
    return ran


SAMPLE = """# t

```python exec="on" session="s"
x = 2
```

```python
not run
```

```python exec="off"
not run either
```

!!! note "in an admonition"

    ```python exec="on" source="tabbed-right"
    if True:
        print(1)
    ```

=== "a tab"

    ```python exec="on" session="s" html="true"
    print(x)
    ```
"""


def test_the_worker_finds_the_blocks_markdown_exec_runs():
    hook = _hook()
    assert hook.page_blocks(SAMPLE) == _blocks_markdown_exec_runs(SAMPLE)
    assert [s for s, _ in hook.page_blocks(SAMPLE)] == ["s", "", "s"]
    assert hook.page_blocks(SAMPLE)[1][1] == "if True:\n    print(1)"


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_on_every_page_of_the_site():
    hook = _hook()
    pages = sorted((ROOT / "docs").rglob("*.md"))
    total = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        found = hook.page_blocks(text)
        assert found == _blocks_markdown_exec_runs(text), page
        total += len(found)
    assert total > 200  # the site's executed blocks, all of them found


def _run_here(log: list[str]):
    def inner(code: str, session: Any = None, **_: Any) -> str:
        log.append(code)
        return f"here:{code}"

    return inner


def test_outputs_are_served_by_block_and_session_history():
    hook = _hook()
    blocks = [("s", "a = 1"), ("", "print(2)"), ("s", "print(a)"), ("t", "b = 3")]
    keys = hook.keys(blocks)
    assert keys[2] == ("s", ("a = 1", "print(a)"))  # a session block: its history too
    outputs = {key: f"worker:{code}" for key, (_, code) in zip(keys, blocks, strict=True)}
    log: list[str] = []
    page = hook.PageOutputs(outputs)
    got = [page.run(_run_here(log), code, session or None) for session, code in blocks]
    assert got == [f"worker:{code}" for _, code in blocks] and log == [] and page.served == 4


def test_a_session_block_the_worker_lacks_runs_here_after_its_history():
    hook = _hook()
    blocks = [("s", "a = 1"), ("s", "a += 1"), ("s", "print(a)")]
    keys = hook.keys(blocks)
    outputs = {keys[0]: "worker:a = 1"}  # the worker stopped after the first block
    log: list[str] = []
    page = hook.PageOutputs(outputs)
    got = [page.run(_run_here(log), code, session) for session, code in blocks]
    # the served first block runs again here (its globals), then the rest run here
    assert got == ["worker:a = 1", "here:a += 1", "here:print(a)"]
    assert log == ["a = 1", "a += 1", "print(a)"]


def test_a_block_read_differently_runs_here():
    hook = _hook()
    page = hook.PageOutputs({("", ("print(1)",)): "worker"})
    log: list[str] = []
    assert page.run(_run_here(log), "print(1) ", None) == "here:print(1) "
    assert hook.PageOutputs(None).run(_run_here(log), "print(1)", None) == "here:print(1)"


def _site(tmp_path: Path, pages: dict[str, str]) -> Path:
    (tmp_path / "hooks").mkdir()
    for name in ("parallel_exec.py", "fresh_state.py", "markdown_exec_adapter.py"):
        shutil.copy(ROOT / "hooks" / name, tmp_path / "hooks" / name)
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nplugins: [markdown-exec]\nmarkdown_extensions: [pymdownx.superfences]\n"
        "hooks: [hooks/fresh_state.py, hooks/parallel_exec.py]\n",
        encoding="utf-8",
    )
    (tmp_path / "docs").mkdir()
    for name, text in pages.items():
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    return tmp_path


def _build(project: Path, out: str, parallel: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", out],
        cwd=project,
        capture_output=True,
        text=True,
        env=os.environ | {"ATTENTION_MATH_PARALLEL": parallel, "NO_MKDOCS_2_WARNING": "1"},
    )


def _page(n: int) -> str:
    return (
        f"# page {n}\n\n"
        f'```python exec="on" session="p"\nimport os\nn = {n}\n```\n\n'
        f'```python exec="on" session="p"\nprint(n * n, os.getpid() > 0)\n```\n'
    )


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_a_small_site_builds_the_same_with_and_without_the_worker(tmp_path):
    project = _site(tmp_path, {f"p{n}.md": _page(n) for n in range(8)})
    for out, parallel in (("one", "0"), ("two", "1")):
        proc = _build(project, out, parallel)
        assert proc.returncode == 0, proc.stderr
    assert "parallel execution:" in proc.stderr
    for n in range(8):
        one = (project / "one" / f"p{n}" / "index.html").read_text(encoding="utf-8")
        assert one == (project / "two" / f"p{n}" / "index.html").read_text(encoding="utf-8")
        assert f"{n * n} True" in one


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_a_failing_block_fails_the_build_with_its_error(tmp_path):
    pages = {f"p{n}.md": _page(n) for n in range(6)}
    pages["p5.md"] += '\n```python exec="on"\nraise ValueError("the worker saw it too")\n```\n'
    proc = _build(_site(tmp_path, pages), "site", "1")
    assert proc.returncode != 0
    assert "the worker saw it too" in proc.stdout + proc.stderr


ORDER_HOOK = """
import sys

def on_page_markdown(markdown, page, **kwargs):
    print("read", page.file.src_uri, file=sys.stderr)
    return markdown

def on_post_page(output, page, **kwargs):
    print("wrote", page.file.src_uri, file=sys.stderr)
    return output
"""


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_pages_without_blocks_are_read_first_and_every_page_written_in_order(tmp_path):
    """The build reads the pages the worker has nothing to run for first (so that little is
    left to it alone once the two meet), then writes every page in MkDocs' own order."""
    pages = {f"p{n}.md": _page(n) if n % 3 else f"# page {n}\n\nno code\n" for n in range(7)}
    project = _site(tmp_path, pages)
    (project / "hooks" / "order.py").write_text(ORDER_HOOK, encoding="utf-8")
    config = project / "mkdocs.yml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("hooks: [", "hooks: [hooks/order.py, "),
        encoding="utf-8",
    )
    logs = {}
    for out, parallel in (("one", "0"), ("two", "1")):
        proc = _build(project, out, parallel)
        assert proc.returncode == 0, proc.stderr
        logs[parallel] = proc.stderr.splitlines()
    in_order = [f"p{n}.md" for n in range(7)]

    def order(log: list[str], verb: str) -> list[str]:
        return [line.split()[1] for line in log if line.startswith(verb + " ")]

    assert order(logs["0"], "read") == in_order
    without_code = ["p0.md", "p3.md", "p6.md"]
    assert order(logs["1"], "read") == without_code + [p for p in in_order if p not in without_code]
    assert order(logs["0"], "wrote") == order(logs["1"], "wrote") == in_order
    for name in ("sitemap.xml", *(f"p{n}/index.html" for n in range(7))):
        assert (project / "one" / name).read_bytes() == (project / "two" / name).read_bytes()
