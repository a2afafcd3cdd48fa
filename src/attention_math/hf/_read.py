"""Reading a PyTorch module's numbers without importing PyTorch: each tensor by its public
``.detach().cpu().numpy()``, as float64."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["array", "config_value"]


def array(tensor: Any) -> np.ndarray:
    """A tensor's (or parameter's) values as a float64 NumPy array (a copy).

    Examples:
        >>> array(np.float32([1.5, 2.0])).dtype
        dtype('float64')
    """
    if hasattr(tensor, "detach"):
        tensor = (
            tensor.detach().cpu().float().numpy() if _low(tensor) else tensor.detach().cpu().numpy()
        )
    return np.array(tensor, dtype=np.float64)


def _low(tensor: Any) -> bool:
    """bfloat16 has no NumPy dtype: such a tensor is widened (exactly) to float32 first."""
    return str(getattr(tensor, "dtype", "")) == "torch.bfloat16"


def config_value(config: Any, name: str, default: Any = None) -> Any:
    """``config.name``, or ``default`` when the configuration does not set it.

    Examples:
        >>> from types import SimpleNamespace
        >>> config = SimpleNamespace(head_dim=8, sliding_window=None)
        >>> config_value(config, "head_dim"), config_value(config, "sliding_window", 0)
        (8, 0)
    """
    value = getattr(config, name, None)
    return default if value is None else value
