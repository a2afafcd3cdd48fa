"""The trained weights as the page ships them: JSON with base64 little-endian float64.

``attention_math.toy.live`` reads this back in the reader's browser without NumPy. Only
what the attention patterns need is written (the embedding, the positional table and every
layer's ``W_Q``, ``W_K``, ``W_V``, ``W_O``; not ``W_U``), and it is written exactly: the
patterns computed in the page equal ``ToyModel.attention_patterns`` to rounding.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from attention_math.toy.model import ToyModel

__all__ = ["weights_json"]


def _blob(a: np.ndarray[Any, Any]) -> dict[str, Any]:
    data = np.ascontiguousarray(a, dtype="<f8").tobytes()
    return {"shape": list(a.shape), "f64": base64.b64encode(data).decode("ascii")}


def weights_json(model: ToyModel) -> dict[str, Any]:
    """What ``attention_math.toy.live.patterns`` needs, as a JSON-ready dict.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.export import weights_json
        >>> from attention_math.toy.live import decode
        >>> from attention_math.toy.model import Config, ToyModel, init_params
        >>> m = ToyModel(Config(), init_params(Config(), np.random.default_rng(0)))
        >>> w = weights_json(m)
        >>> decode(w["w_q.1"]) == m.params.layers[1].w_q.tolist()  # bit for bit
        True
    """
    c = model.config
    out: dict[str, Any] = {
        "config": {
            "vocab": c.vocab,
            "n_heads": c.n_heads,
            "n_layers": c.n_layers,
            "n_ctx": c.n_ctx,
        },
        "w_e": _blob(model.params.w_e),
        "pos": _blob(model.pos),
    }
    for name, a in model.params.as_dict().items():
        if name not in ("w_e", "w_u"):  # every layer's w_q.l, w_k.l, w_v.l, w_o.l
            out[name] = _blob(a)
    return out
