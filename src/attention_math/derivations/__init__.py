"""Derivations: one module per claim of the "why" chapters, each exact (SymPy) and checked
numerically. They build on [`symbolic`][attention_math.symbolic] and
[`numeric`][attention_math.numeric]
and are imported by the docs pages; nothing in the core imports them."""

__all__: list[str] = []  # the submodules are imported by name
