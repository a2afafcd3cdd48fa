"""Figures a learner can redraw: matplotlib drawn as SVG text, one module per kind of figure.

matplotlib is an optional dependency of the library (``pip install attention-math[notebook]``):
every module here imports it inside the functions that draw, so importing them needs nothing
more than the library. Each figure is returned as an [`Svg`][attention_math.display.Svg]: printed,
it is the inline ``<svg>`` of the site's page; in Jupyter, a picture. The conventions every
figure follows are [`style`][attention_math.plot.style]'s.
"""

__all__: list[str] = []
