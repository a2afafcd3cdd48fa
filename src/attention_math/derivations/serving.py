"""Decoding economics, exactly: bytes and FLOPs per generated token, what GQA changes,
Flash-Decoding's merge and PagedAttention's waste.

The counts are those of [`serving`][attention_math.serving] in symbols: ``W_read`` weights read
per token, ``L`` cached positions, ``B`` sequences in the batch, ``n_bytes`` per number (the
Python names are ``W``, ``t``, ``b``). Each claim
is checked against the NumPy module (``numeric_*`` functions raise on disagreement).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import sympy as sp

from attention_math._lazy import np

if TYPE_CHECKING:  # the NumPy side, imported on use: this module's exact side runs in the browser
    from attention_math import serving
    from attention_math.crosscheck import CrossCheck
from attention_math.derivations._once import derived_once
from attention_math.derivations.online_softmax import finish, logsumexp, merge, tile_state
from attention_math.symbolic import is_zero

__all__ = [
    "FLASH_DECODING_SCORES",
    "FLASH_DECODING_V",
    "attention_intensity",
    "block_waste_mean",
    "check_against_serving",
    "decode_bytes",
    "decode_flops",
    "decode_intensity",
    "flash_decoding_merge",
    "flash_decoding_numeric",
    "gqa_bytes_ratio",
    "merge_is_online_softmax",
    "symbols",
]

# W_read weights read per token, L cached positions, B sequences, n_bytes per number
W, t, b, n_bytes = sp.symbols("W_read L B n_bytes", positive=True)
n_layers, h, h_kv, d_head = sp.symbols("n_layers h h_kv d_head", positive=True, integer=True)
n_block = sp.Symbol("n_block", positive=True, integer=True)  # PagedAttention's block size


def symbols() -> dict[str, sp.Symbol]:
    """The symbols by name.

    Examples:
        >>> from attention_math.derivations.serving import symbols
        >>> sorted(symbols())
        ['B', 'L', 'W_read', 'd_head', 'h', 'h_kv', 'n_block', 'n_bytes', 'n_layers']
    """
    return {str(s): s for s in (W, t, b, n_bytes, n_layers, h, h_kv, d_head, n_block)}


def decode_flops() -> sp.Expr:
    """FLOPs of one decode step for ``b`` sequences: ``2W`` per token for the weights, and
    ``4 h d_head t`` per layer for the scores and the weighted sum.

    Examples:
        >>> from attention_math.derivations.serving import decode_flops
        >>> decode_flops()
        B*(4*L*d_head*h*n_layers + 2*W_read)
    """
    return b * (2 * W + 4 * n_layers * h * d_head * t)


def decode_bytes() -> sp.Expr:
    """Bytes of one decode step: the weights once, and each sequence's cache of ``L``
    positions (a key and a value per layer and kv head).

    Examples:
        >>> from attention_math.derivations.serving import decode_bytes
        >>> decode_bytes()
        n_bytes*(2*B*L*d_head*h_kv*n_layers + W_read)
    """
    return n_bytes * (W + b * 2 * n_layers * h_kv * d_head * t)


def decode_intensity() -> sp.Expr:
    """FLOPs per byte of a decode step.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.serving import decode_intensity, b, t
        >>> sp.limit(decode_intensity().subs(b, 1), t, 0)  # one sequence, no cache: 2 / n_bytes
        2/n_bytes
    """
    return sp.simplify(decode_flops() / decode_bytes())


def attention_intensity() -> sp.Expr:
    """FLOPs per byte of decode attention alone (scores and weighted sum over the cache it
    reads): ``2h / (n_bytes · h_kv)``, whatever the batch and the context.

    Examples:
        >>> from attention_math.derivations.serving import attention_intensity
        >>> attention_intensity()
        2*h/(h_kv*n_bytes)
    """
    attn_flops = decode_flops() - decode_flops().subs(t, 0)
    cache_bytes = decode_bytes() - decode_bytes().subs(t, 0)
    return sp.simplify(attn_flops / cache_bytes)


def gqa_bytes_ratio() -> tuple[sp.Expr, sp.Expr]:
    """``(cache bytes with h kv heads / with h_kv, ∂FLOPs/∂h_kv)``: ``h/h_kv`` and ``0``.

    Examples:
        >>> from attention_math.derivations.serving import gqa_bytes_ratio
        >>> gqa_bytes_ratio()
        (h/h_kv, 0)
    """
    cache = decode_bytes() - decode_bytes().subs(t, 0)  # the cache's share of the bytes
    ratio = sp.simplify(cache.subs(h_kv, h) / cache)
    return ratio, sp.diff(decode_flops(), h_kv)


@derived_once
def flash_decoding_merge(
    scores: Sequence[object], values: Sequence[object], cuts: Sequence[int]
) -> sp.Expr:
    """Flash-Decoding's result for one query: each chunk's normalised output ``o_c`` and its
    log-sum-exp ``lse_c``, merged as ``Σ_c e^{lse_c − lse} o_c`` with ``lse = log Σ_c e^{lse_c}``.

    Raises:
        ValueError: a cut outside ``1 … n − 1`` or out of order.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.serving import flash_decoding_merge
        >>> flash_decoding_merge([0, sp.log(2), sp.log(3)], [6, 0, 12], cuts=[1])
        7
    """
    s = [sp.sympify(x) for x in scores]
    edges = [0, *cuts, len(s)]
    if any(a >= c for a, c in itertools.pairwise(edges)):
        raise ValueError(f"cuts must increase within 1 … {len(s) - 1}, got {list(cuts)}")
    lses, outs = [], []
    for a, c in itertools.pairwise(edges):
        e = [sp.exp(x) for x in s[a:c]]
        lses.append(sp.log(sp.Add(*e)))  # log Σ over the chunk
        outs.append(
            sp.Add(*(ei * sp.sympify(vi) for ei, vi in zip(e, values[a:c], strict=True)))
            / sp.Add(*e)
        )
    lse = sp.log(sp.Add(*(sp.exp(x) for x in lses)))
    return sp.simplify(sp.Add(*(sp.exp(lc - lse) * oc for lc, oc in zip(lses, outs, strict=True))))


@derived_once
def merge_is_online_softmax(n: int = 4, cuts: Sequence[int] = (2,)) -> bool:
    """True when Flash-Decoding's merge of generic chunks equals (a) the softmax over all keys
    and (b) the online softmax's merge of the chunks' states ``(m, λ, o)``: the lse of a state
    is ``m + log λ`` and its normalised output ``o/λ``.

    Examples:
        >>> from attention_math.derivations.serving import merge_is_online_softmax
        >>> merge_is_online_softmax(3, (1,))
        True
    """
    s = [sp.Symbol(f"s_{j}", real=True) for j in range(1, n + 1)]
    v = [sp.Symbol(f"v_{j}", real=True) for j in range(1, n + 1)]
    merged = flash_decoding_merge(s, v, cuts)
    e = [sp.exp(x) for x in s]
    plain = sp.Add(*(ei * vi for ei, vi in zip(e, v, strict=True))) / sp.Add(*e)
    edges = [0, *cuts, n]
    states = [tile_state(s[a:c], v[a:c]) for a, c in itertools.pairwise(edges)]
    online = states[0]
    for st in states[1:]:
        online = merge(online, st)
    same_lse = is_zero(sp.exp(logsumexp(online)) - sp.Add(*e))
    return bool(is_zero(merged - plain) and is_zero(finish(online) - plain) and same_lse)


FLASH_DECODING_SCORES: tuple[sp.Expr, ...] = tuple(sp.log(j) for j in (1, 2, 3, 4, 5, 6))
"""The exact case's scores ``log 1 … log 6``: ``e^s = 1 … 6``, so the weights are rational."""

FLASH_DECODING_V = sp.ImmutableMatrix([[1, 0], [2, 1], [3, 5], [4, 4], [5, 2], [9, 6]])  # (6, 2)
"""The exact case's values, one row per key."""


def flash_decoding_numeric(n_splits: int = 3) -> tuple[sp.Matrix, np.ndarray, CrossCheck]:
    """A small exact case (one query, six keys with logarithmic scores, integer values) through
    `serving.split_kv_attention`, cross-checked against the exact softmax (raises if they
    disagree). Returns ``(exact, numeric, check)``.

    Examples:
        >>> from attention_math.derivations.serving import flash_decoding_numeric
        >>> exact, num, check = flash_decoding_numeric(3)
        >>> exact, check.passed
        (Matrix([[109/21, 79/21]]), True)
    """
    scores = list(FLASH_DECODING_SCORES)  # e^s = 1 … 6: rational weights
    v = sp.Matrix(FLASH_DECODING_V)  # (6, 2)
    e = [sp.exp(x) for x in scores]
    exact = (sp.Matrix([e]) * v / sp.Add(*e)).applyfunc(sp.simplify)  # (1, 2)
    # q · k_j = s_j with one dimension: q = 1, k_j = s_j, scale 1
    k = np.array([[float(x)] for x in scores])  # (6, 1)
    from attention_math import serving
    from attention_math.crosscheck import crosscheck

    num = serving.split_kv_attention(
        np.ones((1, 1)), k, np.array(v.tolist(), dtype=float), n_splits, scale=1.0
    )
    return exact, num, crosscheck(exact, num, label=f"Flash-Decoding, {n_splits} splits")


def block_waste_mean() -> sp.Expr:
    """The mean number of empty slots in a sequence's last block, for lengths spread evenly
    over whole multiples of the block size ``n_block``: a length ``≡ r`` modulo ``n_block``,
    ``r ≥ 1``, leaves ``n_block − r`` slots empty, ``r = 0`` none; the mean over ``r`` is
    ``(n_block − 1)/2``.

    Examples:
        >>> from attention_math.derivations.serving import block_waste_mean
        >>> block_waste_mean()
        n_block/2 - 1/2
    """
    r = sp.Symbol("r", integer=True, positive=True)  # the length modulo n_block
    return sp.expand(sp.summation(n_block - r, (r, 1, n_block - 1)) / n_block)


def check_against_serving(
    model: serving.ModelSize, context: int, batch: int = 1, n_bytes_: int = 2
) -> bool:
    """True when the symbolic counts, at this model's sizes, equal `serving.decode_cost`'s.

    Raises:
        AssertionError: they differ.

    Examples:
        >>> from attention_math import serving
        >>> from attention_math.derivations.serving import check_against_serving
        >>> check_against_serving(serving.MODEL_SIZES[3], context=1000, batch=4)
        True
    """
    from attention_math import serving

    num = serving.decode_cost(model, context, batch=batch, n_bytes=n_bytes_)
    point = {
        W: serving.weights_read_per_token(model),
        t: serving.attended_positions(model, context),  # capped at a sliding window
        b: batch,
        n_bytes: n_bytes_,
        n_layers: model.n_layers,
        h: model.n_heads,
        h_kv: model.n_kv_heads,
        d_head: model.d_head,
    }
    if decode_flops().subs(point) != num.flops or decode_bytes().subs(point) != num.n_bytes:
        raise AssertionError(f"{model.name}: symbolic and NumPy counts differ")
    return True
