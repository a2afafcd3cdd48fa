"""Where attention-math keeps what it may recompute: one directory per user and machine.

``$XDG_CACHE_HOME/attention-math`` (``~/.cache/attention-math`` without it, or with a
relative path there, which the XDG specification says to ignore). The toy model's trained
weights, the build's in-browser runtime and the tests' mypy cache live under it, each in a
directory of its own. ``attention`` itself never writes here. ``write_atomic`` is how its files
are written, so that a reader (another process, another thread) never sees half of one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["user_cache", "write_atomic"]


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


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file beside it, then
    renamed over it (a rename within a folder is atomic); the temporary file is removed if
    writing fails.

    Examples:
        >>> import tempfile
        >>> from attention_math._cache import write_atomic
        >>> folder = Path(tempfile.mkdtemp())
        >>> write_atomic(folder / "a.json", b"{}")
        >>> (folder / "a.json").read_bytes(), [p.name for p in folder.iterdir()]
        (b'{}', ['a.json'])
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
