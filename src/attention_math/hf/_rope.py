"""RoPE as a Hugging Face config asks (``rope_parameters``), for the readers of `hf`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from attention_math import positional
from attention_math.hf._read import config_value

__all__ = ["rope_of"]


def rope_of(config: Any) -> Callable[[np.ndarray], np.ndarray]:
    """RoPE as the config asks: ``rope_parameters`` (``rope_theta``, ``rope_type``, its
    scaling fields, ``partial_rotary_factor``), for ``(…, L, head_dim)`` at positions
    ``0 … L − 1``; the rotated width is ``int(head_dim · partial_rotary_factor)``.

    Examples:
        >>> from types import SimpleNamespace
        >>> import numpy as np
        >>> config = SimpleNamespace(rope_parameters={"rope_type": "default", "rope_theta": 100.0})
        >>> rope_of(config)(np.array([[1.0, 0.0], [1.0, 0.0]])).round(4)
        array([[1.    , 0.    ],
               [0.5403, 0.8415]])
    """
    params = dict(config_value(config, "rope_parameters", {}) or {})
    base = float(params.get("rope_theta", config_value(config, "rope_theta", 10000.0)))
    factor = float(
        params.get("partial_rotary_factor", config_value(config, "partial_rotary_factor", 1.0))
    )
    kind = params.get("rope_type", params.get("type", "default"))
    scaling = None if kind == "default" else params
    max_pos = config_value(config, "max_position_embeddings")

    def apply(t: np.ndarray) -> np.ndarray:
        return positional.rope(
            t,
            base=base,
            partial_rotary_factor=factor,
            scaling=scaling,
            max_position_embeddings=max_pos,
        )  # (…, L, head_dim)

    return apply
