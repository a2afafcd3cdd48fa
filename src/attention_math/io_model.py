"""FlashAttention's IO model: memory traffic between HBM and SRAM, counted by running the loops.

A GPU keeps its tensors in HBM (large, slow) and computes from SRAM (on chip, ``M`` numbers,
fast). [Dao et al., 2022](https://arxiv.org/abs/2205.14135) count the numbers moved between
the two: the standard implementation writes the ``L × L`` scores and weights to HBM and reads
them back, ``Θ(L d + L²)`` accesses; FlashAttention (their Algorithm 1) keeps each tile in SRAM
and moves ``Θ(L² d² / M)``. Here both algorithms run in NumPy on a model of that memory: every
block they load from or store to "HBM" is counted, and the output is the attention itself.

Counting conventions: one access is one number read from or written to HBM; FLOPs are those
of the two matrix products (``2 L² d`` each) unless stated otherwise. The backward pass has four
products if ``P`` is stored (``dV = Pᵀ dO``, ``dP = dO Vᵀ``, ``dQ = dS K``, ``dK = dSᵀ Q``) and a
fifth, ``S = Q Kᵀ`` again, if it is recomputed from the saved log-sum-exp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attention_math._lazy import np

if TYPE_CHECKING:  # NumPy's types only: the module imports without NumPy (the reader's browser)
    from numpy.typing import ArrayLike, NDArray

    from attention_math.hardware import GPU


__all__ = [
    "IOCount",
    "backward_bytes",
    "backward_matmul_flops",
    "flash2_accesses",
    "flash2_blocks",
    "flash2_forward_counted",
    "flash_accesses",
    "flash_blocks",
    "flash_forward_counted",
    "recompute_against_read",
    "standard_accesses",
    "standard_forward_counted",
    "tile_sram",
]


@dataclass
class IOCount:
    """Numbers read from and written to HBM."""

    reads: int = 0
    writes: int = 0

    @property
    def total(self) -> int:
        """All accesses."""
        return self.reads + self.writes


def _positive(name: str, x: object) -> int:
    # no NumPy here: the exercises built on these counts also run in the reader's browser
    if isinstance(x, bool) or not hasattr(x, "__index__") or int(x) < 1:
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    return int(x)


def standard_accesses(L: int, d: int) -> int:
    """HBM accesses of the standard implementation (FlashAttention's Algorithm 0), one head:
    read ``Q, K``, write ``S``; read ``S``, write ``P``; read ``P, V``, write ``O``.

    Raises:
        ValueError: ``L`` or ``d`` is not a positive integer.

    Examples:
        >>> from attention_math.io_model import standard_accesses
        >>> standard_accesses(1024, 64)  # 4 L d + 4 L²
        4456448
    """
    L, d = _positive("L", L), _positive("d", d)
    return (2 * L * d + L * L) + (L * L + L * L) + (L * L + L * d + L * d)


def flash_blocks(d: int, M: int) -> tuple[int, int]:
    """Algorithm 1's block sizes ``(B_r, B_c)``: ``B_c = ⌈M / 4d⌉``, ``B_r = min(B_c, d)``.

    The key and value blocks take half the SRAM (``2 B_c d ≈ M / 2``); the cap ``B_r ≤ d``
    bounds the score tile, ``B_r B_c ≤ d · M / 4d = M / 4``. The query and output blocks add
    ``2 B_r d ≤ 2 d²``, so the whole fits (`tile_sram` ``≤ M``) while ``2 d²`` stays below
    about ``M / 4``: the paper's sizes are those of its asymptotic analysis (Dao et al., 2022,
    Algorithm 1 and the proof of Theorem 2).

    Raises:
        ValueError: ``d`` or ``M`` is not a positive integer.

    Examples:
        >>> from attention_math.io_model import flash_blocks, tile_sram
        >>> flash_blocks(64, 98304)  # 192 KiB of 16-bit numbers
        (64, 384)
        >>> tile_sram(64, 384, 64) <= 98304
        True
    """
    d, M = _positive("d", d), _positive("M", M)
    b_c = math.ceil(M / (4 * d))
    return min(b_c, d), b_c


def tile_sram(b_r: int, b_c: int, d: int) -> int:
    """Numbers one step of a tiled forward holds in SRAM: the blocks ``Q_i`` and ``O_i``
    (``B_r × d`` each), ``K_j`` and ``V_j`` (``B_c × d`` each), the score tile ``S_ij``
    (``B_r × B_c``, its weights ``P_ij`` written over it) and the running ``m_i``, ``λ_i``
    (``B_r`` each). Algorithm 1 and FlashAttention-2 with the tile transposed hold the same
    blocks and score tile; only ``m_i, λ_i`` follow the number of query rows.

    Raises:
        ValueError: a size that is not a positive integer.

    Examples:
        >>> from attention_math.io_model import tile_sram
        >>> tile_sram(64, 384, 64)  # Q, O: 8192; K, V: 49152; S: 24576; m, λ: 128
        82048
        >>> tile_sram(384, 384, 64) > 98304  # a 384 × 384 score tile alone overfills 192 KiB
        True
    """
    b_r, b_c, d = _positive("B_r", b_r), _positive("B_c", b_c), _positive("d", d)
    return 2 * b_r * d + 2 * b_c * d + b_r * b_c + 2 * b_r


def flash_accesses(L: int, d: int, M: int) -> int:
    """HBM accesses of FlashAttention's Algorithm 1, one head: initialise ``O, λ, m``; for each
    of the ``T_c = ⌈L / B_c⌉`` key blocks read ``K_j, V_j`` once, and for every query block read
    ``Q_i, O_i, λ_i, m_i`` and write ``O_i, λ_i, m_i`` back.

    Raises:
        ValueError: a size that is not a positive integer.

    Examples:
        >>> from attention_math.io_model import flash_accesses
        >>> flash_accesses(1024, 64, 98304)
        800768
    """
    L = _positive("L", L)
    _, b_c = flash_blocks(d, M)
    t_c = math.ceil(L / b_c)
    init = L * d + 2 * L  # O = 0, λ = 0, m = −∞ written once
    kv = 2 * L * d  # every K_j, V_j read once
    inner = t_c * L * (3 * d + 4)  # per key block: all Q_i, O_i, λ_i, m_i in, O_i, λ_i, m_i out
    return init + kv + inner


def _one_head(
    q: ArrayLike, k: ArrayLike, v: ArrayLike
) -> tuple[NDArray[np.floating], NDArray[np.floating], NDArray[np.floating]]:
    """``q, k, v`` checked to be one head of self-attention with ``d_k = d_v``, each ``(L, d)``."""
    from attention_math._checks import check_qkv  # NumPy: imported on use

    q, k, v, batch = check_qkv(q, k, v)
    if batch or q.ndim != 2 or not (q.shape[0] == k.shape[0] and q.shape[1] == v.shape[1]):
        raise ValueError(
            "one head of self-attention with d_k = d_v: q, k, v must be (L, d), got "
            f"{q.shape}, {k.shape}, {v.shape}"
        )
    return q, k, v


def flash2_blocks(d: int, M: int) -> tuple[int, int]:
    """FlashAttention-2's block sizes ``(B_r, B_c)`` in this model: Algorithm 1's tile
    transposed, ``B_r = ⌈M / 4d⌉`` query rows and ``B_c = min(B_r, d)`` key rows.

    The loops are swapped, so the outer block is now the query block: the larger it is, the
    fewer passes over ``K`` and ``V``. The cap moves to the inner block and bounds the score
    tile as before; `tile_sram` differs from Algorithm 1's only by the running ``m_i, λ_i``.
    Real kernels tune their tiles (Dao, 2023, §3.3: blocks of {64, 128} × {64, 128}, limited
    by registers as well as SRAM).

    Raises:
        ValueError: ``d`` or ``M`` is not a positive integer.

    Examples:
        >>> from attention_math.io_model import flash2_blocks, flash_blocks
        >>> flash2_blocks(64, 98304), flash_blocks(64, 98304)
        ((384, 64), (64, 384))
    """
    b_r, b_c = flash_blocks(d, M)
    return b_c, b_r


def flash2_accesses(L: int, d: int, M: int) -> int:
    """HBM accesses of FlashAttention-2's forward, one head: for each of the
    ``T_r = ⌈L / B_r⌉`` query blocks read ``Q_i`` once and every ``K_j, V_j``, then write
    ``O_i`` and its log-sum-exp once ([Dao, 2023](https://arxiv.org/abs/2307.08691),
    Algorithm 1).

    Examples:
        >>> from attention_math.io_model import flash2_accesses, flash_accesses
        >>> flash2_accesses(1024, 64, 98304), flash_accesses(1024, 64, 98304)
        (525312, 800768)
    """
    L = _positive("L", L)
    b_r, _ = flash2_blocks(d, M)
    t_r = math.ceil(L / b_r)
    return L * d + t_r * 2 * L * d + L * d + L  # Q once, K and V per query block, O and lse


def flash2_forward_counted(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, M: int, *, scale: float | None = None
) -> tuple[NDArray[np.floating], IOCount]:
    """FlashAttention-2's forward on one head (``d_k = d_v = d``), counting each HBM access.

    The loops of Algorithm 1 swapped: query blocks outside (one per thread block on a GPU,
    so they run in parallel), key blocks inside. A query block's running maximum ``m``,
    denominator ``λ`` and *unnormalised* output stay in SRAM for its whole row of tiles; it is
    divided by ``λ`` once, at the end, and written once, with the log-sum-exp the backward
    needs.

    Raises:
        ValueError: inputs that are not one head of equal widths, or a bad ``M``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.io_model import flash2_accesses, flash2_forward_counted
        >>> from attention_math.numeric import attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.normal(size=(3, 50, 8))
        >>> o, io = flash2_forward_counted(q, k, v, M=128)
        >>> np.allclose(o, attention(q, k, v)), io.total == flash2_accesses(50, 8, 128)
        (True, True)
    """
    q, k, v = _one_head(q, k, v)
    L, d = q.shape
    b_r, b_c = flash2_blocks(d, M)
    s_ = (1 / math.sqrt(d)) if scale is None else scale
    io = IOCount()
    o = np.empty((L, d))  # (L, d) in HBM, written once per row
    lse = np.empty((L, 1))  # (L, 1): log-sum-exp, for the backward
    for i0 in range(0, L, b_r):
        q_i = q[i0 : i0 + b_r]  # (B_r, d), loaded once
        io.reads += q_i.size
        m_i = np.full((len(q_i), 1), -np.inf)  # (B_r, 1), in SRAM
        lam_i = np.zeros((len(q_i), 1))  # (B_r, 1), in SRAM
        acc = np.zeros((len(q_i), d))  # (B_r, d): unnormalised output, in SRAM
        for j0 in range(0, L, b_c):
            k_j, v_j = k[j0 : j0 + b_c], v[j0 : j0 + b_c]  # (B_c, d) each
            io.reads += k_j.size + v_j.size
            s_ij = q_i @ k_j.T * s_  # (B_r, B_c)
            m_new = np.maximum(m_i, s_ij.max(axis=1, keepdims=True))  # (B_r, 1)
            p_ij = np.exp(s_ij - m_new)  # (B_r, B_c)
            a = np.exp(m_i - m_new)  # (B_r, 1): rescales what came before
            lam_i = a * lam_i + p_ij.sum(axis=1, keepdims=True)  # (B_r, 1)
            acc = a * acc + p_ij @ v_j  # (B_r, d), not yet divided
            m_i = m_new
        o[i0 : i0 + b_r] = acc / lam_i  # (B_r, d): one division, one write
        lse[i0 : i0 + b_r] = m_i + np.log(lam_i)  # (B_r, 1)
        io.writes += acc.size + lam_i.size
    return o, io


def standard_forward_counted(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, *, scale: float | None = None
) -> tuple[NDArray[np.floating], IOCount]:
    """Algorithm 0 on one head, counting each HBM access: the scores and the weights are
    written out in full and read back.

    Raises:
        ValueError: inputs that are not one head (2-D) or do not fit together.

    Examples:
        >>> import numpy as np
        >>> from attention_math.io_model import standard_accesses, standard_forward_counted
        >>> q = k = v = np.eye(4)
        >>> o, io = standard_forward_counted(q, k, v)
        >>> io.total == standard_accesses(4, 4)
        True
    """
    from attention_math._checks import check_qkv  # NumPy: imported on use

    q, k, v, batch = check_qkv(q, k, v)
    if batch or q.ndim != 2:
        raise ValueError(f"one head: q, k, v must be 2-D, got q {q.shape}")
    io = IOCount()
    s_ = (1 / math.sqrt(q.shape[-1])) if scale is None else scale
    io.reads += q.size + k.size
    s = q @ k.T * s_  # (L_q, L_k): written to HBM
    io.writes += s.size
    io.reads += s.size
    p = np.exp(s - s.max(axis=-1, keepdims=True))  # (L_q, L_k)
    p /= p.sum(axis=-1, keepdims=True)
    io.writes += p.size
    io.reads += p.size + v.size
    o = p @ v  # (L_q, d_v)
    io.writes += o.size
    return o, io


def flash_forward_counted(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, M: int, *, scale: float | None = None
) -> tuple[NDArray[np.floating], IOCount]:
    """FlashAttention's Algorithm 1 on one head (``d_k = d_v = d``), counting each HBM access.

    Key blocks of ``B_c`` rows outside, query blocks of ``B_r`` rows inside; the running
    maximum ``m``, denominator ``λ`` and normalised output ``O`` of each query row live in
    "HBM" between key blocks and are updated in "SRAM", as in the paper.

    Raises:
        ValueError: inputs that are not one head of equal widths, or a bad ``M``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.io_model import flash_accesses, flash_forward_counted
        >>> from attention_math.numeric import attention
        >>> rng = np.random.default_rng(0)
        >>> q, k, v = rng.normal(size=(3, 50, 8))
        >>> o, io = flash_forward_counted(q, k, v, M=128)
        >>> np.allclose(o, attention(q, k, v)), io.total == flash_accesses(50, 8, 128)
        (True, True)
    """
    q, k, v = _one_head(q, k, v)
    L, d = q.shape
    b_r, b_c = flash_blocks(d, M)
    s_ = (1 / math.sqrt(d)) if scale is None else scale
    io = IOCount()
    o = np.zeros((L, d))  # (L, d) in HBM
    lam = np.zeros((L, 1))  # (L, 1): running denominators
    m = np.full((L, 1), -np.inf)  # (L, 1): running maxima
    io.writes += o.size + lam.size + m.size
    for j0 in range(0, L, b_c):
        k_j, v_j = k[j0 : j0 + b_c], v[j0 : j0 + b_c]  # (B_c, d) each, loaded once
        io.reads += k_j.size + v_j.size
        for i0 in range(0, L, b_r):
            rows = slice(i0, i0 + b_r)
            q_i, o_i, lam_i, m_i = q[rows], o[rows], lam[rows], m[rows]  # loaded to SRAM
            io.reads += q_i.size + o_i.size + lam_i.size + m_i.size
            s_ij = q_i @ k_j.T * s_  # (B_r, B_c), never leaves SRAM
            m_t = s_ij.max(axis=1, keepdims=True)  # (B_r, 1): this tile's maximum
            p_t = np.exp(s_ij - m_t)  # (B_r, B_c)
            lam_t = p_t.sum(axis=1, keepdims=True)  # (B_r, 1)
            m_new = np.maximum(m_i, m_t)  # (B_r, 1)
            a, b = np.exp(m_i - m_new), np.exp(m_t - m_new)  # rescale old and new
            lam_new = a * lam_i + b * lam_t  # (B_r, 1)
            o[rows] = (lam_i * a * o_i + b * (p_t @ v_j)) / lam_new  # (B_r, d), normalised
            lam[rows], m[rows] = lam_new, m_new
            io.writes += o_i.size + lam_i.size + m_i.size
    return o, io


def backward_matmul_flops(L: int, d: int, *, recompute: bool) -> int:
    """FLOPs of the backward's matrix products, one head of self-attention: four products of
    ``2 L² d`` with ``P`` stored, five when ``S = Q Kᵀ`` is recomputed.

    Raises:
        ValueError: ``L`` or ``d`` is not a positive integer.

    Examples:
        >>> from attention_math.io_model import backward_matmul_flops
        >>> backward_matmul_flops(2, 1, recompute=True) / (2 * 2 * 2**2 * 1)  # / forward
        2.5
    """
    L, d = _positive("L", L), _positive("d", d)
    return (5 if recompute else 4) * 2 * L * L * d


def backward_bytes(L: int, n_heads: int, *, recompute: bool, n_bytes: int = 2) -> int:
    """Bytes one layer keeps from the forward for the backward, besides ``Q, K, V, O``: the
    weights ``P`` (``h L²`` numbers of ``n_bytes``) or, when recomputing, one float32
    log-sum-exp per query row and head (``4 h L`` bytes).

    Raises:
        ValueError: a size that is not a positive integer.

    Examples:
        >>> from attention_math.io_model import backward_bytes
        >>> backward_bytes(4096, 32, recompute=False), backward_bytes(4096, 32, recompute=True)
        (1073741824, 524288)
    """
    L, h = _positive("L", L), _positive("n_heads", n_heads)
    nb = _positive("n_bytes", n_bytes)
    return 4 * h * L if recompute else h * L * L * nb


def recompute_against_read(
    d: int, gpu: GPU | None = None, *, n_bytes: int = 2, overlap: bool = False
) -> float:
    """How many times faster the backward gets a weight ``P_ij`` by recomputing it than by
    reading it back from HBM: the time to read ``n_bytes`` over the time to recompute
    ``P_ij = exp(α s_ij − lse_i)``, one score of ``S = QKᵀ`` (``2d`` FLOPs on the tensor cores),
    one fused multiply-add (2 FLOPs on the FP32 cores) and one exponential (on the
    special-function units), priced by `hardware.kernel_time`: the units taking turns, or
    all at once with ``overlap=True``.

    Raises:
        ValueError: ``d`` or ``n_bytes`` is not a positive integer, or the GPU lacks a rate.

    Examples:
        >>> from attention_math.io_model import recompute_against_read
        >>> round(recompute_against_read(64), 2), round(recompute_against_read(64, overlap=True), 2)
        (1.06, 2.39)
    """
    from attention_math import hardware

    g = hardware.A100_SXM_80GB if gpu is None else gpu
    d, nb = _positive("d", d), _positive("n_bytes", n_bytes)
    read = hardware.kernel_time(0, nb, g)
    redo = hardware.kernel_time(2 * d, 0, g, elementwise_flops=2, n_exp=1, overlap=overlap)
    return read / redo
