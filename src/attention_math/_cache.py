"""Where attention-math keeps what it may recompute: one directory per user and machine.

``$XDG_CACHE_HOME/attention-math`` (``~/.cache/attention-math`` without it, or with a
relative path there, which the XDG specification says to ignore). The default path's
calibration, the build's in-browser runtime and the tests' mypy cache live under it, each
in a directory of its own and each with its own override.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["user_cache"]


def user_cache() -> Path:
    """``$XDG_CACHE_HOME/attention-math``, or ``~/.cache/attention-math``.

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> from attention_math._cache import user_cache
        >>> with mock.patch.dict(os.environ, {"XDG_CACHE_HOME": "/var/cache/me"}):
        ...     print(user_cache())
        /var/cache/me/attention-math
        >>> with mock.patch.dict(os.environ, {"XDG_CACHE_HOME": "relative"}):
        ...     user_cache() == Path.home() / ".cache" / "attention-math"
        True
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "attention-math"
