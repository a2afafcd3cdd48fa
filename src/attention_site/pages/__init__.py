"""Page builders: what a page prints from its executed blocks (examples, exercises, forms)."""

__all__: list[str] = []
