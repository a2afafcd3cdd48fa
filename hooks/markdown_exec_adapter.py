"""Everything the build's hooks take from markdown-exec's private modules, in one place.

markdown-exec has no public API for what ``fresh_state``, ``exec_cache`` and
``parallel_exec`` need: its Python runner (``formatters.python._run_python``, which the
execution cache and the parallel worker wrap), its sessions (globals and block counters)
and the counter behind its block ids. Those hooks reach them only through the functions
below, and so do ``benchmarks/build_profile.py`` (which times the runner) and
``tests/test_parallel_exec.py`` (which records what it runs), so a markdown-exec upgrade that
moves them breaks here, in one file.
``PINNED`` is the version they were read from; ``tests/test_hook_adapters.py`` fails,
naming both versions, when the installed one differs, and says what to check.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from markdown_exec._internal.formatters import python as _python
from markdown_exec._internal.rendering import MarkdownConverter

__all__ = [
    "PINNED",
    "count_block",
    "installed",
    "original_runner",
    "reset_sessions",
    "restart_session",
    "runner",
    "session_blocks",
    "set_original_runner",
    "set_runner",
]

PINNED = "1.12.6"
"""The markdown-exec whose private modules this adapter was written against."""

# markdown-exec's own runner, kept on its module so that loading a hook twice in one process
# never wraps a wrapper (an attribute of our own on a third-party module)
if not hasattr(_python, "_attention_math_uncached_run"):
    _python._attention_math_uncached_run = _python._run_python  # type: ignore[attr-defined]


def installed() -> str:
    """The installed markdown-exec's version."""
    return version("markdown-exec")


def original_runner() -> Callable[..., str]:
    """markdown-exec's own Python runner, as it was before any hook replaced it."""
    run: Callable[..., str] = _python._attention_math_uncached_run  # type: ignore[attr-defined]
    return run


def runner() -> Callable[..., str]:
    """The runner markdown-exec calls now (its own, or a hook's wrapper)."""
    run: Callable[..., str] = _python._run_python
    return run


def set_runner(run: Callable[..., str]) -> None:
    """Make markdown-exec run every Python block through ``run``."""
    _python._run_python = run


def set_original_runner(run: Callable[..., str]) -> None:
    """Make ``run`` markdown-exec's runner, and the one the hooks take as its own
    (``original_runner``): for a profiler that times every block, before the hooks load."""
    _python._attention_math_uncached_run = run  # type: ignore[attr-defined]
    _python._run_python = run


def session_blocks(session: str) -> int:
    """How many blocks of ``session`` markdown-exec has run (0 for a new session)."""
    return int(_python._sessions_counter.get(session, 0))


def count_block(session: str) -> None:
    """Count one more block of ``session`` as run (its output was served from a cache)."""
    _python._sessions_counter[session] += 1


def restart_session(session: str) -> None:
    """Forget ``session``'s globals and count, so that its blocks can be run again."""
    _python._sessions_counter[session] = 0
    _python._sessions_globals.pop(session, None)


def reset_sessions() -> None:
    """Forget every session, block counter and per-block module (a fresh page state)."""
    for name in [n for n in sys.modules if n.startswith("_code_block_")]:
        del sys.modules[name]  # the empty modules markdown-exec registers for each block
    _python._sessions_globals.clear()
    _python._sessions_counter.clear()
    _python._code_blocks.clear()
    MarkdownConverter.counter = 0


def private_names() -> dict[str, Any]:
    """The private objects used above, by name: what the adapter's test checks exist."""
    return {
        "formatters.python._run_python": getattr(_python, "_run_python", None),
        "formatters.python._sessions_globals": getattr(_python, "_sessions_globals", None),
        "formatters.python._sessions_counter": getattr(_python, "_sessions_counter", None),
        "formatters.python._code_blocks": getattr(_python, "_code_blocks", None),
        "rendering.MarkdownConverter.counter": getattr(MarkdownConverter, "counter", None),
    }
