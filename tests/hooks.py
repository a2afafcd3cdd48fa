"""The build's hooks (``hooks/*.py``) loaded as MkDocs loads them, for tests and benchmarks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["HOOKS", "load_hook"]

HOOKS = Path(__file__).resolve().parents[1] / "hooks"


def load_hook(file: str, name: str | None = None) -> ModuleType:
    """``hooks/<file>.py`` as a fresh module named ``name`` (default: ``<file>_hook``).

    As MkDocs does, the hooks' directory is on ``sys.path`` while the module runs, so that a
    hook's imports of its neighbours (``from node_binary import find_node``) resolve. Each call
    gives a new module: a test that loads a hook twice gets two independent states.
    """
    path = HOOKS / f"{file}.py"
    spec = importlib.util.spec_from_file_location(name or f"{file}_hook", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the hook {path}")
    module = importlib.util.module_from_spec(spec)
    old = sys.path.copy()
    sys.path.insert(0, str(HOOKS))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = old
    return module
