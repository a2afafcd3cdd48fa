"""The conventions of PyTorch, d2l and Hugging Face next to this package's, run side by side.

Each row of the table on the page "Coming from PyTorch, d2l or Hugging Face" is one
function here: it runs the same small problem in both conventions and reports what it
found. PyTorch is optional: where it is not installed when the site is built, the row runs
the package's side and shows PyTorch's side as an oracle run recorded it
([`record`][attention_site.pages.conventions.record], written with PyTorch's version and the date),
labelled as recorded. d2l's ``masked_softmax``
and the Hugging Face fill value are rules of a few lines, run in NumPy (neither library is a
dependency).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from attention_math.backward import attention_backward_with_dmask
from attention_math.multihead import (
    AttentionParams,
    from_key_padding_mask,
    multi_head_weights,
)
from attention_math.multihead import multi_head_attention as _mha
from attention_math.numeric import (
    attention,
    attention_weights,
    attention_with_lse,
    causal_mask,
    log_softmax,
    padding_mask,
    softmax,
)

__all__ = ["ConventionMismatch", "Row", "record", "rows", "table", "torch_or_none"]

Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Row:
    """One convention: theirs, ours, and what running both showed."""

    topic: str
    theirs: str  # their argument or habit, as they write it
    ours: str  # the same thing here
    found: str  # printed from the run: agreement, shapes, values


def _random_params(rng: np.random.Generator, *shapes: tuple[int, int]) -> AttentionParams:
    """``AttentionParams`` of four random matrices of these shapes (all ``(d, d)`` if none)."""
    sizes = shapes or ((4, 4),) * 4
    return AttentionParams(*(rng.standard_normal(s) for s in sizes))


def torch_or_none() -> ModuleType | None:
    """PyTorch if it is installed (a test- and build-time oracle only), else ``None``.

    Examples:
        >>> from attention_site.pages.conventions import torch_or_none
        >>> torch_or_none() is None or hasattr(torch_or_none(), "nn")
        True
    """
    if importlib.util.find_spec("torch") is None:
        return None
    return importlib.import_module("torch")  # typed ModuleType whether or not torch is there


class ConventionMismatch(AssertionError):
    """The two sides of a row disagree where the table says they agree: the build fails."""


def _agree(ours: NDArray[Any], theirs: NDArray[Any], what: str = "the two sides") -> str:
    """``agree`` with the largest difference; a mismatch raises (the page never prints one)."""
    if ours.shape != theirs.shape:
        raise ConventionMismatch(f"{what}: shapes {ours.shape} and {theirs.shape} differ")
    ours, theirs = (np.asarray(a, dtype=np.float64) for a in (ours, theirs))
    if not np.allclose(ours, theirs, rtol=1e-10, atol=1e-12, equal_nan=True):
        raise ConventionMismatch(f"{what} differ:\n{ours}\n{theirs}")
    finite = np.isfinite(ours) & np.isfinite(theirs)
    delta = float(np.max(np.abs(ours - theirs)[finite])) if finite.any() else 0.0
    return f"agree (max abs difference {delta:.1e})"


_NO_TORCH = "PyTorch is not installed where this site was built: the package's side only; "


def _problem(seed: int, *shape: int) -> tuple[Floats, Floats, Floats]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(shape))


def _sdpa(
    torch: ModuleType, q: NDArray[Any], k: NDArray[Any], v: NDArray[Any], **kw: Any
) -> Floats:
    t = [torch.from_numpy(np.ascontiguousarray(a)) for a in (q, k, v)]
    out: Floats = torch.nn.functional.scaled_dot_product_attention(*t, **kw).numpy()
    return out


def _torch_mha(
    torch: ModuleType,
    seed: int,
    embed: int,
    heads: int,
    kdim: int | None = None,
    vdim: int | None = None,
    batch_first: bool = True,
) -> tuple[Any, AttentionParams]:
    """A float64 ``nn.MultiheadAttention`` with random biases, and its weights and biases as
    ``multi_head_attention`` takes them (``AttentionParams.from_torch``: ``(in, out)``)."""
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(
        embed, heads, kdim=kdim, vdim=vdim, batch_first=batch_first, dtype=torch.float64
    )
    with torch.no_grad():  # PyTorch starts the biases at zero: make them matter
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    return mha, AttentionParams.from_torch({k: t.numpy() for k, t in mha.state_dict().items()})


def bool_mask(torch: ModuleType | None) -> Row:
    q, k, v = _problem(1, 1, 2, 4, 8)  # (B, H, L, d): SDPA's layout
    mask = np.random.default_rng(2).random((4, 4)) < 0.7
    mask[:, 0] = True
    ours = attention(q, k, v, mask)
    found = (
        _NO_TORCH + f"output {ours.shape}"
        if torch is None
        else _agree(ours, _sdpa(torch, q, k, v, attn_mask=torch.from_numpy(mask)))
    )
    return Row(
        "boolean mask",
        "`F.scaled_dot_product_attention(attn_mask=m)`, True = may attend",
        "`attention(q, k, v, mask=m)`, True = may attend (the same)",
        found,
    )


def additive_mask(torch: ModuleType | None) -> Row:
    q, k, v = _problem(3, 1, 2, 4, 8)
    rng = np.random.default_rng(4)
    bias = rng.standard_normal((4, 4))
    bias[rng.random((4, 4)) < 0.3] = -np.inf
    bias[:, 0] = 0.0
    ours = attention(q, k, v, bias)
    found = (
        _NO_TORCH + f"output {ours.shape}"
        if torch is None
        else _agree(ours, _sdpa(torch, q, k, v, attn_mask=torch.from_numpy(bias)))
    )
    return Row(
        "additive (float) mask",
        "float `attn_mask`, added to the scores (`-inf` blocks)",
        "float `mask`, added to the scores after the scale (the same)",
        found,
    )


def multihead_masks(torch: ModuleType | None) -> Row:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 6))  # (B, L, embed_dim)
    pad = np.array([[False] * 4, [False, False, True, True]])  # PyTorch: True = padding
    blocked = ~causal_mask(4)  # MultiheadAttention's boolean attn_mask: True = blocked
    ours_note = (
        "`multi_head_attention(x, x, params, h, mask=~attn_mask & from_key_padding_mask(kpm))`"
        ": one convention, True = may attend; `params = AttentionParams.from_torch(state)`, "
        "weights `(in, out)`, `w_q = in_proj_weight[:d].T`; weights from `multi_head_weights`"
    )
    theirs_note = (
        "`nn.MultiheadAttention(d, h, batch_first=True)(x, x, x, attn_mask=m, "
        "key_padding_mask=kpm)`: "
        "boolean `attn_mask` **True = blocked**, `key_padding_mask` True = padding"
    )
    if torch is None:
        w = _random_params(rng, *((6, 6),) * 4)
        out = _mha(x, x, w, 2, mask=~blocked & from_key_padding_mask(pad))
        return Row(
            "`nn.MultiheadAttention` masks",
            theirs_note,
            ours_note,
            _NO_TORCH + f"output {out.shape}",
        )
    mha, w = _torch_mha(torch, 0, 6, 2)
    tx = torch.from_numpy(x)
    t_out, t_w = mha(
        tx, tx, tx, attn_mask=torch.from_numpy(blocked), key_padding_mask=torch.from_numpy(pad)
    )
    mask = ~blocked & from_key_padding_mask(pad)  # (B, L_q, L_k): True = may attend
    out = _mha(x, x, w, 2, mask=mask)
    weights = multi_head_weights(x, x, w, 2, mask=mask).mean(axis=1)  # PyTorch's average
    found = (
        f"output {_agree(out, t_out.detach().numpy())}; averaged weights "
        f"{_agree(weights, t_w.detach().numpy())}"
    )
    return Row("`nn.MultiheadAttention` masks", theirs_note, ours_note, found)


def sequence_first(torch: ModuleType | None) -> Row:
    rng = np.random.default_rng(16)
    x_seq = rng.standard_normal((4, 2, 6))  # (L, B, E): MultiheadAttention's default layout
    theirs_note = (
        "`nn.MultiheadAttention(d, h)` takes `(L, B, E)`, sequence first; `batch_first=True` "
        "for `(B, L, E)`. SDPA takes `(..., L, d)`"
    )
    ours_note = (
        "batch first always, `(..., L, d)`: pass a sequence-first `x` as `x.swapaxes(0, 1)`; "
        "unswapped, attention runs across the batch"
    )
    if torch is None:
        w = _random_params(rng, *((6, 6),) * 4)
        out = _mha(x_seq.swapaxes(0, 1), x_seq.swapaxes(0, 1), w, 2)
        found = f"`(L, B, E)` = {x_seq.shape}, swapped: output {out.shape}"
        return Row("sequence-first inputs", theirs_note, ours_note, _NO_TORCH + found)
    mha, w = _torch_mha(torch, 2, 6, 2, batch_first=False)
    tx = torch.from_numpy(x_seq)
    t_out = mha(tx, tx, tx, need_weights=False)[0].detach().numpy()
    x = x_seq.swapaxes(0, 1)
    swapped = _mha(x, x, w, 2).swapaxes(0, 1)
    unswapped = _mha(x_seq, x_seq, w, 2)
    off = float(np.max(np.abs(unswapped - t_out)))
    if off < 1e-3:
        raise ConventionMismatch("sequence-first inputs: unswapped agrees, so nothing differs")
    found = (
        f"`(L, B, E)` = {x_seq.shape} through `nn.MultiheadAttention(6, 2)`: ours on "
        f"`x.swapaxes(0, 1)`, swapped back, {_agree(swapped, t_out, 'sequence-first outputs')}; "
        f"on `x` as it is, another result (max abs difference {off:.1f})"
    )
    return Row("sequence-first inputs", theirs_note, ours_note, found)


def d2l_valid_lens(torch: ModuleType | None) -> Row:
    q, k, v = _problem(6, 2, 4, 3)  # (B, L, d)
    valid_lens = np.array([4, 2])
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(3)  # (B, L_q, L_k)
    # d2l's masked_softmax: entries at or past valid_len are replaced by −1e6, then softmax
    d2l = softmax(np.where(np.arange(4) < valid_lens[:, None, None], scores, -1e6)) @ v
    ours = attention(q, k, v, padding_mask(valid_lens, 4))
    return Row(
        "d2l's `valid_lens`",
        "`masked_softmax(scores, valid_lens)`: keys at or past `valid_lens[b]` get −10⁶",
        "`mask=padding_mask(valid_lens, L_k)`: `(B, 1, L_k)` for `(B,)` lengths, "
        "`(B, L_q, L_k)` for `(B, L_q)`",
        "d2l's rule run in NumPy (d2l is not a dependency): " + _agree(ours, d2l),
    )


def hf_four_d_mask(torch: ModuleType | None) -> Row:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4))  # (B, L, d_model)
    w = _random_params(rng)
    m = padding_mask([3, 2], 3)[:, None]  # (B, 1, 1, L_k), True = may attend
    out = _mha(x, x, w, 2, mask=m)
    try:
        attention(x, x, x, m)
    except ValueError as exc:
        refused = f"`attention` on `(B, L, d)` inputs raises: {exc}"
    else:
        raise ConventionMismatch("a (B, 1, 1, L) mask on (B, L, d) inputs was not refused")
    same = _agree(out, _mha(x, x, w, 2, mask=from_key_padding_mask(~m[:, 0, 0])))
    found = (
        f"output {out.shape} (not {(2, 2, 3, 4)}), and it {same.split(' ')[0]}s with "
        f"`from_key_padding_mask`; {refused}"
    )
    if torch is None:
        found = _NO_TORCH + found
    else:
        mha, tw = _torch_mha(torch, 3, 4, 2)
        tx = torch.from_numpy(x)
        t_out = mha(tx, tx, tx, key_padding_mask=torch.from_numpy(~m[:, 0, 0]))[0]
        theirs = _agree(_mha(x, x, tw, 2, mask=m), t_out.detach().numpy())
        try:
            _sdpa(torch, x, x, x, attn_mask=torch.from_numpy(m))
        except RuntimeError:
            sdpa = "SDPA on `(B, L, d)` inputs raises too"
        else:
            raise ConventionMismatch("SDPA accepted a (B, 1, 1, L) mask on (B, L, d) inputs")
        found += (
            f"; {sdpa}; with `mask=m`, ours and `nn.MultiheadAttention` with "
            f"`key_padding_mask=~m[:, 0, 0]` {theirs}"
        )
    return Row(
        "`(B, 1, 1, L)` masks",
        "The Annotated Transformer and Hugging Face: `(B, 1, 1, L_k)`, broadcast over "
        "heads and queries (HF's `attention_mask` is 1 = attend)",
        "`multi_head_attention(..., mask=m)` takes it as a per-head mask "
        "`(B, h or 1, L_q or 1, L_k)`; a mask that would enlarge the batch raises",
        found,
    )


def causal_alignment(torch: ModuleType | None) -> Row:
    q, k, v = _problem(8, 1, 1, 2, 4)
    k, v = (np.concatenate([a, a[..., ::-1, :]], axis=-2) for a in (k, v))  # L_k = 4
    tl = causal_mask(2, 4).astype(int).tolist()
    br = causal_mask(2, 4, causal_alignment="bottom-right").astype(int).tolist()
    found = f"L_q = 2, L_k = 4: top-left {tl}, bottom-right {br}"
    if torch is None:
        return Row("`is_causal` alignment", _CAUSAL_THEIRS, _CAUSAL_OURS, _NO_TORCH + found)
    from torch.nn.attention.bias import causal_lower_right

    upper = _agree(attention(q, k, v, is_causal=True), _sdpa(torch, q, k, v, is_causal=True))
    lower = _agree(
        attention(q, k, v, is_causal=True, causal_alignment="bottom-right"),
        _sdpa(torch, q, k, v, attn_mask=causal_lower_right(2, 4)),
    )
    return Row(
        "`is_causal` alignment",
        _CAUSAL_THEIRS,
        _CAUSAL_OURS,
        f"{found}; top-left {upper.split(' ')[0]}s with `is_causal=True`, bottom-right "
        f"{lower.split(' ')[0]}s with `causal_lower_right` ({lower.split('(')[1][:-1]})",
    )


_CAUSAL_THEIRS = (
    "`is_causal=True` is top-left; `torch.nn.attention.bias.causal_lower_right(L_q, L_k)` "
    "for decoding with a cache"
)
_CAUSAL_OURS = (
    '`is_causal=True, causal_alignment="top-left"` (default) or `"bottom-right"`; '
    "`causal_mask(n_q, n_k, causal_alignment=…)`"
)


def fully_masked_row(torch: ModuleType | None) -> Row:
    q, k, v = _problem(9, 1, 1, 3, 4)
    allowed = np.ones((3, 3), bool)
    allowed[1] = False  # query 1 may see nothing
    out, weights = attention(q, k, v, allowed), attention_weights(q, k, v, allowed)
    ours, ours_w = out[0, 0, 1], weights[0, 0, 1]
    fill = np.where(allowed, 0.0, np.finfo(np.float64).min)  # HF's fill: the dtype's minimum
    hf = softmax(q @ np.swapaxes(k, -1, -2) / 2.0 + fill)[0, 0, 1]
    parts = [
        f"ours: output row {ours.round(3).tolist()}, weights {ours_w.round(3).tolist()}",
        f"finite fill: weights {hf.round(3).tolist()}",
    ]
    if torch is None:
        parts.insert(0, _NO_TORCH.rstrip("; "))
    else:
        sdpa = _sdpa(torch, q, k, v, attn_mask=torch.from_numpy(allowed))[0, 0, 1]
        torch.manual_seed(0)
        mha = torch.nn.MultiheadAttention(4, 1, batch_first=True, dtype=torch.float64)
        tx = torch.from_numpy(q[0])
        _, w = mha(tx, tx, tx, attn_mask=torch.from_numpy(~allowed))
        parts += [
            f"SDPA: output row {sdpa.round(3).tolist()}",
            f"`MultiheadAttention`: weights {w.detach().numpy()[0, 1].round(3).tolist()}",
        ]
    return Row(
        "fully masked row",
        "SDPA (since 2.5; NaN before; run here on the CPU): a zero output row; "
        "`nn.MultiheadAttention`: NaN "
        "weights; a finite fill such as HF's `finfo.min`: uniform weights over the blocked keys",
        "zero weights and a zero output row: no key is seen, so nothing is averaged, and "
        "no NaN reaches the next layer",
        "; ".join(parts),
    )


def need_weights(torch: ModuleType | None) -> Row:
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 3, 4))
    w = _random_params(rng)
    mha: Any = None
    if torch is not None:
        mha, w = _torch_mha(torch, 4, 4, 2)
    per = multi_head_weights(x, x, w, 2)  # (B, h, L_q, L_k)
    avg = per.mean(axis=1)  # (B, L_q, L_k): PyTorch's default average_attn_weights=True
    found = (
        f"averaged {avg.shape}, per head {per.shape}; every row of every head sums to 1: "
        f"{bool(np.allclose(per.sum(axis=-1), 1))}"
    )
    if torch is None:
        found = _NO_TORCH + found
    else:
        tx = torch.from_numpy(x)
        t_avg, t_per = (
            mha(tx, tx, tx, average_attn_weights=a)[1].detach().numpy() for a in (True, False)
        )
        found += (
            f"; `nn.MultiheadAttention` averaged {_agree(avg, t_avg, 'averaged weights')}, "
            f"per head {_agree(per, t_per, 'per-head weights')}"
        )
    return Row(
        "attention weights",
        "`need_weights=True, average_attn_weights=True` (default) or `False`",
        "`multi_head_weights(x_q, x_kv, params, h)`: per head `(..., h, L_q, L_k)`; "
        "`.mean(axis=-3)` averages them; `multi_head_attention` returns the output only",
        found,
    )


def log_sum_exp(torch: ModuleType | None) -> Row:
    q, k, v = _problem(11, 1, 2, 4, 8)
    lse = attention_with_lse(q, k, v, is_causal=True).lse
    if torch is None:
        found = _NO_TORCH + f"`lse` {lse.shape}"
    else:
        t = [torch.from_numpy(a) for a in (q, k, v)]
        _, t_lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(*t, is_causal=True)[
            :2
        ]
        found = f"`lse` {lse.shape}: " + _agree(lse, t_lse.numpy())
    return Row(
        "log-sum-exp",
        "FlashAttention's `softmax_lse`, `(B, H, L_q)` (PyTorch's flash kernel returns it)",
        "`attention_with_lse(...)` → `(out, lse)`, `lse` of shape `(..., L_q)`",
        found,
    )


def scale_and_dtypes(torch: ModuleType | None) -> Row:
    q = np.ones((2, 3), np.float16)
    k = np.ones((2, 3), np.float32)
    mixed = attention(q, k, k).dtype
    try:
        attention(k, k, k, scale=-1.0)
        neg = "accepted"
    except ValueError as exc:
        neg = f"refused ({exc})"
    found = f"float16 with float32 gives {mixed}; negative scale {neg}"
    if torch is None:
        found = _NO_TORCH + found
    else:
        try:
            _sdpa(torch, q, k, k)
            found += "; SDPA accepts mixed dtypes"
        except RuntimeError:
            found += "; SDPA raises for mixed dtypes"
        _sdpa(torch, k, k, k, scale=-1.0)
        found += " and runs with `scale=-1`"
    return Row(
        "dtypes and `scale`",
        "one dtype for q, k, v (mixed raises); `torch.bfloat16`; any `scale`, negative too",
        "mixed float16/float32 promote as NumPy does; float16 and `ml_dtypes.bfloat16` "
        "run in float32 and return their own format; `scale` must be ≥ 0",
        found,
    )


def zero_length(torch: ModuleType | None) -> Row:
    q = np.ones((1, 1, 3, 4))
    k = np.ones((1, 1, 0, 4))
    v = np.ones((1, 1, 0, 5))
    ours = attention(q, k, v)
    no_q = attention(k, q, np.ones((1, 1, 3, 5)))  # L_q = 0
    found = (
        f"no keys: ours {ours.shape}, all zero: {bool((ours == 0).all())}; "
        f"no queries: ours {no_q.shape}"
    )
    if torch is not None:
        found += "; SDPA " + _agree(ours, _sdpa(torch, q, k, v), "L_k = 0")
        theirs = _sdpa(torch, k, q, np.ones((1, 1, 3, 5)))
        found += f", and {theirs.shape} with no queries"
        if theirs.shape != no_q.shape:
            raise ConventionMismatch(f"L_q = 0: shapes {no_q.shape} and {theirs.shape}")
    else:
        found = _NO_TORCH + found
    return Row(
        "zero-length sequence",
        "`L_q = 0` gives an empty output; `L_k = 0` gives zeros",
        "the same (an empty result, not an error)",
        found,
    )


def kdim_vdim(torch: ModuleType | None) -> Row:
    rng = np.random.default_rng(14)
    x_q = rng.standard_normal((2, 3, 6))  # (B, L_q, embed_dim)
    x_k = rng.standard_normal((2, 5, 4))  # (B, L_k, kdim)
    x_v = rng.standard_normal((2, 5, 3))  # (B, L_k, vdim)
    theirs_note = (
        "`nn.MultiheadAttention(6, 2, kdim=4, vdim=3, batch_first=True)(query, key, value)`"
    )
    ours_note = (
        "`multi_head_attention(x_q, x_k, params, h, x_v=x_v)`: the widths are "
        "read from `x_k`, `x_v` and the weights `(4, 6)`, `(3, 6)`; biases `b_q`…`b_o`"
    )
    if torch is None:
        w = _random_params(rng, (6, 6), (4, 6), (3, 6), (6, 6))
        out = _mha(x_q, x_k, w, 2, x_v=x_v)
        return Row("`kdim`, `vdim`", theirs_note, ours_note, _NO_TORCH + f"output {out.shape}")
    mha, w = _torch_mha(torch, 1, 6, 2, kdim=4, vdim=3)
    t_out, _ = mha(*(torch.from_numpy(a) for a in (x_q, x_k, x_v)), need_weights=False)
    out = _mha(x_q, x_k, w, 2, x_v=x_v)
    found = f"output {out.shape}: " + _agree(out, t_out.detach().numpy(), "kdim/vdim outputs")
    return Row("`kdim`, `vdim`", theirs_note, ours_note, found)


def bfloat16(torch: ModuleType | None) -> Row:
    theirs_note = "`torch.bfloat16` tensors"
    ours_note = (
        "an `ml_dtypes.bfloat16` array (NumPy has no bfloat16 of its own): computed in "
        "float32, returned as bfloat16; `ml_dtypes` is not a dependency"
    )
    if importlib.util.find_spec("ml_dtypes") is None:
        return Row(
            "bfloat16",
            theirs_note,
            ours_note,
            "`ml_dtypes` is not installed where this site was built: nothing to run",
        )
    import ml_dtypes

    bf16 = np.dtype(ml_dtypes.bfloat16)
    q, k, v = (a.astype(bf16) for a in _problem(13, 1, 2, 4, 8))  # (B, H, L, d)
    exact = attention(*(a.astype(np.float64) for a in (q, k, v)))  # the same inputs, float64
    ours = attention(q, k, v)
    finfo = cast(Callable[[np.dtype[Any]], Any], ml_dtypes.finfo)  # ml_dtypes has no hints
    eps = float(finfo(bf16).eps)
    err = float(np.max(np.abs(ours.astype(np.float64) - exact)))
    if ours.dtype != bf16 or err > eps * max(1.0, float(np.max(np.abs(exact)))):
        raise ConventionMismatch(f"bfloat16 attention: dtype {ours.dtype}, error {err}")
    found = (
        f"ours returns {ours.dtype.name}, max error {err:.1e} against float64 on the same "
        f"inputs (bfloat16 ε = {eps:.1e})"
    )
    if torch is None:
        return Row("bfloat16", theirs_note, ours_note, _NO_TORCH + found)
    t = [torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16) for a in (q, k, v)]
    theirs = torch.nn.functional.scaled_dot_product_attention(*t).float().numpy()
    t_err = float(np.max(np.abs(theirs.astype(np.float64) - exact)))
    return Row("bfloat16", theirs_note, ours_note, f"{found}; SDPA in bfloat16 {t_err:.1e}")


def bias_gradient(torch: ModuleType | None) -> Row:
    rng = np.random.default_rng(15)
    q, k, v = _problem(15, 1, 2, 4, 3)  # (B, H, L, d)
    # an additive bias (ALiBi's fixed one, T5's learned one), shared by the batch and heads
    bias = rng.standard_normal((4, 4))
    d_out = rng.standard_normal((1, 2, 4, 3))  # ∂ℓ/∂out
    *grads, d_bias = attention_backward_with_dmask(q, k, v, d_out, bias, is_causal=True)
    # the softmax does not see a constant added to a row, so each row of ∂ℓ/∂bias sums to 0
    row_sums = float(np.max(np.abs(d_bias.sum(axis=-1))))
    found = f"∂ℓ/∂bias {d_bias.shape}, its rows sum to 0 (largest {row_sums:.0e})"
    if torch is None:
        return Row("backward", _BACKWARD_THEIRS, _BACKWARD_OURS, _NO_TORCH + found)
    t_q, t_k, t_v, t_bias = (torch.from_numpy(a.copy()).requires_grad_() for a in (q, k, v, bias))
    allowed = torch.from_numpy(causal_mask(4))
    t_mask = torch.where(allowed, t_bias, torch.tensor(-np.inf, dtype=torch.float64))
    F = torch.nn.functional
    # documented: "An error is thrown if both attn_mask and is_causal are set"; the reference
    # path raises so (a mask that requires grad rules the fused kernels out, as 3-D inputs do)
    for args, what in (
        ((t_q, t_k, t_v, t_bias), "a learned attn_mask (4-D)"),
        ((t_q[0], t_k[0], t_v[0], t_bias.detach()), "a fixed attn_mask with 3-D inputs"),
    ):
        try:
            F.scaled_dot_product_attention(*args[:3], attn_mask=args[3], is_causal=True)
        except RuntimeError:
            continue
        raise ConventionMismatch(f"SDPA accepted {what} together with is_causal=True")
    # only the fused CPU kernel (4-D inputs, a mask without grad) takes both, and applies both
    both = F.scaled_dot_product_attention(t_q, t_k, t_v, attn_mask=t_bias.detach(), is_causal=True)
    with torch.no_grad():
        written_in = F.scaled_dot_product_attention(t_q, t_k, t_v, attn_mask=t_mask.detach())
    fused = _agree(both.detach().numpy(), written_in.numpy(), "the fused kernel's mask")
    F.scaled_dot_product_attention(t_q, t_k, t_v, attn_mask=t_mask).backward(
        torch.from_numpy(d_out)
    )
    theirs = [t.grad.numpy() for t in (t_q, t_k, t_v, t_bias)]
    agree = _agree(
        np.concatenate([g.ravel() for g in (*grads, d_bias)]),
        np.concatenate([g.ravel() for g in theirs]),
        "dq, dk, dv, dbias and autograd",
    )
    return Row(
        "backward",
        _BACKWARD_THEIRS,
        _BACKWARD_OURS,
        f"{found}; SDPA raises for `attn_mask` with `is_causal=True` when the mask requires "
        f"grad and for 3-D inputs; its fused CPU kernel (4-D, a fixed mask) applies both, as "
        f"writing the causal `-inf` into the mask does: {fused}; dq, dk, dv, ∂ℓ/∂bias {agree}",
    )


_BACKWARD_THEIRS = (
    "autograd through SDPA with a float `attn_mask` that requires grad, the causal `-inf` "
    "written into it (`torch.where(causal, bias, -inf)`): `attn_mask` together with "
    "`is_causal=True` is documented as an error (only the fused CPU kernel, for 4-D inputs "
    "and a mask without grad, accepts both)"
)
_BACKWARD_OURS = (
    "`attention_backward_with_dmask(q, k, v, d_out, bias, is_causal=True)` → "
    "`(dq, dk, dv, dbias)`, `dbias` summed to the bias's shape; `mask` and `is_causal=True` "
    "together apply both, forward and backward"
)


def grouped_query(torch: ModuleType | None) -> Row:
    q, _, _ = _problem(16, 1, 4, 3, 2)  # (B, h, L, d): four query heads
    _, k, v = _problem(17, 1, 2, 3, 2)  # two key/value heads
    group = q.shape[-3] // k.shape[-3]
    # query head i reads key/value head i // group: each kv head repeated in place
    ours = attention(q, np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3))
    tiled = attention(q, np.tile(k, (1, group, 1, 1)), np.tile(v, (1, group, 1, 1)))
    off = f"`np.tile` instead would be off by up to {float(np.max(np.abs(tiled - ours))):.2f}"
    theirs_note = (
        "`F.scaled_dot_product_attention(q, k, v, enable_gqa=True)`: `k`, `v` with fewer "
        "heads than `q`, query head i reading key/value head i // (h / h_kv)"
    )
    ours_note = (
        "no flag: repeat each key/value head, `np.repeat(k, h // h_kv, axis=-3)` (not "
        "`np.tile`), then `attention`; from the inputs, `multi_head_attention(..., n_kv_heads=)`"
    )
    if torch is None:
        return Row("`enable_gqa`", theirs_note, ours_note, _NO_TORCH + off)
    found = _agree(ours, _sdpa(torch, q, k, v, enable_gqa=True))
    return Row("`enable_gqa`", theirs_note, ours_note, f"{found}; {off}")


def dropout(torch: ModuleType | None) -> Row:
    q, k, v = _problem(18, 1, 2, 4, 8)
    ours = attention(q, k, v)
    theirs_note = (
        "`dropout_p` of SDPA drops weights whenever it is above 0 (the function has no "
        "training mode); `nn.MultiheadAttention(dropout=p)` only in `train()`"
    )
    ours_note = (
        "no dropout (a reference, not a training layer): the same as `dropout_p=0.0`, or a "
        "module in `eval()`"
    )
    if torch is None:
        return Row("dropout", theirs_note, ours_note, _NO_TORCH + f"output {ours.shape}")
    torch.manual_seed(0)
    with torch.no_grad():  # not training, and SDPA still drops
        dropped = _sdpa(torch, q, k, v, dropout_p=0.5)
    if np.allclose(dropped, ours):
        raise ConventionMismatch("SDPA with dropout_p=0.5 gave the output without dropout")
    x = np.random.default_rng(19).standard_normal((1, 4, 6))
    mha, w = _torch_mha(torch, 1, 6, 2)
    mha.dropout = 0.5
    mha.eval()
    tx = torch.from_numpy(x)
    t_out = mha(tx, tx, tx, need_weights=False)[0].detach().numpy()
    out = _mha(x, x, w, 2)
    found = (
        f"`dropout_p=0` {_agree(ours, _sdpa(torch, q, k, v, dropout_p=0.0))}; `dropout_p=0.5` "
        f"under `torch.no_grad()` differs by up to {float(np.max(np.abs(dropped - ours))):.2f}; "
        f"`nn.MultiheadAttention(dropout=0.5)` in `eval()` {_agree(out, t_out)}"
    )
    return Row("dropout", theirs_note, ours_note, found)


def log_softmax_row(torch: ModuleType | None) -> Row:
    x = np.array([0.0, -1000.0])
    ours = log_softmax(x)
    with np.errstate(divide="ignore"):  # log(0): the underflow this row is about
        naive = np.log(softmax(x))
    try:
        softmax(np.zeros(0))
    except ValueError as exc:
        empty = f"`softmax([])` raises: {exc}"
    else:
        raise ConventionMismatch("softmax([]) was not refused")
    found = f"`log_softmax([0, −1000])` = {ours.tolist()}, `log(softmax(…))` = {naive.tolist()}"
    if torch is None:
        found = _NO_TORCH + found
    else:
        theirs = torch.log_softmax(torch.from_numpy(x), -1).numpy()
        found += "; `torch.log_softmax` " + _agree(ours, theirs, "log_softmax")
        empty_shape = tuple(torch.softmax(torch.zeros(0), -1).shape)
        found += f"; `torch.softmax` of an empty axis gives shape {empty_shape}"
    return Row(
        "`log_softmax`, empty input",
        "`torch.log_softmax(x, -1)`; softmax over an empty axis returns an empty tensor",
        "`log_softmax(x)`; `softmax` over an empty axis raises, naming the shape",
        f"{found}; {empty}",
    )


ROWS: tuple[Callable[[ModuleType | None], Row], ...] = (
    bool_mask,
    additive_mask,
    multihead_masks,
    sequence_first,
    d2l_valid_lens,
    hf_four_d_mask,
    causal_alignment,
    fully_masked_row,
    need_weights,
    kdim_vdim,
    log_sum_exp,
    bias_gradient,
    log_softmax_row,
    scale_and_dtypes,
    bfloat16,
    zero_length,
    grouped_query,
    dropout,
)


def rows(torch: ModuleType | bool | None = True) -> list[Row]:
    """Every row, run now; ``torch=False`` runs the package's side only.

    Examples:
        >>> from attention_site.pages.conventions import rows
        >>> r = rows(torch=False)[4]
        >>> r.topic, r.found.split(":")[-1].split(" (")[0]
        ("d2l's `valid_lens`", ' agree')
    """
    t = torch_or_none() if torch is True else (None if torch is False else torch)
    return [row(t) for row in ROWS]


def record(torch: ModuleType) -> dict[str, Any]:
    """PyTorch's side of every row, for builds without PyTorch: what an oracle run records.

    ``benchmarks/conventions_oracle.py`` writes it, with the date, to
    ``data/conventions_oracle.json``;
    [`table`][attention_site.pages.conventions.table] shows it, labelled as recorded, where PyTorch
    is not installed.

    Examples:
        >>> from attention_site.pages.conventions import record, torch_or_none
        >>> torch = torch_or_none()
        >>> torch is None or record(torch)["rows"][0]["topic"] == "boolean mask"
        True
    """
    return {
        "torch": str(torch.__version__),
        "numpy": np.__version__,
        "rows": [{"topic": r.topic, "found": r.found} for r in rows(torch)],
    }


def _with_recorded(row: Row, recorded: dict[str, Any]) -> Row:
    """The row run now on the package's side, beside PyTorch's side as recorded."""
    theirs = {r["topic"]: r["found"] for r in recorded["rows"]}
    if row.topic not in theirs:
        return row  # a row added since the recording: the package's side only, as it says
    ours = row.found.removeprefix(_NO_TORCH)
    when = f"PyTorch {recorded['torch']}, {recorded['recorded_utc'][:10]}"
    found = f"run now, the package's side: {ours}. **Recorded** ({when}): {theirs[row.topic]}"
    return Row(row.topic, row.theirs, row.ours, found)


def table(torch: ModuleType | bool | None = True, recorded: dict[str, Any] | None = None) -> str:
    """The rows as a Markdown table (the page prints it at build time).

    Without PyTorch, ``recorded`` (from [`record`][attention_site.pages.conventions.record], with
    ``recorded_utc`` added) supplies PyTorch's side of each row, labelled as recorded with its
    version and date.

    Examples:
        >>> from attention_site.pages.conventions import table
        >>> table(torch=False).splitlines()[0]
        '| Topic | PyTorch, d2l, Hugging Face | attention-math | run at build time |'
        >>> rec = {"torch": "2.13.0", "recorded_utc": "2026-11-27T06:00:00+00:00",
        ...        "rows": [{"topic": "boolean mask", "found": "agree (max abs difference 0)"}]}
        >>> line = table(torch=False, recorded=rec).splitlines()[2]
        >>> "**Recorded** (PyTorch 2.13.0, 2026-11-27): agree" in line
        True
    """
    last = "run at build time" if recorded is None else "run at build time, or recorded"
    lines = [
        f"| Topic | PyTorch, d2l, Hugging Face | attention-math | {last} |",
        "|---|---|---|---|",
    ]
    for r in rows(torch):
        if recorded is not None and r.found.startswith(_NO_TORCH):
            r = _with_recorded(r, recorded)
        cells = (r.topic, r.theirs, r.ours, r.found)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
