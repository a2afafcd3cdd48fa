"""The build's matplotlib: the Agg backend, and one memo of mathtext parses for every figure.

The figures themselves, and the conventions they follow, are the library's
([`attention_math.plot.style`][attention_math.plot.style]); importing this module, before any
figure is drawn (``hooks/parallel_exec.py`` preloads it), makes the build draw them headless and
parse each label once.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
from matplotlib.mathtext import MathTextParser

__all__: list[str] = []

# MathTextParser caches each parse per parser, and every renderer makes a new parser: a
# figure's labels were parsed once to size the tight box and again to draw, and again in
# the next figure. A parse is a pure function of these arguments (the parser's only other
# inputs are its output type and class-level tables), so one memo serves every parser.
_PARSE: Any = MathTextParser.__dict__["_parse_cached"].__wrapped__  # uncached parse
_PARSES: dict[tuple[object, ...], object] = {}


def _shared_parse(
    self: Any, s: str, dpi: float, prop: object, antialiased: bool, flags: object
) -> object:
    key = (self._output_type, s, dpi, prop, antialiased, flags)
    if key not in _PARSES:
        if len(_PARSES) > 4096:  # a bound, far above the site's few hundred labels
            _PARSES.clear()
        _PARSES[key] = _PARSE(self, s, dpi, prop, antialiased, flags)
    return _PARSES[key]


# for the build's processes only: the library's figures draw with matplotlib's own parser
setattr(MathTextParser, "_parse_cached", _shared_parse)  # noqa: B010
