"""MkDocs hook: every page's executed code starts from fresh state.

markdown-exec keeps ``session=`` globals, a block counter (which names the module each
block runs as) and an id counter (which prefixes the HTML ids of executed output) in
module-level dictionaries that live as long as the Python process. Under ``mkdocs serve``
that process rebuilds the site many times, so without this hook a page could read a
variable another page, or an earlier build, left behind, and a page's HTML ids would
depend on which pages were built before it. Resetting them before each page is rendered
makes each page a function of its own source only. Blocks on the *same* page may still
share a ``session``.

Before each build it also drops ``attention_math`` from ``sys.modules``: ``mkdocs serve``
watches ``src/`` and, on a change there, the rebuild imports the edited package instead of
running the pages against the version loaded at startup.
"""

from __future__ import annotations

import sys
from typing import Any

import markdown_exec_adapter as _exec  # hooks/markdown_exec_adapter.py: markdown-exec's internals


def reset() -> None:
    """Forget every markdown-exec session, counter and per-block module."""
    _exec.reset_sessions()


def forget_package(prefix: str = "attention_math") -> None:
    """Drop ``prefix`` and its submodules from ``sys.modules`` so the next import reloads them."""
    for name in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
        del sys.modules[name]


def on_pre_build(config: Any) -> None:
    forget_package("attention_site")  # the site's machinery imports the library: both reload
    forget_package()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    reset()
    return markdown
