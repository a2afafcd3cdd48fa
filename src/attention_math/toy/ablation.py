"""Ablation: a copy of the model with one head's output set to zero.

A head writes ``head_h W_O[h]`` into the residual stream, where ``W_O[h]`` is the block of
rows ``h·d_head … (h+1)·d_head − 1`` of its layer's ``W_O`` (``Concat(head_1, …) W_O`` is the
sum of these products). Zero that block and the head still attends, but adds nothing: every
later layer and the logits see the model without it. Olsson et al. (2022) take an induction
head's need for a previous-token head from exactly this: knock the earlier head out and
watch the later head's prefix matching fall.
"""

from __future__ import annotations

from attention_math.multihead import AttentionParams
from attention_math.toy.model import Params, ToyModel

__all__ = ["zero_head"]


def zero_head(model: ToyModel, layer: int, head: int) -> ToyModel:
    """A copy of ``model`` whose head ``head`` of layer ``layer`` (both from 0) writes nothing.

    The other weights are shared with ``model`` (not copied); ``model`` is left unchanged.

    Raises:
        ValueError: ``layer`` or ``head`` is out of range.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.ablation import zero_head
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> z = zero_head(m, 0, 1)
        >>> w_o, before = z.params.layers[0].w_o, m.params.layers[0].w_o  # (32, 32) each
        >>> bool((w_o[16:] == 0).all()), bool((before != 0).all())
        (True, True)
        >>> zero_head(m, 2, 0)
        Traceback (most recent call last):
        ...
        ValueError: layer must be in 0 … 1 and head in 0 … 1, got layer 2, head 0
    """
    c = model.config
    if not (0 <= layer < c.n_layers and 0 <= head < c.n_heads):
        raise ValueError(
            f"layer must be in 0 … {c.n_layers - 1} and head in 0 … {c.n_heads - 1}, "
            f"got layer {layer}, head {head}"
        )
    p = model.params.layers[layer]
    w_o = p.w_o.copy()  # (h·d_head, d_model)
    w_o[head * c.d_head : (head + 1) * c.d_head] = 0.0  # the head's block of rows
    layers = list(model.params.layers)
    layers[layer] = AttentionParams(p.w_q, p.w_k, p.w_v, w_o)
    params = Params(model.params.w_e, tuple(layers), model.params.w_u)
    return ToyModel(c, params, model.history, model.hyper)
