"""attention-math: transformer self-attention, derived exactly and checked numerically."""

__version__ = "0.1.0"
