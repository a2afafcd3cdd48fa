"""What ``hooks/memo.py`` takes from pymdown-extensions' internals, in one place.

Every highlighted code block goes through ``pymdownx.highlight.Highlight.highlight``, which
SuperFences, InlineHilite and markdown-exec's source tabs all call; pymdown-extensions has no
hook around it, so the memo replaces the method on the class. It reaches it only through the
functions below, and it relies on the method's ``inline`` and ``title`` arguments and the
instance's ``auto_title`` setting (``private_names``) to leave out the calls whose output the
caller edits or whose title goes elsewhere. ``PINNED`` is the version this was read from;
``tests/test_hook_adapters.py`` fails, naming both versions, when the installed one differs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import adapter_memo  # hooks/adapter_memo.py
from pymdownx import highlight as _highlight

__all__ = [
    "PINNED",
    "installed",
    "original_highlight",
    "private_names",
    "set_highlight",
    "shared_memo",
]

PINNED = "13.1"
"""The pymdown-extensions whose ``highlight`` module this adapter was written against."""

# the original method, kept on its module so that loading the memo twice never wraps a wrapper
if not hasattr(_highlight, "_attention_math_highlight"):
    _highlight._attention_math_highlight = _highlight.Highlight.highlight


def installed() -> str:
    """The installed pymdown-extensions' version."""
    return version("pymdown-extensions")


def original_highlight() -> Callable[..., Any]:
    """pymdown-extensions' own ``Highlight.highlight`` (a function of ``self`` and its
    arguments)."""
    method: Callable[..., Any] = _highlight._attention_math_highlight
    return method


def set_highlight(method: Callable[..., Any]) -> None:
    """Make every ``Highlight`` highlight through ``method`` (called as a method)."""
    _highlight.Highlight.highlight = method


def shared_memo(name: str, fresh: dict[str, Any]) -> dict[str, Any]:
    """A memo kept on the highlight module (``fresh`` the first time), so that it survives a
    hook's reloading, as the original method does."""
    return adapter_memo.kept_on(_highlight, name, fresh)


def private_names() -> dict[str, Any]:
    """The private objects used above, by name: what the adapter's test checks exist."""
    method = original_highlight()
    arguments = inspect.signature(method).parameters
    settings = inspect.signature(_highlight.Highlight.__init__).parameters
    return {
        "highlight.Highlight.highlight": getattr(_highlight.Highlight, "highlight", None),
        "highlight.Highlight.highlight(inline=)": method if "inline" in arguments else None,
        "highlight.Highlight.highlight(title=)": method if "title" in arguments else None,
        "highlight.Highlight(auto_title=)": (
            _highlight.Highlight if "auto_title" in settings else None
        ),
    }
