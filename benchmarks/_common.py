"""What the benchmark scripts share: where their results go, and a process's memory.

``benchmarks/<name>.py`` writes ``data/<name>.json`` (its figures, as data) and, when a page
shows them, ``data/<name>.md`` (the table the page includes): the one data folder the pages
read (``attention_site.data``). A variant of the same script's results (another set of pages,
say) is ``data/<name>.<variant>.json``; an earlier run is not kept (git keeps it).

A script run as ``python benchmarks/<name>.py`` has its own folder on ``sys.path``, so
``from _common import result_path`` needs no path set-up; the site's machinery it uses (the
local server, axe-core, the hooks' loader) comes from ``attention_site.checks``.
"""

from __future__ import annotations

from pathlib import Path

from attention_site.data import DATA

__all__ = ["RESULTS", "ROOT", "result_path", "status_kib"]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = DATA


def result_path(script: str, variant: str | None = None, suffix: str = ".json") -> Path:
    """Where the script at ``script`` (its ``__file__``) writes its results.

    Examples:
        >>> result_path("benchmarks/live_bench.py").relative_to(ROOT).as_posix()
        'data/live_bench.json'
        >>> result_path("lighthouse.py", "phone", ".md").name
        'lighthouse.phone.md'
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


def status_kib(field: str, pid: int | str = "self") -> int:
    """A size field of a process's ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``) in KiB.

    Raises:
        OSError: off Linux, or when the process is gone.
    """
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))
