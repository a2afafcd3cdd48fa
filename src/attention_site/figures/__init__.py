"""The site's figures, one module per kind of figure, each named by what it draws.

Every figure follows the conventions of [`style`][attention_math.plot.style]:
deterministic SVG text, ``currentColor`` for text and axes, titled and labelled.
"""

__all__: list[str] = []
