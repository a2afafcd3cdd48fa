"""Every public module declares its public names in ``__all__``, and only real API is in it."""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

import attention_math
import attention_site


def _public_modules() -> list[str]:
    names = []
    for package in (attention_math, attention_site):  # the library and the site's machinery
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return names


MODULES = _public_modules()


def test_the_walk_finds_the_package():
    assert {"attention_math.numeric", "attention_site.notation"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_public_module_declares_all(name):
    mod = importlib.import_module(name)
    assert isinstance(getattr(mod, "__all__", None), list), f"{name} has no __all__ list"
    for attr in mod.__all__:
        assert hasattr(mod, attr), f"{name}.__all__ lists {attr!r}, which it does not define"
        obj = getattr(mod, attr)
        # third-party modules (np, sp, mpmath, …) and typing helpers are not our API
        assert not isinstance(obj, types.ModuleType) or obj.__name__.startswith(name), (
            f"{name}.__all__ exports the module {obj.__name__}"
        )
        assert getattr(obj, "__module__", "").split(".")[0] not in {"typing", "collections"}, (
            f"{name}.__all__ exports {attr!r} from {obj.__module__}"
        )


def test_symbolic_star_import_gives_its_api_only():
    namespace: dict[str, object] = {}
    exec("from attention_math.symbolic import *", namespace)  # a fixed string, not user input
    names = set(namespace) - {"__builtins__"}
    assert names == set(importlib.import_module("attention_math.symbolic").__all__)
    assert not names & {"np", "sp", "mpmath", "Iterable", "Sequence"}
