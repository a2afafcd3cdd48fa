"""The key/value cache, exactly: why it is exact, when it is not, and what it costs.

* Row ``t`` of causal attention is query ``t`` attending to the cached ``K₁..t, V₁..t``;
  appending a token never changes an earlier row. Without the causal mask it does (an
  exact counterexample).
* One decode step is one merge of the online-softmax state (the Long sequences chapter).
* Cache size and per-token cost as formulas, from the cost module's steps.
* Attention sinks: ``softmax₁`` is softmax with an extra zero logit; evicting tokens from
  the cache renormalises the surviving weights by ``1/(1 − evicted mass)``.

The NumPy side is [`decoding`][attention_math.decoding].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from attention_math import symbolic
from attention_math.derivations import cost
from attention_math.derivations._once import derived_once
from attention_math.derivations.online_softmax import merged_equals_softmax
from attention_math.symbolic import is_zero

__all__ = [
    "MODELS",
    "ModelShape",
    "append_changes_earlier_rows",
    "cache_bytes",
    "cache_entries",
    "cache_rows_exact",
    "counterexample",
    "decode_flops",
    "decode_step_is_merge",
    "evicted_weights",
    "generation_flops",
    "softmax_one",
    "softmax_one_is_padded_softmax",
    "streaming_positions",
    "symbols",
    "tex",
]

n_layers, h_kv, d_head, n_bytes, t = sp.symbols("n_layers h_kv d_head n_bytes t", positive=True)


def symbols() -> dict[str, sp.Symbol]:
    """The cache-size symbols by name (with ``L`` and the attention sizes of the cost module).

    Examples:
        >>> from attention_math.derivations.decoding import symbols
        >>> sorted(symbols())
        ['L', 'd_head', 'd_model', 'h', 'h_kv', 'n_bytes', 'n_layers', 't']
    """
    return {str(s): s for s in (n_layers, h_kv, d_head, n_bytes, t, cost.L, cost.h, cost.d_model)}


#: the site's notation for the size symbols (upright subscripts, as in the notation table)
_TEX_NAMES = {
    "d_head": r"d_{\text{head}}",
    "d_model": r"d_{\text{model}}",
    "n_bytes": r"n_{\text{bytes}}",
    "n_layers": r"n_{\text{layers}}",
}


def tex(expr: object) -> str:
    """LaTeX for a cost or size formula, in the site's notation (``d_{\\text{head}}``, not
    ``d_{head}``).

    Examples:
        >>> from attention_math.derivations.decoding import cache_bytes, tex
        >>> tex(cache_bytes())
        '2 L d_{\\\\text{head}} h_{kv} n_{\\\\text{bytes}} n_{\\\\text{layers}}'
    """
    e = sp.sympify(expr)
    names = {x: _TEX_NAMES[str(x)] for x in e.free_symbols if str(x) in _TEX_NAMES}
    return str(sp.latex(e, symbol_names=names))


def _attention(q: sp.Matrix, k: sp.Matrix, v: sp.Matrix, mask: object = None) -> sp.Matrix:
    """Exact attention with scale 1 (``d_k = 1``), the output only."""
    out = symbolic.attention(q, k, v, mask=mask, scale=1)
    assert isinstance(out, sp.MatrixBase)  # no weights were asked for
    return sp.Matrix(out)


def _qkv(length: int) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    """Generic ``q``, ``k``, ``v`` of ``length`` tokens, ``d_k = 1``, ``d_v = 1``."""

    def column(name: str) -> sp.Matrix:
        return sp.Matrix([sp.Symbol(f"{name}_{i}", real=True) for i in range(1, length + 1)])

    return column("q"), column("k"), column("v")


def cache_rows_exact(length: int = 3) -> bool:
    """True when, for generic tokens, row ``t`` of causal attention equals query ``t``
    attending to the keys and values ``1 … t`` only (what a cache holds at step ``t``).

    Examples:
        >>> from attention_math.derivations.decoding import cache_rows_exact
        >>> cache_rows_exact(3)
        True
    """
    q, k, v = _qkv(length)
    causal = [[j <= i for j in range(length)] for i in range(length)]
    full = _attention(q, k, v, mask=causal)
    for i in range(length):
        step = _attention(q[i : i + 1, :], k[: i + 1, :], v[: i + 1, :])
        if not is_zero(step[0, 0] - full[i, 0]):
            return False
    return True


def append_changes_earlier_rows(length: int = 3, *, is_causal: bool) -> bool:
    """True when appending token ``length`` changes some earlier output row (generic tokens).

    Examples:
        >>> from attention_math.derivations.decoding import append_changes_earlier_rows
        >>> [append_changes_earlier_rows(3, is_causal=c) for c in (True, False)]
        [False, True]
    """
    q, k, v = _qkv(length)

    def out(n: int) -> sp.Matrix:
        mask = [[j <= i for j in range(n)] for i in range(n)] if is_causal else None
        return _attention(q[:n, :], k[:n, :], v[:n, :], mask=mask)

    short, long = out(length - 1), out(length)
    return not all(is_zero(short[i, 0] - long[i, 0]) for i in range(length - 1))


def counterexample() -> dict[str, sp.Matrix]:
    """Unmasked attention with 2 and then 3 tokens (``d = 1``, scale 1): row 1 changes.

    Keys ``0, log 2, log 3`` and query ``1`` give the weights ``(1/3, 2/3)`` and then
    ``(1/6, 1/3, 1/2)``.

    Examples:
        >>> from attention_math.derivations.decoding import counterexample
        >>> c = counterexample()
        >>> c["row 1, 2 tokens"], c["row 1, 3 tokens"]
        (Matrix([[1/3]]), Matrix([[1/6]]))
    """
    q = sp.Matrix([1, 1, 1])
    k = sp.Matrix([0, sp.log(2), sp.log(3)])
    v = sp.Matrix([1, 0, 0])
    two = _attention(q[:2, :], k[:2, :], v[:2, :])
    three = _attention(q, k, v)
    causal = _attention(q, k, v, mask=[[j <= i for j in range(3)] for i in range(3)])
    return {
        "q": q,
        "k": k,
        "v": v,
        "row 1, 2 tokens": sp.simplify(two[0:1, :]),
        "row 1, 3 tokens": sp.simplify(three[0:1, :]),
        "row 1, 3 tokens, causal": sp.simplify(causal[0:1, :]),
    }


def decode_step_is_merge(n_cached: int = 3) -> bool:
    """True when one decode step (the state over ``n_cached`` cached keys merged with the
    new key's one-key state) is exactly the softmax over all ``n_cached + 1`` keys.

    Examples:
        >>> from attention_math.derivations.decoding import decode_step_is_merge
        >>> decode_step_is_merge(2)
        True
    """
    s = [sp.Symbol(f"s_{j}", real=True) for j in range(1, n_cached + 2)]
    v = [sp.Symbol(f"v_{j}", real=True) for j in range(1, n_cached + 2)]
    return bool(merged_equals_softmax(s, v, cuts=[n_cached]))


def cache_entries() -> sp.Expr:
    """Entries a cache holds for ``L`` tokens: keys and values, every layer and kv head.

    Examples:
        >>> from attention_math.derivations.decoding import cache_entries
        >>> cache_entries()
        2*L*d_head*h_kv*n_layers
    """
    return 2 * n_layers * h_kv * d_head * cost.L


def cache_bytes() -> sp.Expr:
    """``cache_entries()`` times ``n_bytes`` bytes per entry."""
    return cache_entries() * n_bytes


def decode_flops() -> sp.Expr:
    """FLOPs of one decode step at position ``t`` (one layer): the cost module's steps with one
    query (``L_q = 1``) against ``t`` keys, the key and value projections done for the new
    token only (the others are cached).

    Examples:
        >>> from attention_math.derivations.decoding import decode_flops
        >>> import sympy as sp
        >>> from attention_math.derivations.cost import d_k, h
        >>> sp.Poly(decode_flops(), sp.Symbol("t", positive=True)).degree()
        1
    """
    total = sp.Integer(0)
    for step in cost.STEPS:
        new_only = step.name in ("key projection", "value projection")
        total += step.flops.subs({cost.L_q: 1, cost.L_k: 1 if new_only else t})
    return sp.expand(total)


@derived_once
def generation_flops(*, cached: bool) -> sp.Expr:
    """FLOPs (one layer) to generate ``L`` tokens one by one: with a cache, the sum of
    `decode_flops` over ``t = 1 … L``; without, the full forward pass on ``t`` tokens at
    every step.

    Examples:
        >>> from attention_math.derivations.decoding import generation_flops
        >>> from attention_math.derivations.cost import L
        >>> import sympy as sp
        >>> [sp.Poly(generation_flops(cached=c), L).degree() for c in (True, False)]
        [2, 3]
    """
    if cached:
        per_step = decode_flops()
    else:
        per_step = cost.total_flops().subs({cost.L_q: t, cost.L_k: t})
    return sp.expand(sp.summation(per_step, (t, 1, cost.L)))


@dataclass(frozen=True)
class ModelShape:
    """The attention shapes of a published model (from its configuration file)."""

    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    context: int  # the context length the model was trained for
    window: int | None = None  # sliding-window attention span, if any


MODELS: tuple[ModelShape, ...] = (
    ModelShape("GPT-2 small", 12, 12, 12, 64, 1024),
    ModelShape("GPT-2 XL", 48, 25, 25, 64, 1024),
    ModelShape("Llama 2 7B", 32, 32, 32, 128, 4096),
    ModelShape("Llama 2 70B", 80, 64, 8, 128, 4096),
    ModelShape("Mistral 7B v0.1", 32, 32, 8, 128, 8192, window=4096),
)
"""Published configurations (``config.json`` of each model's release; Mistral 7B's trained
context of 8192 is from its paper, Table 1: its ``config.json`` gives 32768 positions)."""


def softmax_one(z: Sequence[object]) -> list[sp.Expr]:
    """``softmax₁(z)_i = e^{z_i} / (1 + Σ_j e^{z_j})``: weights that may sum to less than one.

    Examples:
        >>> from attention_math.derivations.decoding import softmax_one
        >>> import sympy as sp
        >>> softmax_one([0, sp.log(2)])
        [1/4, 1/2]
    """
    e = [sp.exp(sp.sympify(x)) for x in z]
    total = 1 + sp.Add(*e)
    return [sp.simplify(x / total) for x in e]


@derived_once
def softmax_one_is_padded_softmax(n: int = 3) -> bool:
    """True when ``softmax₁(z)`` equals ``softmax([z, 0])`` with the last entry dropped, for
    generic ``z`` (an extra key whose score is always 0 and whose value is 0: a sink).

    Examples:
        >>> from attention_math.derivations.decoding import softmax_one_is_padded_softmax
        >>> softmax_one_is_padded_softmax(3)
        True
    """
    z = [sp.Symbol(f"z_{i}", real=True) for i in range(1, n + 1)]
    padded = symbolic.softmax(sp.Matrix([[*z, 0]]))
    return all(is_zero(a - padded[0, i]) for i, a in enumerate(softmax_one(z)))


def evicted_weights(z: Sequence[object], evict: Sequence[int]) -> tuple[sp.Matrix, sp.Expr]:
    """Weights over the keys that survive evicting ``evict`` from the cache, and the factor
    ``1 / (1 − Σ_evicted p)`` by which every surviving weight grew.

    Raises:
        AssertionError: if the evicted weights were not the renormalised ones (the derivation
            failed).

    Examples:
        >>> import sympy as sp
        >>> from attention_math.derivations.decoding import evicted_weights
        >>> w, factor = evicted_weights([sp.log(4), 0, sp.log(3)], evict=[0])
        >>> w, factor
        (Matrix([[1/4, 3/4]]), 2)
    """
    p = symbolic.softmax(sp.Matrix([list(z)]))
    keep = [j for j in range(len(z)) if j not in set(evict)]
    after = symbolic.softmax(sp.Matrix([[z[j] for j in keep]]))
    factor = sp.simplify(1 / (1 - sp.Add(*(p[0, j] for j in evict))))
    for col, j in enumerate(keep):  # the factor is exact for every survivor
        if not is_zero(after[0, col] - factor * p[0, j]):
            raise AssertionError("evicted weights are not the renormalised weights")
    return after.applyfunc(sp.simplify), factor


def streaming_positions(n_tokens: int, n_sink: int, window: int) -> list[tuple[int, int]]:
    """StreamingLLM's cache after ``n_tokens`` tokens: the first ``n_sink`` tokens (the sinks)
    and the last ``window`` ones, each as ``(position in the text, position used for the
    positional encoding)``. StreamingLLM numbers positions *within the cache*, ``0, 1, …``,
    not by where a token stood in the text, so the offsets the model sees never exceed the
    cache's size.

    Positions count from 0.

    Examples:
        >>> from attention_math.derivations.decoding import streaming_positions
        >>> streaming_positions(10, 2, 3)
        [(0, 0), (1, 1), (7, 2), (8, 3), (9, 4)]
    """
    for name, value in (("n_tokens", n_tokens), ("n_sink", n_sink), ("window", window)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    kept = sorted({*range(min(n_sink, n_tokens)), *range(max(0, n_tokens - window), n_tokens)})
    return [(text, cache) for cache, text in enumerate(kept)]
