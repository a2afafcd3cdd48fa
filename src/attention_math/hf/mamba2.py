"""``transformers``' ``Mamba2Mixer`` read into NumPy: the whole mixer, its SSD computed three ways.

The mixer, for ``x`` of shape ``(L, hidden)`` (``I = expand · hidden`` channels in ``H`` heads
of ``P = head_dim``, ``G`` groups of ``B`` and ``C``, state size ``N``):

1. ``in_proj`` splits into the gate ``z`` (``I``), ``xBC`` (``I + 2GN``) and ``dt`` (``H``);
2. ``xBC`` passes a causal depthwise ``conv1d`` (kernel ``K``, each channel sees itself and
   the ``K − 1`` tokens before it) and SiLU, then splits into ``x`` (``I``), ``B``, ``C``
   (``G·N`` each);
3. ``Δ = softplus(dt + dt_bias)``, clamped to ``time_step_limit``; ``A = −exp(A_log)``; head
   ``h`` decays by ``a_t = exp(Δ_t A_h)`` and reads the values ``Δ_t x_t`` and the ``B``, ``C``
   of its group ``h // (H/G)``;
4. the SSD, `attention_math.ssd`: ``"recurrence"``, ``"attention"`` (``(𝐋 ∘ C Bᵀ) X``) or
   ``"chunked"`` (with the module's ``chunk_size``); then the skip ``+ D_h x_t``;
5. the gated RMSNorm: ``y · SiLU(z)`` first, *then* RMSNorm over each of ``G`` groups of
   ``I/G`` channels (not over all ``I``), times its weight;
6. ``out_proj``.

The module, on a CPU without the ``mamba_ssm`` kernels, runs its PyTorch path, which computes
steps 3–5 in float32 whatever the module's dtype (``hidden_states.float()`` in
``mamba2_chunk_scan``, ``.to(torch.float32)`` in ``MambaRMSNormGated``); this reader computes
every step in float64.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float
from attention_math.block import rms_norm
from attention_math.hf._read import array
from attention_math.ssd import SSDMethod, state_space_dual

__all__ = ["Mamba2Weights", "causal_conv1d", "layer", "mixer", "silu", "softplus"]

Floats = NDArray[np.float64]

# torch.nn.functional.softplus returns x itself above this (its default threshold)
_SOFTPLUS_THRESHOLD = 20.0


def silu(z: Floats) -> Floats:
    """``SiLU(z) = z σ(z)``.

    Examples:
        >>> silu(np.array([0.0, 1.0])).round(4)
        array([0.    , 0.7311])
    """
    with np.errstate(over="ignore"):  # exp(−z) = inf for z ≪ 0: the value is then −0, right
        out: Floats = z / (1 + np.exp(-z))
    return out


def softplus(z: Floats) -> Floats:
    """``log(1 + eᶻ)``, and ``z`` itself above 20 (as ``torch.nn.functional.softplus``).

    Examples:
        >>> bool(softplus(np.array([0.0]))[0] == np.log(2))
        True
    """
    out: Floats = np.where(z > _SOFTPLUS_THRESHOLD, z, np.logaddexp(0.0, z))
    return out


def causal_conv1d(u: Floats, weight: Floats, bias: Floats | None) -> Floats:
    """Depthwise causal convolution: channel ``d`` at ``t`` is ``Σ_k w[d, k] u[t−K+1+k, d]``
    (+ bias), tokens before the first taken as zero.

    Args:
        u: ``(L, D)``.
        weight: ``(D, K)``.
        bias: ``(D,)`` or None.

    Examples:
        >>> u = np.array([[1.0], [2.0], [3.0]])
        >>> causal_conv1d(u, np.array([[1.0, 10.0]]), None).ravel()  # 10 u_t + u_{t−1}
        array([10., 21., 32.])
    """
    length, _ = u.shape
    k = weight.shape[1]
    padded = np.concatenate([np.zeros((k - 1, u.shape[1])), u])  # (L + K − 1, D)
    out = np.zeros_like(u)  # (L, D)
    for i in range(k):
        out += weight[:, i] * padded[i : i + length]  # (L, D)
    return out if bias is None else out + bias


class Mamba2Weights:
    """A ``Mamba2Mixer``'s configuration and weights, as float64 NumPy arrays."""

    def __init__(self, module: Any) -> None:
        self.num_heads: int = int(module.num_heads)  # H
        self.head_dim: int = int(module.head_dim)  # P
        self.n_groups: int = int(module.n_groups)  # G
        self.state_size: int = int(module.ssm_state_size)  # N
        self.intermediate: int = int(module.intermediate_size)  # I = H·P
        self.chunk_size: int = int(module.chunk_size)
        self.activation: str = str(module.activation)
        limit = module.time_step_limit  # Δ is clamped to it (default (0, ∞))
        self.dt_min, self.dt_max = (float(v) for v in limit)
        self.w_in = array(module.in_proj.weight).T  # (hidden, I + conv_dim + H)
        self.b_in = _bias(module.in_proj)
        self.conv_w = array(module.conv1d.weight)[:, 0, :]  # (conv_dim, K)
        self.conv_b = _bias(module.conv1d)
        self.dt_bias = array(module.dt_bias)  # (H,)
        self.a_log = array(module.A_log)  # (H,)
        self.d_skip = array(module.D)  # (H,)
        self.norm_w = array(module.norm.weight)  # (I,)
        self.norm_eps = float(module.norm.variance_epsilon)
        self.norm_group = int(module.norm.group_size)  # I / G
        self.w_out = array(module.out_proj.weight).T  # (I, hidden)
        self.b_out = _bias(module.out_proj)
        if self.activation not in ("silu", "swish"):
            raise ValueError(f"Mamba2Mixer with hidden_act {self.activation!r}: only SiLU is read")
        if self.num_heads % self.n_groups or self.intermediate != self.num_heads * self.head_dim:
            raise ValueError(
                f"num_heads {self.num_heads} must be a multiple of n_groups {self.n_groups} and "
                f"intermediate_size {self.intermediate} = num_heads × head_dim {self.head_dim}"
            )


def _bias(linear: Any) -> Floats | None:
    return None if getattr(linear, "bias", None) is None else array(linear.bias)


def mixer(
    w: Mamba2Weights, x: ArrayLike, *, method: SSDMethod = "chunked", chunk_size: int | None = None
) -> Floats:
    """The mixer's output for ``x`` of shape ``(L, hidden)``, steps 1–6 of the module docstring.

    Raises:
        ValueError: ``x`` is not ``(L, hidden)``.
    """
    xa = as_float("x", x, min_ndim=2).astype(np.float64)
    if xa.ndim != 2 or xa.shape[1] != w.w_in.shape[0]:
        raise ValueError(f"x must have shape (L, {w.w_in.shape[0]}), got {xa.shape}")
    length = xa.shape[0]
    h, p, g, n, i = w.num_heads, w.head_dim, w.n_groups, w.state_size, w.intermediate
    proj = xa @ w.w_in + (0.0 if w.b_in is None else w.b_in)  # (L, I + I + 2GN + H)
    z, xbc, dt = np.split(proj, [i, 2 * i + 2 * g * n], axis=-1)  # (L, I) (L, I+2GN) (L, H)
    xbc = silu(causal_conv1d(xbc, w.conv_w, w.conv_b))  # (L, I + 2GN)
    xs, b, c = np.split(xbc, [i, i + g * n], axis=-1)  # (L, I) (L, GN) (L, GN)
    delta = np.clip(softplus(dt + w.dt_bias), w.dt_min, w.dt_max)  # (L, H): Δ
    a_cont = -np.exp(w.a_log)  # (H,): A
    decay = np.exp(delta * a_cont).T  # (H, L): a_t = exp(Δ_t A_h)
    values = xs.reshape(length, h, p).transpose(1, 0, 2)  # (H, L, P)
    group = np.arange(h) // (h // g)  # (H,): the group of each head
    b_h = b.reshape(length, g, n).transpose(1, 0, 2)[group]  # (H, L, N)
    c_h = c.reshape(length, g, n).transpose(1, 0, 2)[group]  # (H, L, N)
    y = state_space_dual(
        decay,
        b_h,
        c_h,
        delta.T[..., None] * values,  # (H, L, P): Δ_t x_t
        method=method,
        chunk_size=w.chunk_size if chunk_size is None else chunk_size,
    )  # (H, L, P)
    y = y + w.d_skip[:, None, None] * values  # (H, L, P): the D skip
    y = y.transpose(1, 0, 2).reshape(length, i)  # (L, I)
    gated = (y * silu(z)).reshape(length, i // w.norm_group, w.norm_group)  # (L, G, I/G)
    normed = rms_norm(gated, eps=w.norm_eps).reshape(length, i) * w.norm_w  # (L, I)
    out: Floats = normed @ w.w_out + (0.0 if w.b_out is None else w.b_out)  # (L, hidden)
    return out


def layer(
    module: Any, *, method: SSDMethod = "chunked", chunk_size: int | None = None
) -> Callable[[ArrayLike], Floats]:
    """A ``Mamba2Mixer`` as a NumPy function of ``x`` (``(L, hidden)``, float64).

    Args:
        module: a ``transformers`` ``Mamba2Mixer`` (weights read now).
        method: how the SSD is computed: ``"recurrence"`` (the scan), ``"attention"`` (the
            ``L × L`` masked matrix) or ``"chunked"`` (blocks, the module's algorithm).
        chunk_size: the block size of ``"chunked"``; the module's ``chunk_size`` if None.

    Returns:
        ``layer(x)``: the mixer's output, ``(L, hidden)``.

    Raises:
        ValueError: an activation other than SiLU, heads not divisible into groups, or an
            unknown ``method``.

    Examples:
        >>> from types import SimpleNamespace as NS
        >>> rng = np.random.default_rng(0)
        >>> lin = lambda i, o: NS(weight=rng.standard_normal((o, i)), bias=None)
        >>> m = NS(num_heads=2, head_dim=2, n_groups=1, ssm_state_size=3, intermediate_size=4,
        ...        chunk_size=2, activation="silu", time_step_limit=(0.0, float("inf")),
        ...        in_proj=lin(5, 4 + 4 + 6 + 2), out_proj=lin(4, 5),
        ...        conv1d=NS(weight=rng.standard_normal((10, 1, 4)), bias=None),
        ...        dt_bias=np.zeros(2), A_log=np.zeros(2), D=np.ones(2),
        ...        norm=NS(weight=np.ones(4), variance_epsilon=1e-6, group_size=4))
        >>> x = rng.standard_normal((5, 5))
        >>> ys = [layer(m, method=k)(x) for k in ("recurrence", "attention", "chunked")]
        >>> bool(np.allclose(ys[0], ys[1]) and np.allclose(ys[0], ys[2]))
        True
    """
    if method not in ("recurrence", "attention", "chunked"):
        raise ValueError(f'method must be "recurrence", "attention" or "chunked", got {method!r}')
    weights = Mamba2Weights(module)

    def forward(x: ArrayLike) -> Floats:
        return mixer(weights, x, method=method, chunk_size=chunk_size)

    return forward
