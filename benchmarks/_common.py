"""What the benchmark scripts share: where their results go.

One rule, checked by ``tests/test_benchmark_results.py``: ``benchmarks/<name>.py`` writes
``benchmarks/results/<name>.json`` (its figures, as data) and, when a page shows them,
``benchmarks/results/<name>.md`` (the table the page includes); a second set of results of
the same script (another run, a variant) is ``benchmarks/results/<name>.<variant>.json``.

A script run as ``python benchmarks/<name>.py`` has its own folder on ``sys.path``, so
``from _common import result_path`` needs no path set-up; the site's machinery it uses (the
local server, axe-core, the hooks' loader) comes from ``attention_site.checks``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RESULTS", "ROOT", "result_path"]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def result_path(script: str, variant: str | None = None, suffix: str = ".json") -> Path:
    """Where the script at ``script`` (its ``__file__``) writes its results.

    Examples:
        >>> result_path("benchmarks/live_bench.py").relative_to(ROOT).as_posix()
        'benchmarks/results/live_bench.json'
        >>> result_path("start_cost.py", "theme", ".md").name
        'start_cost.theme.md'
        >>> result_path("lighthouse.py", "a.b")
        Traceback (most recent call last):
        ValueError: variant must be a plain name (letters, digits, '-', '_'), got 'a.b'
    """
    if variant is not None and not variant.replace("-", "").replace("_", "").isalnum():
        raise ValueError(
            f"variant must be a plain name (letters, digits, '-', '_'), got {variant!r}"
        )
    name = Path(script).stem if variant is None else f"{Path(script).stem}.{variant}"
    return RESULTS / f"{name}{suffix}"
