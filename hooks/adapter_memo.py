"""A memo kept on another library's module: the one way the adapters (``hooks/*_adapter.py``)
keep one.

MkDocs loads the hooks afresh at each ``mkdocs serve`` rebuild, so a memo held by a hook's own
module would start empty each time. Kept as an attribute of the library module an adapter
wraps, it lives as long as the process does, as the wrapped object does. The hooks import this
module by name (MkDocs puts this directory on ``sys.path`` while it loads a hook).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["kept_on"]


def kept_on(owner: ModuleType, name: str, fresh: dict[str, Any]) -> dict[str, Any]:
    """The memo ``name`` kept on ``owner``: ``fresh`` the first time, the same dict after.

    Examples:
        >>> import types
        >>> owner = types.ModuleType("owner")
        >>> first = kept_on(owner, "memo", {"hits": 0})
        >>> first["hits"] += 1
        >>> kept_on(owner, "memo", {"hits": 0})
        {'hits': 1}
    """
    attr = f"_attention_math_{name}"
    if not hasattr(owner, attr):
        setattr(owner, attr, fresh)
    memo: dict[str, Any] = getattr(owner, attr)
    return memo
