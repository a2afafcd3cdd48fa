"""attention_backward against PyTorch autograd (the test-time oracle) in float64, the causal
alignments and the gradient of an additive bias included."""

from __future__ import annotations

import numpy as np
import pytest

from attention_math.backward import attention_backward, attention_backward_with_dmask
from attention_math.gradcheck import relative_error

pytestmark = pytest.mark.oracle
TOL = 1e-12  # relative, normwise, per gradient


def _mask(kind: str, rng: np.random.Generator, shape: tuple[int, ...]):
    if kind == "none":
        return None
    allowed = rng.random(shape) < 0.6
    allowed[..., 0, :] = False  # one fully masked query row: zero gradients on both sides
    if kind == "boolean":
        return allowed
    return np.where(allowed, rng.normal(size=shape), -np.inf)  # additive: biases and -inf


def _case(seed: int, mask_kind: str, lead_q, lead_kv, mask_lead, l_q, l_k, d_k, d_v, scale):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(*lead_q, l_q, d_k))
    k = rng.normal(size=(*lead_kv, l_k, d_k))
    v = rng.normal(size=(*lead_kv, l_k, d_v))
    mask = _mask(mask_kind, rng, (*mask_lead, l_q, l_k))
    batch = np.broadcast_shapes(lead_q, lead_kv, mask_lead)
    d_out = rng.normal(size=(*batch, l_q, d_v))
    return q, k, v, d_out, mask, scale


CASES = {
    "batched self-attention": (1, "none", (2, 3), (2, 3), (), 5, 5, 4, 3, None),
    "boolean mask, batched": (2, "boolean", (2, 3), (2, 3), (2, 1), 6, 6, 4, 4, None),
    "additive mask, batched": (3, "additive", (2, 3), (2, 3), (3,), 4, 4, 8, 2, None),
    "cross-attention L_q ≠ L_k": (4, "none", (2,), (2,), (), 3, 7, 5, 6, 0.3),
    "cross-attention, boolean mask": (5, "boolean", (4,), (4,), (4,), 7, 3, 2, 5, None),
    "cross, additive mask, broadcast k/v": (6, "additive", (2, 3), (1, 3), (), 5, 9, 4, 3, 1.7),
}  # fmt: skip


@pytest.mark.parametrize("name", CASES)
def test_agrees_with_torch_autograd(name, torch):
    F = torch.nn.functional
    q, k, v, d_out, mask, scale = _case(*CASES[name])
    tq, tk, tv = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (q, k, v))
    tmask = None if mask is None else torch.tensor(mask)
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask, scale=scale)
    out.backward(torch.tensor(d_out))
    ours = attention_backward(q, k, v, d_out, mask, scale=scale)
    for label, g, t in zip(("dq", "dk", "dv"), ours, (tq.grad, tk.grad, tv.grad), strict=True):
        ref = t.numpy()
        assert g.shape == ref.shape, label
        assert np.isfinite(ref).all(), label
        assert relative_error(g, ref) <= TOL, (label, relative_error(g, ref))


def test_fully_masked_rows_are_zero_in_both(torch):
    F = torch.nn.functional
    q, k, v, d_out, mask, _ = _case(*CASES["boolean mask, batched"])
    tq = torch.tensor(q, requires_grad=True)
    out = F.scaled_dot_product_attention(tq, torch.tensor(k), torch.tensor(v), torch.tensor(mask))
    out.backward(torch.tensor(d_out))
    dq, _, _ = attention_backward(q, k, v, d_out, mask)
    assert np.all(dq[..., 0, :] == 0)
    assert torch.all(tq.grad[..., 0, :] == 0)


@pytest.mark.parametrize("alignment", ["top-left", "bottom-right"])
def test_backward_is_causal_and_bias_gradient_match_autograd(alignment, torch):
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    F = torch.nn.functional
    rng = np.random.default_rng(23)
    q = rng.standard_normal((2, 2, 3, 4))
    k = rng.standard_normal((2, 2, 5, 4))
    v = rng.standard_normal((2, 2, 5, 3))
    bias = rng.standard_normal((2, 1, 3, 5))  # a learned bias shared by the heads (ALiBi, T5)
    d_out = rng.standard_normal((2, 2, 3, 3))
    t = [torch.tensor(a, requires_grad=True) for a in (q, k, v, bias)]
    causal = (causal_upper_left if alignment == "top-left" else causal_lower_right)(3, 5)
    allowed = causal._materialize(device="cpu")
    t_mask = t[3].masked_fill(~allowed, float("-inf"))
    F.scaled_dot_product_attention(t[0], t[1], t[2], attn_mask=t_mask).backward(
        torch.from_numpy(d_out)
    )
    grads = attention_backward_with_dmask(
        q, k, v, d_out, bias, is_causal=True, causal_alignment=alignment
    )
    for ours, theirs in zip(grads, t, strict=True):
        np.testing.assert_allclose(ours, theirs.grad.numpy(), rtol=1e-11, atol=1e-12)
