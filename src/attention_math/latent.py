"""Multi-head latent attention (MLA), as DeepSeek-V2 and V3 compute it, one idea per function.

A decoding model caches, for every past token, what its attention will need again: in
multi-head attention a key and a value per head. MLA
([DeepSeek-AI, 2024](https://arxiv.org/abs/2405.04434), §2.1) caches one low-rank *latent*
``c_KV`` of width ``d_c`` per token instead, shared by all heads, from which each head's key
and value are linear images:

- the query, low-rank too: ``c_Q = RMSNorm(x W_DQ)``, ``q = c_Q W_UQ`` (`mla_query`; a plain
  ``q = x W_Q`` when ``q_lora_rank`` is ``None``);
- the latent: ``[c_KV, k_R] = x W_DKV``, ``c_KV ← RMSNorm(c_KV)`` (`kv_latent`);
- the keys and values of head ``i``: ``k_C = c_KV W_UK_i``, ``v = c_KV W_UV_i`` (`expand_latent`);
- the *decoupled* RoPE key ``k_R``, one per token, shared by all heads, and the query's own
  RoPE part (`decoupled_rope`); the score of head ``i`` is
  ``q_C · k_C + RoPE(q_R) · RoPE(k_R)``, scaled by `softmax_scale`.

Because ``k_C`` and ``v`` are linear in ``c_KV``, the up-projections can be *absorbed*
(`absorb`): ``q_C k_Cᵀ = (q_C W_UKᵀ) c_KVᵀ`` puts ``W_UK`` on the query side, and
``(a V) W_O = (a c_KV)(W_UV W_O)`` puts ``W_UV`` into the output, so attention runs straight on
the cached latents (`mla_attention` with ``absorbed=True``); `absorption_proof` proves both in
SymPy, `absorption_error` checks the two numeric forms agree. RoPE between the two factors
would spoil this (`rope_breaks_absorption`): that is why the position goes in a separate key.

`cache_entries` and `decode_work` count the cache of MHA, GQA, MQA and MLA per token and the
FLOPs a decode step does per byte of cache read, for the published configurations
`DEEPSEEK_V2` and `DEEPSEEK_V3`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_count
from attention_math._once import derived_once
from attention_math.block import rms_norm
from attention_math.crosscheck import CrossCheckError
from attention_math.numeric import attention
from attention_math.positional import rope

__all__ = [
    "DEEPSEEK_V2",
    "DEEPSEEK_V3",
    "AbsorbedWeights",
    "AbsorptionProof",
    "DecodeWork",
    "MLAConfig",
    "MLAWeights",
    "absorb",
    "absorption_error",
    "absorption_proof",
    "cache_bytes_per_token",
    "cache_entries",
    "decode_work",
    "decoupled_rope",
    "expand_latent",
    "intensity_formula",
    "kv_latent",
    "mla_attention",
    "mla_query",
    "random_weights",
    "rope_breaks_absorption",
    "softmax_scale",
    "yarn_mscale",
]

Floats = NDArray[np.floating]


@dataclass(frozen=True)
class MLAConfig:
    """The sizes of one MLA layer, named as in the models' ``config.json``.

    ``q_lora_rank`` is ``d_c'`` (``None``: the query is one plain projection),
    ``kv_lora_rank`` is ``d_c``, ``qk_nope_head_dim`` the per-head width of the key and
    query parts without position, ``qk_rope_head_dim`` the width ``d_R`` of the decoupled RoPE
    parts, ``v_head_dim`` the value width. ``rope_scaling`` is the ``rope_scaling`` dictionary
    (YaRN in the published models), which also changes the softmax scale (`softmax_scale`).
    ``rope_interleave``: RoPE pairs ``(x_2i, x_2i+1)``, as DeepSeek's weights are laid out.

    Examples:
        >>> from attention_math.latent import DEEPSEEK_V3
        >>> DEEPSEEK_V3.qk_head_dim, DEEPSEEK_V3.kv_lora_rank + DEEPSEEK_V3.qk_rope_head_dim
        (192, 576)

    See Also:
        - [`MLAWeights`][attention_math.latent.MLAWeights]: the weights of these sizes.
        - [`mla_attention`][attention_math.latent.mla_attention]: the layer.

    References:
        - [DeepSeek-AI, 2024](https://arxiv.org/abs/2405.04434), DeepSeek-V2, §2.1 and
          Appendix: the sizes.
    """

    hidden_size: int
    n_heads: int
    q_lora_rank: int | None
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    n_layers: int = 1
    rope_theta: float = 10000.0
    rope_scaling: Mapping[str, Any] | None = None
    max_position_embeddings: int | None = None
    eps: float = 1e-6
    rope_interleave: bool = True
    name: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        for field in (
            "hidden_size",
            "n_heads",
            "kv_lora_rank",
            "qk_nope_head_dim",
            "qk_rope_head_dim",
            "v_head_dim",
            "n_layers",
        ):
            check_count(field, getattr(self, field))
        if self.q_lora_rank is not None:
            check_count("q_lora_rank", self.q_lora_rank)
        if self.qk_rope_head_dim % 2:
            raise ValueError(
                f"qk_rope_head_dim = {self.qk_rope_head_dim} must be even: RoPE turns pairs"
            )

    @property
    def qk_head_dim(self) -> int:
        """The width of a query or key of one head: ``qk_nope_head_dim + qk_rope_head_dim``."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim


_V2_SOURCE = "https://huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json"
_V3_SOURCE = "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json"

DEEPSEEK_V2 = MLAConfig(
    hidden_size=5120,  # "hidden_size": 5120
    n_heads=128,  # "num_attention_heads": 128
    q_lora_rank=1536,  # "q_lora_rank": 1536
    kv_lora_rank=512,  # "kv_lora_rank": 512
    qk_nope_head_dim=128,  # "qk_nope_head_dim": 128
    qk_rope_head_dim=64,  # "qk_rope_head_dim": 64
    v_head_dim=128,  # "v_head_dim": 128
    n_layers=60,  # "num_hidden_layers": 60
    rope_theta=10000.0,  # "rope_theta": 10000
    rope_scaling={  # "rope_scaling": {...}
        "type": "yarn",
        "factor": 40,
        "original_max_position_embeddings": 4096,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 0.707,
        "mscale_all_dim": 0.707,
    },
    max_position_embeddings=163840,  # "max_position_embeddings": 163840
    eps=1e-6,  # "rms_norm_eps": 1e-06
    name="DeepSeek-V2",
    source=_V2_SOURCE,
)
"""DeepSeek-V2 (236B), its attention sizes as its ``config.json`` gives them."""

DEEPSEEK_V3 = MLAConfig(
    hidden_size=7168,  # "hidden_size": 7168
    n_heads=128,  # "num_attention_heads": 128
    q_lora_rank=1536,  # "q_lora_rank": 1536
    kv_lora_rank=512,  # "kv_lora_rank": 512
    qk_nope_head_dim=128,  # "qk_nope_head_dim": 128
    qk_rope_head_dim=64,  # "qk_rope_head_dim": 64
    v_head_dim=128,  # "v_head_dim": 128
    n_layers=61,  # "num_hidden_layers": 61
    rope_theta=10000.0,  # "rope_theta": 10000
    rope_scaling={  # "rope_scaling": {...}
        "type": "yarn",
        "factor": 40,
        "original_max_position_embeddings": 4096,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    },
    max_position_embeddings=163840,  # "max_position_embeddings": 163840
    eps=1e-6,  # "rms_norm_eps": 1e-06
    name="DeepSeek-V3",
    source=_V3_SOURCE,
)
"""DeepSeek-V3 (671B), its attention sizes as its ``config.json`` gives them."""


@dataclass(frozen=True)
class MLAWeights:
    """One MLA layer's weights, acting on rows (``x @ W``), fused as the checkpoints store them.

    ``w_kv_a`` is ``[W_DKV | W_KR]`` (``kv_a_proj_with_mqa``, ``(hidden, d_c + d_R)``);
    ``w_kv_b`` holds head ``i``'s ``[W_UK_i | W_UV_i]`` in its columns
    ``i·(d_nope + d_v) …`` (``kv_b_proj``, ``(d_c, h·(d_nope + d_v))``); the query's up
    projection ``w_q_b`` (``q_b_proj``, ``(d_c', h·(d_nope + d_R))``) or the plain ``w_q``
    (``(hidden, h·(d_nope + d_R))``) holds head ``i``'s ``[W_UQ_i | W_QR_i]``; ``w_q_a`` is
    ``W_DQ`` (``q_a_proj``). ``q_norm`` and ``kv_norm`` are the RMSNorm gains of the two
    latents. The biases are those of ``attention_bias=True``.

    See Also:
        - [`random_weights`][attention_math.latent.random_weights]: random ones, for trying.
        - [`absorb`][attention_math.latent.absorb]: the absorbed products of these.
        - [`hf.deepseek_v3.weights_of`][attention_math.hf.deepseek_v3.weights_of]: read from
          a Hugging Face module.

    References:
        - [DeepSeek-AI, 2024](https://arxiv.org/abs/2405.04434), DeepSeek-V2, eqs. (9)–(19).
    """

    w_kv_a: Floats
    kv_norm: Floats
    w_kv_b: Floats
    w_o: Floats
    w_q: Floats | None = None
    w_q_a: Floats | None = None
    q_norm: Floats | None = None
    w_q_b: Floats | None = None
    b_q_a: Floats | None = None
    b_kv_a: Floats | None = None
    b_o: Floats | None = None


def _shape(name: str, a: Floats | None, want: tuple[int, ...]) -> Floats:
    if a is None:
        raise ValueError(f"{name} is missing: this configuration needs one of shape {want}")
    if a.shape != want:
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    return a


def _checked_weights(w: MLAWeights, c: MLAConfig) -> MLAWeights:
    """``w`` with every array of the shape ``c`` asks for, or a ValueError naming the one not."""
    if not isinstance(w, MLAWeights):
        raise TypeError(f"weights must be an MLAWeights, got {type(w).__name__}")
    if not isinstance(c, MLAConfig):
        raise TypeError(f"config must be an MLAConfig, got {type(c).__name__}")
    d, h, r = c.hidden_size, c.n_heads, c.qk_rope_head_dim
    _shape("w_kv_a", w.w_kv_a, (d, c.kv_lora_rank + r))
    _shape("kv_norm", w.kv_norm, (c.kv_lora_rank,))
    _shape("w_kv_b", w.w_kv_b, (c.kv_lora_rank, h * (c.qk_nope_head_dim + c.v_head_dim)))
    _shape("w_o", w.w_o, (h * c.v_head_dim, d))
    if c.q_lora_rank is None:
        _shape("w_q", w.w_q, (d, h * c.qk_head_dim))
    else:
        _shape("w_q_a", w.w_q_a, (d, c.q_lora_rank))
        _shape("q_norm", w.q_norm, (c.q_lora_rank,))
        _shape("w_q_b", w.w_q_b, (c.q_lora_rank, h * c.qk_head_dim))
    if c.q_lora_rank is None and w.b_q_a is not None:
        raise ValueError("b_q_a is given but q_lora_rank is None: there is no q_a_proj")
    for name, b, n in (
        ("b_q_a", w.b_q_a, c.q_lora_rank),
        ("b_kv_a", w.b_kv_a, c.kv_lora_rank + r),
        ("b_o", w.b_o, d),
    ):
        if b is not None:
            _shape(name, b, (n if n is not None else -1,))
    return w


def _x(x: ArrayLike, c: MLAConfig) -> Floats:
    a = as_float("x", x, min_ndim=2)
    if a.ndim != 2 or a.shape[1] != c.hidden_size:
        raise ValueError(f"x must have shape (L, hidden_size = {c.hidden_size}), got {a.shape}")
    return a


def _bias(y: Floats, b: Floats | None) -> Floats:
    return y if b is None else y + b


def random_weights(config: MLAConfig, *, seed: int = 0, bias: bool = False) -> MLAWeights:
    """Random weights of the shapes ``config`` asks for (entries ``N(0, 1/fan_in)``, gains
    near 1), for examples and tests.

    Examples:
        >>> from attention_math.latent import MLAConfig, random_weights
        >>> c = MLAConfig(8, 2, 6, 4, 2, 2, 3)
        >>> random_weights(c).w_kv_b.shape  # d_c × h·(d_nope + d_v)
        (4, 10)
    """
    rng = np.random.default_rng(seed)
    d, h = config.hidden_size, config.n_heads

    def m(rows: int, cols: int) -> Floats:
        return rng.standard_normal((rows, cols)) / math.sqrt(rows)  # (rows, cols)

    def g(n: int) -> Floats:
        return 1.0 + 0.2 * rng.standard_normal(n)  # (n,)

    def b(n: int) -> Floats | None:
        return 0.1 * rng.standard_normal(n) if bias else None

    q_cols = h * config.qk_head_dim
    lora = config.q_lora_rank
    return MLAWeights(
        w_kv_a=m(d, config.kv_lora_rank + config.qk_rope_head_dim),
        kv_norm=g(config.kv_lora_rank),
        w_kv_b=m(config.kv_lora_rank, h * (config.qk_nope_head_dim + config.v_head_dim)),
        w_o=m(h * config.v_head_dim, d),
        w_q=m(d, q_cols) if lora is None else None,
        w_q_a=None if lora is None else m(d, lora),
        q_norm=None if lora is None else g(lora),
        w_q_b=None if lora is None else m(lora, q_cols),
        b_q_a=None if lora is None else b(lora),
        b_kv_a=b(config.kv_lora_rank + config.qk_rope_head_dim),
        b_o=b(d),
    )


def _query_latent(x: Floats, w: MLAWeights, c: MLAConfig) -> Floats:
    """``c_Q = RMSNorm(x W_DQ)`` ``(L, d_c')``, or ``x`` itself without a query latent."""
    if c.q_lora_rank is None:
        return x
    assert w.w_q_a is not None  # _checked_weights
    return rms_norm(_bias(x @ w.w_q_a, w.b_q_a), w.q_norm, eps=c.eps)  # (L, d_c')


def _query_up(w: MLAWeights, c: MLAConfig) -> Floats:
    """The matrix from ``c_Q`` (or ``x``) to all heads' queries."""
    up = w.w_q if c.q_lora_rank is None else w.w_q_b
    assert up is not None  # _checked_weights
    return up


def mla_query(x: ArrayLike, weights: MLAWeights, config: MLAConfig) -> Floats:
    """The queries of every head, before RoPE: ``q = RMSNorm(x W_DQ) W_UQ`` (the low-rank
    path), or ``q = x W_Q`` when ``config.q_lora_rank`` is ``None``.

    Args:
        x: the tokens, ``(L, hidden_size)``.
        weights: the layer's weights.
        config: its sizes.

    Returns:
        ``(h, L, d_nope + d_R)``: per head, the part without position then the RoPE part.

    Examples:
        >>> from attention_math.latent import MLAConfig, mla_query, random_weights
        >>> c = MLAConfig(8, 2, 6, 4, 2, 2, 3)
        >>> mla_query(np.ones((5, 8)), random_weights(c), c).shape
        (2, 5, 4)
    """
    w, c = _checked_weights(weights, config), config
    a = _x(x, c)
    q = _query_latent(a, w, c) @ _query_up(w, c)  # (L, h·(d_nope + d_R))
    return q.reshape(a.shape[0], c.n_heads, c.qk_head_dim).transpose(1, 0, 2)  # (h, L, d_qk)


def kv_latent(x: ArrayLike, weights: MLAWeights, config: MLAConfig) -> tuple[Floats, Floats]:
    """What MLA caches per token: the normalised latent ``c_KV`` and the RoPE key ``k_R``.

    ``[c_KV, k_R] = x W_DKV`` split after ``d_c`` columns; ``c_KV`` goes through RMSNorm,
    ``k_R`` (not yet rotated) is one key for all heads.

    Returns:
        ``(c_KV, k_R)`` of shapes ``(L, d_c)`` and ``(L, d_R)``.

    Examples:
        >>> from attention_math.latent import MLAConfig, kv_latent, random_weights
        >>> c = MLAConfig(8, 2, 6, 4, 2, 2, 3)
        >>> [a.shape for a in kv_latent(np.ones((5, 8)), random_weights(c), c)]
        [(5, 4), (5, 2)]
    """
    w, c = _checked_weights(weights, config), config
    a = _x(x, c)
    kv = _bias(a @ w.w_kv_a, w.b_kv_a)  # (L, d_c + d_R)
    c_kv = rms_norm(kv[:, : c.kv_lora_rank], w.kv_norm, eps=c.eps)  # (L, d_c)
    return c_kv, kv[:, c.kv_lora_rank :]  # (L, d_c), (L, d_R)


def _up_kv(w: MLAWeights, c: MLAConfig) -> tuple[Floats, Floats]:
    """``W_UK`` ``(h, d_c, d_nope)`` and ``W_UV`` ``(h, d_c, d_v)``, split per head."""
    per = w.w_kv_b.reshape(c.kv_lora_rank, c.n_heads, c.qk_nope_head_dim + c.v_head_dim)
    per = per.transpose(1, 0, 2)  # (h, d_c, d_nope + d_v)
    return per[..., : c.qk_nope_head_dim], per[..., c.qk_nope_head_dim :]


def expand_latent(c_kv: ArrayLike, weights: MLAWeights, config: MLAConfig) -> tuple[Floats, Floats]:
    """Each head's key (without position) and value from the latent:
    ``k_C = c_KV W_UK_i``, ``v = c_KV W_UV_i``.

    Args:
        c_kv: latents, ``(L, d_c)``.

    Returns:
        ``(k_C, v)`` of shapes ``(h, L, d_nope)`` and ``(h, L, d_v)``.

    Examples:
        >>> from attention_math.latent import MLAConfig, expand_latent, random_weights
        >>> c = MLAConfig(8, 2, 6, 4, 2, 2, 3)
        >>> [a.shape for a in expand_latent(np.ones((5, 4)), random_weights(c), c)]
        [(2, 5, 2), (2, 5, 3)]
    """
    w, c = _checked_weights(weights, config), config
    lat = as_float("c_kv", c_kv, min_ndim=2)
    if lat.ndim != 2 or lat.shape[1] != c.kv_lora_rank:
        raise ValueError(f"c_kv must have shape (L, d_c = {c.kv_lora_rank}), got {lat.shape}")
    w_uk, w_uv = _up_kv(w, c)
    return lat @ w_uk, lat @ w_uv  # (h, L, d_nope), (h, L, d_v)


def _rope_scaling(config: MLAConfig) -> Mapping[str, Any] | None:
    """``config.rope_scaling``, ``None`` for plain RoPE; refuses what is not YaRN."""
    s = config.rope_scaling
    if s is None:
        return None
    kind = s.get("rope_type", s.get("type", "default"))
    if kind == "default":
        return None
    if kind != "yarn":
        raise ValueError(
            f"rope_scaling of type {kind!r}: MLA here takes plain RoPE or 'yarn' (the published "
            "DeepSeek configurations), whose softmax scale it knows"
        )
    return s


def decoupled_rope(
    q_rope: ArrayLike, k_rope: ArrayLike, config: MLAConfig, positions: ArrayLike | None = None
) -> tuple[Floats, Floats]:
    """RoPE on the queries' position part and on the one shared key ``k_R``.

    ``positional.rope`` with the configuration's base, YaRN scaling and pair layout
    (``rope_interleave``: pairs ``(x_2i, x_2i+1)``). Hugging Face's
    ``apply_rotary_pos_emb_interleave`` writes the rotated pairs back de-interleaved (all
    first coordinates, then all second ones); it does so to the queries and the key alike, and
    the same permutation of both leaves every dot product, so every score, unchanged.

    Args:
        q_rope: ``(h, L, d_R)``.
        k_rope: ``(L, d_R)``: one key per token for every head.
        positions: ``(L,)``, default ``0 … L − 1``.

    Returns:
        The rotated ``(q_R, k_R)``, same shapes.

    Examples:
        >>> from attention_math.latent import MLAConfig, decoupled_rope
        >>> c = MLAConfig(8, 2, 6, 4, 2, 2, 3)
        >>> q, k = decoupled_rope(np.ones((2, 3, 2)), np.ones((3, 2)), c)
        >>> s = q[0] @ k.T  # (3, 3): the scores depend on the distance only
        >>> bool(np.isclose(s[1, 0], s[2, 1])), bool(np.allclose(np.diag(s), 2.0))
        (True, True)
    """
    s = _rope_scaling(config)
    q = as_float("q_rope", q_rope, min_ndim=3)
    k = as_float("k_rope", k_rope, min_ndim=2)
    r = config.qk_rope_head_dim
    if q.ndim != 3 or q.shape[-1] != r or k.shape != (q.shape[1], r):
        raise ValueError(
            f"q_rope must be (h, L, d_R = {r}) and k_rope (L, d_R); got {q.shape} and {k.shape}"
        )
    kw: dict[str, Any] = {
        "base": config.rope_theta,
        "interleaved": bool(config.rope_interleave),
        "scaling": s,
        "max_position_embeddings": config.max_position_embeddings,
    }
    return rope(q, positions, **kw), rope(k, positions, **kw)  # (h, L, d_R), (L, d_R)


def yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    """YaRN's attention factor ``0.1 · mscale · ln(factor) + 1`` (``1`` for ``factor ≤ 1``),
    DeepSeek's ``yarn_get_mscale``.

    Examples:
        >>> from attention_math.latent import yarn_mscale
        >>> round(yarn_mscale(40, 1.0), 6), yarn_mscale(1, 1.0)
        (1.368888, 1.0)
    """
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def softmax_scale(config: MLAConfig) -> float:
    """The factor on MLA's scores: ``1/√(d_nope + d_R)``, times ``mscale²`` under YaRN.

    DeepSeek's code multiplies the scale by ``yarn_mscale(factor, mscale_all_dim)²`` when
    ``rope_scaling`` sets ``mscale_all_dim`` (the published V2 and V3 configurations do): the
    scores of a context stretched ``factor`` times are sharpened, as YaRN prescribes, in the
    scale rather than in RoPE's cos and sin (where ``mscale / mscale_all_dim = 1``).

    Raises:
        ValueError: a ``rope_scaling`` other than YaRN.

    Examples:
        >>> from attention_math.latent import DEEPSEEK_V3, softmax_scale
        >>> round(softmax_scale(DEEPSEEK_V3) * 192 ** 0.5, 6)  # mscale² = (0.1 ln 40 + 1)²
        1.873854
    """
    base = 1.0 / math.sqrt(config.qk_head_dim)
    s = _rope_scaling(config)
    if s is None or not s.get("mscale_all_dim"):
        return base
    m = yarn_mscale(float(s["factor"]), float(s["mscale_all_dim"]))
    return base * m * m


def mla_attention(
    x: ArrayLike,
    weights: MLAWeights,
    config: MLAConfig,
    *,
    absorbed: bool = False,
    positions: ArrayLike | None = None,
) -> Floats:
    """Multi-head latent attention of a causal sequence, as DeepSeek-V2/V3 compute it.

    The plain form expands every cached latent into each head's key and value
    (`expand_latent`) and runs attention; ``absorbed=True`` folds ``W_UK`` into the query and
    ``W_UV`` into the output projection (`absorb`) and attends straight over the latents
    ``[c_KV, k_R]``, as a single-key-head (MQA-like) attention of width ``d_c + d_R``.

    Args:
        x: the tokens, ``(L, hidden_size)``.
        weights: the layer's weights, `MLAWeights`.
        config: its sizes, `MLAConfig`.
        absorbed: compute on the latents with the absorbed weights.
        positions: ``(L,)``, default ``0 … L − 1``.

    Returns:
        ``(L, hidden_size)``.

    Raises:
        ValueError: shapes that do not fit ``config`` (named), or a ``rope_scaling`` that is
            not YaRN.

    Examples:
        >>> import numpy as np
        >>> from attention_math.latent import MLAConfig, mla_attention, random_weights
        >>> c = MLAConfig(hidden_size=8, n_heads=2, q_lora_rank=6, kv_lora_rank=4,
        ...               qk_nope_head_dim=2, qk_rope_head_dim=2, v_head_dim=3)
        >>> w, x = random_weights(c), np.random.default_rng(0).standard_normal((5, 8))
        >>> plain, absorbed = mla_attention(x, w, c), mla_attention(x, w, c, absorbed=True)
        >>> plain.shape, bool(np.allclose(plain, absorbed, rtol=0, atol=1e-12))
        ((5, 8), True)

    See Also:
        - [`absorb`][attention_math.latent.absorb]: the absorbed weights.
        - [`absorption_proof`][attention_math.latent.absorption_proof]: the absorption, in SymPy.
        - [`cache_bytes_per_token`][attention_math.latent.cache_bytes_per_token]: what MLA saves.
        - [`multi_head_attention`][attention_math.multihead.multi_head_attention]: MHA, GQA, MQA.

    References:
        - [DeepSeek-AI, 2024](https://arxiv.org/abs/2405.04434), DeepSeek-V2, §2.1: MLA.
        - [DeepSeek-AI, 2024](https://arxiv.org/abs/2412.19437), DeepSeek-V3, §2.1.1.
    """
    w, c = _checked_weights(weights, config), config
    if not isinstance(absorbed, bool):
        raise TypeError(f"absorbed must be True or False, got {absorbed!r}")
    a = _x(x, c)
    q = mla_query(a, w, c)  # (h, L, d_nope + d_R)
    c_kv, k_r = kv_latent(a, w, c)  # (L, d_c), (L, d_R)
    q_r, k_r = decoupled_rope(q[..., c.qk_nope_head_dim :], k_r, c, positions)
    scale = softmax_scale(c)
    h, length = c.n_heads, a.shape[0]
    if absorbed:
        ab = absorb(w, c)
        q_nope = _query_latent(a, w, c) @ ab.w_q_uk  # (h, L, d_c): W_UK on the query side
        q_lat = np.concatenate([q_nope, q_r], -1)  # (h, L, d_c + d_R)
        k_lat = np.concatenate([c_kv, k_r], -1)  # (L, d_c + d_R): the cache, one key for all heads
        o_lat = attention(q_lat, k_lat, c_kv, scale=scale, is_causal=True)  # (h, L, d_c)
        out = np.einsum("hlc,hcd->ld", o_lat, ab.w_uv_o)  # (L, hidden)
        return _bias(out, w.b_o)
    k_c, v = expand_latent(c_kv, w, c)  # (h, L, d_nope), (h, L, d_v)
    k = np.concatenate([k_c, np.broadcast_to(k_r, (h, length, c.qk_rope_head_dim))], -1)
    qh = np.concatenate([q[..., : c.qk_nope_head_dim], q_r], -1)  # (h, L, d_nope + d_R)
    o = attention(qh, k, v, scale=scale, is_causal=True)  # (h, L, d_v)
    out = o.transpose(1, 0, 2).reshape(length, h * c.v_head_dim) @ w.w_o  # (L, hidden)
    return _bias(out, w.b_o)


@dataclass(frozen=True)
class AbsorbedWeights:
    """The absorbed matrices of every head.

    ``w_q_uk``: ``W_UQ_i W_UK_iᵀ`` ``(h, d_c' or hidden, d_c)``, the query's up-projection
    with ``W_UK`` folded in (a query then meets the latent ``c_KV`` directly); ``w_uv_o``:
    ``W_UV_i W_O_i`` ``(h, d_c, hidden)``, the value up-projection folded into the output.
    """

    w_q_uk: Floats
    w_uv_o: Floats


def absorb(weights: MLAWeights, config: MLAConfig) -> AbsorbedWeights:
    """Fold ``W_UK`` into the query side and ``W_UV`` into the output projection.

    Returns:
        `AbsorbedWeights`: per head ``W_UQ_i W_UK_iᵀ`` and ``W_UV_i W_O_i``.

    Examples:
        >>> from attention_math.latent import MLAConfig, absorb, random_weights
        >>> c = MLAConfig(8, 2, 6, 4, 2, 2, 3)
        >>> a = absorb(random_weights(c), c)
        >>> a.w_q_uk.shape, a.w_uv_o.shape  # (h, d_c', d_c), (h, d_c, hidden)
        ((2, 6, 4), (2, 4, 8))
    """
    w, c = _checked_weights(weights, config), config
    w_uk, w_uv = _up_kv(w, c)  # (h, d_c, d_nope), (h, d_c, d_v)
    up = _query_up(w, c)  # (d_c' or hidden, h·d_qk)
    w_uq = up.reshape(up.shape[0], c.n_heads, c.qk_head_dim)[..., : c.qk_nope_head_dim]
    w_uq = w_uq.transpose(1, 0, 2)  # (h, d_c', d_nope)
    w_o = w.w_o.reshape(c.n_heads, c.v_head_dim, c.hidden_size)  # (h, d_v, hidden)
    return AbsorbedWeights(
        w_q_uk=w_uq @ w_uk.transpose(0, 2, 1),  # (h, d_c', d_c)
        w_uv_o=w_uv @ w_o,  # (h, d_c, hidden)
    )


def absorption_error(
    x: ArrayLike, weights: MLAWeights, config: MLAConfig, *, bound: float = 1e-12
) -> float:
    """The largest difference of the absorbed and the plain form, relative to the largest
    output; raises if it exceeds ``bound``.

    Raises:
        CrossCheckError: the two forms disagree by more than ``bound``.

    Examples:
        >>> from attention_math.latent import MLAConfig, absorption_error, random_weights
        >>> c = MLAConfig(8, 2, None, 4, 2, 2, 3)
        >>> absorption_error(np.ones((3, 8)), random_weights(c), c) < 1e-14
        True
    """
    plain = mla_attention(x, weights, config)  # (L, hidden)
    absorbed = mla_attention(x, weights, config, absorbed=True)  # (L, hidden)
    err = float(np.abs(plain - absorbed).max() / max(np.abs(plain).max(), np.finfo(float).tiny))
    if not err <= bound:
        raise CrossCheckError(f"absorbed MLA differs from the plain form by {err:.3g} > {bound:g}")
    return err


# ---- the absorption, exactly ---------------------------------------------------------------


@dataclass(frozen=True)
class AbsorptionProof:
    """The matrices of `absorption_proof`, each pair proven equal entry by entry.

    ``scores``/``scores_absorbed``: one head's scores ``q_C k_Cᵀ + q_R k_Rᵀ`` computed from
    the expanded keys and from the latents with ``W_UQ W_UKᵀ``; ``output``/``output_absorbed``:
    ``Σ_i A_i (c_KV W_UV_i) W_O_i`` and ``Σ_i (A_i c_KV)(W_UV_i W_O_i)`` for weights ``A_i`` of
    symbols (so for whatever the softmax gives); ``w_q_uk`` and ``w_uv_o`` the absorbed
    matrices of head 0.
    """

    scores: sp.Matrix
    scores_absorbed: sp.Matrix
    output: sp.Matrix
    output_absorbed: sp.Matrix
    w_q_uk: sp.Matrix
    w_uv_o: sp.Matrix


def _sym(name: str, rows: int, cols: int, head: int | None = None) -> sp.Matrix:
    """A matrix of symbols ``name_ij`` (``name^head_ij`` for one head's weights)."""
    top = "" if head is None else f"^{head}"
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}{top}_{i}{j}"))


@derived_once
def absorption_proof(
    *, length: int = 2, d_q: int = 2, d_c: int = 2, d_nope: int = 2, d_rope: int = 2,
    d_v: int = 1, hidden: int = 2, n_heads: int = 2,
) -> AbsorptionProof:  # fmt: skip
    """Prove the weight absorption for symbolic matrices of the given (small) sizes.

    Every weight and latent entry is its own symbol. Head ``i``'s scores from the expanded
    keys, ``(c_Q W_UQ_i)(c_KV W_UK_i)ᵀ + q_R k_Rᵀ``, equal those from the latents,
    ``c_Q (W_UQ_i W_UK_iᵀ) c_KVᵀ + q_R k_Rᵀ``; and for any weights ``A_i`` (symbols), the
    output ``Σ_i A_i (c_KV W_UV_i) W_O_i`` equals ``Σ_i (A_i c_KV)(W_UV_i W_O_i)``.

    Raises:
        CrossCheckError: a difference that does not expand to zero (it cannot; the check runs).

    Examples:
        >>> from attention_math.latent import absorption_proof
        >>> p = absorption_proof(length=2, d_c=2, d_nope=1, d_rope=2, d_v=1, hidden=1, n_heads=1)
        >>> p.w_q_uk.shape, p.scores == p.scores_absorbed
        ((2, 2), False)
        >>> (p.scores - p.scores_absorbed).expand() == sp.zeros(2, 2)
        True
    """
    for name, n in (
        ("length", length), ("d_q", d_q), ("d_c", d_c), ("d_nope", d_nope),
        ("d_rope", d_rope), ("d_v", d_v), ("hidden", hidden), ("n_heads", n_heads),
    ):  # fmt: skip
        check_count(name, n)
    c_q, c_kv = _sym("c", length, d_q), _sym("z", length, d_c)  # c^Q, c^KV
    q_r, k_r = _sym("r", length, d_rope), _sym("s", length, d_rope)  # q^R, k^R, rotated
    rope_part = q_r * k_r.T  # (L, L): the same in both forms
    out = sp.zeros(length, hidden)
    out_abs = sp.zeros(length, hidden)
    first: tuple[sp.Matrix, ...] = ()
    for i in range(n_heads):
        w_uq, w_uk = _sym("u", d_q, d_nope, i), _sym("k", d_c, d_nope, i)  # W^UQ_i, W^UK_i
        w_uv, w_o = _sym("v", d_c, d_v, i), _sym("o", d_v, hidden, i)  # W^UV_i, W^O_i
        a = _sym("a", length, length, i)  # any attention weights
        s = (c_q * w_uq) * (c_kv * w_uk).T + rope_part  # (L, L): expanded keys
        w_q_uk, w_uv_o = w_uq * w_uk.T, w_uv * w_o  # (d_q, d_c), (d_c, hidden)
        s_abs = (c_q * w_q_uk) * c_kv.T + rope_part  # (L, L): on the latents
        out += a * (c_kv * w_uv) * w_o
        out_abs += (a * c_kv) * w_uv_o
        if i == 0:
            first = (s, s_abs, w_q_uk, w_uv_o)
        if (s - s_abs).expand() != sp.zeros(length, length):
            raise CrossCheckError(f"head {i}: the absorbed scores differ")
    if (out - out_abs).expand() != sp.zeros(length, hidden):
        raise CrossCheckError("the absorbed output differs")
    s, s_abs, w_q_uk, w_uv_o = first
    return AbsorptionProof(s, s_abs, out, out_abs, w_q_uk, w_uv_o)


def _rotation(angle: sp.Expr) -> sp.Matrix:
    return sp.Matrix([[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]])


@derived_once
def rope_breaks_absorption(d_q: int = 2, d_c: int = 2) -> tuple[sp.Matrix, sp.Matrix]:
    """What absorption would need if RoPE turned the whole key: a matrix that moves with the
    distance.

    With ``k_s = RoPE_s(c_KV,s W_UK)`` and ``q_t = RoPE_t(c_Q,t W_UQ)`` (one pair, width 2),
    ``q_t k_sᵀ = c_Q,t (W_UQ R(θ(s − t)) W_UKᵀ) c_KV,sᵀ``: the middle matrix depends on
    ``s − t``, so no one matrix can be folded into the query ahead of time. Returns that
    matrix ``M(Δ)`` as a function of the angle ``Δ = θ(s − t)``, and its derivative in ``Δ``
    (not zero: it moves).

    Raises:
        CrossCheckError: if the derivative were zero (the claim checked, not assumed).

    Examples:
        >>> from attention_math.latent import rope_breaks_absorption
        >>> m, dm = rope_breaks_absorption()
        >>> m.shape, sp.expand(dm.subs("Delta", 0)[0, 0]) != 0
        ((2, 2), True)
    """
    check_count("d_q", d_q)
    check_count("d_c", d_c)
    delta = sp.Symbol("Delta", real=True)
    w_uq, w_uk = _sym("u", d_q, 2), _sym("k", d_c, 2)  # W^UQ, W^UK
    m = w_uq * _rotation(delta) * w_uk.T  # (d_q, d_c)
    dm = m.diff(delta)  # (d_q, d_c)
    if all(sp.expand(e.subs(delta, 0)) == 0 for e in dm):  # at Δ = 0: W_UQ [[0, −1], [1, 0]] W_UKᵀ
        raise CrossCheckError("W_UQ R(Δ) W_UKᵀ should depend on Δ")
    # and the scores computed with RoPE at positions t, s are that middle matrix at θ(t − s)
    t, s, theta = sp.symbols("t s theta", real=True)
    c_q, c_kv = _sym("c", 1, d_q), _sym("z", 1, d_c)  # c^Q, c^KV
    q = c_q * w_uq * _rotation(theta * t).T  # (1, 2): a row turned by θt
    k = c_kv * w_uk * _rotation(theta * s).T  # (1, 2): a row turned by θs
    lhs = (q * k.T)[0]
    rhs = (c_q * m.subs(delta, theta * (s - t)) * c_kv.T)[0]
    if sp.simplify(sp.expand_trig(lhs - rhs)) != 0:
        raise CrossCheckError("RoPE scores are not c_Q M(θ(s − t)) c_KVᵀ")
    return m, dm


# ---- the cache and the decode step --------------------------------------------------------

_KINDS = ("mha", "gqa", "mqa", "mla", "mla-expanded")


def _kind(kind: object) -> str:
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)}; got {kind!r}")
    return str(kind)


def cache_entries(kind: str, config: MLAConfig, *, n_kv_heads: int = 8) -> int:
    """Cached numbers per token and layer, for ``config``'s head sizes.

    DeepSeek-V2's Table 1 with ``d_h = qk_nope_head_dim``: MHA ``2 n_h d_h``, GQA
    ``2 n_g d_h`` (``n_g = n_kv_heads`` groups), MQA ``2 d_h``, MLA ``d_c + d_R`` (the latent
    and the shared RoPE key; ``"mla-expanded"`` caches the same).

    Raises:
        ValueError: an unknown ``kind``, or ``n_kv_heads`` not a positive integer.

    Examples:
        >>> from attention_math.latent import DEEPSEEK_V3, cache_entries
        >>> [cache_entries(k, DEEPSEEK_V3) for k in ("mha", "gqa", "mqa", "mla")]
        [32768, 2048, 256, 576]
    """
    k = _kind(kind)
    g = check_count("n_kv_heads", n_kv_heads)
    d_h = config.qk_nope_head_dim
    return {
        "mha": 2 * config.n_heads * d_h,
        "gqa": 2 * g * d_h,
        "mqa": 2 * d_h,
        "mla": config.kv_lora_rank + config.qk_rope_head_dim,
        "mla-expanded": config.kv_lora_rank + config.qk_rope_head_dim,
    }[k]


def cache_bytes_per_token(
    kind: str, config: MLAConfig, *, n_bytes: int = 2, n_kv_heads: int = 8
) -> int:
    """Bytes of cache per token over all of ``config``'s layers: `cache_entries` times the
    layers times ``n_bytes`` (2 for bfloat16).

    Raises:
        ValueError: an unknown ``kind``, or a count that is not a positive integer.

    Examples:
        >>> from attention_math.latent import DEEPSEEK_V3, cache_bytes_per_token
        >>> cache_bytes_per_token("mla", DEEPSEEK_V3)  # 576 numbers × 61 layers × 2 bytes
        70272

    See Also:
        - [`cache_entries`][attention_math.latent.cache_entries]: per layer.
        - [`serving.kv_bytes_per_token`][attention_math.serving.kv_bytes_per_token]: the same
          count for the models of the serving page.

    References:
        - [DeepSeek-AI, 2024](https://arxiv.org/abs/2405.04434), DeepSeek-V2, Table 1.
    """
    nb = check_count("n_bytes", n_bytes)
    return cache_entries(kind, config, n_kv_heads=n_kv_heads) * config.n_layers * nb


@dataclass(frozen=True)
class DecodeWork:
    """One decode step of one layer over ``context`` cached tokens: the attention's FLOPs (the
    parts that grow with the context) and the bytes of cache read."""

    flops: int
    n_bytes: int

    @property
    def intensity(self) -> float:
        """FLOPs per byte."""
        return self.flops / self.n_bytes


def decode_work(
    kind: str, config: MLAConfig, context: int, *, n_bytes: int = 2, n_kv_heads: int = 8
) -> DecodeWork:
    """FLOPs and cache bytes of one new token attending to ``context`` cached ones, one layer.

    Every head does a score (``2·d`` FLOPs for width ``d``) and a weighted sum (``2·d_v``)
    per cached token. MHA, GQA, MQA: ``d = d_v = d_h``, so ``4 n_h d_h`` per token, whatever
    the cache. Absorbed MLA (``"mla"``): the query meets ``[c_KV, k_R]`` (width ``d_c + d_R``)
    and sums the latents (width ``d_c``): ``n_h (4 d_c + 2 d_R)``. ``"mla-expanded"`` first
    turns every cached latent into each head's key and value again
    (``2 d_c n_h (d_nope + d_v)``), then attends as MHA does with width ``d_nope + d_R``.
    The bytes are `cache_entries` per cached token.

    Raises:
        ValueError: an unknown ``kind``, or a count that is not a positive integer.

    Examples:
        >>> from attention_math.latent import DEEPSEEK_V3, decode_work
        >>> [round(decode_work(k, DEEPSEEK_V3, 4096).intensity, 2) for k in ("mha", "mla")]
        [1.0, 241.78]

    See Also:
        - [`intensity_formula`][attention_math.latent.intensity_formula]: the same, in SymPy.
        - [`hardware.bound`][attention_math.hardware.bound]: which limit a kernel meets.

    References:
        - [DeepSeek-AI, 2024](https://arxiv.org/abs/2405.04434), DeepSeek-V2, §2.1.
        - [Williams, Waterman and Patterson, 2009](https://doi.org/10.1145/1498765.1498785),
          the roofline.
    """
    k = _kind(kind)
    t = check_count("context", context)
    nb = check_count("n_bytes", n_bytes)
    h, d_h, d_c, d_r = (
        config.n_heads,
        config.qk_nope_head_dim,
        config.kv_lora_rank,
        config.qk_rope_head_dim,
    )
    per_token = {
        "mha": 4 * h * d_h,
        "gqa": 4 * h * d_h,
        "mqa": 4 * h * d_h,
        "mla": h * (2 * (d_c + d_r) + 2 * d_c),
        "mla-expanded": 2 * d_c * h * (d_h + config.v_head_dim)
        + h * (2 * (d_h + d_r) + 2 * config.v_head_dim),
    }[k]
    entries = cache_entries(k, config, n_kv_heads=n_kv_heads)
    return DecodeWork(flops=per_token * t, n_bytes=entries * t * nb)


@derived_once
def intensity_formula(kind: str) -> sp.Expr:
    """FLOPs per byte of one decode step, `decode_work`'s count, in symbols ``n_h``, ``d_h``,
    ``n_g``, ``d_c``, ``d_R``, ``d_v``, ``b`` (bytes per number): the context cancels.

    Raises:
        ValueError: an unknown ``kind``.

    Examples:
        >>> from attention_math.latent import intensity_formula
        >>> intensity_formula("gqa"), intensity_formula("mla")
        (2*n_h/(b*n_g), 2*n_h*(d_R + 2*d_c)/(b*(d_R + d_c)))
    """
    k = _kind(kind)
    n_h, d_h, n_g, d_c, d_r, d_v, b, t = sp.symbols("n_h d_h n_g d_c d_R d_v b t", positive=True)
    flops = {
        "mha": 4 * n_h * d_h,
        "gqa": 4 * n_h * d_h,
        "mqa": 4 * n_h * d_h,
        "mla": n_h * (2 * (d_c + d_r) + 2 * d_c),
        "mla-expanded": 2 * d_c * n_h * (d_h + d_v) + n_h * (2 * (d_h + d_r) + 2 * d_v),
    }[k] * t
    entries = {
        "mha": 2 * n_h * d_h,
        "gqa": 2 * n_g * d_h,
        "mqa": 2 * d_h,
        "mla": d_c + d_r,
        "mla-expanded": d_c + d_r,
    }[k]
    return sp.factor(sp.simplify(flops / (entries * t * b)))
