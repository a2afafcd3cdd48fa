"""Learned sink logits and sigmoid output gates: how gpt-oss and Qwen3-Next let a head do
nothing.

A softmax row sums to one, so a head with nothing to read must still put its weight somewhere.
Two 2025 designs give it a way out:

* **a learned sink logit** (gpt-oss): each head ``h`` has one trained number ``s_h``; the
  softmax runs over ``[scores, s_h]`` and the sink's column is dropped. The weights then sum
  to ``σ(LSE(scores) − s_h) < 1``, the rest went to a key whose value is zero
  (`sink_softmax`, `sink_attention`, `sink_gate`). With ``s_h = 0`` it is softmax₁.
* **a sigmoid output gate** (Qwen3-Next, Qiu et al. 2025): each head's output is multiplied,
  coordinate by coordinate, by ``σ(x W_θ)``, a gate computed from the query token's hidden
  state (`sigmoid_gate`). A head closes its gate instead of parking weight on a token.

Qwen3-Next's attention also normalises each head's queries and keys with a zero-centred
RMSNorm whose gain is ``1 + w`` (`zero_centred_rms_norm`, built on
[`block.rms_norm`][attention_math.block.rms_norm]) and rotates only the first quarter of each
head (``partial_rotary_factor`` of [`positional.rope`][attention_math.positional.rope]).

The exact side, in SymPy, is `attention_math.derivations.gates`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attention_math._checks import as_float, check_mask, check_qkv, check_scale
from attention_math.block import rms_norm

__all__ = [
    "sigmoid",
    "sigmoid_gate",
    "sink_attention",
    "sink_gate",
    "sink_softmax",
    "zero_centred_rms_norm",
]

Floats = NDArray[np.floating]


def sigmoid(x: ArrayLike) -> Floats:
    """The logistic function ``σ(x) = 1 / (1 + e^{−x})``, without overflow for large ``|x|``.

    Examples:
        >>> from attention_math.gates import sigmoid
        >>> sigmoid([0.0, 1000.0, -1000.0])
        array([0.5, 1. , 0. ])
    """
    return _sigmoid(as_float("x", x, min_ndim=0))


def _sigmoid(a: Floats) -> Floats:
    with np.errstate(over="ignore"):
        out: Floats = np.exp(-np.logaddexp(0.0, -a)).astype(a.dtype, copy=False)  # 1/(1 + e^{−a})
    return out


def _scores(name: str, scores: ArrayLike) -> Floats:
    """Scores may hold ``-inf`` (a masked key), never NaN or ``+inf``."""
    a = np.asarray(scores)
    if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64) if np.issubdtype(a.dtype, np.integer) else a
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"{name} must have a last axis of keys, got shape {a.shape}")
    if np.isnan(a).any() or np.isposinf(a).any():
        raise ValueError(f"{name} contains NaN or +inf; -inf (a masked key) is the only infinity")
    return a


def _sinks(sink: ArrayLike, batch: tuple[int, ...], what: str) -> Floats:
    s = np.asarray(sink)
    if not np.issubdtype(s.dtype, np.number) or np.iscomplexobj(s):
        raise TypeError(f"sink must hold real numbers, got dtype {s.dtype}")
    if np.isnan(s).any() or np.isposinf(s).any():
        raise ValueError("sink contains NaN or +inf; -inf (no sink) is the only infinity")
    try:
        fits = np.broadcast_shapes(s.shape, batch) == batch
    except ValueError:
        fits = False
    if not fits:  # one logit per row, or one broadcast over rows: never more rows than z has
        raise ValueError(f"sink of shape {s.shape} does not broadcast to the {what} {batch}")
    return s


def sink_softmax(scores: ArrayLike, sink: ArrayLike) -> Floats:
    """Softmax over ``[scores, sink]`` along the last axis, the sink's column dropped.

    ``p_j = e^{z_j} / (Σ_k e^{z_k} + e^{s})``: the weights sum to less than one; the missing
    mass ``e^{s} / (Σ_k e^{z_k} + e^{s})`` went to a key whose value is zero. ``sink = 0`` is
    softmax₁ (Miller 2023); ``sink → −∞`` is the ordinary softmax. gpt-oss learns one ``sink``
    per head. Shifted by ``max(max_k z_k, s)``, so nothing overflows; ``-inf`` scores (masked
    keys) get weight 0, and a fully masked row gives all its weight to the sink.

    Args:
        scores: ``(..., n)``, real; ``-inf`` marks a masked key.
        sink: the sink logit, broadcastable to ``scores.shape[:-1]`` (e.g. ``(h, 1)`` for
            scores ``(h, L_q, L_k)``: one logit per head).

    Returns:
        The weights, the shape of ``scores``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.gates import sink_softmax
        >>> sink_softmax([0.0, np.log(2)], 0.0)   # softmax₁: 1/4, 2/4, the sink takes 1/4
        array([0.25, 0.5 ])
        >>> sink_softmax([0.0, 0.0], -np.inf)     # no sink: the ordinary softmax
        array([0.5, 0.5])
        >>> sink_softmax([0.0, np.nan], 0.0)
        Traceback (most recent call last):
        ...
        ValueError: scores contains NaN or +inf; -inf (a masked key) is the only infinity

    See Also:
        - [`sink_gate`][attention_math.gates.sink_gate]: the total weight left to the keys,
          ``σ(LSE(z) − s)``.
        - [`sink_attention`][attention_math.gates.sink_attention]: attention with it.
        - [`softmax`][attention_math.numeric.softmax]: the ordinary softmax (``s = −∞``).

    References:
        - [OpenAI, 2025](https://arxiv.org/abs/2508.10925), gpt-oss-120b & gpt-oss-20b model
          card: "a learned bias in the denominator of the softmax".
        - [Miller, 2023](https://www.evanmiller.org/attention-is-off-by-one.html),
          "Attention Is Off By One": softmax₁.
        - [Xiao et al., 2023](https://arxiv.org/abs/2309.17453) (StreamingLLM): attention sinks.
    """
    z = _scores("scores", scores)
    s = np.asarray(_sinks(sink, z.shape[:-1], "scores' rows"), dtype=z.dtype)
    s = np.broadcast_to(s, z.shape[:-1])[..., None]  # (..., 1): the sink's column
    m = np.maximum(np.max(z, axis=-1, keepdims=True), s)  # (..., 1): finite unless s = −∞ too
    m = np.where(np.isneginf(m), 0.0, m)  # every score and the sink −∞: nothing to shift
    e = np.exp(z - m)  # (..., n)
    total = e.sum(axis=-1, keepdims=True) + np.exp(s - m)  # (..., 1)
    with np.errstate(invalid="ignore"):
        out: Floats = np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
    return out.astype(z.dtype, copy=False)


def sink_gate(scores: ArrayLike, sink: ArrayLike) -> Floats:
    """The weight the keys keep beside a sink: ``Σ_j p_j = σ(LSE(z) − s)``, one per row.

    Exactly, ``sink_softmax(z, s) = σ(LSE(z) − s) · softmax(z)``: a learned sink logit is an
    ordinary softmax head whose output is scaled by a gate in ``(0, 1)``, computed from the
    scores (how strongly the query matches any key) rather than from the hidden state as
    Qwen3-Next's `sigmoid_gate` is. ``1 − sink_gate`` is the weight on the sink.

    Args:
        scores: ``(..., n)``, ``-inf`` for a masked key.
        sink: broadcastable to ``scores.shape[:-1]``.

    Returns:
        ``(...)``: the gate of each row.

    Examples:
        >>> import numpy as np
        >>> from attention_math.gates import sink_gate
        >>> float(sink_gate([0.0, np.log(3)], 0.0).round(12))  # σ(log 4): 4/5 to the keys
        0.8

    See Also:
        - [`sink_softmax`][attention_math.gates.sink_softmax]: the weights themselves.
        - [`sigmoid_gate`][attention_math.gates.sigmoid_gate]: the gate Qwen3-Next computes from
          the hidden state instead.

    References:
        - [OpenAI, 2025](https://arxiv.org/abs/2508.10925), the gpt-oss model card.
        - [Qiu et al., 2025](https://arxiv.org/abs/2505.06708), "Gated Attention for Large
          Language Models".
    """
    z = _scores("scores", scores)
    s = np.asarray(_sinks(sink, z.shape[:-1], "scores' rows"), dtype=z.dtype)
    s = np.broadcast_to(s, z.shape[:-1])  # (...)
    m = np.max(z, axis=-1)  # (...)
    safe = np.where(np.isneginf(m), 0.0, m)  # (...): a fully masked row shifts by 0
    with np.errstate(divide="ignore"):
        lse = safe + np.log(np.exp(z - safe[..., None]).sum(axis=-1))  # (...): −inf if all masked
    with np.errstate(invalid="ignore"):  # −inf − (−inf): a masked row and no sink
        gap = np.where(np.isneginf(lse), -np.inf, lse - s)  # (...): all masked gives σ(−∞) = 0
    return _sigmoid(np.asarray(gap))


def sink_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    sinks: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
) -> Floats:
    """Multi-head attention with one learned sink logit per head, grouped KV heads allowed.

    ``out_h = sink_softmax(q_h k_gᵀ · scale + mask, s_h) v_g`` with ``g = h // (H / H_kv)``:
    query head ``h`` reads key/value head ``g``, as
    [`multi_head_attention`][attention_math.multihead.multi_head_attention] does with
    ``n_kv_heads``. What gpt-oss computes on each of its layers (full and sliding-window:
    the mask differs, the sink does not).

    Args:
        q: ``(..., H, L_q, d_k)``.
        k: ``(..., H_kv, L_k, d_k)``, ``H_kv`` dividing ``H``.
        v: ``(..., H_kv, L_k, d_v)``.
        sinks: ``(H,)``, one logit per query head.
        mask: boolean (True = may attend) or additive float, broadcastable to
            ``(..., H, L_q, L_k)`` (e.g. ``causal_mask(L)`` or ``sliding_window_mask``).
        scale: factor on the scores, default ``1/√d_k``.

    Returns:
        ``(..., H, L_q, d_v)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.gates import sink_attention
        >>> q = k = np.zeros((1, 2, 1)); v = np.array([[[2.0], [4.0]]])   # one head, 2 keys
        >>> sink_attention(q, k, v, [0.0])   # weights 1/3, 1/3 (sink 1/3): 2/3 + 4/3
        array([[[2.],
                [2.]]])
        >>> kv = np.zeros((2, 2, 1))  # 2 key/value heads for 3 query heads
        >>> sink_attention(np.zeros((3, 2, 1)), kv, kv, [0.0, 0.0, 0.0])
        Traceback (most recent call last):
        ...
        ValueError: H_kv = 2 key/value heads must divide H = 3 query heads: q (3, 2, 1), k (2, 2, 1)

    See Also:
        - [`sink_softmax`][attention_math.gates.sink_softmax]: its weights.
        - [`attention`][attention_math.numeric.attention]: the same without the sink.
        - [`hf.gpt_oss`][attention_math.hf.gpt_oss]: gpt-oss's attention layer, read into this.

    References:
        - [OpenAI, 2025](https://arxiv.org/abs/2508.10925), the gpt-oss model card.
        - [Ainslie et al., 2023](https://arxiv.org/abs/2305.13245) (GQA): grouped key/value heads.
    """
    qa, ka, va = (as_float(n, a, min_ndim=3) for n, a in (("q", q), ("k", k), ("v", v)))
    h, g = qa.shape[-3], ka.shape[-3]
    if va.shape[-3] != g:
        raise ValueError(f"k and v must have the same heads: k {ka.shape}, v {va.shape}")
    if h % g:
        raise ValueError(
            f"H_kv = {g} key/value heads must divide H = {h} query heads: "
            f"q {qa.shape}, k {ka.shape}"
        )
    s = as_float("sinks", sinks)
    if s.shape != (h,):
        raise ValueError(f"sinks must have shape (H,) = ({h},), one per query head, got {s.shape}")
    if g < h:  # query head i reads key/value head i // (H / H_kv)
        ka = np.repeat(ka, h // g, axis=-3)  # (..., H, L_k, d_k)
        va = np.repeat(va, h // g, axis=-3)  # (..., H, L_k, d_v)
    qa, ka, va, _ = check_qkv(qa, ka, va)
    c = check_scale(scale, qa.shape[-1])
    scores = (qa @ np.swapaxes(ka, -1, -2)) * c  # (..., H, L_q, L_k)
    if mask is not None:
        m, _ = check_mask(mask, scores.shape)
        scores = np.where(m, scores, -np.inf) if m.dtype == np.bool_ else scores + m
    weights = sink_softmax(scores, s[:, None])  # (..., H, L_q, L_k): rows sum to < 1
    out: Floats = weights @ va  # (..., H, L_q, d_v)
    return out


def sigmoid_gate(y: ArrayLike, gate_logits: ArrayLike) -> Floats:
    """The output gate of gated attention: ``y ⊙ σ(g)``, elementwise.

    In Qwen3-Next ``y`` is the concatenated heads' output ``(L, H · d_head)`` before ``W_O``
    and ``g = x W_θ`` comes from the same token's hidden state, one gate per head and
    coordinate (the paper's "elementwise, head-specific" G1 gate). A gate near 0 lets a head
    output nothing without parking its weight on a sink token.

    Args:
        y: the heads' output, any shape.
        gate_logits: the same shape as ``y``.

    Returns:
        ``y · σ(gate_logits)``.

    Examples:
        >>> from attention_math.gates import sigmoid_gate
        >>> sigmoid_gate([2.0, 2.0, 2.0], [0.0, 50.0, -50.0]).round(6)
        array([1., 2., 0.])
        >>> sigmoid_gate([1.0, 2.0], [0.0])
        Traceback (most recent call last):
        ...
        ValueError: gate_logits must have the shape of y (2,), got (1,)

    See Also:
        - [`sink_gate`][attention_math.gates.sink_gate]: the scalar gate a sink logit amounts to.
        - [`hf.qwen3_next`][attention_math.hf.qwen3_next]: Qwen3-Next's attention, read into this.

    References:
        - [Qiu et al., 2025](https://arxiv.org/abs/2505.06708), "Gated Attention for Large
          Language Models", the gate G1 after scaled dot-product attention.
    """
    a = as_float("y", y, min_ndim=0)
    gl = as_float("gate_logits", gate_logits, min_ndim=0)
    if gl.shape != a.shape:
        raise ValueError(f"gate_logits must have the shape of y {a.shape}, got {gl.shape}")
    out: Floats = a * sigmoid(gl)
    return out


def zero_centred_rms_norm(x: ArrayLike, weight: ArrayLike, *, eps: float = 1e-6) -> Floats:
    """RMSNorm with the gain ``1 + w``: ``x / √(mean(x²) + eps) · (1 + w)``.

    Qwen3-Next's ``Qwen3NextRMSNorm`` (initialised at ``w = 0``, the identity gain, so that
    weight decay pulls the gain towards one, not zero), applied to each head's queries and
    keys (QK-norm) over ``d_head``. It is [`block.rms_norm`][attention_math.block.rms_norm]
    with ``weight = 1 + w``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.gates import zero_centred_rms_norm
        >>> zero_centred_rms_norm(np.array([[3.0, 4.0]]), np.zeros(2), eps=0.0).round(4)
        array([[0.8485, 1.1314]])

    See Also:
        - [`block.rms_norm`][attention_math.block.rms_norm]: the RMSNorm it is.

    References:
        - [Zhang & Sennrich, 2019](https://arxiv.org/abs/1910.07467): RMSNorm.
        - [Yang et al., 2025](https://arxiv.org/abs/2505.09388), Qwen3 Technical Report: QK-norm.
    """
    w = as_float("weight", weight)
    return rms_norm(x, 1.0 + w, eps=eps)
