"""One module per chapter, each with ``exercises() -> list[Exercise]``."""

__all__: list[str] = []  # the submodules are imported by name
