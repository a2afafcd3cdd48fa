"""gpt-oss's attention (``GptOssAttention``) as a NumPy layer: learned sink logits.

What the module computes, for ``x`` of shape ``(L, hidden)`` at positions ``0 … L − 1``:

1. ``q = x W_qᵀ + b_q``, ``k``, ``v`` likewise (gpt-oss's projections have biases), split into
   ``H`` query heads and ``H_kv`` key/value heads of ``head_dim`` each;
2. RoPE on ``q`` and ``k`` ([`positional.rope`][attention_math.positional.rope], the
   half-split layout, with the config's ``rope_parameters``: YaRN in the released models);
3. per head, ``softmax`` over ``[q kᵀ/√d, s_h]`` with the sink column dropped
   ([`gates.sink_attention`][attention_math.gates.sink_attention]), under the causal mask on
   ``"full_attention"`` layers and the sliding-window band
   ([`numeric.sliding_window_mask`][attention_math.numeric.sliding_window_mask], query ``i``
   sees keys ``i − W + 1 … i``) on ``"sliding_attention"`` layers;
4. the heads concatenated, ``· W_oᵀ + b_o``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from attention_math import gates, numeric
from attention_math.hf._read import array, config_value
from attention_math.hf._rope import rope_of

__all__ = ["layer"]


def layer(module: Any) -> Callable[[Any], np.ndarray]:
    """The NumPy layer computing what ``module`` (a ``GptOssAttention``) computes.

    Returns:
        ``layer(x)``: ``(L, hidden)`` to ``(L, hidden)``, float64.
    """
    config = module.config
    h = int(config.num_attention_heads)
    g = int(config_value(config, "num_key_value_heads", h))
    d = int(config_value(config, "head_dim", config.hidden_size // h))
    kind = getattr(module, "layer_type", None)
    window = config_value(config, "sliding_window") if kind == "sliding_attention" else None
    w_q, w_k, w_v, w_o = (
        array(getattr(module, n).weight) for n in ("q_proj", "k_proj", "v_proj", "o_proj")
    )  # (out, in) each, as nn.Linear stores them
    b_q, b_k, b_v, b_o = (
        array(getattr(module, n).bias) if getattr(module, n).bias is not None else 0.0
        for n in ("q_proj", "k_proj", "v_proj", "o_proj")
    )
    sinks = array(module.sinks)  # (H,): one learned logit per query head
    rotate = rope_of(config)

    def forward(x: Any) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)  # (L, hidden)
        if x.ndim != 2 or x.shape[1] != w_q.shape[1]:
            raise ValueError(f"x must have shape (L, hidden = {w_q.shape[1]}), got {x.shape}")
        n = x.shape[0]
        q = (x @ w_q.T + b_q).reshape(n, h, d).transpose(1, 0, 2)  # (H, L, d)
        k = (x @ w_k.T + b_k).reshape(n, g, d).transpose(1, 0, 2)  # (H_kv, L, d)
        v = (x @ w_v.T + b_v).reshape(n, g, d).transpose(1, 0, 2)  # (H_kv, L, d)
        q, k = rotate(q), rotate(k)  # (H, L, d), (H_kv, L, d)
        if window is None:
            mask = numeric.causal_mask(n)  # (L, L)
        else:
            mask = numeric.sliding_window_mask(n, window=int(window))  # (L, L): the band
        heads = gates.sink_attention(q, k, v, sinks, mask, scale=d**-0.5)  # (H, L, d)
        concat = heads.transpose(1, 0, 2).reshape(n, h * d)  # (L, H·d)
        out: np.ndarray = concat @ w_o.T + b_o  # (L, hidden)
        return out

    return forward
