"""Accuracy: ``hf.layer`` of ``transformers``' ``Mamba2Mixer`` against the module, in units of ε.

Not a test (tests/library/test_hf_mamba2.py checks the same with fixed bounds). From the
repository root:

    uv run --group test python benchmarks/mamba2_oracle.py

For small random configurations (1 to 3 groups of B and C, several heads, a chunk size
smaller than the length), every weight random, the module in float64: the largest difference
between the reader (float64 throughout, each SSD method: ``recurrence``, ``attention``,
``chunked``) and the module's forward, divided by the largest output, in units of float32's ε
(the module computes its SSD and its gated norm in float32 whatever its dtype); and the
largest difference between the reader's three methods, in units of float64's ε. The results
go to ``data/mamba2_oracle.json``, read by docs/recent/ssd.md; every row has a bound, and the
page refuses to build if a committed row exceeds it. PyTorch and transformers are needed here
only.
"""

from __future__ import annotations

import datetime
import json
import os

import numpy as np
import torch
import transformers
from _common import result_path  # benchmarks/, the script's directory
from attention_bench import machine
from transformers import Mamba2Config
from transformers.models.mamba2.modeling_mamba2 import Mamba2Mixer

from attention_math.hf import mamba2

RESULTS = result_path(__file__)
EPS32, EPS64 = float(np.finfo(np.float32).eps), float(np.finfo(np.float64).eps)
BOUND_MODULE_EPS32 = 64  # as in the test
BOUND_METHODS_EPS64 = 1e-9 / EPS64  # the 1e-9 of issue 54, in float64 ε
METHODS = ("recurrence", "attention", "chunked")
# n_groups, num_heads, head_dim, state_size, chunk_size
CONFIGS = [(1, 4, 4, 8, 4), (2, 4, 4, 8, 4), (2, 8, 2, 16, 8), (4, 8, 4, 4, 5)]
LENGTHS = (1, 9, 33)


def mixer(g: int, h: int, p: int, n: int, chunk: int, seed: int) -> Mamba2Mixer:
    config = Mamba2Config(
        hidden_size=h * p // 2, num_heads=h, head_dim=p, expand=2, n_groups=g, state_size=n,
        conv_kernel=4, chunk_size=chunk, use_bias=True, use_conv_bias=True,
        num_hidden_layers=1, vocab_size=8,
    )  # fmt: skip
    module = Mamba2Mixer(config, layer_idx=0).double().eval()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in module.named_parameters():
            scale = 0.4 if name.endswith(("weight", "bias")) else 1.0
            param.copy_(scale * torch.randn(param.shape, generator=gen, dtype=param.dtype))
    return module


def relative(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max() / np.abs(want).max())


def main() -> None:
    load_before = os.getloadavg()
    rows = []
    for g, h, p, n, chunk in CONFIGS:
        for seed in (0, 1):
            module = mixer(g, h, p, n, chunk, seed)
            read = {m: mamba2.layer(module, method=m) for m in METHODS}
            for length in LENGTHS:
                x = np.random.default_rng(seed * 100 + length).standard_normal(
                    (length, module.hidden_size)
                )
                with torch.no_grad():
                    want = module(torch.from_numpy(x)[None])[0].numpy()
                ours = {m: f(x) for m, f in read.items()}
                module_eps32 = max(relative(y, want) for y in ours.values()) / EPS32
                methods_eps64 = max(relative(y, ours["recurrence"]) for y in ours.values()) / EPS64
                case = f"G = {g}, H = {h}, P = {p}, N = {n}, Q = {chunk}, L = {length}"
                rows.append(
                    dict(
                        case=case, seed=seed, module_eps32=module_eps32,
                        bound_module_eps32=BOUND_MODULE_EPS32, methods_eps64=methods_eps64,
                        bound_methods_eps64=BOUND_METHODS_EPS64,
                    )
                )  # fmt: skip
                print(f"{case:44} seed {seed}: module {module_eps32:6.3g} ε32, "
                      f"methods {methods_eps64:6.3g} ε64")  # fmt: skip
    doc = dict(
        started_utc=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        load_before=list(load_before),
        load_after=list(os.getloadavg()),
        machine=machine() | {"transformers": transformers.__version__},
        results=rows,
    )
    RESULTS.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
