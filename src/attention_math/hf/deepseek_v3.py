"""``DeepseekV3Attention`` (transformers) read into `latent.mla_attention`.

The module's weights map onto `latent.MLAWeights` one for one, transposed to act on rows:
``q_a_proj``, ``q_a_layernorm``, ``q_b_proj`` (or ``q_proj`` without ``q_lora_rank``),
``kv_a_proj_with_mqa``, ``kv_a_layernorm``, ``kv_b_proj``, ``o_proj``. Its configuration gives
`latent.MLAConfig`: the sizes, ``rms_norm_eps``, ``rope_interleave``, and ``rope_parameters``
(``rope_theta``; plain RoPE or YaRN, whose ``mscale_all_dim`` also enters the softmax scale).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from attention_math.hf._read import array, config_value
from attention_math.latent import MLAConfig, MLAWeights, mla_attention

__all__ = ["config_of", "layer", "weights_of"]


def _rope_parameters(config: Any) -> dict[str, Any]:
    """The RoPE dictionary: ``rope_parameters`` (transformers 5) or ``rope_scaling`` and
    ``rope_theta`` (older configurations)."""
    params = config_value(config, "rope_parameters")
    if params is None:
        params = dict(config_value(config, "rope_scaling", {}))
        params.setdefault("rope_theta", config_value(config, "rope_theta", 10000.0))
    return dict(params)


def config_of(config: Any) -> MLAConfig:
    """The `latent.MLAConfig` of a ``DeepseekV3Config``.

    Raises:
        ValueError: grouped KV heads (``num_key_value_heads`` other than the number of heads:
            MLA expands the latent into one key per head), or a RoPE type that is neither
            plain nor YaRN.

    Examples:
        >>> from types import SimpleNamespace
        >>> c = SimpleNamespace(hidden_size=8, num_attention_heads=2, num_key_value_heads=2,
        ...     q_lora_rank=None, kv_lora_rank=4, qk_nope_head_dim=2, qk_rope_head_dim=2,
        ...     v_head_dim=3, rms_norm_eps=1e-6, rope_interleave=True,
        ...     rope_parameters={"rope_type": "default", "rope_theta": 100.0},
        ...     max_position_embeddings=64)
        >>> config_of(c).qk_head_dim, config_of(c).rope_scaling is None
        (4, True)
    """
    h = int(config.num_attention_heads)
    g = int(config_value(config, "num_key_value_heads", h))
    if g != h:
        raise ValueError(
            f"num_key_value_heads = {g} differs from num_attention_heads = {h}: MLA expands "
            "its latent into a key and a value for every head"
        )
    rope = _rope_parameters(config)
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind not in ("default", "yarn"):
        raise ValueError(f"rope type {kind!r}: this reader takes plain RoPE or 'yarn'")
    q_lora = config_value(config, "q_lora_rank")
    return MLAConfig(
        hidden_size=int(config.hidden_size),
        n_heads=h,
        q_lora_rank=None if q_lora is None else int(q_lora),
        kv_lora_rank=int(config.kv_lora_rank),
        qk_nope_head_dim=int(config.qk_nope_head_dim),
        qk_rope_head_dim=int(config.qk_rope_head_dim),
        v_head_dim=int(config.v_head_dim),
        rope_theta=float(rope.get("rope_theta", 10000.0)),
        rope_scaling=None if kind == "default" else rope,
        max_position_embeddings=config_value(config, "max_position_embeddings"),
        eps=float(config_value(config, "rms_norm_eps", 1e-6)),
        rope_interleave=bool(config_value(config, "rope_interleave", False)),
        name=type(config).__name__,
    )


def _t(linear: Any) -> np.ndarray:
    return array(linear.weight).T  # (in, out): torch's Linear stores (out, in)


def _b(linear: Any) -> np.ndarray | None:
    return None if getattr(linear, "bias", None) is None else array(linear.bias)


def weights_of(module: Any) -> MLAWeights:
    """The module's weights as `latent.MLAWeights` (copies, float64, acting on rows)."""
    lora = module.q_a_proj is not None
    return MLAWeights(
        w_kv_a=_t(module.kv_a_proj_with_mqa),
        kv_norm=array(module.kv_a_layernorm.weight),
        w_kv_b=_t(module.kv_b_proj),
        w_o=_t(module.o_proj),
        w_q=None if lora else _t(module.q_proj),
        w_q_a=_t(module.q_a_proj) if lora else None,
        q_norm=array(module.q_a_layernorm.weight) if lora else None,
        w_q_b=_t(module.q_b_proj) if lora else None,
        b_q_a=_b(module.q_a_proj) if lora else None,
        b_kv_a=_b(module.kv_a_proj_with_mqa),
        b_o=_b(module.o_proj),
    )


def layer(module: Any) -> Callable[[Any], np.ndarray]:
    """The NumPy layer that computes what a ``DeepseekV3Attention`` computes.

    The two RMSNorms' ``eps`` is read from the norms themselves (``variance_epsilon``): the
    module builds ``q_a_layernorm`` and ``kv_a_layernorm`` with their default ``1e-6``, not
    with the configuration's ``rms_norm_eps``.

    Returns:
        The layer as a function of ``x`` of shape ``(L, hidden_size)`` (a causal sequence at
            positions ``0 … L-1``), giving the module's output of the same shape.

    Raises:
        ValueError: a configuration `config_of` refuses, or two norms with different ``eps``.
    """
    norms = [module.kv_a_layernorm] + (
        [module.q_a_layernorm] if module.q_a_proj is not None else []
    )
    eps = {float(n.variance_epsilon) for n in norms}
    if len(eps) != 1:
        raise ValueError(f"q_a_layernorm and kv_a_layernorm have different eps: {sorted(eps)}")
    config = dataclasses.replace(config_of(module.config), eps=eps.pop())
    weights = weights_of(module)

    def run(x: Any) -> np.ndarray:
        return mla_attention(np.asarray(x, dtype=np.float64), weights, config)  # (L, hidden)

    return run
