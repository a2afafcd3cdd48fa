"""MkDocs hook: ``mkdocs build`` runs the pages' Python blocks on two cores instead of one.

The executed blocks are most of a cold build's CPU time, and MkDocs renders pages one after
another in one process. Once the pages are known (``on_nav``), this hook forks a worker
that reads the pages' Markdown, takes their ``python exec`` blocks and runs them with
markdown-exec's own runner, a page at a time, **starting from the last page**, while the
build renders from the first. Each page is taken by one side only: when the build reaches
a page the worker has taken, it waits for that page's outputs and uses them in place of
running the blocks itself; the two stop when they meet. The build reads the pages without
executed blocks first (the API pages: their Markdown and mkdocstrings cost as much as some
blocks), so that once the two meet the build has only the Markdown of the worker's pages
left; the pages are written in MkDocs' own order.

Nothing is stored between builds: the worker is a copy of this build's process, runs the
same package on the same sources, and an output is used only for the block it came from:

- a block without a ``session`` is matched by its exact source;
- a block in a ``session`` by its source *and* the sources of every earlier block of that
  session on the page (their globals are its input); if a session block finds no output,
  the build re-runs the session's earlier blocks itself before running it;
- a page starts from fresh state on both sides (as ``hooks/fresh_state.py`` does);
- a block that fails in the worker, or that the worker's reading of the Markdown missed or
  read differently, has no output there and is run by the build as usual (so its error
  message is the usual one); a worker that dies leaves every page to the build.

Only ``mkdocs build`` uses it (``serve`` has the execution cache); ``ATTENTION_MATH_PARALLEL=0``
turns it off. tests/test_reproducible_build.py builds once with it and once without, and
the two sites must be identical byte for byte.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing as mp
import os
import queue
import re
from pathlib import Path
from typing import Any

import markdown_exec_adapter as _exec  # hooks/markdown_exec_adapter.py: markdown-exec's internals

log = logging.getLogger("mkdocs.hooks.parallel_exec")

# a fenced block opening with ``python`` and options; its body up to the same fence at the
# same indentation (a block inside an admonition or a tab is indented)
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}) ?python\b(?P<options>[^\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
OPTION = re.compile(r'(\w+)="([^"]*)"')
FALSE = {"", "no", "off", "false", "0"}  # markdown-exec's reading of a false option

Block = tuple[str, str]  # (session or "", code)
Key = tuple[str, tuple[str, ...]]  # (session, this block's code and the session's before it)


def page_blocks(markdown: str) -> list[Block]:
    """The executed Python blocks of a page's Markdown, in order: (session, code)."""
    blocks = []
    for m in FENCE.finditer(markdown):
        options = dict(OPTION.findall(m.group("options")))
        if options.get("exec", "no").lower() in FALSE or "workdir" in options:
            continue
        indent = m.group("indent")
        lines = m.group("body").split("\n")[:-1]  # the body ends with the closing line's \n
        code = "\n".join(line.removeprefix(indent) for line in lines)
        blocks.append((options.get("session", ""), code))
    return blocks


def keys(blocks: list[Block]) -> list[Key]:
    """Each block's key: its code, and for a session block every earlier code of the session."""
    seen: dict[str, list[str]] = {}
    out = []
    for session, code in blocks:
        history = seen.setdefault(session, []) if session else []
        history.append(code)
        out.append((session, tuple(history)))
    return out


def fresh_state() -> None:
    """What ``hooks/fresh_state.py`` resets before each page."""
    _exec.reset_sessions()


class Claims:
    """Which pages each side has taken: the build from the front, the worker from the back."""

    def __init__(self, ctx: Any, pages: int) -> None:
        self.build = ctx.Value("i", -1)  # the last page the build took
        self.worker = ctx.Value("i", pages)  # the last page the worker took
        self.lock = ctx.Lock()

    def worker_takes(self, page: int) -> bool:
        with self.lock:
            if page <= self.build.value:
                return False
            self.worker.value = page
            return True

    def build_takes(self, page: int) -> bool:
        """True if the build runs ``page`` itself; False if the worker has it."""
        with self.lock:
            self.build.value = max(self.build.value, page)
            return bool(page < self.worker.value)


def _work(pages: list[list[Block]], claims: Claims, results: Any, runner: Any) -> None:
    """The worker: run pages from the last, sending each page's outputs by key."""
    for index in reversed(range(len(pages))):
        if not claims.worker_takes(index):
            break
        fresh_state()
        outputs: dict[Key, str] = {}
        for key, (session, code) in zip(keys(pages[index]), pages[index], strict=True):
            try:
                outputs[key] = runner(code, session=session or None)
            except Exception:  # the build runs it again and reports it as usual
                if session:
                    break  # the session's later blocks would run without its globals
        results.put((index, outputs))
    results.put((None, {}))


class PageOutputs:
    """The worker's outputs for one page, served to the build's runner block by block."""

    def __init__(self, outputs: dict[Key, str] | None) -> None:
        self.outputs = outputs  # None: the build runs the page itself
        self.history: dict[str, list[str]] = {}
        self.local: set[str] = set()  # sessions whose globals are in this process
        self.served = 0

    def run(self, inner: Any, code: str, session: str | None, **kwargs: Any) -> str:
        """The output of ``code``: the worker's if it ran this block, else ``inner``'s."""
        history = self.history.setdefault(session, []) if session else []
        history.append(code)
        key = (session or "", tuple(history))
        if self.outputs is None or (session and session in self.local):
            return str(inner(code, session=session, **kwargs))
        if key in self.outputs:
            self.served += 1
            return self.outputs[key]
        if session:
            # from here on this session runs here; its earlier blocks, served by the
            # worker, run here first (their output dropped) so that it has their globals
            self.local.add(session)
            for earlier in history[:-1]:
                inner(earlier, session=session)
        return str(inner(code, session=session, **kwargs))


class Parallel:
    """The build's side: take pages, fetch the worker's outputs, serve them to the runner."""

    def __init__(self, pages: list[str], blocks: list[list[Block]]) -> None:
        ctx = mp.get_context("fork")  # the worker is a copy of this build at this point
        self.index = {uri: i for i, uri in enumerate(pages)}
        self.claims = Claims(ctx, len(pages))
        self.results: Any = ctx.Queue()
        self.done: dict[int, dict[Key, str]] = {}
        self.finished = False
        self.page = PageOutputs(None)  # the page being rendered
        self.served = 0  # blocks the worker ran for the build, pages before this one
        self.process = ctx.Process(
            target=_work, args=(blocks, self.claims, self.results, _exec.runner())
        )
        self.process.daemon = True
        self.process.start()

    def outputs_of(self, index: int) -> dict[Key, str] | None:
        """The worker's outputs for page ``index``, waiting for them; None if it has none."""
        while index not in self.done and not self.finished:
            try:
                got, outputs = self.results.get(timeout=1.0)
            except queue.Empty:
                if not self.process.is_alive():
                    self.finished = True
                continue
            if got is None:
                self.finished = True
            else:
                self.done[got] = outputs
        return self.done.pop(index, None)

    def start_page(self, uri: str) -> None:
        self.served += self.page.served
        index = self.index.get(uri)
        taken = index is not None and not self.claims.build_takes(index)
        self.page = PageOutputs(self.outputs_of(index) if taken and index is not None else None)

    def run(self, inner: Any, code: str, session: str | None, **kwargs: Any) -> str:
        return self.page.run(inner, code, session, **kwargs)

    def close(self) -> None:
        self.served += self.page.served
        self.page = PageOutputs(None)
        with self.claims.lock:
            self.claims.build.value = len(self.index)  # the worker takes no more pages
        while not self.finished and self.process.is_alive():
            self.outputs_of(-1)
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.kill()


# imported before the fork, so that the worker inherits them instead of importing them
# again (about 1.3 s of CPU: SymPy, matplotlib); the pages import them anyway. PyTorch is
# not among them: one page uses it. figures.style first: it chooses matplotlib's Agg backend.
PRELOAD = ("numpy", "sympy", "attention_site.figures.style", "attention_math.display")

_state: dict[str, Any] = {"command": None, "parallel": None, "inner": None, "order": None}


def on_startup(command: str, dirty: bool) -> None:
    _state["command"] = command


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    enabled = os.environ.get("ATTENTION_MATH_PARALLEL", "1").strip() != "0"
    if _state["command"] != "build" or not enabled or (os.cpu_count() or 1) < 2:
        return nav
    pages, blocks, without = [], [], []
    for file in files.documentation_pages():
        found = page_blocks(Path(file.abs_src_path).read_text(encoding="utf-8"))
        if found:
            pages.append(file.src_uri)
            blocks.append(found)
        else:
            without.append(file)
    # The build reads the pages without executed blocks first (the API pages: Markdown and
    # mkdocstrings only) while the worker starts on the blocks: once the two meet, what is
    # left to the build alone is the Markdown of the pages the worker ran, not of these too.
    # on_env puts the files back in their order before any page is written.
    _state["order"] = list(files)
    _reorder(files, without)
    inner = _exec.runner()  # markdown-exec's runner, or the execution cache's
    for module in PRELOAD:
        importlib.import_module(module)
    parallel = Parallel(pages, blocks)
    _state.update(parallel=parallel, inner=inner)

    def run(code: str, returncode: Any = None, session: Any = None, **kwargs: Any) -> str:
        return parallel.run(inner, code, session, returncode=returncode, **kwargs)

    _exec.set_runner(run)
    return nav


def _reorder(files: Any, first: list[Any]) -> None:
    """Put ``first`` (files of ``files``) first, in that order, the others after them in
    theirs (MkDocs reads and writes pages in the order of its ``Files``)."""
    chosen = {f.src_uri for f in first}
    for file in [*first, *(f for f in list(files) if f.src_uri not in chosen)]:
        files.remove(file)
        files.append(file)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if _state["parallel"] is not None:
        _state["parallel"].start_page(page.file.src_uri)
    return markdown


def on_env(env: Any, config: Any, files: Any) -> Any:
    """Every page is rendered: stop the worker and give markdown-exec its runner back."""
    parallel = _state["parallel"]
    if _state.get("order"):
        _reorder(files, _state.pop("order"))
    if parallel is not None:
        parallel.close()
        _exec.set_runner(_state["inner"])
        log.info(
            "parallel execution: %d blocks run by the worker, %d pages",
            parallel.served,
            len(parallel.index),
        )
        _state["parallel"] = None
    return env


def on_build_error(error: Exception) -> None:
    if _state["parallel"] is not None:
        _state["parallel"].close()
        _exec.set_runner(_state["inner"])
        _state["parallel"] = None
