"""What ``hooks/memo.py`` takes from mkdocstrings-python's private modules, in one place.

mkdocstrings-python formats long signatures with ruff through
``_internal.rendering._get_formatter``, which has no public hook; the memo wraps it so that
a signature already formatted is not formatted again. ``PINNED`` is the version this was
read from; ``tests/test_hook_adapters.py`` fails, naming both versions, when the installed
one differs.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import adapter_memo  # hooks/adapter_memo.py
from mkdocstrings_handlers.python._internal import rendering as _rendering

__all__ = ["PINNED", "installed", "original_formatter", "private_names", "set_formatter"]

PINNED = "2.0.11"
"""The mkdocstrings-python whose private ``rendering`` module this adapter was written against."""

Formatter = Callable[[str, int], str]

# the original getter, kept on its module so that loading the memo twice never wraps a wrapper
if not hasattr(_rendering, "_attention_math_get_formatter"):
    _rendering._attention_math_get_formatter = _rendering._get_formatter  # type: ignore[attr-defined]


def installed() -> str:
    """The installed mkdocstrings-python's version."""
    return version("mkdocstrings-python")


def original_formatter() -> Formatter:
    """mkdocstrings-python's own signature formatter (ruff's, or its fallback)."""
    get: Callable[[], Formatter] = _rendering._attention_math_get_formatter  # type: ignore[attr-defined]
    return get()


def set_formatter(get: Callable[[], Formatter]) -> None:
    """Make mkdocstrings-python take its signature formatter from ``get``."""
    _rendering._get_formatter = get  # type: ignore[assignment]


def shared_memo(name: str, fresh: dict[str, Any]) -> dict[str, Any]:
    """A memo kept on the rendering module (``fresh`` the first time), so that it survives a
    hook's reloading, as the wrapped getter does."""
    return adapter_memo.kept_on(_rendering, name, fresh)


def private_names() -> dict[str, Any]:
    """The private objects used above, by name: what the adapter's test checks exist."""
    return {"_internal.rendering._get_formatter": getattr(_rendering, "_get_formatter", None)}
