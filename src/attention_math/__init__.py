"""attention-math: transformer self-attention, derived exactly and checked numerically."""

__all__ = ["__version__"]

__version__ = "0.1.0"
"""The package's version (the wheel's, as in ``pyproject.toml``)."""
