"""NumPy, and our modules built on it, imported on first use rather than at import time.

The exact side of the package (`attention_math.symbolic`, the exercise checker) must import
without NumPy: in the reader's browser it runs under Pyodide with SymPy and mpmath only, as
NumPy is not a pure-Python wheel. Modules that hold NumPy code for later (a cross-check run at
build time, say) take ``np`` and ``numeric`` from here; the first attribute looked up imports
the real module. Type checkers see the real modules.

Examples:
    >>> from attention_math._lazy import loaded_numpy, np
    >>> np.zeros(2).shape
    (2,)
    >>> loaded_numpy() is not None
    True
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

__all__ = ["loaded_numpy", "np", "numeric"]


class _OnFirstUse(ModuleType):
    """Stands for the module of the same name; imports it when an attribute is looked up."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


def loaded_numpy() -> ModuleType | None:
    """NumPy if something has imported it already, else ``None`` (it is not imported here).

    An object can only be a NumPy array if NumPy is loaded, so ``isinstance`` checks against
    NumPy types go through this and never import it.

    Examples:
        >>> from attention_math._lazy import loaded_numpy
        >>> import numpy
        >>> loaded_numpy() is numpy
        True
    """
    return sys.modules.get("numpy")


if TYPE_CHECKING:
    import numpy as np

    from attention_math import numeric
else:
    np = _OnFirstUse("numpy")
    numeric = _OnFirstUse("attention_math.numeric")
