"""attention-math: transformer self-attention, derived exactly and checked numerically.

The front door: ``import attention_math as am`` gives what the pages and a learner call, in
one flat namespace (``am.attention``, ``am.softmax``, ``am.symbolic``, …); the modules stay
for the rest. A name is imported on first use, so that ``import attention_math.symbolic``
(the exact side, which runs in the reader's browser without NumPy) does not import NumPy.

Examples:
    >>> import attention_math as am
    >>> q = k = v = [[1.0, 0.0], [0.0, 1.0]]
    >>> am.attention(q, k, v).round(4)
    array([[0.6698, 0.3302],
           [0.3302, 0.6698]])
    >>> am.softmax([0.0, 0.0]).tolist()
    [0.5, 0.5]
    >>> am.symbolic.softmax([0, 0])
    Matrix([[1/2, 1/2]])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; at run time, __getattr__ below
    from attention_math import crosscheck as crosscheck
    from attention_math import display as display
    from attention_math import hf as hf
    from attention_math import latent as latent
    from attention_math import numeric as numeric
    from attention_math import plot as plot
    from attention_math import reference as reference
    from attention_math import ssd as ssd
    from attention_math import symbolic as symbolic
    from attention_math.backward import AttentionGrads as AttentionGrads
    from attention_math.backward import AttentionGradsDMask as AttentionGradsDMask
    from attention_math.backward import attention_backward as attention_backward
    from attention_math.backward import (
        attention_backward_with_dmask as attention_backward_with_dmask,
    )
    from attention_math.block import BlockConfig as BlockConfig
    from attention_math.block import BlockParams as BlockParams
    from attention_math.block import transformer_block as transformer_block
    from attention_math.decoding import KVCache as KVCache
    from attention_math.decoding import incremental_attention as incremental_attention
    from attention_math.display import show as show
    from attention_math.gates import sigmoid_gate as sigmoid_gate
    from attention_math.gates import sink_attention as sink_attention
    from attention_math.gates import sink_gate as sink_gate
    from attention_math.gates import sink_softmax as sink_softmax
    from attention_math.gates import zero_centred_rms_norm as zero_centred_rms_norm
    from attention_math.latent import MLAConfig as MLAConfig
    from attention_math.latent import MLAWeights as MLAWeights
    from attention_math.latent import cache_bytes_per_token as cache_bytes_per_token
    from attention_math.latent import mla_attention as mla_attention
    from attention_math.multihead import AttentionParams as AttentionParams
    from attention_math.multihead import from_key_padding_mask as from_key_padding_mask
    from attention_math.multihead import multi_head_attention as multi_head_attention
    from attention_math.multihead import multi_head_weights as multi_head_weights
    from attention_math.numeric import AttentionLSE as AttentionLSE
    from attention_math.numeric import attention as attention
    from attention_math.numeric import attention_weights as attention_weights
    from attention_math.numeric import attention_with_lse as attention_with_lse
    from attention_math.numeric import causal_mask as causal_mask
    from attention_math.numeric import log_softmax as log_softmax
    from attention_math.numeric import padding_mask as padding_mask
    from attention_math.numeric import sliding_window_mask as sliding_window_mask
    from attention_math.numeric import softmax as softmax
    from attention_math.positional import alibi_bias as alibi_bias
    from attention_math.positional import rope as rope
    from attention_math.positional import sinusoidal as sinusoidal
    from attention_math.precision import FloatFormat as FloatFormat
    from attention_math.precision import hadamard_rotation as hadamard_rotation
    from attention_math.precision import kv_quantized_attention as kv_quantized_attention
    from attention_math.precision import low_precision_attention as low_precision_attention
    from attention_math.precision import low_precision_error_bound as low_precision_error_bound
    from attention_math.precision import quantize_int as quantize_int
    from attention_math.precision import round_exact as round_exact
    from attention_math.precision import round_to_format as round_to_format
    from attention_math.sparse import indexer_scores as indexer_scores
    from attention_math.sparse import nsa_attention as nsa_attention
    from attention_math.sparse import topk_attention as topk_attention
    from attention_math.sparse import topk_error as topk_error
    from attention_math.sparse import topk_mask as topk_mask
    from attention_math.ssd import semiseparable_mask as semiseparable_mask
    from attention_math.ssd import ssd_attention as ssd_attention
    from attention_math.ssd import ssd_check as ssd_check
    from attention_math.ssd import ssd_chunked as ssd_chunked
    from attention_math.ssd import ssd_recurrence as ssd_recurrence
    from attention_math.ssd import state_space_dual as state_space_dual

# name -> the module that defines it ("" for a module of the package under that name)
_HOME: dict[str, str] = {
    # the forward pass
    "attention": "numeric",
    "attention_weights": "numeric",
    "attention_with_lse": "numeric",
    "AttentionLSE": "numeric",
    "softmax": "numeric",
    "log_softmax": "numeric",
    "causal_mask": "numeric",
    "padding_mask": "numeric",
    "sliding_window_mask": "numeric",
    # the gradients
    "attention_backward": "backward",
    "attention_backward_with_dmask": "backward",
    "AttentionGrads": "backward",
    "AttentionGradsDMask": "backward",
    # heads, the block, positions, decoding
    "multi_head_attention": "multihead",
    "multi_head_weights": "multihead",
    "AttentionParams": "multihead",
    "from_key_padding_mask": "multihead",
    "transformer_block": "block",
    "BlockConfig": "block",
    "BlockParams": "block",
    "rope": "positional",
    "sinusoidal": "positional",
    "alibi_bias": "positional",
    "KVCache": "decoding",
    "incremental_attention": "decoding",
    # multi-head latent attention (DeepSeek-V2/V3)
    "mla_attention": "latent",
    "MLAConfig": "latent",
    "MLAWeights": "latent",
    "cache_bytes_per_token": "latent",
    # sparse selection: top-k keys, DeepSeek's indexer, NSA's three branches
    "topk_attention": "sparse",
    "topk_mask": "sparse",
    "topk_error": "sparse",
    "indexer_scores": "sparse",
    "nsa_attention": "sparse",
    # state-space duality (Mamba-2)
    "state_space_dual": "ssd",
    "ssd_recurrence": "ssd",
    "ssd_attention": "ssd",
    "ssd_chunked": "ssd",
    "ssd_check": "ssd",
    "semiseparable_mask": "ssd",
    # sinks and gates (gpt-oss, Qwen3-Next)
    "sink_softmax": "gates",
    "sink_attention": "gates",
    "sink_gate": "gates",
    "sigmoid_gate": "gates",
    "zero_centred_rms_norm": "gates",
    # low precision: bfloat16, FP8, KV-cache quantisation
    "FloatFormat": "precision",
    "round_to_format": "precision",
    "round_exact": "precision",
    "low_precision_attention": "precision",
    "low_precision_error_bound": "precision",
    "hadamard_rotation": "precision",
    "quantize_int": "precision",
    "kv_quantized_attention": "precision",
    # results shown as maths and tables, here and in Jupyter
    "show": "display",
    # modules
    "display": "",
    "hf": "",
    "latent": "",
    "plot": "",
    "crosscheck": "",
    "numeric": "",
    "reference": "",
    "ssd": "",
    "symbolic": "",
}

# the front door, written out for tools that read it without running the package
__all__ = [
    "AttentionGrads",
    "AttentionGradsDMask",
    "AttentionLSE",
    "AttentionParams",
    "BlockConfig",
    "BlockParams",
    "FloatFormat",
    "KVCache",
    "MLAConfig",
    "MLAWeights",
    "__version__",
    "alibi_bias",
    "attention",
    "attention_backward",
    "attention_backward_with_dmask",
    "attention_weights",
    "attention_with_lse",
    "cache_bytes_per_token",
    "causal_mask",
    "crosscheck",
    "display",
    "from_key_padding_mask",
    "hadamard_rotation",
    "hf",
    "incremental_attention",
    "indexer_scores",
    "kv_quantized_attention",
    "latent",
    "log_softmax",
    "low_precision_attention",
    "low_precision_error_bound",
    "mla_attention",
    "multi_head_attention",
    "multi_head_weights",
    "nsa_attention",
    "numeric",
    "padding_mask",
    "plot",
    "quantize_int",
    "reference",
    "rope",
    "round_exact",
    "round_to_format",
    "semiseparable_mask",
    "show",
    "sigmoid_gate",
    "sink_attention",
    "sink_gate",
    "sink_softmax",
    "sinusoidal",
    "sliding_window_mask",
    "softmax",
    "ssd",
    "ssd_attention",
    "ssd_check",
    "ssd_chunked",
    "ssd_recurrence",
    "state_space_dual",
    "symbolic",
    "topk_attention",
    "topk_error",
    "topk_mask",
    "transformer_block",
    "zero_centred_rms_norm",
]

__version__ = "0.1.0"
"""The package's version (the wheel's, as in ``pyproject.toml``)."""


def __getattr__(name: str) -> Any:
    """Import a front-door name on first use (PEP 562)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'attention_math' has no attribute {name!r}")
    if home == "":
        value: Any = importlib.import_module(f"attention_math.{name}")
    else:
        value = getattr(importlib.import_module(f"attention_math.{home}"), name)
    globals()[name] = value  # the next look-up does not come here
    return value


def __dir__() -> list[str]:
    """The front door's names, so that ``am.<Tab>`` completes them."""
    return sorted(__all__)
