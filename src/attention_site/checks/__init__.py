"""The built site checked as a reader meets it, for the tests and the benchmarks alike.

Serving the built site under its hosted sub-path (``server``), loading the build's hooks as
MkDocs loads them (``hooks``), visiting its pages in Chromium with the probes registered by
the browser tests (``browser``), and axe-core inside a page (``axe``). Both ``tests/`` and
``benchmarks/`` import these modules from here; neither imports the other.
"""

__all__: list[str] = []
