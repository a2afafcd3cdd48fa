"""The forward pass up to the attention patterns in pure Python, for the page's own runtime.

The reader's browser runs Python (Pyodide) without NumPy, so the page's live heatmaps come
from this module: the same arithmetic as ``attention_math.toy.model.forward`` on lists of
floats, with the weights the page ships (``attention_math.toy.export``). It stops at the
patterns: the second layer's values and the unembedding are not needed to draw them.

Weights arrive as a JSON object whose arrays are ``{"shape": [...], "f64": base64}``, the
little-endian float64 bytes, so the numbers are the trained ones bit for bit.
"""

from __future__ import annotations

import base64
import json
import math
import sys
from array import array
from collections.abc import Sequence
from typing import Any

__all__ = ["decode", "decode_weights", "page_patterns", "patterns"]

Matrix = list[list[float]]


def decode(blob: dict[str, Any]) -> Matrix:
    """A ``{"shape": [r, c], "f64": base64}`` array as a list of ``r`` rows.

    Examples:
        >>> import base64, struct
        >>> from attention_math.toy.live import decode
        >>> data = base64.b64encode(struct.pack("<4d", 1, 2, 3, 4)).decode()
        >>> decode({"shape": [2, 2], "f64": data})
        [[1.0, 2.0], [3.0, 4.0]]
    """
    rows, cols = blob["shape"]
    flat = array("d")
    flat.frombytes(base64.b64decode(blob["f64"]))
    if sys.byteorder == "big":  # the bytes are little-endian
        flat.byteswap()
    if len(flat) != rows * cols:
        raise ValueError(f"array of shape {blob['shape']} holds {len(flat)} numbers")
    return [list(flat[r * cols : (r + 1) * cols]) for r in range(rows)]


def decode_weights(text: str) -> dict[str, Any]:
    """The page's weights file (JSON text) with every array decoded to lists of rows.

    Examples:
        >>> import json
        >>> from attention_math.toy.live import decode_weights
        >>> decode_weights(json.dumps({"config": {"vocab": 2}}))
        {'config': {'vocab': 2}}
    """
    raw = json.loads(text)
    return {k: v if k == "config" else decode(v) for k, v in raw.items()}


_DECODED: dict[str, dict[str, Any]] = {}  # the page sends the same weights with every redraw


def page_patterns(weights_text: str, tokens: Sequence[int]) -> dict[str, Any]:
    """What the page's redraw asks for: ``{"patterns": [layer][head][query][key]}``, or
    ``{"error": message}`` for tokens the model cannot take.

    Examples:
        >>> import json
        >>> from attention_math.toy.live import page_patterns
        >>> eye = {"shape": [1, 1], "f64": "AAAAAAAA8D8="}  # [[1.0]]
        >>> w = {"config": {"vocab": 1, "n_heads": 1, "n_layers": 1, "n_ctx": 2},
        ...      "w_e": eye, "pos": {"shape": [2, 1], "f64": "AAAAAAAAAAAAAAAAAAAAAA=="},
        ...      "w_q.0": eye, "w_k.0": eye, "w_v.0": eye, "w_o.0": eye}
        >>> page_patterns(json.dumps(w), [0, 0])
        {'patterns': [[[[1.0, 0.0], [0.5, 0.5]]]]}
        >>> page_patterns(json.dumps(w), [0, 3])
        {'error': 'tokens must lie in 0 … 0 (the vocab), got 3'}
    """
    if weights_text not in _DECODED:
        _DECODED.clear()
        _DECODED[weights_text] = decode_weights(weights_text)
    try:
        return {"patterns": patterns(_DECODED[weights_text], [int(t) for t in tokens])}
    except (TypeError, ValueError) as exc:
        return {"error": str(exc)}


def _matmul(x: Matrix, w: Matrix) -> Matrix:
    """``x @ w`` on lists: ``(L, n) @ (n, m) → (L, m)``."""
    cols = list(zip(*w, strict=True))  # (m, n): w's columns
    return [[sum(a * b for a, b in zip(row, col, strict=True)) for col in cols] for row in x]


def _causal_softmax_rows(s: Matrix) -> Matrix:
    """Row ``i`` keeps entries ``0 … i`` (the causal mask), softmax over them, 0 elsewhere."""
    out = []
    for i, row in enumerate(s):
        seen = row[: i + 1]
        top = max(seen)  # subtract the row's max: exp never overflows (as numeric does)
        e = [math.exp(z - top) for z in seen]
        total = sum(e)
        out.append([z / total for z in e] + [0.0] * (len(row) - i - 1))
    return out


def patterns(weights: dict[str, Any], tokens: Sequence[int]) -> list[list[Matrix]]:
    """Every head's attention weights, ``[layer][head][query][key]``, for ``tokens``.

    Args:
        weights: the decoded weights: ``"config"`` (``vocab``, ``n_heads``, ``n_layers``,
            ``n_ctx``), ``"w_e"``, ``"pos"`` and ``"w_q.l"``, ``"w_k.l"``, ``"w_v.l"``,
            ``"w_o.l"`` as lists of rows.
        tokens: token ids, ``1 ≤ len ≤ n_ctx``, each in ``0 … vocab − 1``.

    Raises:
        ValueError: a token out of range, or too few or too many tokens.
        TypeError: a token that is not an integer.

    Examples:
        >>> from attention_math.toy.live import patterns
        >>> eye = [[1.0, 0.0], [0.0, 1.0]]
        >>> w = {"config": {"vocab": 2, "n_heads": 1, "n_layers": 1, "n_ctx": 4},
        ...      "w_e": eye, "pos": [[0.0, 0.0]] * 4,
        ...      "w_q.0": eye, "w_k.0": eye, "w_v.0": eye, "w_o.0": eye}
        >>> [[round(p, 4) for p in row] for row in patterns(w, [0, 1, 0])[0][0]]
        [[1.0, 0.0, 0.0], [0.3302, 0.6698, 0.0], [0.4011, 0.1978, 0.4011]]
    """
    c = weights["config"]
    if not 1 <= len(tokens) <= c["n_ctx"]:
        raise ValueError(f"tokens must number 1 … {c['n_ctx']}, got {len(tokens)}")
    for t in tokens:
        if isinstance(t, bool) or not isinstance(t, int):
            raise TypeError(f"tokens must be integers, got {t!r}")
        if not 0 <= t < c["vocab"]:
            raise ValueError(f"tokens must lie in 0 … {c['vocab'] - 1} (the vocab), got {t}")
    h = c["n_heads"]
    # x₀ = onehot W_E + W_pos: the one-hot product just picks the token's row
    x = [
        [e + p for e, p in zip(weights["w_e"][t], weights["pos"][i], strict=True)]
        for i, t in enumerate(tokens)
    ]  # (L, d_model)
    result = []
    for layer in range(c["n_layers"]):
        q = _matmul(x, weights[f"w_q.{layer}"])  # (L, h·d_head)
        k = _matmul(x, weights[f"w_k.{layer}"])  # (L, h·d_head)
        d = len(q[0]) // h
        scale = 1.0 / math.sqrt(d)
        heads = []
        for head in range(h):
            cut = slice(head * d, (head + 1) * d)
            qh, kh = [r[cut] for r in q], [r[cut] for r in k]  # (L, d_head) each
            s = [
                [sum(a * b for a, b in zip(qi, kj, strict=True)) * scale for kj in kh] for qi in qh
            ]
            heads.append(_causal_softmax_rows(s))  # (L, L)
        result.append(heads)
        if layer + 1 < c["n_layers"]:  # the next layer reads x + Concat(heads) W_O
            v = _matmul(x, weights[f"w_v.{layer}"])  # (L, h·d_head)
            z = []  # (L, h·d_head)
            for i in range(len(tokens)):
                row: list[float] = []
                for head in range(h):
                    att = heads[head][i]
                    row += [
                        sum(att[j] * v[j][head * d + col] for j in range(i + 1)) for col in range(d)
                    ]
                z.append(row)
            out = _matmul(z, weights[f"w_o.{layer}"])  # (L, d_model)
            x = [[a + b for a, b in zip(r, o, strict=True)] for r, o in zip(x, out, strict=True)]
    return result
