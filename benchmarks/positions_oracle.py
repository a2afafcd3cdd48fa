"""Accuracy: chapter "Positions and decoding" against PyTorch, in units of ε.

Not a test (the tests check the same agreements with fixed tolerances). From the repository
root:

    uv run --group test python benchmarks/positions_oracle.py

Measures, on random inputs, the largest difference between the NumPy implementation and
PyTorch's, divided by the largest magnitude of PyTorch's output and by the ε of the format:

* ``multihead.multi_head_attention(..., n_kv_heads=)`` against ``scaled_dot_product_attention(...,
  enable_gqa=True)`` (h = 8 query heads, every divisor as key/value heads);
* ``block.transformer_block`` against ``torch.nn.TransformerEncoderLayer(batch_first=True,
  dropout=0.0)``, pre- and post-LN, ReLU and GELU, with a causal mask;
* ``positional.rope`` against the two reference formulas written in PyTorch: Hugging Face's
  ``x·cos + rotate_half(x)·sin`` and RoFormer / Meta's complex product
  (``torch.view_as_complex`` · ``torch.polar``);
* ``decoding.incremental_attention`` against ``scaled_dot_product_attention`` with
  ``is_causal=True``, or with the sliding-window mask.

float64 and float32 each. The results go to ``data/positions_oracle.json``
(with PyTorch's version and the load average), read by the chapter's pages; every row has a
bound, and the pages refuse to build if a committed row exceeds it. PyTorch is needed here
only: ``uv pip install --find-links /opt/wheels torch``.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import torch
from _common import result_path  # benchmarks/, the script's directory
from attention_bench import machine

from attention_math.block import BlockConfig, params_from_torch, transformer_block
from attention_math.decoding import incremental_attention
from attention_math.multihead import AttentionParams, multi_head_attention, split_heads
from attention_math.numeric import causal_mask, sliding_window_mask
from attention_math.positional import rope, rope_frequencies

RESULTS = result_path(__file__)
DTYPES = {"float64": (np.float64, torch.float64), "float32": (np.float32, torch.float32)}
BOUND = {"gqa": 16, "block": 64, "rope": 16, "incremental": 16}  # ε, as in the tests


def error_eps(ours: np.ndarray, theirs: np.ndarray) -> float:
    """max |ours − theirs| / max |theirs|, in units of the ε of ``theirs``' format."""
    eps = np.finfo(theirs.dtype).eps
    diff = np.abs(ours.astype(np.float64) - theirs.astype(np.float64)).max()
    return float(diff / np.abs(theirs.astype(np.float64)).max() / eps)


def gqa(n_kv_heads: int, dtype: str, rng: np.random.Generator) -> float:
    np_t, _ = DTYPES[dtype]
    h, B, L, d_model, d_head = 8, 2, 64, 64, 16
    x = rng.standard_normal((B, L, d_model)).astype(np_t)  # (B, L, d_model)
    w_q = (rng.standard_normal((d_model, h * d_head)) / 8).astype(np_t)  # (d_model, h·d_head)
    w_k = (rng.standard_normal((d_model, n_kv_heads * d_head)) / 8).astype(np_t)  # (d_model, g·d)
    w_v = (rng.standard_normal((d_model, n_kv_heads * d_head)) / 8).astype(np_t)  # (d_model, g·d)
    w_o = np.eye(h * d_head, dtype=np_t)  # the heads' concatenation itself
    mask = causal_mask(L)  # (L, L)
    p = AttentionParams(w_q, w_k, w_v, w_o)
    ours = multi_head_attention(x, x, p, h, n_kv_heads=n_kv_heads, mask=mask)
    q, k, v = (
        torch.from_numpy(np.ascontiguousarray(split_heads(x @ w, n)))  # (B, heads, L, d_head)
        for w, n in ((w_q, h), (w_k, n_kv_heads), (w_v, n_kv_heads))
    )
    heads = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.from_numpy(mask), enable_gqa=True
    )  # (B, h, L, d_head)
    theirs = heads.transpose(1, 2).reshape(B, L, h * d_head).numpy()  # (B, L, h·d_head)
    return error_eps(ours, theirs)


def block(norm_first: bool, activation: str, dtype: str, rng: np.random.Generator) -> float:
    np_t, torch_t = DTYPES[dtype]
    torch.manual_seed(int(rng.integers(2**31)))
    d_model, n_heads, d_ff, B, L = 64, 4, 256, 2, 32
    layer = torch.nn.TransformerEncoderLayer(
        d_model,
        n_heads,
        dim_feedforward=d_ff,
        dropout=0.0,
        activation=activation,
        batch_first=True,
        norm_first=norm_first,
    ).to(torch_t)
    layer.eval()
    with torch.no_grad():  # LayerNorm gains and biases away from their 1 and 0 defaults
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    x = torch.from_numpy(rng.standard_normal((B, L, d_model)).astype(np_t))  # (B, L, d_model)
    with torch.no_grad():  # torch's boolean src_mask: True = blocked
        theirs = layer(x, src_mask=torch.from_numpy(~causal_mask(L))).numpy()
    params = params_from_torch({k: t.detach().numpy() for k, t in layer.state_dict().items()})
    config = BlockConfig(n_heads=n_heads, norm_first=norm_first, activation=activation)
    ours = transformer_block(x.numpy(), params, config, mask=causal_mask(L))
    return error_eps(ours, theirs)


def rope_hf(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Hugging Face's layout: ``x·cos + rotate_half(x)·sin`` (angles in float64)."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    freqs = torch.outer(positions.double(), inv_freq)  # (L, d/2)
    emb = torch.cat([freqs, freqs], dim=-1)  # (L, d)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]  # (..., L, d/2) each
    rotated = torch.cat([-x2, x1], dim=-1)  # (..., L, d)
    return x * emb.cos().to(x.dtype) + rotated * emb.sin().to(x.dtype)


def rope_complex(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoFormer / Meta's layout: pairs ``(x[2i], x[2i+1])`` as complex numbers, times
    ``e^{i p θ_i}``."""
    d = x.shape[-1]
    theta = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angle = torch.outer(positions.double(), theta)  # (L, d/2)
    turn = torch.polar(torch.ones_like(angle), angle)  # (L, d/2) complex128
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())  # (..., L, d/2)
    return torch.view_as_real(z * turn.to(z.dtype)).flatten(-2)  # (..., L, d)


def rope_exact(x: np.ndarray, positions: np.ndarray, interleaved: bool) -> np.ndarray:
    """RoPE with the angles ``p·θ_i`` and their cosines and sines from mpmath (40 digits),
    the rotation in extended precision: within a fraction of an ε of float64."""
    mpmath.mp.dps = 40
    d = x.shape[-1]
    cos = np.empty((positions.size, d // 2), np.longdouble)  # (L, d/2)
    sin = np.empty_like(cos)  # (L, d/2)
    for t, p in enumerate(positions):
        for i in range(d // 2):
            angle = mpmath.mpf(int(p)) * mpmath.power(10000, mpmath.mpf(-2 * i) / d)
            cos[t, i] = np.longdouble(mpmath.nstr(mpmath.cos(angle), 30))
            sin[t, i] = np.longdouble(mpmath.nstr(mpmath.sin(angle), 30))
    a = x.astype(np.longdouble)  # (..., L, d)
    x1, x2 = (a[..., 0::2], a[..., 1::2]) if interleaved else (a[..., : d // 2], a[..., d // 2 :])
    out = np.empty_like(a)  # (..., L, d)
    first, second = (
        (np.s_[..., 0::2], np.s_[..., 1::2])
        if interleaved
        else (
            np.s_[..., : d // 2],
            np.s_[..., d // 2 :],
        )
    )
    out[first], out[second] = x1 * cos - x2 * sin, x2 * cos + x1 * sin
    return out


def rope_row(
    interleaved: bool, p_max: int, dtype: str, rng: np.random.Generator
) -> dict[str, float]:
    """Ours against PyTorch's reference, and each against the exact rotation. In float64 the
    angle ``p·θ_i`` itself is rounded by up to about ``p·ε``, so both stay within ``p_max·ε``
    of the exact rotation, not within a few ε."""
    np_t, _ = DTYPES[dtype]
    x = rng.standard_normal((2, 4, 128, 64)).astype(np_t)  # (B, h, L, d)
    pos = np.sort(rng.integers(0, p_max, size=128))  # (L,)
    reference = rope_complex if interleaved else rope_hf
    theirs = reference(torch.from_numpy(x), torch.from_numpy(pos)).numpy()  # (B, h, L, d)
    ours = rope(x, pos, interleaved=interleaved)  # (B, h, L, d)
    exact = rope_exact(x, pos, interleaved)  # (B, h, L, d)
    eps = float(np.finfo(np_t).eps)
    scale = float(np.abs(exact).max())
    # PyTorch's θ_i = 1/base**(2i/d) is rounded twice; rope_frequencies rounds it once.
    d = x.shape[-1]
    their_theta = (1.0 / 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)).numpy()
    same = their_theta == rope_frequencies(d)  # (d/2,)
    cols = np.repeat(same, 2) if interleaved else np.concatenate([same, same])  # (d,)
    return dict(
        error_eps=error_eps(ours, theirs),
        d=d,
        theta_differ=int((~same).sum()),
        error_same_theta_eps=error_eps(ours[..., cols], theirs[..., cols]),
        ours_exact_eps=float(np.abs(ours - exact).max() / scale / eps),
        torch_exact_eps=float(np.abs(theirs - exact).max() / scale / eps),
    )


def incremental(window: int | None, dtype: str, rng: np.random.Generator) -> float:
    np_t, _ = DTYPES[dtype]
    L = 64
    q, k, v = (rng.standard_normal((2, 4, L, 32)).astype(np_t) for _ in range(3))  # (B, h, L, d)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    if window is None:
        theirs = sdpa(tq, tk, tv, is_causal=True).numpy()  # (B, h, L, d)
    else:
        band = torch.from_numpy(sliding_window_mask(L, window=window))  # (L, L)
        theirs = sdpa(tq, tk, tv, attn_mask=band).numpy()  # (B, h, L, d)
    return error_eps(incremental_attention(q, k, v, window=window), theirs)


def main() -> None:
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()
    cases: list[tuple[str, str, str, Callable[..., Any], tuple[Any, ...]]] = []
    for dtype in DTYPES:
        for g in (8, 4, 2, 1):
            cases.append(("gqa", f"8 query heads, {g} key/value", dtype, gqa, (g,)))
        for norm_first in (True, False):
            for act in ("relu", "gelu"):
                where = "pre-LN" if norm_first else "post-LN"
                cases.append(
                    (
                        "block",
                        f"{where}, {dict(relu='ReLU', gelu='GELU')[act]}",
                        dtype,
                        block,
                        (norm_first, act),
                    )
                )
        for interleaved, p_max in ((False, 128), (False, 8192), (True, 8192)):
            layout = "interleaved" if interleaved else "rotate_half"
            case = f"{layout}, positions below {p_max}"
            cases.append(("rope", case, dtype, rope_row, (interleaved, p_max)))
        for window in (None, 8):
            what = "causal" if window is None else f"sliding window of {window}"
            cases.append(("incremental", what, dtype, incremental, (window,)))
    rows = []
    for what, case, dtype, run, args in cases:
        got = run(*args, dtype, rng)
        errors = got if isinstance(got, dict) else dict(error_eps=got)
        bound = BOUND[what]
        if what == "rope" and dtype == "float64":
            bound = max(bound, args[1])  # p_max·ε: the rounding of the angle p·θ_i
        rows.append(dict(what=what, case=case, dtype=dtype, **errors, bound_eps=bound))
        more = "".join(f", {k} {v:.3g}" for k, v in errors.items() if k != "error_eps")
        print(f"{what:12} {case:32} {dtype:8} {errors['error_eps']:8.3g} ε (bound {bound}){more}")
    doc = dict(
        started_utc=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        load_before=list(load_before),
        load_after=list(os.getloadavg()),
        machine=machine(),
        results=rows,
    )
    RESULTS.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
