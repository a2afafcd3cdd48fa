"""Derived once per process: a derivation's result kept in memory by its arguments.

A derivation is a pure function of its (hashable) arguments, and the site's pages call the
same ones on every build: under ``mkdocs serve`` every rebuild runs every page's blocks again,
in one process. `derived_once` keeps each result; what is kept cannot be changed by a caller,
so the next caller gets what the derivation gave: its matrices are SymPy's immutable ones and
its arrays read-only, and a ``dict`` result is a new ``dict`` on every call.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar, cast

import sympy as sp

__all__ = ["derived_once", "frozen"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def frozen(value: Any) -> Any:
    """``value`` with every matrix immutable and every array read-only, inside a ``dict``,
    tuple (named or not) or frozen dataclass too.

    Examples:
        >>> import sympy as sp
        >>> from attention_math._once import frozen
        >>> m = frozen({"M": sp.Matrix([[1, 2]])})["M"]
        >>> m, type(m).__name__
        (Matrix([[1, 2]]), 'ImmutableDenseMatrix')
    """
    if isinstance(value, sp.MatrixBase):
        return sp.ImmutableMatrix(value)
    numpy = sys.modules.get("numpy")  # never imported here: the exact side runs without NumPy
    if numpy is not None and isinstance(value, numpy.ndarray):
        value = value.copy()
        value.flags.writeable = False
        return value
    if isinstance(value, dict):
        return {k: frozen(v) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [frozen(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not type(value).__dataclass_params__.frozen:  # type: ignore[attr-defined]
            raise TypeError(f"{type(value).__name__} is a dataclass that can be changed")
        fields = {f.name: frozen(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **fields)
    return value


def _key(value: object) -> Hashable:
    """A key for an argument: a ``dict`` (a RoPE scaling's options, say) by its sorted items,
    a list by its items; ``TypeError`` for what can change and has no content to key on."""
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _key(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    hash(value)
    return (type(value).__name__, value)


def derived_once(derive: Callable[_P, _R]) -> Callable[_P, _R]:
    """``derive``, its result kept by its arguments (`frozen`; a ``dict`` copied per call).

    A ``dict`` or list argument is keyed by its items; an argument that can change and has
    no such content (a mutable matrix, say) derives afresh.

    Examples:
        >>> from attention_math._once import derived_once
        >>> calls = []
        >>> @derived_once
        ... def square(n):
        ...     calls.append(n)
        ...     return {"n²": sp.Matrix([[n * n]])}
        >>> square(3) == square(3), calls
        (True, [3])
        >>> square(3)["n²"][0, 0] = 1
        Traceback (most recent call last):
        TypeError: Cannot set values of <class 'sympy.matrices.immutable.ImmutableDenseMatrix'>
    """

    kept: dict[Hashable, Any] = {}

    @functools.wraps(derive)
    def derived(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            key = _key((args, kwargs))
        except TypeError:  # an argument that can change: no key to keep the result by
            out = frozen(derive(*args, **kwargs))
        else:
            if key not in kept:
                kept[key] = frozen(derive(*args, **kwargs))
            out = kept[key]
        return cast(_R, dict(out) if isinstance(out, dict) else out)

    return derived
