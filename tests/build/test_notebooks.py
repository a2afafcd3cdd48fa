"""Every page with code downloads as a notebook that runs top to bottom (attention_site.notebooks).

The conversion is tested on small sources; the code a notebook holds imports only what a
learner has after ``pip install attention-math[notebook]``; on the built site, every page that
runs code has its notebook and a "Download notebook" link to it, with the code cells the hook
makes from the page's source; and every page's notebook, made from its source as the build
makes it, runs top to bottom in a Jupyter kernel (nbclient + ipykernel) of a fresh virtual
environment that holds only the built wheel with its ``notebook`` extra, outside the
repository, failing on any error, its outputs maths and figures, not markup printed as text.
Made from the sources, not read from the built site, the notebooks run on one pytest-xdist
worker while the other builds the site (the suite's longest wait otherwise).
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from attention_site import notebooks
from attention_site.checks.server import SiteServer
from tests.conftest import require_or_skip

ROOT = Path(__file__).resolve().parents[2]


PAGE = """# Title

Prose with a [link](../forward/softmax.md#eq-softmax) and maths $a$.

```python exec="on" source="tabbed-right"
x = 1
```

```python
shown_not_run()
```

??? success "Solution"

    The reason.

    ```python exec="on"
    print(x + 1)
    ```

=== "Shell"

    ```bash
    python -m attention_math check a "1"
    ```

After.
"""


def test_code_cells_are_the_executed_blocks_in_order() -> None:
    nb = notebooks.notebook(PAGE, "exercises/softmax.md", "https://x.org/am/", "Softmax")
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    # the indented block dedented; the plain one not run; first, print made rich in Jupyter
    assert code == [notebooks.RICH_PRINT, "x = 1", "print(x + 1)"]


def test_prose_becomes_markdown_jupyter_reads() -> None:
    nb = notebooks.notebook(PAGE, "exercises/softmax.md", "https://x.org/am/", "Softmax")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert nb.cells[0].source.startswith("# Softmax")
    assert "https://x.org/am/exercises/softmax/" in nb.cells[0].source
    assert "[link](https://x.org/am/forward/softmax/#eq-softmax)" in text
    assert "**Solution**\n\nThe reason." in text  # no 4-space indent: not a code block
    assert "```python\nshown_not_run()\n```" in text
    assert "**Shell**" in text and "```bash\npython -m attention_math" in text
    assert "??? " not in text and "=== " not in text and "\n    " not in text
    assert text.count("# Title") == 0  # the page title is the first cell's, once


def test_a_page_without_code_has_no_notebook() -> None:
    assert not notebooks.runs_code("# Prose\n\n```python\nprint(1)\n```\n")
    assert notebooks.runs_code('```python exec="on"\nprint(1)\n```\n')
    site = '```python exec="on" html="true"\nfrom attention_site.pages import chapter_page\n```\n'
    assert not notebooks.runs_code(f"# Exercises\n\n{site}")  # the site's work only


def test_the_site_s_hidden_blocks_are_left_out_and_the_wheel_is_named() -> None:
    page = (
        'x\n\n```python exec="on"\nPath("benchmarks/results/toy_live.json")\n```\n'
        '\n```python exec="on" html="true"\nfrom attention_site.pages import w\n```\n'
        '\n```python exec="on"\nfrom attention_math.display import table\n```\n'
    )
    nb = notebooks.notebook(page, "p.md", "/", "P")
    assert _code(nb) == [notebooks.RICH_PRINT, "from attention_math.display import table"]
    assert "pip install attention-math[notebook]" in nb.cells[0].source
    assert "clone" not in nb.cells[0].source


def test_a_pytorch_tab_is_shown_as_markdown_and_its_numpy_twin_runs() -> None:
    """A forward page's NumPy | PyTorch tabs: the NumPy code is a cell (the notebook runs
    from the wheel, without PyTorch), the PyTorch code a Markdown code block under its
    title, and the hidden block that prints its output for the site is left out."""
    from attention_site.pages.pytorch_tabs import tab_pairs

    source = (ROOT / "docs" / "forward" / "softmax.md").read_text(encoding="utf-8")
    (pair,) = tab_pairs(source)
    nb = notebooks.notebook(source, "forward/softmax.md", "/", "Softmax")
    code = _code(nb)
    assert pair.numpy in code
    assert not any("torch" in c or "pytorch_output" in c for c in code)
    text = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert any(f"**PyTorch**\n\n```python\n{pair.pytorch}\n```" in t for t in text)


#: what a learner has after ``pip install attention-math[notebook]``, besides the stdlib
LEARNER_HAS = {"attention_math", "numpy", "sympy", "matplotlib", "__future__"}


def imported(code: str) -> set[str]:
    """The top-level packages a cell imports.

    Examples:
        >>> sorted(imported("import numpy as np\\nfrom attention_site.render import table"))
        ['attention_site', 'numpy']
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_the_code_a_learner_sees_imports_only_what_the_wheel_brings() -> None:
    """Every block a page shows (and every block its notebook holds) imports the library,
    NumPy, SymPy, matplotlib or the standard library: no ``attention_site``, which the wheel
    does not hold, and reads no file of the repository."""
    made = _source_notebooks()
    assert len(made) > 40
    allowed = LEARNER_HAS | set(sys.stdlib_module_names)
    wrong = {
        f"{name}: {sorted(imported(code) - allowed)}": code.splitlines()[0]
        for name, nb in made.items()
        for code in _code(nb)
        if imported(code) - allowed
    }
    reads = [name for name, nb in made.items() for c in _code(nb) if notebooks.SITE_CODE.search(c)]
    assert not wrong, wrong
    assert not reads, reads


def test_the_check_refuses_a_shown_block_of_the_site() -> None:
    page = 'x\n\n```python exec="on" source="tabbed-right"\nimport attention_site\n```\n'
    (code,) = _code(notebooks.notebook(page, "p.md", "/", "P"))[1:]
    assert imported(code) - LEARNER_HAS == {"attention_site"}


@pytest.fixture(scope="module")
def site_notebooks(built_site: Path) -> dict[Path, Path]:
    """The built pages that run code, each with the notebook its link points to."""
    found = {}
    for page in sorted(built_site.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        m = re.search(r'<p class="notebook-link"><a download="[^"]+" href="([^"]+\.ipynb)">', html)
        if m:
            found[page] = page.parent / m[1]
    return found


@pytest.mark.docs
def test_every_page_with_code_links_its_notebook(site_notebooks: dict[Path, Path]) -> None:
    assert len(site_notebooks) == len(_source_notebooks()) > 40
    for page, nb in site_notebooks.items():
        assert nb.is_file(), page


def _source_notebooks(site_url: str = "/") -> dict[str, object]:
    """Each docs page that runs code -> its notebook, made as the build makes it."""
    found = {}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        source = page.read_text(encoding="utf-8")
        if notebooks.runs_code(source):
            rel = page.relative_to(ROOT / "docs").as_posix()
            found[rel] = notebooks.notebook(source, rel, site_url, rel)
    return found


def _code(nb: object) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]  # type: ignore[attr-defined]


@pytest.mark.docs
def test_the_built_notebooks_hold_the_code_that_is_run(
    site_notebooks: dict[Path, Path], site_server: SiteServer
) -> None:
    """Page by page (the address each notebook names), the code that the test below runs."""
    nbformat = require_or_skip("nbformat", "nbformat is missing (uv sync --group test)")

    def by_page(nbs: Iterable[Any]) -> dict[str, list[str]]:
        return {nb.metadata["attention_math"]["page"]: _code(nb) for nb in nbs}

    built = by_page(nbformat.read(nb, as_version=4) for nb in set(site_notebooks.values()))
    made = by_page(_source_notebooks(site_server.url).values())
    assert len(made) > 40
    assert built == made


def _uv() -> list[str]:
    """How to run uv here: its module in this interpreter, the ``uv`` command, or python3's."""
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv"]
    if shutil.which("uv"):
        return ["uv"]
    probe = subprocess.run(["python3", "-m", "uv", "--version"], capture_output=True, check=False)
    if probe.returncode == 0:
        return ["python3", "-m", "uv"]
    require_or_skip("uv", "uv is missing (python3 -m pip install uv)")  # skips; in CI, fails
    return [sys.executable, "-m", "uv"]


@pytest.fixture(scope="module")
def wheel_kernel(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A Jupyter kernel spec (its name, its JUPYTER_PATH) of a fresh virtual environment
    holding only the built wheel and what its ``notebook`` extra brings (from uv's cache or
    the package index)."""
    from hatchling.builders.wheel import WheelBuilder

    tmp = tmp_path_factory.mktemp("wheel-env")
    (wheel,) = WheelBuilder(str(ROOT)).build(directory=str(tmp / "dist"), versions=["standard"])
    env = tmp / "env"
    uv = _uv()
    subprocess.run([*uv, "venv", "-q", "--python", sys.executable, str(env)], check=True)
    python = env / "bin" / "python"
    subprocess.run(
        [*uv, "pip", "install", "-q", "--python", str(python), f"{wheel}[notebook]"], check=True
    )
    spec = tmp / "jupyter" / "kernels" / "attention-math-wheel"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "wheel", "language": "python"}),
        encoding="utf-8",
    )
    return spec.name, tmp / "jupyter"


#: what a notebook's output may not be: markup printed as text instead of shown
PRINTED_MARKUP = re.compile(r"\$\$|<svg|<span class=|\\begin\{|^\| .* \|$", re.M)
RICH = {"text/markdown", "text/latex", "image/svg+xml", "image/png"}


@pytest.mark.slow
def test_every_notebook_runs_from_the_wheel_and_shows_maths(
    wheel_kernel: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page's notebook, top to bottom, in a kernel of a fresh environment that holds the
    wheel with its ``notebook`` extra only, run outside the repository: no cell fails, the
    library is the wheel's, and what the cells print is shown (Markdown, maths, pictures),
    never ``$$``, ``<svg`` or a table printed as text."""
    require_or_skip("nbformat", "nbformat is missing (uv sync --group test)")
    nbclient = require_or_skip("nbclient", "nbclient is missing (uv sync --group test)")
    kernel, jupyter_path = wheel_kernel
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    made = _source_notebooks()
    assert len(made) > 40
    probe = notebooks.v4.new_notebook(
        cells=[notebooks.v4.new_code_cell("import attention_math; print(attention_math.__file__)")]
    )

    async def run(name: str, nb: Any, gate: asyncio.Semaphore, shows: bool = True) -> str:
        """Run one notebook in a fresh kernel; "" or what failed."""
        client = nbclient.NotebookClient(
            nb, timeout=900, kernel_name=kernel, resources={"metadata": {"path": str(tmp_path)}}
        )
        async with gate:
            try:
                await client.async_execute()
            except nbclient.exceptions.CellExecutionError as exc:
                return f"{name}: {str(exc).strip().splitlines()[-1]}"
        if not shows:
            return ""
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
        printed = [o["text"] for o in outputs if o["output_type"] == "stream"]
        markup = [m[0] for t in printed if (m := PRINTED_MARKUP.search(t))]
        if markup:
            return f"{name}: markup printed as text: {markup[:3]}"
        shown = [o for o in outputs if o["output_type"] == "display_data" and RICH & set(o["data"])]
        return "" if shown else f"{name}: no output shown as Markdown, maths or a picture"

    async def run_all() -> list[str]:
        gate = asyncio.Semaphore(2)
        where = await run("probe", probe, gate, shows=False)
        assert not where, where
        (path,) = [o["text"] for o in probe.cells[0].outputs]
        assert str(ROOT) not in path and "site-packages" in path, path
        return list(await asyncio.gather(*(run(n, nb, gate) for n, nb in made.items())))

    # in a thread of its own: the session's Playwright browser may hold this thread's loop
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        failed = [f for f in pool.submit(asyncio.run, run_all()).result() if f]
    assert not failed, f"{len(failed)} of {len(made)} notebooks:\n" + "\n".join(failed)


def test_the_same_page_gives_the_same_file() -> None:
    nbformat = require_or_skip("nbformat", "nbformat is missing (uv sync --group docs)")
    a, b = (notebooks.notebook(PAGE, "p.md", "/", "P") for _ in range(2))
    assert nbformat.writes(a) == nbformat.writes(b)  # reproducible builds: no random cell ids
