"""The toy model's loss and every weight's gradient against PyTorch autograd (float64)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.gradcheck import relative_error
from attention_math.positional import sinusoidal
from attention_math.toy.grad import loss_and_grads
from attention_math.toy.model import Config, init_params, weight_names

pytestmark = pytest.mark.oracle


def torch_loss(torch, w: dict, pos, tokens, c: Config):
    """The same model written with PyTorch's own layers of thought: F.one_hot, the scaled
    dot-product attention with is_causal, F.cross_entropy."""
    F = torch.nn.functional
    x = F.one_hot(tokens, c.vocab).double() @ w["w_e"] + pos  # (B, L, d)
    b, length, d = x.shape
    for layer in range(c.n_layers):
        q, k, v = (
            (x @ w[f"w_{m}.{layer}"]).view(b, length, c.n_heads, -1).transpose(1, 2)
            for m in ("q", "k", "v")
        )  # (B, h, L, d_head)
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, L, d_head)
        x = x + heads.transpose(1, 2).reshape(b, length, d) @ w[f"w_o.{layer}"]
    logits = x @ w["w_u"]  # (B, L, vocab)
    return F.cross_entropy(logits[:, :-1].reshape(-1, c.vocab), tokens[:, 1:].reshape(-1))


@pytest.mark.parametrize(
    ("config", "length", "seed"),
    [
        (Config(vocab=5, d_model=4, n_heads=2, n_ctx=6), 6, 0),
        (Config(vocab=32, d_model=32, n_heads=2, n_ctx=40), 32, 1),  # the page's shapes
    ],
)
def test_loss_and_gradients_equal_autograd(config, length, seed, torch):
    rng = np.random.default_rng(seed)
    params = init_params(config, rng)
    tokens = rng.integers(0, config.vocab, size=(3, length))  # (B, L)
    pos = sinusoidal(length, config.d_model, base=config.pos_base)  # (L, d)
    loss, grads, _ = loss_and_grads(params, pos, config, tokens)

    weights, g = params.as_dict(), grads.as_dict()
    w = {n: torch.tensor(weights[n], requires_grad=True) for n in weight_names(config)}
    t_loss = torch_loss(torch, w, torch.tensor(pos), torch.tensor(tokens), config)
    t_loss.backward()
    assert abs(loss - t_loss.item()) < 1e-12 * abs(loss)
    for n in weight_names(config):
        assert relative_error(g[n], w[n].grad.numpy()) < 1e-11, n
