"""Qwen3-Next's gated attention (``Qwen3NextAttention``) as a NumPy layer.

What the module computes, for ``x`` of shape ``(L, hidden)`` at positions ``0 … L − 1``:

1. ``x W_qᵀ`` gives, per query head, ``2 · head_dim`` numbers: the first ``head_dim`` are the
   query, the next ``head_dim`` the gate's logits (the module's ``torch.chunk`` of each
   head's slice, not of the whole projection);
2. QK-norm: each head's query and key through a zero-centred RMSNorm, gain ``1 + w``
   ([`gates.zero_centred_rms_norm`][attention_math.gates.zero_centred_rms_norm]);
3. partial RoPE: only the first ``int(head_dim · partial_rotary_factor)`` coordinates of each
   head turn ([`positional.rope`][attention_math.positional.rope]);
4. causal attention, ``H_kv`` key/value heads shared by groups of ``H / H_kv`` query heads
   ([`numeric.attention`][attention_math.numeric.attention] on the repeated heads, as
   [`multi_head_attention`][attention_math.multihead.multi_head_attention] does);
5. the output gate: the heads' concatenated output times ``σ(gate logits)``, elementwise
   ([`gates.sigmoid_gate`][attention_math.gates.sigmoid_gate]), then ``· W_oᵀ``.
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
    """The NumPy layer computing what ``module`` (a ``Qwen3NextAttention``) computes.

    Returns:
        ``layer(x)``: ``(L, hidden)`` to ``(L, hidden)``, float64.
    """
    config = module.config
    h = int(config.num_attention_heads)
    g = int(config_value(config, "num_key_value_heads", h))
    d = int(config_value(config, "head_dim", config.hidden_size // h))
    eps = float(config_value(config, "rms_norm_eps", 1e-6))
    w_q, w_k, w_v, w_o = (
        array(getattr(module, n).weight) for n in ("q_proj", "k_proj", "v_proj", "o_proj")
    )  # (out, in) each; w_q is (H · 2 · head_dim, hidden): query and gate
    b_q, b_k, b_v, b_o = (
        array(getattr(module, n).bias) if getattr(module, n).bias is not None else 0.0
        for n in ("q_proj", "k_proj", "v_proj", "o_proj")
    )
    w_qn, w_kn = array(module.q_norm.weight), array(module.k_norm.weight)  # (d,) each
    rotate = rope_of(config)

    def forward(x: Any) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)  # (L, hidden)
        if x.ndim != 2 or x.shape[1] != w_q.shape[1]:
            raise ValueError(f"x must have shape (L, hidden = {w_q.shape[1]}), got {x.shape}")
        n = x.shape[0]
        both = (x @ w_q.T + b_q).reshape(n, h, 2 * d)  # (L, H, 2d): per head, query | gate
        q, gate = both[..., :d], both[..., d:].reshape(n, h * d)  # (L, H, d), (L, H·d)
        k = (x @ w_k.T + b_k).reshape(n, g, d)  # (L, H_kv, d)
        v = (x @ w_v.T + b_v).reshape(n, g, d).transpose(1, 0, 2)  # (H_kv, L, d)
        q = gates.zero_centred_rms_norm(q, w_qn, eps=eps).transpose(1, 0, 2)  # (H, L, d)
        k = gates.zero_centred_rms_norm(k, w_kn, eps=eps).transpose(1, 0, 2)  # (H_kv, L, d)
        q, k = rotate(q), rotate(k)  # partial RoPE: the first quarter of each head turns
        k = np.repeat(k, h // g, axis=0)  # (H, L, d): query head i reads KV head i // (H/H_kv)
        v = np.repeat(v, h // g, axis=0)  # (H, L, d)
        heads = numeric.attention(q, k, v, is_causal=True, scale=d**-0.5)  # (H, L, d)
        concat = heads.transpose(1, 0, 2).reshape(n, h * d)  # (L, H·d)
        out: np.ndarray = gates.sigmoid_gate(concat, gate) @ w_o.T + b_o  # (L, hidden)
        return out

    return forward
