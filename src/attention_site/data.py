"""The data the pages read, in one folder: ``data/`` at the root of the repository.

What a benchmark or an oracle script of ``benchmarks/`` measured or recorded, and a page shows:
``data/<name>.json`` (the figures) and, for a page that includes a table,
``data/<name>.md``. A script writes to ``path(<its name>)`` (``benchmarks/_common.py``); code
that reads the data reads it through ``load``. A page's executed block, which runs from the
repository root as the build does, may read ``Path("data/<name>.json")`` itself, and a page
includes a table with ``--8<-- "data/<name>.md"``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["DATA", "load", "path"]

#: the folder (the package is installed editable: the repository is three levels up)
DATA = Path(__file__).resolve().parents[2] / "data"


def path(name: str, suffix: str = ".json") -> Path:
    """The file of the data named ``name``: ``data/<name><suffix>``.

    Examples:
        >>> path("attention_bench").relative_to(DATA.parent).as_posix()
        'data/attention_bench.json'
        >>> path("lighthouse", ".md").name
        'lighthouse.md'
        >>> path("../secrets")
        Traceback (most recent call last):
        ValueError: a data name is a plain file name, got '../secrets'
    """
    if not name or not name.replace(".", "").replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a data name is a plain file name, got {name!r}")
    return DATA / f"{name}{suffix}"


def load(name: str) -> Any:
    """The JSON data named ``name`` (``data/<name>.json``), as Python objects.

    Examples:
        >>> load("attention_bench")["results"][0]["impl"] in {"naive", "untiled", "tiled", "torch"}
        True
        >>> load("no_such_data")
        Traceback (most recent call last):
        FileNotFoundError: no data/no_such_data.json: the benchmarks/ script of that name writes it
    """
    file = path(name)
    if not file.is_file():
        raise FileNotFoundError(
            f"no data/{name}.json: the benchmarks/ script of that name writes it"
        )
    return json.loads(file.read_text(encoding="utf-8"))
