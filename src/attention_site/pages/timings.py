"""Which committed timings the site may publish: runs from a quiet machine, with the load shown.

A wall-clock time measured while other jobs fill the cores says more about those jobs than about
the code. A benchmark's JSON records the load average (1, 5 and 15 minutes) before and after its
run and the machine's number of cores; a run is *quiet* when the 1-minute load, before and after,
is at most the number of cores (no process had to wait for one). The Performance page prints
times only from quiet runs, each with its load; peak memory and errors do not depend on the load
and are printed in any case.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["load_text", "quiet"]


def _loads(doc: Mapping[str, Any]) -> tuple[float, float, int]:
    try:
        before, after = float(doc["load_before"][0]), float(doc["load_after"][0])
        cores = int(doc["machine"]["cores"])
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise ValueError(
            "a benchmark result needs load_before, load_after (1, 5, 15 min) and "
            f"machine.cores; got keys {sorted(doc)}"
        ) from e
    return before, after, cores


def quiet(doc: Mapping[str, Any]) -> bool:
    """Whether the run's 1-minute load average, before and after, is at most its core count.

    Raises:
        ValueError: if the result does not record the load or the cores.

    Examples:
        >>> from attention_site.pages.timings import quiet
        >>> run = {"load_before": [1.4, 1.3, 1.3], "load_after": [1.3, 1.4, 1.4]}
        >>> quiet({**run, "machine": {"cores": 2}})
        True
        >>> quiet({"load_before": [15.1, 13.9, 10.1], "load_after": [14.1, 14.2, 10.9],
        ...        "machine": {"cores": 2}})
        False
        >>> quiet({"machine": {"cores": 2}})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: a benchmark result needs load_before, load_after ... got keys ['machine']
    """
    before, after, cores = _loads(doc)
    return max(before, after) <= cores


def load_text(doc: Mapping[str, Any]) -> str:
    """The run's load, as the page prints it beside its figures.

    Examples:
        >>> from attention_site.pages.timings import load_text
        >>> load_text({"load_before": [1.42, 1.3, 1.3], "load_after": [1.32, 1.4, 1.4],
        ...            "machine": {"cores": 2}})
        'load average 1.42 before and 1.32 after the run, on 2 cores (quiet)'
    """
    before, after, cores = _loads(doc)
    verdict = "quiet" if quiet(doc) else "busy: times not published"
    return (
        f"load average {before:.2f} before and {after:.2f} after the run, "
        f"on {cores} cores ({verdict})"
    )
