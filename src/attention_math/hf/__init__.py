"""A Hugging Face attention module, read into a NumPy layer built from this package.

``layer(module)`` reads a ``transformers`` attention module's configuration and weights (each
through ``.detach().numpy()``: this package never imports PyTorch) and returns a function of
NumPy arrays: ``layer(x)`` for ``x`` of shape ``(L, hidden)`` in float64, a causal sequence at
positions ``0 … L-1``, gives the module's output. Each family has its own reader, built from
the package's own functions, one per idea:

================================  ===============================  ======================
module class                      what it computes                 reader
================================  ===============================  ======================
``DeepseekV3Attention``           multi-head latent attention      `hf.deepseek_v3`
``GptOssAttention``               learned sink logits              `hf.gpt_oss`
``Qwen3NextAttention``            gated attention, QK-norm         `hf.qwen3_next`
``Mamba2Mixer``                   the state-space dual (SSD)       `hf.mamba2`
================================  ===============================  ======================

The test suite builds each module from small random configurations and compares (PyTorch
and ``transformers`` are test-time oracles only).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["READERS", "layer"]

READERS: dict[str, str] = {
    "DeepseekV3Attention": "deepseek_v3",
    "GptOssAttention": "gpt_oss",
    "Qwen3NextAttention": "qwen3_next",
    "Mamba2Mixer": "mamba2",
}
"""Module class name -> the submodule of `attention_math.hf` that reads it."""


def layer(module: Any) -> Callable[[Any], np.ndarray]:
    """The NumPy layer that computes what ``module`` computes.

    Args:
        module: a ``transformers`` module of a class named in `READERS` (its weights are read
            once, now, with ``.detach().numpy()``).

    Returns:
        The layer as a function of ``x`` of shape ``(L, hidden)`` (a causal sequence at
            positions ``0 … L-1``), giving the module's output, of the same shape.

    Raises:
        TypeError: ``module`` is of a class this package does not read.

    Examples:
        >>> from attention_math import hf
        >>> sorted(hf.READERS)[:2]
        ['DeepseekV3Attention', 'GptOssAttention']
        >>> try:
        ...     hf.layer(object())
        ... except TypeError as e:
        ...     print(str(e).split(";")[1])
         got object

    See Also:
        attention_math.numeric.attention: the attention every reader here is built on.
    """
    name = type(module).__name__
    if name not in READERS:
        raise TypeError(f"hf.layer reads {', '.join(READERS)}; got {name}")
    reader = importlib.import_module(f"attention_math.hf.{READERS[name]}")
    built: Callable[[Any], np.ndarray] = reader.layer(module)
    return built
