"""What a generated token costs: bytes read, FLOPs, and two serving techniques.

Decoding one token runs the whole model on one new position: every weight matrix is read once
(from the GPU's memory, to multiply one vector), and every layer's cached keys and values are
read once. Prefill runs the model on the prompt's ``P`` tokens at once: the same weights, read
once, do ``P`` times the work. That ratio, FLOPs per byte, decides which of the two limits a
step: the arithmetic or the memory bandwidth ([`hardware`][attention_math.hardware]).

Two techniques from the serving literature are here as exact NumPy code:

- **Flash-Decoding** ([Dao, Haziza, Massa and Sizov, 2023](https://pytorch.org/blog/flash-decoding/)):
  split the cached keys into chunks, attend to each chunk separately (in parallel on a GPU),
  and merge the partial results with their log-sum-exp, the online softmax's merge.
- **PagedAttention** ([Kwon et al., 2023](https://arxiv.org/abs/2309.06180)): keep the cache in
  fixed-size blocks of a shared pool, found through a per-sequence block table, so that a
  sequence wastes at most one partly filled block instead of a reservation for its maximum
  length.

Counting conventions: every weight read costs 2 FLOPs per token (a multiplication and an
addition for a matrix entry; the few norm weights, biases and looked-up embedding rows, under a
tenth of a percent of the weights, are counted alike) and ``n_bytes`` bytes; attention to ``t``
cached positions costs ``4 · h · d_head · t`` FLOPs per layer (scores and weighted sum) and
reads ``2 · h_kv · d_head · t`` cached entries per layer, where ``t`` is capped at the window
for a model with sliding-window attention. Activations and the softmax's
elementwise work are left out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attention_math._lazy import np

if TYPE_CHECKING:  # NumPy's types only: the module imports without NumPy (the reader's browser)
    from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_qkv, check_scale

__all__ = [
    "MODEL_SIZES",
    "DecodeCost",
    "ModelSize",
    "attended_positions",
    "decode_cost",
    "kv_bytes_per_token",
    "paged_attention",
    "paged_waste",
    "prefill_cost",
    "split_kv_attention",
    "split_kv_partials",
    "total_params",
    "weights_read_per_token",
]


@dataclass(frozen=True)
class ModelSize:
    """A published model's sizes (its ``config.json``).

    ``gated`` is a SwiGLU feed-forward (three ``d_model × d_ff`` matrices, as in Llama) rather
    than two with a GELU (as in GPT-2); ``biases`` and ``learned_positions`` are GPT-2's;
    ``tied`` means the output head reuses the input embedding. ``window`` is the span of
    sliding-window attention (Mistral's ``sliding_window``): a decode step attends to, and reads
    from its rolling cache, at most that many positions; ``None`` for full attention.
    """

    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_model: int
    d_ff: int
    vocab: int
    gated: bool
    biases: bool
    tied: bool
    learned_positions: int = 0  # rows of a learned position table (GPT-2), else 0
    window: int | None = None  # sliding-window attention span, if any


MODEL_SIZES: tuple[ModelSize, ...] = (
    ModelSize("GPT-2 small", 12, 12, 12, 64, 768, 3072, 50257, False, True, True, 1024),
    ModelSize("GPT-2 XL", 48, 25, 25, 64, 1600, 6400, 50257, False, True, True, 1024),
    ModelSize("Llama 2 7B", 32, 32, 32, 128, 4096, 11008, 32000, True, False, False),
    ModelSize("Llama 2 70B", 80, 64, 8, 128, 8192, 28672, 32000, True, False, False),
    ModelSize(
        "Mistral 7B v0.1", 32, 32, 8, 128, 4096, 14336, 32000, True, False, False, window=4096
    ),
)
"""The models of [`derivations.decoding.MODELS`][attention_math.derivations.decoding.MODELS]
with the rest of their ``config.json`` (``n_embd``/``hidden_size``, ``n_inner`` or
``4·n_embd``/``intermediate_size``, ``vocab_size``, ``tie_word_embeddings``,
``sliding_window``)."""


def _layer_matrices(m: ModelSize) -> int:
    """Entries of one layer's weight matrices (the ones multiplied per token)."""
    attn = m.d_model * m.n_heads * m.d_head * 2 + m.d_model * m.n_kv_heads * m.d_head * 2
    ffn = (3 if m.gated else 2) * m.d_model * m.d_ff
    return attn + ffn


def _layer_vectors(m: ModelSize) -> int:
    """Entries of one layer's norms and biases."""
    norms = 2 * m.d_model * (2 if m.biases else 1)  # LayerNorm has a bias, RMSNorm not
    if not m.biases:
        return norms
    qkv = (m.n_heads + 2 * m.n_kv_heads) * m.d_head
    return norms + qkv + m.d_model + m.d_ff + m.d_model  # qkv, out, ffn in, ffn out


def total_params(m: ModelSize) -> int:
    """Every parameter of the model, embeddings included.

    Examples:
        >>> from attention_math.serving import MODEL_SIZES, total_params
        >>> [total_params(m) for m in MODEL_SIZES[:1]]  # GPT-2 small: the published 124M
        [124439808]
    """
    final_norm = m.d_model * (2 if m.biases else 1)
    embed = m.vocab * m.d_model * (1 if m.tied else 2) + m.learned_positions * m.d_model
    return m.n_layers * (_layer_matrices(m) + _layer_vectors(m)) + final_norm + embed


def weights_read_per_token(m: ModelSize) -> int:
    """Parameters read to decode one token: every layer, the final norm and the output head
    (``vocab × d_model``, the embedding itself when tied), plus the embedding row (when not
    tied) and position row looked up for the new token.

    Examples:
        >>> from attention_math.serving import MODEL_SIZES, weights_read_per_token
        >>> weights_read_per_token(MODEL_SIZES[2])  # Llama 2 7B: all but the input table
        6607347712
    """
    final_norm = m.d_model * (2 if m.biases else 1)
    # the new token's embedding row (already read with the head when tied) and position row
    rows = m.d_model * ((0 if m.tied else 1) + (1 if m.learned_positions else 0))
    head = m.vocab * m.d_model
    return m.n_layers * (_layer_matrices(m) + _layer_vectors(m)) + final_norm + head + rows


def _positive(name: str, x: object) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer) or x < 1:
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    return int(x)


def kv_bytes_per_token(m: ModelSize, n_bytes: int = 2) -> int:
    """Bytes of cache one token holds: a key and a value per layer and kv head.

    Raises:
        ValueError: ``n_bytes`` is not a positive integer.

    Examples:
        >>> from attention_math.serving import MODEL_SIZES, kv_bytes_per_token
        >>> kv_bytes_per_token(MODEL_SIZES[2])  # Llama 2 7B in fp16: half a mebibyte
        524288
    """
    return 2 * m.n_layers * m.n_kv_heads * m.d_head * _positive("n_bytes", n_bytes)


@dataclass(frozen=True)
class DecodeCost:
    """One decode (or prefill) step: FLOPs, bytes of weights and of cache, and their ratio."""

    flops: int
    weight_bytes: int
    kv_bytes: int

    @property
    def n_bytes(self) -> int:
        """All bytes read and written."""
        return self.weight_bytes + self.kv_bytes

    @property
    def intensity(self) -> float:
        """FLOPs per byte."""
        return self.flops / self.n_bytes


def _matrix_flops(m: ModelSize) -> int:
    """FLOPs of the weights for one token: 2 per weight read."""
    return 2 * weights_read_per_token(m)


def attended_positions(m: ModelSize, context: int) -> int:
    """The cached positions one decode step at ``context`` attends to and reads: all of them,
    or at most the window's for a model with sliding-window attention (its rolling cache never
    holds more).

    Raises:
        ValueError: ``context`` is not a positive integer.

    Examples:
        >>> from attention_math.serving import MODEL_SIZES, attended_positions
        >>> mistral = MODEL_SIZES[4]
        >>> mistral.window, attended_positions(mistral, 8192), attended_positions(mistral, 100)
        (4096, 4096, 100)
    """
    t = _positive("context", context)
    return t if m.window is None else min(t, m.window)


def decode_cost(m: ModelSize, context: int, *, batch: int = 1, n_bytes: int = 2) -> DecodeCost:
    """One decode step of ``batch`` sequences, each attending to ``context`` cached positions
    (the new token's included; at most ``m.window`` of them with sliding-window attention,
    `attended_positions`): the weights are read once for the whole batch, each sequence reads
    its own cache.

    Raises:
        ValueError: ``context``, ``batch`` or ``n_bytes`` is not a positive integer.

    Examples:
        >>> from attention_math.serving import MODEL_SIZES, decode_cost
        >>> c = decode_cost(MODEL_SIZES[2], context=4096)
        >>> round(c.intensity, 2)  # Llama 2 7B, one sequence: about one FLOP per byte
        1.0
        >>> round(decode_cost(MODEL_SIZES[2], context=4096, batch=64).intensity, 1)
        6.5
    """
    t, b = attended_positions(m, context), _positive("batch", batch)
    nb = _positive("n_bytes", n_bytes)
    attn = 4 * m.n_layers * m.n_heads * m.d_head * t  # scores and weighted sum, every layer
    return DecodeCost(
        flops=b * (_matrix_flops(m) + attn),
        weight_bytes=weights_read_per_token(m) * nb,
        kv_bytes=b * kv_bytes_per_token(m, nb) * t,
    )


def prefill_cost(m: ModelSize, n_tokens: int, *, n_bytes: int = 2) -> DecodeCost:
    """The prompt's ``n_tokens`` at once (causal): weights read once, the cache written once.

    Attention FLOPs count each query against the keys it may see (``t`` keys for position
    ``t``, at most ``m.window`` with sliding-window attention); the scores are not written out
    (a fused kernel). A rolling cache keeps the last ``window`` positions only.

    Raises:
        ValueError: ``n_tokens`` or ``n_bytes`` is not a positive integer.

    Examples:
        >>> from attention_math.serving import MODEL_SIZES, prefill_cost
        >>> round(prefill_cost(MODEL_SIZES[2], 512).intensity)  # ~ the prompt's length
        507
    """
    p, nb = _positive("n_tokens", n_tokens), _positive("n_bytes", n_bytes)
    w = p if m.window is None else min(p, m.window)
    keys = w * (w + 1) // 2 + (p - w) * w  # Σ_t min(t, w) over the positions t = 1 … p
    attn = 4 * m.n_layers * m.n_heads * m.d_head * keys
    return DecodeCost(
        flops=p * _matrix_flops(m) + attn,
        weight_bytes=weights_read_per_token(m) * nb,
        kv_bytes=kv_bytes_per_token(m, nb) * w,
    )


def split_kv_partials(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, n_splits: int, *, scale: float | None = None
) -> tuple[NDArray[np.floating], NDArray[np.floating], NDArray[np.floating]]:
    """Flash-Decoding's first step: each of ``n_splits`` contiguous chunks of the keys gives a
    partial output (normalised within its chunk) and its log-sum-exp.

    Returns ``(outputs, lse)`` stacked on a new first axis of length ``n_splits``, and the
    chunk boundaries: ``outputs`` is ``(n_splits, ..., L_q, d_v)``, ``lse`` is
    ``(n_splits, ..., L_q, 1)``.

    Raises:
        ValueError: ``n_splits`` is not an integer from 1 to ``L_k``, or the shapes do not fit.

    Examples:
        >>> import numpy as np
        >>> from attention_math.serving import split_kv_partials
        >>> o, lse, edges = split_kv_partials(np.zeros((1, 2)), np.zeros((4, 2)), np.eye(4, 2), 2)
        >>> o.shape, lse.shape, edges.tolist()
        ((2, 1, 2), (2, 1, 1), [0, 2, 4])
    """
    q, k, v, _ = check_qkv(q, k, v)
    n_k = k.shape[-2]
    if isinstance(n_splits, bool) or not isinstance(n_splits, int) or not 1 <= n_splits <= n_k:
        raise ValueError(f"n_splits must be an integer from 1 to L_k = {n_k}, got {n_splits!r}")
    s = check_scale(scale, q.shape[-1])
    edges = np.linspace(0, n_k, n_splits + 1).round().astype(int)  # contiguous, near-equal
    outs, lses = [], []
    for a, b in itertools.pairwise(edges):
        scores = q @ np.swapaxes(k[..., a:b, :], -1, -2) * s  # (..., L_q, b - a)
        m = scores.max(axis=-1, keepdims=True)  # (..., L_q, 1): the chunk's own maximum
        e = np.exp(scores - m)  # (..., L_q, b - a)
        lam = e.sum(axis=-1, keepdims=True)  # (..., L_q, 1)
        outs.append((e @ v[..., a:b, :]) / lam)  # (..., L_q, d_v): normalised in the chunk
        lses.append(m + np.log(lam))  # (..., L_q, 1): log Σ exp over the chunk
    return np.stack(outs), np.stack(lses), edges


def split_kv_attention(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, n_splits: int, *, scale: float | None = None
) -> NDArray[np.floating]:
    """Attention computed as Flash-Decoding does: per-chunk partial results, then one merge.

    The merge weighs chunk ``c``'s normalised output by ``exp(lse_c − lse)``, where ``lse`` is
    the log-sum-exp over all chunks: the share of the softmax's denominator that chunk holds.
    The result equals ``attention(q, k, v)`` up to rounding.

    Raises:
        ValueError: as `split_kv_partials`.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> from attention_math.serving import split_kv_attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.normal(size=(1, 8)), rng.normal(size=(100, 8)), rng.normal(size=(100, 4))
        >>> np.allclose(split_kv_attention(q, k, v, 7), attention(q, k, v))
        True
    """
    outs, lses, _ = split_kv_partials(q, k, v, n_splits, scale=scale)
    top = lses.max(axis=0)  # (..., L_q, 1): shift for the merge, as the online softmax does
    w = np.exp(lses - top)  # (n_splits, ..., L_q, 1): each chunk's share, unnormalised
    out: NDArray[np.floating] = (w * outs).sum(axis=0) / w.sum(axis=0)  # (..., L_q, d_v)
    return out


def paged_waste(
    lengths: ArrayLike, block_size: int, *, reserve: int | None = None
) -> dict[str, int]:
    """Cache slots (tokens) allocated against used, in blocks of ``block_size``.

    Each sequence gets ``ceil(length / block_size)`` blocks: it wastes the unused end of its
    last block only (PagedAttention's internal fragmentation). With ``reserve`` given, also the
    waste of a contiguous allocation that reserves ``reserve`` slots per sequence (the maximum
    length it may reach).

    Raises:
        ValueError: a negative length, a length above ``reserve``, or a ``block_size`` that is
            not a positive integer.

    Examples:
        >>> from attention_math.serving import paged_waste
        >>> paged_waste([5, 16, 17], 16, reserve=64)
        {'used': 38, 'allocated': 64, 'wasted': 26, 'reserved': 192, 'reserved_wasted': 154}
    """
    b = _positive("block_size", block_size)
    n = np.asarray(lengths)
    if n.ndim != 1 or not np.issubdtype(n.dtype, np.integer) or (n < 0).any():
        raise ValueError(f"lengths must be a list of non-negative integers, got {lengths!r}")
    allocated = int((-(-n // b) * b).sum())  # ceil(length / b) blocks of b slots each
    out = {"used": int(n.sum()), "allocated": allocated, "wasted": allocated - int(n.sum())}
    if reserve is not None:
        r = _positive("reserve", reserve)
        if (n > r).any():
            raise ValueError(f"a length exceeds reserve = {r}: {n[n > r].tolist()}")
        out["reserved"] = r * n.size
        out["reserved_wasted"] = r * n.size - int(n.sum())
    return out


def paged_attention(
    q: ArrayLike,
    k_pool: ArrayLike,
    v_pool: ArrayLike,
    block_table: ArrayLike,
    length: int,
    *,
    scale: float | None = None,
) -> NDArray[np.floating]:
    """One sequence's decode attention through a block table, as PagedAttention reads it.

    ``k_pool`` and ``v_pool`` are ``(n_blocks, block_size, d)``: every sequence's blocks in one
    pool. ``block_table[i]`` is the pool block holding the sequence's positions
    ``i·block_size … (i+1)·block_size − 1``; only the first ``length`` positions are real.

    Raises:
        ValueError: a block index outside the pool, a table too short for ``length``, or
            shapes that do not fit.

    Examples:
        >>> import numpy as np
        >>> from attention_math.numeric import attention
        >>> from attention_math.serving import paged_attention
        >>> rng = np.random.default_rng(1)
        >>> k, v = rng.normal(size=(10, 4)), rng.normal(size=(10, 3))  # 10 cached positions
        >>> pool_k, pool_v = np.zeros((5, 4, 4)), np.zeros((5, 4, 3))  # 5 blocks of 4
        >>> table = [3, 0, 4]  # positions 0-3 in block 3, 4-7 in block 0, 8-9 in block 4
        >>> for i, blk in enumerate(table):
        ...     pool_k[blk, : len(k[4 * i : 4 * i + 4])] = k[4 * i : 4 * i + 4]
        ...     pool_v[blk, : len(v[4 * i : 4 * i + 4])] = v[4 * i : 4 * i + 4]
        >>> q = rng.normal(size=(1, 4))
        >>> np.allclose(paged_attention(q, pool_k, pool_v, table, 10), attention(q, k, v))
        True
    """
    kp = as_float("k_pool", k_pool, min_ndim=3)
    vp = as_float("v_pool", v_pool, min_ndim=3)
    if kp.ndim != 3 or vp.ndim != 3 or kp.shape[:2] != vp.shape[:2]:
        raise ValueError(
            "k_pool and v_pool must be (n_blocks, block_size, d) with the same first two "
            f"sizes, got {kp.shape} and {vp.shape}"
        )
    n_blocks, bs = kp.shape[:2]
    table = np.asarray(block_table)
    n = _positive("length", length)
    if table.ndim != 1 or not np.issubdtype(table.dtype, np.integer):
        raise ValueError(f"block_table must be a list of block indices, got {block_table!r}")
    if table.size * bs < n:
        raise ValueError(f"block_table has {table.size} blocks of {bs}: too few for length = {n}")
    if ((table < 0) | (table >= n_blocks)).any():
        raise ValueError(f"block_table indices must be in 0 … {n_blocks - 1}, got {table.tolist()}")
    k = kp[table].reshape(-1, kp.shape[-1])[:n]  # (length, d_k): the blocks, in order
    v = vp[table].reshape(-1, vp.shape[-1])[:n]  # (length, d_v)
    from attention_math.numeric import attention  # the plain attention over the gathered rows

    return attention(q, k, v, scale=scale)
