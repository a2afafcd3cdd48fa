"""Accuracy: `hf.layer` (multi-head latent attention) against transformers' DeepseekV3Attention.

Not a test (``tests/library/test_hf_deepseek_v3.py`` checks the same agreement with a fixed
tolerance). From the repository root:

    uv run --group test python benchmarks/deepseek_v3_oracle.py

Builds the module from small random configurations (with and without ``q_lora_rank``, plain
RoPE and YaRN, interleaved RoPE or not, with biases), every weight random, in float64, and
records the largest difference of ``hf.layer(module)(x)`` from the module's forward relative
to the largest output, over seeds, per length. Two ways of running the module:

* ``float64``: SDPA attention, cos and sin computed in float64, and the module's two
  RMSNorms replaced by ``torch.nn.RMSNorm`` in float64 (same gains and eps): the module's
  arithmetic without its float32 steps;
* ``as published``: the module as it is (its RMSNorm normalises in float32, its rotary
  embedding computes the angles in float32, its eager attention takes the softmax in float32).

The results go to ``data/deepseek_v3_oracle.json``, read by the page Latent attention (MLA),
which refuses to build if a row exceeds its bound.
"""

from __future__ import annotations

import datetime
import json
import os
from typing import Any

import numpy as np
import torch
from _common import result_path  # benchmarks/, the script's directory
from attention_bench import machine
from transformers import DeepseekV3Config
from transformers.models.deepseek_v3.modeling_deepseek_v3 import (
    DeepseekV3Attention,
    DeepseekV3RotaryEmbedding,
)

from attention_math import hf
from attention_math.positional import rope_frequencies

RESULTS = result_path(__file__)
BOUND = {"float64": 1e-9, "as published": 1e-5}
HIDDEN = 24
CASES: dict[str, dict[str, Any]] = {
    "low-rank query": dict(q_lora_rank=7),
    "plain query": dict(q_lora_rank=None),
    "low-rank query, YaRN": dict(q_lora_rank=7, yarn=True),
    "plain query, rotate_half, biases": dict(q_lora_rank=None, interleave=False, bias=True),
}


def config(q_lora_rank: int | None, *, yarn=False, interleave=True, bias=False, impl="sdpa"):
    rope: dict[str, Any] = {"rope_type": "default", "rope_theta": 50.0}
    if yarn:
        rope = {
            "rope_type": "yarn",
            "rope_theta": 50.0,
            "factor": 4.0,
            "original_max_position_embeddings": 8,
            "mscale": 0.707,
            "mscale_all_dim": 0.707,
        }
    c = DeepseekV3Config(
        hidden_size=HIDDEN,
        num_attention_heads=3,
        num_key_value_heads=3,
        q_lora_rank=q_lora_rank,
        kv_lora_rank=10,
        qk_nope_head_dim=6,
        qk_rope_head_dim=4,
        v_head_dim=5,
        max_position_embeddings=32,
        rope_parameters=rope,
        rope_interleave=interleave,
        attention_bias=bias,
    )
    c._attn_implementation = impl
    return c


def module(c, seed: int):
    torch.manual_seed(seed)
    m = DeepseekV3Attention(c, layer_idx=0).double().eval()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5 + (1.0 if p.ndim == 1 else 0.0))
    return m


def cos_sin(c, length: int):
    rope = c.rope_parameters
    theta, factor = rope_frequencies(
        c.qk_rope_head_dim,
        base=rope["rope_theta"],
        scaling=rope,
        max_position_embeddings=c.max_position_embeddings,
        seq_len=length,
    )
    angle = np.arange(length)[:, None] * theta[None, :]  # (L, r/2)
    emb = np.concatenate([angle, angle], -1)  # (L, r): cat(freqs, freqs)
    return torch.from_numpy(np.cos(emb) * factor)[None], torch.from_numpy(np.sin(emb) * factor)[
        None
    ]


def float64_norms(m):
    for name in ("q_a_layernorm", "kv_a_layernorm"):
        old = getattr(m, name)
        if old is not None:
            new = torch.nn.RMSNorm(
                old.weight.shape[0], eps=old.variance_epsilon, dtype=torch.float64
            )
            with torch.no_grad():
                new.weight.copy_(old.weight)
            setattr(m, name, new)
    return m


def rel_error(kw: dict[str, Any], how: str, seed: int, length: int) -> float:
    published = how == "as published"
    c = config(**kw, impl="eager" if published else "sdpa")
    m = module(c, seed)
    ours = hf.layer(m)
    x = np.random.default_rng(100 + seed).standard_normal((length, HIDDEN))
    xt = torch.from_numpy(x)[None]
    mask = torch.full((length, length), float("-inf"), dtype=torch.float64).triu(1)[None, None]
    if published:
        pe = DeepseekV3RotaryEmbedding(c)(xt, torch.arange(length)[None])
    else:
        pe = cos_sin(c, length)
        m = float64_norms(m)
    with torch.no_grad():
        want = m(xt, pe, mask)[0][0].numpy()
    return float(np.abs(ours(x) - want).max() / np.abs(want).max())


def main() -> None:
    load_before = os.getloadavg()
    rows = []
    for how in BOUND:
        for case, kw in CASES.items():
            for length in (1, 4, 16):
                err = max(rel_error(kw, how, seed, length) for seed in range(3))
                rows.append(dict(how=how, case=case, L=length, rel_error=err, bound=BOUND[how]))
                print(f"{how:13} {case:34} L={length:3} {err:.3g} (bound {BOUND[how]:g})")
    doc = dict(
        started_utc=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        load_before=list(load_before),
        load_after=list(os.getloadavg()),
        machine=machine(),
        transformers=__import__("transformers").__version__,
        results=rows,
    )
    RESULTS.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
