"""One module per chapter, each with ``exercises() -> list[Exercise]``."""
