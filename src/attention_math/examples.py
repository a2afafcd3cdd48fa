"""The worked examples of the seed documents, as data.

Each :class:`Example` holds the inputs exactly as published (ints and rationals, so the
symbolic side is exact) and the seed file it comes from. The audit of the numbers the
seeds print lives beside this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

__all__ = ["EXAMPLES", "IDENTITY_2X2", "Example"]


@dataclass(frozen=True)
class Example:
    """One published worked example: ``x`` projected by ``w_q``, ``w_k``, ``w_v``."""

    id: str
    title: str
    seed: str
    x: tuple[tuple[object, ...], ...]
    w_q: tuple[tuple[object, ...], ...]
    w_k: tuple[tuple[object, ...], ...]
    w_v: tuple[tuple[object, ...], ...]
    tokens: tuple[str, ...] = ()
    notes: str = ""
    extra: dict = field(default_factory=dict)

    def exact(self, name: str) -> sp.Matrix:
        """Input ``name`` (``"x"``, ``"w_q"``, …) as an exact SymPy matrix."""
        return sp.Matrix(getattr(self, name))

    def numeric(self, name: str, dtype: type = np.float64) -> np.ndarray:
        """Input ``name`` as a NumPy array of ``dtype``."""
        return np.array(self.exact(name).evalf(30).tolist(), dtype=dtype)


IDENTITY_2X2 = Example(
    id="identity-2x2",
    title="The 2×2 identity example",
    seed="000_39ab2f0727ddffcb.txt",
    x=((1, 0), (0, 1)),
    w_q=((1, 0), (0, 1)),
    w_k=((1, 0), (0, 1)),
    w_v=((1, 2), (3, 4)),
    notes="Listing 3 and section 5.1 of the seed: identity input and projections, d_k = 2.",
)

EXAMPLES: dict[str, Example] = {e.id: e for e in (IDENTITY_2X2,)}
