"""Run notebooks' code cells top to bottom, each notebook in a fresh process of its own.

A fresh Jupyter kernel per notebook spends most of its time starting: an interpreter, the
kernel, then NumPy, SymPy, matplotlib and ``attention_math`` imported again, for each one.
Here a fork server imports those once; each notebook then runs in a new process forked from
it, which holds the imported modules and nothing else (no other notebook's names, results
or caches), in a directory of the caller's choice, its cells executed in order in one
namespace, as a kernel runs them. What a kernel adds (IPython's display, which the
notebooks' ``print = show`` uses) is not here: ``tests/build/test_notebooks.py`` also runs
every notebook through a real kernel, in an environment holding only the wheel.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import traceback
from collections.abc import Iterable, Sequence
from multiprocessing.connection import Connection

__all__ = ["PRELOAD", "run_cells", "run_notebooks"]

#: imported once in the fork server: what the pages import, so that no notebook pays for it
PRELOAD = [
    "numpy",
    "sympy",
    "mpmath",
    "matplotlib.pyplot",
    "attention_math",
    "attention_math.numeric",
    "attention_math.symbolic",
    "attention_math.display",
    "attention_math.crosscheck",
    "attention_math.plot.style",
    "attention_math.plot.panels",
    "tests.notebook_runner",
]


def run_cells(name: str, cells: Sequence[str], cwd: str) -> str:
    """Execute ``cells`` in order in one namespace, in ``cwd``; "" or what failed.

    Examples:
        >>> import tempfile
        >>> run_cells("nb", ["x = 1", "print(x + 1)"], tempfile.gettempdir())
        ''
        >>> run_cells("nb", ["x = 1", "x / 0"], tempfile.gettempdir())
        'nb: cell 2: ZeroDivisionError: division by zero'
    """
    os.chdir(cwd)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for i, source in enumerate(cells, start=1):
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # a kernel shows it; nobody reads it
                exec(compile(source, f"<{name}, cell {i}>", "exec"), namespace)
        except BaseException as exc:  # a cell failing in any way is reported
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            return f"{name}: cell {i}: {last}"
    return ""


def _child(conn: Connection, name: str, cells: Sequence[str], cwd: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # as a kernel without a display
    conn.send(run_cells(name, cells, cwd))
    conn.close()


def run_notebooks(
    notebooks: Iterable[tuple[str, Sequence[str], str]], workers: int | None = None
) -> list[str]:
    """Each ``(name, cells, cwd)`` run by ``run_cells`` in a fresh forked process, ``workers``
    (default: a core each) at a time; what failed, one line per notebook, "" for a pass.

    The processes are not daemons, so a page that starts a process pool of its own can."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    todo = list(notebooks)
    results: dict[int, str] = {}
    running: dict[int, tuple[multiprocessing.process.BaseProcess, Connection]] = {}
    limit = workers or os.cpu_count() or 1
    while todo or running:
        while todo and len(running) < limit:
            index = len(results) + len(running)
            name, cells, cwd = todo.pop(0)
            receive, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(send, name, list(cells), cwd), name=name)
            proc.start()
            send.close()
            running[index] = (proc, receive)
        ready = multiprocessing.connection.wait([c for _, c in running.values()])
        for index, (child, conn) in list(running.items()):
            if conn in ready:
                try:
                    said: str | None = conn.recv()
                except EOFError:  # the process died without a word (a crash, os._exit)
                    said = None
                child.join()
                crashed = f"{child.name}: the process ended with code {child.exitcode}"
                results[index] = crashed if said is None else said
                del running[index]
    return [results[i] for i in sorted(results)]
