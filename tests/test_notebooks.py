"""Every page with code downloads as a notebook that runs top to bottom (attention_site.notebooks).

The conversion is tested on small sources; then, on the built site, every page that runs code
has its notebook and a "Download notebook" link to it, with the code cells the hook makes from
the page's source; and every page's notebook, made from its source as the build makes it, is
executed in a fresh process of its own (``tests/notebook_runner.py``), outside the repository
unless the page reads committed data, failing on any error; two of them also in a real
Jupyter kernel (nbclient + ipykernel). Made from the sources, not read from the built site,
the notebooks run on one pytest-xdist worker while the other builds the site (the suite's
longest wait otherwise).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from attention_site import notebooks
from attention_site.checks.server import SiteServer
from tests.conftest import require_or_skip

ROOT = Path(__file__).resolve().parents[1]


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
    assert code == ["x = 1", "print(x + 1)"]  # the indented block dedented; the plain one not run


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


def needs_repository(nb: object) -> bool:
    return bool(nb.metadata.get("attention_math", {}).get("needs_repository"))  # type: ignore[attr-defined]


def test_only_pages_reading_committed_data_need_the_repository() -> None:
    page = 'x\n\n```python exec="on"\nPath("benchmarks/results/toy_live.json")\n```\n'
    reads = notebooks.notebook(page, "p.md", "/", "P")
    assert needs_repository(reads) and "clone" in reads.cells[0].source
    assert not needs_repository(notebooks.notebook(PAGE, "p.md", "/", "P"))
    site = 'x\n\n```python exec="on"\nfrom attention_site.render import table\n```\n'
    assert needs_repository(notebooks.notebook(site, "p.md", "/", "P"))  # not in the wheel


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


def _where(nb: object, tmp_path: Path) -> str:
    """Where a notebook runs: outside the repository (a reader has the package, not our
    files), unless the notebook says it reads the repository's committed data."""
    return str(ROOT if needs_repository(nb) else tmp_path)


@pytest.mark.slow
def test_every_notebook_runs_top_to_bottom(tmp_path: Path) -> None:
    """Every page's notebook, cells in order, each notebook in a fresh process of its own
    (forked from one that has imported the libraries: ``tests/notebook_runner.py``)."""
    from tests.notebook_runner import run_notebooks

    made = _source_notebooks()
    assert len(made) > 40
    failed = [
        f
        for f in run_notebooks((n, _code(nb), _where(nb, tmp_path)) for n, nb in made.items())
        if f
    ]
    assert not failed, "\n".join(failed)


#: the notebooks also run in a real Jupyter kernel: one that needs only the installed library
#: and runs outside the repository, and a lesson that draws figures with the site's machinery
#: (attention_site, which the wheel does not hold), run in the repository
IN_A_KERNEL = ("reference/command-line.md", "forward/softmax.md")


@pytest.mark.slow
def test_notebooks_run_in_a_fresh_jupyter_kernel(tmp_path: Path) -> None:
    require_or_skip("nbformat", "nbformat is missing (uv sync --group test)")
    nbclient = require_or_skip("nbclient", "nbclient is missing (uv sync --group test)")
    require_or_skip("ipykernel", "ipykernel is missing (uv sync --group test)")
    # "python3": ipykernel's own kernel, which runs this interpreter (attention_math installed)
    from jupyter_client.kernelspec import NATIVE_KERNEL_NAME

    made = _source_notebooks()
    chosen = {name: made[name] for name in IN_A_KERNEL}
    assert not needs_repository(chosen[IN_A_KERNEL[0]]) and needs_repository(chosen[IN_A_KERNEL[1]])

    async def run(name: str, nb: object) -> str:
        """Run one notebook in a fresh kernel; "" or what failed."""
        client = nbclient.NotebookClient(
            nb,
            timeout=600,
            kernel_name=NATIVE_KERNEL_NAME,
            resources={"metadata": {"path": _where(nb, tmp_path)}},
        )
        try:
            await client.async_execute()
        except nbclient.exceptions.CellExecutionError as exc:
            return f"{name}: {str(exc).strip().splitlines()[-1]}"
        ran = [c for c in nb.cells if c.cell_type == "code" and c.get("execution_count")]
        return "" if len(ran) == len(_code(nb)) else f"{name}: {len(ran)} cells ran"

    async def run_all() -> list[str]:
        return list(await asyncio.gather(*(run(n, nb) for n, nb in chosen.items())))

    # in a thread of its own: the session's Playwright browser may hold this thread's loop
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        failed = [f for f in pool.submit(asyncio.run, run_all()).result() if f]
    assert not failed, "\n".join(failed)


def test_the_same_page_gives_the_same_file() -> None:
    nbformat = require_or_skip("nbformat", "nbformat is missing (uv sync --group docs)")
    a, b = (notebooks.notebook(PAGE, "p.md", "/", "P") for _ in range(2))
    assert nbformat.writes(a) == nbformat.writes(b)  # reproducible builds: no random cell ids


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_the_runner_reports_each_notebook_in_order_a_crash_included(tmp_path: Path) -> None:
    from tests.notebook_runner import run_notebooks

    got = run_notebooks(
        [
            ("crash", ["import os", "os._exit(3)"], str(tmp_path)),
            ("fine", ["x = 1", "assert x == 1"], str(tmp_path)),
            ("fails", ["x = 1", "x / 0"], str(tmp_path)),
            ("fresh", ["assert 'x' not in globals()"], str(tmp_path)),  # nothing carried over
        ]
    )
    assert got == [
        "crash: the process ended with code 3",
        "",
        "fails: cell 2: ZeroDivisionError: division by zero",
        "",
    ]
