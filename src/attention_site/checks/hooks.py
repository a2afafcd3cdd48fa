"""The build's hooks (``hooks/*.py`` of the checkout) loaded as MkDocs loads them, for the
tests and the benchmarks (the package is installed editable: the hooks are beside ``src/``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

__all__ = ["HOOKS", "load_hook", "mkdocs_config"]

HOOKS = Path(__file__).resolve().parents[3] / "hooks"


def load_hook(file: str, name: str | None = None) -> ModuleType:
    """``hooks/<file>.py`` as a fresh module named ``name`` (default: ``<file>_hook``).

    As MkDocs does, the hooks' directory is on ``sys.path`` while the module runs, so that a
    hook's imports of its neighbours (``from node_binary import find_node``) resolve. Each call
    gives a new module: a test that loads a hook twice gets two independent states.

    Examples:
        >>> a, b = load_hook("node_binary"), load_hook("node_binary")
        >>> a.__name__, a is b, callable(a.find_node)
        ('node_binary_hook', False, True)
        >>> load_hook("no_such_hook")
        Traceback (most recent call last):
        FileNotFoundError: no hook hooks/no_such_hook.py in ...
    """
    path = HOOKS / f"{file}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no hook hooks/{file}.py in {HOOKS.parent}")
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


def mkdocs_config() -> dict[str, Any]:
    """The checkout's ``mkdocs.yml`` as data; its tags (``!ENV``, ``!!python/name:``) read as
    ``None``.

    Examples:
        >>> config = mkdocs_config()
        >>> config["theme"]["name"], "nav" in config
        ('material', True)
    """
    # a loader of our own (a subclass), so that the tags below do not change yaml.SafeLoader
    loader: Any = type("Loader", (yaml.SafeLoader,), {})
    loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *a: None)
    loader.add_multi_constructor("!", lambda *a: None)
    config: dict[str, Any] = yaml.load(
        (HOOKS.parent / "mkdocs.yml").read_text(encoding="utf-8"), Loader=loader
    )
    return config
