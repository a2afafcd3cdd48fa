"""Accuracy: `attention_math.hf.layer` on gpt-oss's and Qwen3-Next's attention, against the
modules' own forward in float64 (transformers and PyTorch as the oracle).

Not a test (tests/library/test_hf_gpt_oss.py and test_hf_qwen3_next.py check the same with a
fixed bound of 1e-9). From the repository root:

    uv run --group test python benchmarks/hf_gates_oracle.py

For small random configs (every weight, bias, sink and norm weight redrawn), several seeds and
lengths (up to twice gpt-oss's window), it records ``max |ours − theirs| / max |theirs|``.
gpt-oss: full and sliding-window layers; the cos and sin are the rotary class's formula in
float64 on its own frequencies (exact in float32 for rope_theta 2⁸, head_dim 8), the mask the
model's mask functions. Qwen3-Next: its ``Qwen3NextRMSNorm`` computes in float32 whatever the
input, so it is run twice, as shipped (float32 QK-norm) and with the two norms in float64
(the same formula and weights). Results: ``data/hf_gates_oracle.json``, read by the page
"Sinks and gates".
"""

from __future__ import annotations

import datetime
import json
import os

import numpy as np
import torch
import transformers
from _common import result_path  # benchmarks/, the script's directory
from transformers import GptOssConfig, Qwen3NextConfig
from transformers.masking_utils import causal_mask_function, sliding_window_causal_mask_function
from transformers.models.gpt_oss.modeling_gpt_oss import GptOssAttention, GptOssRotaryEmbedding
from transformers.models.qwen3_next.modeling_qwen3_next import (
    Qwen3NextAttention,
    Qwen3NextRotaryEmbedding,
)

from attention_math import hf

RESULTS = result_path(__file__)
BOUND = 1e-9
SEEDS, LENGTHS, WINDOW = (0, 1, 2), (1, 4, 9), 4


class WideNorm(torch.nn.Module):
    """Qwen3NextRMSNorm's formula, ``x / √(mean(x²) + eps) · (1 + w)``, in x's dtype."""

    def __init__(self, norm: torch.nn.Module) -> None:
        super().__init__()
        self.weight, self.eps = norm.weight, norm.eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * (1 + self.weight)


def _redraw(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    module = module.double().eval()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    return module


def _cos_sin(rotary: torch.nn.Module, length: int, *, doubled: bool):
    inv = rotary.inv_freq.double()
    angle = torch.arange(length, dtype=torch.float64)[None, :, None] * inv
    if doubled:
        angle = torch.cat((angle, angle), dim=-1)
    return angle.cos() * rotary.attention_scaling, angle.sin() * rotary.attention_scaling


def _mask(allowed_at, length: int) -> torch.Tensor:
    i, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    zero = torch.zeros((), dtype=torch.float64)
    return torch.where(allowed_at(0, 0, i, j), zero, -torch.inf)[None, None]


def _error(module, x: np.ndarray, position_embeddings, mask) -> float:
    with torch.no_grad():
        theirs = module(
            torch.from_numpy(x)[None], position_embeddings=position_embeddings, attention_mask=mask
        )[0][0].numpy()
    ours = hf.layer(module)(x)
    return float(np.abs(ours - theirs).max() / np.abs(theirs).max())


def gpt_oss_rows() -> list[dict]:
    config = GptOssConfig(
        hidden_size=24,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        sliding_window=WINDOW,
        num_hidden_layers=2,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={"rope_type": "default", "rope_theta": 256.0},
    )
    config._attn_implementation = "eager"
    rotary = GptOssRotaryEmbedding(config)
    rows = []
    for layer_idx, kind in enumerate(config.layer_types):
        allowed = (
            sliding_window_causal_mask_function(WINDOW)
            if kind == "sliding_attention"
            else causal_mask_function
        )
        errors = []
        for seed in SEEDS:
            module = _redraw(GptOssAttention(config, layer_idx), seed)
            for length in (*LENGTHS, 2 * WINDOW + 3):
                x = np.random.default_rng(seed).standard_normal((length, 24))
                pe = _cos_sin(rotary, length, doubled=False)
                errors.append(_error(module, x, pe, _mask(allowed, length)))
        rows.append(
            dict(
                model="gpt-oss",
                case=kind.replace("_", " "),
                max_rel=max(errors),
                runs=len(errors),
                bound=BOUND,
            )
        )
    return rows


def qwen3_next_rows() -> list[dict]:
    config = Qwen3NextConfig(
        hidden_size=24,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        num_hidden_layers=4,
        rope_parameters={"rope_type": "default", "rope_theta": 256.0, "partial_rotary_factor": 0.5},
    )
    config._attn_implementation = "sdpa"
    rotary = Qwen3NextRotaryEmbedding(config)
    rows = []
    for wide in (True, False):
        errors = []
        for seed in SEEDS:
            module = _redraw(Qwen3NextAttention(config, 3), seed)
            if wide:
                module.q_norm, module.k_norm = WideNorm(module.q_norm), WideNorm(module.k_norm)
            for length in LENGTHS:
                x = np.random.default_rng(seed).standard_normal((length, 24))
                pe = _cos_sin(rotary, length, doubled=True)
                errors.append(_error(module, x, pe, _mask(causal_mask_function, length)))
        case = "QK-norm in float64" if wide else "as shipped (QK-norm in float32)"
        bound = BOUND if wide else 64 * float(np.finfo(np.float32).eps)
        rows.append(
            dict(model="Qwen3-Next", case=case, max_rel=max(errors), runs=len(errors), bound=bound)
        )
    return rows


def main() -> None:
    load_before = os.getloadavg()
    rows = gpt_oss_rows() + qwen3_next_rows()
    for r in rows:
        what = f"{r['model']:11} {r['case']:34} {r['max_rel']:.3g} over {r['runs']} runs"
        print(f"{what} (bound {r['bound']:.3g})")
        if r["max_rel"] > r["bound"]:
            raise SystemExit(
                f"{r['model']} {r['case']}: {r['max_rel']:.3g} exceeds {r['bound']:.3g}"
            )
    doc = dict(
        started_utc=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        load_before=list(load_before),
        load_after=list(os.getloadavg()),
        versions=dict(
            torch=torch.__version__, transformers=transformers.__version__, numpy=np.__version__
        ),
        results=rows,
    )
    RESULTS.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
