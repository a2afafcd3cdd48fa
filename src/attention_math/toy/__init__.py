"""A two-layer, attention-only transformer trained by this package's own gradients.

``load()`` gives the trained model (from the cache, or trained on the spot, ~30 s of CPU):
its ``attention_patterns(tokens)``, ``logits(tokens)`` and ``circuits(layer)``. The scores
(``previous_token_score``, ``prefix_matching_score``, ``copying_score``,
``k_composition_score``) find its heads. NumPy is imported on first use of any of these, so
``attention_math.toy.live`` (pure Python, for the page's in-browser runtime) imports without
it. Training from scratch is ``attention_math.toy.train.train`` (the package attribute
``train`` is that module).

Examples:
    >>> from attention_math import toy
    >>> toy.Config().n_layers
    2
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "Config",
    "Hyper",
    "ToyModel",
    "composition_score",
    "copying_score",
    "induction_batch",
    "k_composition_score",
    "load",
    "prefix_matching_score",
    "previous_token_score",
    "repeated_tokens",
]

_HOME = {
    "Config": "model",
    "ToyModel": "model",
    "Hyper": "train",
    "load": "cache",
    "induction_batch": "data",
    "repeated_tokens": "data",
    "composition_score": "scores",
    "copying_score": "scores",
    "k_composition_score": "scores",
    "prefix_matching_score": "scores",
    "previous_token_score": "scores",
}

if TYPE_CHECKING:
    from attention_math.toy.cache import load
    from attention_math.toy.data import induction_batch, repeated_tokens
    from attention_math.toy.model import Config, ToyModel
    from attention_math.toy.scores import (
        composition_score,
        copying_score,
        k_composition_score,
        prefix_matching_score,
        previous_token_score,
    )
    from attention_math.toy.train import Hyper


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(f"attention_math.toy.{_HOME[name]}"), name)
    raise AttributeError(f"module 'attention_math.toy' has no attribute {name!r}")
