"""The backward pass of the whole model: the loss's gradient with respect to every weight.

The loss is the mean next-token cross-entropy, ``ℓ = −(1/N) Σ log softmax(logits_i)[t_{i+1}]``
over the ``N`` positions that have a next token. Going backwards, each step is one rule:

- softmax and cross-entropy together: ``d logits = (softmax(logits) − onehot(target)) / N``
  (the last position predicts nothing: its row is 0);
- the unembedding ``logits = x W_U``, a product: ``dW_U = xᵀ d logits``, ``dx = d logits W_Uᵀ``;
- the residual ``x_{l+1} = x_l + out_l``: the sum passes the gradient to both terms
  unchanged, so ``dx_l = dx_{l+1} + (what flows back through the layer)``;
- ``out = Concat(heads) W_O``: ``dW_O = zᵀ d out``, ``dz = d out W_Oᵀ``, split into heads;
- attention itself: ``attention_math.backward.attention_backward`` (derived on the
  gradients pages) gives ``dq, dk, dv`` per head;
- the projections ``q = x W_Q`` etc.: ``dW_Q = xᵀ dq``, and ``x`` feeds all three:
  ``dx += dq W_Qᵀ + dk W_Kᵀ + dv W_Vᵀ``;
- the embedding ``x₀ = onehot W_E + W_pos``: ``dW_E = onehotᵀ dx₀`` (each token's row
  collects the gradient of every position where it occurs); ``W_pos`` is fixed.

Every ``xᵀ d·`` sums over the batch and the positions (the weights are shared by all).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attention_math.backward import attention_backward
from attention_math.multihead import AttentionParams, merge_heads, split_heads
from attention_math.toy.model import Config, Params, forward

__all__ = ["cross_entropy", "loss_and_grads"]

Floats = NDArray[np.floating]


def _flat_t(a: Floats) -> Floats:
    """``(..., L, n) → (n, ·L)``: the transpose that sums over batch and positions."""
    return a.reshape(-1, a.shape[-1]).T


def cross_entropy(logits: Floats, tokens: NDArray[np.int64]) -> tuple[Floats, Floats]:
    """``(per-position loss, probabilities)``: ``−log softmax(logits_i)[t_{i+1}]``.

    The per-position loss has shape ``(..., L − 1)`` (the last position has no target).

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.grad import cross_entropy
        >>> nll, p = cross_entropy(np.zeros((1, 3, 4)), np.array([[0, 1, 2]]))
        >>> nll.round(4)  # uniform over 4 tokens: log 4 each
        array([[1.3863, 1.3863]])
    """
    z = logits - logits.max(axis=-1, keepdims=True)  # (..., L, vocab): no overflow in exp
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # (..., L, vocab)
    target = tokens[..., 1:, None]  # (..., L−1, 1)
    nll = -np.take_along_axis(log_p[..., :-1, :], target, axis=-1)[..., 0]  # (..., L−1)
    return nll, np.exp(log_p)


def loss_and_grads(
    params: Params, pos: Floats, config: Config, tokens: NDArray[np.int64]
) -> tuple[float, Params, Floats]:
    """``(loss, grads, nll)``: the mean next-token loss, its gradient for every weight (a
    `Params` of the same shapes as ``params``), and the per-position losses ``(..., L − 1)``.

    Examples:
        >>> import numpy as np
        >>> from attention_math.positional import sinusoidal
        >>> from attention_math.toy.grad import loss_and_grads
        >>> from attention_math.toy.model import Config, init_params
        >>> c = Config(vocab=5, d_model=4, n_ctx=6)
        >>> p = init_params(c, np.random.default_rng(0))
        >>> tokens = np.array([[0, 1, 2, 0, 1, 2]])
        >>> loss, g, nll = loss_and_grads(p, sinusoidal(6, 4), c, tokens)  # pos: W_pos[:6]
        >>> list(g.as_dict()) == list(p.as_dict()), g.layers[1].w_q.shape, nll.shape
        (True, (4, 4), (1, 5))
    """
    logits, saved = forward(params, pos, config, tokens)  # (..., L, vocab)
    nll, prob = cross_entropy(logits, tokens)
    n = nll.size

    # softmax + cross-entropy: p − onehot(target), averaged; the last row has no target
    d_logits = np.zeros_like(logits)  # (..., L, vocab)
    d_logits[..., :-1, :] = prob[..., :-1, :]
    np.put_along_axis(
        d_logits[..., :-1, :],
        tokens[..., 1:, None],
        np.take_along_axis(prob[..., :-1, :], tokens[..., 1:, None], axis=-1) - 1.0,
        axis=-1,
    )
    d_logits /= n

    x = saved[f"x.{config.n_layers}"]  # (..., L, d_model)
    d_w_u = _flat_t(x) @ d_logits.reshape(-1, config.vocab)  # (d_model, vocab)
    dx = d_logits @ params.w_u.T  # (..., L, d_model)

    d_layers: list[AttentionParams] = []
    for layer in reversed(range(config.n_layers)):
        x = saved[f"x.{layer}"]  # (..., L, d_model): this layer's input
        z = saved[f"z.{layer}"]  # (..., L, h·d_head)
        p = params.layers[layer]
        w_q, w_k, w_v, w_o = p.w_q, p.w_k, p.w_v, p.w_o
        # residual: dx already holds the gradient that skips the layer; the layer's output
        # out = z W_O received the same dx
        d_w_o = _flat_t(z) @ dx.reshape(-1, dx.shape[-1])  # (h·d_head, d_model)
        dz = split_heads(dx @ w_o.T, config.n_heads)  # (..., h, L, d_head)
        q, k, v = (saved[f"{m}.{layer}"] for m in ("q", "k", "v"))  # (..., h, L, d_head)
        dq, dk, dv = attention_backward(q, k, v, dz, is_causal=True)  # (..., h, L, d_head)
        dq, dk, dv = merge_heads(dq), merge_heads(dk), merge_heads(dv)  # (..., L, h·d_head)
        xt = _flat_t(x)  # (d_model, ·L)
        d_w_q = xt @ dq.reshape(-1, dq.shape[-1])  # (d_model, h·d_head)
        d_w_k = xt @ dk.reshape(-1, dk.shape[-1])
        d_w_v = xt @ dv.reshape(-1, dv.shape[-1])
        d_layers.insert(0, AttentionParams(d_w_q, d_w_k, d_w_v, d_w_o))
        dx = dx + dq @ w_q.T + dk @ w_k.T + dv @ w_v.T  # (..., L, d_model)

    onehot = saved["x_onehot"]  # (..., L, vocab)
    d_w_e = _flat_t(onehot) @ dx.reshape(-1, dx.shape[-1])  # (vocab, d_model)
    return float(nll.mean()), Params(d_w_e, tuple(d_layers), d_w_u), nll
