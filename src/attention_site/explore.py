"""The data behind the site's explorables: one parameter moved, its effect at every stop.

An explorable is a slider (or two) where the effect of one parameter *is* the lesson: the
temperature of a softmax, the size of a window. Each function below computes, with the
package's own functions and data, everything an explorable shows at every slider stop, so
the page only chooses among precomputed stops and every number shown is the package's.

An [`Explorable`][attention_site.explore.Explorable] holds its sliders (each a tuple of
stops) and one frame per combination of stops: a dict of plain numbers, strings and lists,
ready for JSON. The site renders them (``attention_site.pages.explorables``). This module is
the site's (the wheel does not ship it): it only calls the library, whose functions a learner
calls to get the same numbers.

Examples:
    >>> from attention_site.explore import temperature
    >>> ex = temperature()
    >>> [s.name for s in ex.sliders], ex.frame(T=1)["max-weight"] > 0.5
    (['T'], True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "EXPLORABLES",
    "Explorable",
    "Slider",
    "alibi",
    "kv_heads",
    "mask",
    "online_softmax",
    "rope",
    "scaling",
    "temperature",
    "window",
]

Stop = float | int | str
Frame = dict[str, Any]


@dataclass(frozen=True)
class Slider:
    """One slider: the quantity it sets, its label, its stops and the stop it starts at.

    ``limit`` names another slider whose stop index bounds this one's (a head index never
    beyond the head count).
    """

    name: str
    label: str
    stops: tuple[Stop, ...]
    start: int = 0
    limit: str | None = None


@dataclass(frozen=True)
class Explorable:
    """An explorable's sliders and its frame at every combination of their stop indices."""

    name: str
    sliders: tuple[Slider, ...]
    frames: dict[tuple[int, ...], Frame]

    def frame(self, **values: Stop) -> Frame:
        """The frame at the given slider values (by value, not index; every slider named).

        Raises:
            ValueError: a slider missing or unknown, or a value that is not one of its stops.

        Examples:
            >>> from attention_site.explore import alibi
            >>> alibi().frame(n_heads=8, head=1)["slope"]
            0.5
            >>> alibi().frame(n_heads=8)
            Traceback (most recent call last):
            ...
            ValueError: alibi: give a value for each slider ['n_heads', 'head'], got ['n_heads']
        """
        names = [s.name for s in self.sliders]
        if sorted(values) != sorted(names):
            raise ValueError(
                f"{self.name}: give a value for each slider {names}, got {list(values)}"
            )
        index = []
        for s in self.sliders:
            if values[s.name] not in s.stops:
                raise ValueError(
                    f"{self.name}: {s.name} = {values[s.name]!r} is not one of its stops {s.stops}"
                )
            index.append(s.stops.index(values[s.name]))
        key = tuple(index)
        if key not in self.frames:
            raise ValueError(f"{self.name}: no frame at {values} (beyond a slider's limit)")
        return self.frames[key]


def _grid(name: str, sliders: Sequence[Slider], make: Callable[..., Frame | None]) -> Explorable:
    """Every combination of stops (within the limits) through ``make(*values)``."""
    by_name = {s.name: i for i, s in enumerate(sliders)}
    frames: dict[tuple[int, ...], Frame] = {}
    for key in itertools.product(*(range(len(s.stops)) for s in sliders)):
        if any(
            s.limit is not None and key[i] > key[by_name[s.limit]] for i, s in enumerate(sliders)
        ):
            continue
        frame = make(*(s.stops[i] for s, i in zip(sliders, key, strict=True)))
        if frame is not None:
            frames[key] = frame
    return Explorable(name, tuple(sliders), frames)


def _floats(name: str, x: ArrayLike, ndim: int = 1) -> NDArray[np.float64]:
    """``x`` as a non-empty finite float64 array of ``ndim`` axes, or a ValueError naming it."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be real numbers, got {x!r}") from exc
    if a.ndim != ndim or a.size == 0 or not np.isfinite(a).all():
        raise ValueError(
            f"{name} must be a non-empty finite array of {ndim} axis/axes, got shape {a.shape}"
        )
    return a


def _stops(
    name: str, values: Sequence[Any], *, positive: bool = True, integer: bool = False
) -> tuple[Any, ...]:
    """A non-empty, strictly increasing tuple of (positive, integer) stops, or a ValueError."""
    out = tuple(values)
    ok = bool(out) and all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in out
    )
    ok = ok and (not integer or all(isinstance(v, int) for v in out))
    ok = ok and (not positive or all(v > 0 for v in out))
    ok = ok and all(a < b for a, b in itertools.pairwise(out))
    if not ok:
        kind = ("positive " if positive else "") + ("integers" if integer else "numbers")
        raise ValueError(f"{name} must be increasing {kind}, got {values!r}")
    return out


def _entropy(p: NDArray[np.floating]) -> float:
    """``−Σ p log p`` in nats, with ``0 log 0 = 0``."""
    nz = p[p > 0]  # (n,): a zero weight adds nothing
    return float(-(nz * np.log(nz)).sum())


TEMPERATURES: tuple[float, ...] = (
    *(0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5),
    *(6, 8, 10),
)
"""The temperature's stops: 0.1 to 10, denser below 1 where the weights change fastest."""


def temperature(
    scores: ArrayLike | None = None, temperatures: Sequence[float] = TEMPERATURES
) -> Explorable:
    """``softmax(scores / T)`` at each temperature ``T``: the weights, the largest weight and
    the entropy (nats). ``T → 0`` puts all the weight on the largest score; ``T → ∞`` spreads
    it evenly (entropy ``log n``).

    Args:
        scores: one row of scores; default the first row of the running example's scaled
            scores ``S`` (token 1's).
        temperatures: the stops, increasing and positive.

    Raises:
        ValueError: scores not a finite non-empty row, or a temperature not positive.

    Examples:
        >>> from attention_site.explore import temperature
        >>> f = temperature([0.0, 0.0, 1.0], [1, 2]).frame(T=1)
        >>> round(f["max-weight"], 4), round(f["entropy"], 4)
        (0.5761, 0.9753)
        >>> temperature([0.0, 1.0], [0, 1])
        Traceback (most recent call last):
        ...
        ValueError: temperatures must be increasing positive numbers, got [0, 1]
    """
    from attention_math.numeric import softmax

    if scores is None:
        from attention_math.running import numeric_forward

        scores = numeric_forward()["S"][0]  # (L,): token 1's row of scaled scores
    s = _floats("scores", scores)  # (L,)
    ts = _stops("temperatures", temperatures)

    def make(t: float) -> Frame:
        p = softmax(s / t)  # (L,): the weights at temperature t
        return {
            "T": t,
            "scores": s.tolist(),
            "weights": p.tolist(),
            "max-weight": float(p.max()),
            "entropy": _entropy(p),
            "uniform-entropy": math.log(len(s)),
        }

    return _grid(
        "temperature", [Slider("T", "Temperature", ts, ts.index(1) if 1 in ts else 0)], make
    )


DIMS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""The key dimensions of the scaling explorable: powers of two from 1 to 1024."""


def scaling(
    dims: Sequence[int] = DIMS,
    *,
    n_samples: int = 4000,
    n_keys: int = 16,
    n_queries: int = 200,
    span: float = 8.0,
    bins: int = 32,
    seed: int = 0,
) -> Explorable:
    """Scores ``q·k`` of random unit-variance ``q, k ∈ ℝ^{d_k}``, unscaled and divided by
    ``√d_k``: histograms on ``[−span, span]`` (the share outside counted apart), the sample
    standard deviations, and the mean largest softmax weight over ``n_keys`` keys.

    Each stop draws from its own generator ``default_rng([seed, d_k])``, so a stop's
    samples do not depend on which other stops are asked for. The samples are
    [`sample_dots`][attention_math.derivations.scaling.sample_dots]; the weights
    [`saturation`][attention_math.derivations.scaling.saturation].

    Raises:
        ValueError: a dimension not a positive integer, or a count, span or bins not positive.

    Examples:
        >>> from attention_site.explore import scaling
        >>> f = scaling([1, 256], n_samples=2000, n_queries=50).frame(d_k=256)
        >>> 0.9 < f["std-scaled"] < 1.1, f["std-unscaled"] > 14
        (True, True)
        >>> f["max-weight-unscaled"] > f["max-weight-scaled"]
        True
    """
    from attention_math.derivations.scaling import sample_dots, saturation

    ds = _stops("dims", dims, integer=True)
    for name, n in (
        ("n_samples", n_samples),
        ("n_keys", n_keys),
        ("n_queries", n_queries),
        ("bins", bins),
    ):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    if not (isinstance(span, int | float) and math.isfinite(span) and span > 0):
        raise ValueError(f"span must be a positive number, got {span!r}")
    edges = np.linspace(-span, span, bins + 1)  # (bins + 1,)

    def make(d: int) -> Frame:
        rng = np.random.default_rng([seed, d])
        dots = sample_dots(d, n_samples, rng)  # (n,): q·k, variance d_k
        scaled = dots / np.sqrt(d)  # (n,): variance 1
        sat = saturation([d], rng, n_keys=n_keys, n_samples=n_queries)
        frame: Frame = {"d_k": d, "edges": edges.tolist()}
        for tag, x in (("unscaled", dots), ("scaled", scaled)):
            counts, _ = np.histogram(x, bins=edges)  # (bins,)
            frame[f"hist-{tag}"] = (counts / n_samples).tolist()  # shares of the samples
            frame[f"outside-{tag}"] = float(np.mean(np.abs(x) > span))
            frame[f"std-{tag}"] = float(x.std(ddof=1))
            frame[f"max-weight-{tag}"] = float(sat[f"max_{tag}"][0])
        return frame

    return _grid(
        "scaling", [Slider("d_k", "Key dimension dₖ", ds, ds.index(64) if 64 in ds else 0)], make
    )


def mask(max_len: int = 6, *, d_k: int = 4, seed: int = 0) -> Explorable:
    """A causal mask of ``L_q`` queries and ``L_k`` keys, top-left or bottom-right aligned
    ([`causal_mask`][attention_math.numeric.causal_mask]), and the attention weights under
    it of seeded random ``q, k`` (a fully masked row: zero weights).

    Raises:
        ValueError: ``max_len`` or ``d_k`` not a positive integer.

    Examples:
        >>> from attention_site.explore import mask
        >>> f = mask(4).frame(alignment="bottom-right", L_q=4, L_k=2)
        >>> f["offset"], f["empty-rows"], f["visible"]
        (-2, 2, 3)
    """
    from attention_math._checks import CausalAlignment
    from attention_math.numeric import attention_weights, causal_mask, causal_offset

    n = _stops("max_len", [max_len], integer=True)[0]
    dk = _stops("d_k", [d_k], integer=True)[0]
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, dk))  # (max_len, d_k)
    k = rng.standard_normal((n, dk))  # (max_len, d_k)
    v = np.eye(n)  # (max_len, max_len): unused beyond the weights
    lengths = tuple(range(1, n + 1))

    def make(alignment: CausalAlignment, lq: int, lk: int) -> Frame:
        m = causal_mask(lq, lk, causal_alignment=alignment)  # (L_q, L_k)
        p = attention_weights(q[:lq], k[:lk], v[:lk], m)  # (L_q, L_k)
        return {
            "alignment": alignment,
            "L_q": lq,
            "L_k": lk,
            "offset": causal_offset(lq, lk, alignment),
            "mask": m.astype(int).tolist(),
            "weights": p.tolist(),
            "visible": int(m.sum()),
            "empty-rows": int((~m.any(axis=1)).sum()),
        }

    sliders = [
        Slider("alignment", "Alignment", ("top-left", "bottom-right")),
        Slider("L_q", "Queries L_q", lengths, min(3, n) - 1),
        Slider("L_k", "Keys L_k", lengths, n - 1),
    ]
    return _grid("mask", sliders, make)


def window(
    length: int = 16,
    windows: Sequence[int] = tuple(range(1, 9)),
    depths: Sequence[int] = tuple(range(1, 7)),
) -> Explorable:
    """Sliding-window attention of window ``w`` stacked ``n_layers`` deep: which of ``length``
    tokens reach the last one after each layer (the last row of
    [`reach`][attention_math.derivations.sliding_window.reach], counted exactly), and the
    receptive field against the derived ``min(L, n_layers (w − 1) + 1)``.

    Raises:
        ValueError: a length, window or depth not a positive integer.

    Examples:
        >>> from attention_site.explore import window
        >>> f = window(8, [3], [2]).frame(w=3, n_layers=2)
        >>> f["receptive-field"], f["formula"], f["reach"][-1]
        (5, 5, [0, 0, 0, 1, 1, 1, 1, 1])
    """
    from attention_math.derivations.sliding_window import n_layers as n_sym
    from attention_math.derivations.sliding_window import reach, receptive_field_formula
    from attention_math.derivations.sliding_window import w as w_sym

    n = _stops("length", [length], integer=True)[0]
    ws = _stops("windows", windows, integer=True)
    ls = _stops("depths", depths, integer=True)

    def make(w: int, layers: int) -> Frame:
        rows = [[int(x) for x in reach(n, w, depth).row(n - 1)] for depth in range(1, layers + 1)]
        formula = int(receptive_field_formula().subs({n_sym: layers, w_sym: w}))
        return {
            "w": w,
            "n_layers": layers,
            "length": n,
            "reach": rows,  # per layer 1..n_layers: 1 where token j reaches the last token
            "receptive-field": sum(rows[-1]),
            "formula": min(n, formula),
        }

    sliders = [
        Slider("w", "Window w", ws, ws.index(3) if 3 in ws else 0),
        Slider("n_layers", "Layers", ls, ls.index(2) if 2 in ls else 0),
    ]
    return _grid("window", sliders, make)


def kv_heads(model: str = "Llama 2 70B", *, n_bytes: int = 2) -> Explorable:
    """A model of the site's table ([`MODELS`][attention_math.derivations.decoding.MODELS])
    with ``h_kv`` kv heads, from ``h`` (multi-head) down to 1 (multi-query) through every
    divisor of ``h``: the cache bytes per token
    ([`cache_bytes`][attention_math.derivations.decoding.cache_bytes] at ``L = 1``), at the
    model's whole context, and the saving against multi-head attention, ``1 − h_kv/h``.

    Raises:
        ValueError: a model not in the table, or ``n_bytes`` not a positive integer.

    Examples:
        >>> from attention_site.explore import kv_heads
        >>> f = kv_heads().frame(h_kv=8)
        >>> f["bytes-per-token"], f["factor"], f["saving"]
        (327680, 8, 0.875)
    """
    from attention_math.derivations import cost
    from attention_math.derivations.decoding import MODELS, cache_bytes, symbols

    names = [m.name for m in MODELS]
    if model not in names:
        raise ValueError(f"model must be one of {names}, got {model!r}")
    nb = _stops("n_bytes", [n_bytes], integer=True)[0]
    shape = MODELS[names.index(model)]
    h = shape.n_heads
    divisors = tuple(d for d in range(1, h + 1) if h % d == 0)  # increasing
    s = symbols()

    def make(h_kv: int) -> Frame:
        subs = {s["n_layers"]: shape.n_layers, s["h_kv"]: h_kv, s["d_head"]: shape.d_head}
        per_token = int(cache_bytes().subs({**subs, s["n_bytes"]: nb, cost.L: 1}))
        return {
            "model": model,
            "h": h,
            "h_kv": h_kv,
            "group": h // h_kv,
            "bytes-per-token": per_token,
            "context": shape.context,
            "context-bytes": per_token * shape.context,
            "factor": h // h_kv,
            "saving": 1 - h_kv / h,
            "published": h_kv == shape.n_kv_heads,
        }

    # it starts at the model's own choice (a divisor of h, as every configuration's is)
    start = divisors.index(shape.n_kv_heads) if shape.n_kv_heads in divisors else len(divisors) - 1
    slider = Slider("h_kv", "kv heads h_kv", divisors, start)
    return _grid("kv-heads", [slider], make)


BASES: tuple[int, ...] = (10, 100, 1000, 10000, 100000)
"""RoPE bases of the explorable: the original 10000 and the powers of ten around it."""


def rope(
    positions: Sequence[int] = tuple(range(17)),
    bases: Sequence[int] = BASES,
    *,
    max_offset: int = 32,
) -> Explorable:
    """RoPE on the running example: token 1's query at position ``p``, token 3's key at 0.

    At each query position ``p`` (the page's ``i``) and base: the angle ``p θ_l`` of each
    pair, the query's pairs before and after the rotation
    ([`rope`][attention_math.positional.rope], GPT-NeoX layout: pair ``l`` is
    ``(x_l, x_{l + d/2})``), and the score ``q_p · k_0 / √d_k`` as a function of the
    offset ``0 … max_offset`` (it depends on the offset only).

    Raises:
        ValueError: a position negative or not an integer, a base not above 1.

    Examples:
        >>> from attention_site.explore import rope
        >>> f = rope([0, 1], [10000]).frame(p=0, base=10000)
        >>> f["score"], f["angles"]
        (1.0, [0.0, 0.0])
    """
    from attention_math.positional import rope as rotate
    from attention_math.positional import rope_frequencies
    from attention_math.running import numeric_forward

    ps = _stops("positions", positions, positive=False, integer=True)
    if ps[0] < 0:
        raise ValueError(f"positions must be non-negative, got {positions!r}")
    bs = _stops("bases", bases)
    if bs[0] <= 1:
        raise ValueError(f"bases must be above 1, got {bases!r}")
    last = _stops("max_offset", [max_offset], integer=True)[0]
    f = numeric_forward()
    q, k = f["Q"][0], f["K"][2]  # (d_k,) each: token 1's query, token 3's key
    d = len(q)
    offsets = np.arange(last + 1)  # (n_offsets,)

    def make(p: int, base: float) -> Frame:
        theta = rope_frequencies(d, base=base)  # (d/2,)
        qs = rotate(np.tile(q, (len(offsets), 1)), offsets, base=base)  # (n_offsets, d)
        k0 = rotate(k[None, :], [0], base=base)[0]  # (d,): the key at position 0
        curve = qs @ k0 / math.sqrt(d)  # (n_offsets,): score against the offset
        qp = rotate(q[None, :], [p], base=base)[0]  # (d,)
        return {
            "p": p,
            "base": base,
            "theta": theta.tolist(),
            "angles": (p * theta).tolist(),
            "pairs": [[float(q[i]), float(q[i + d // 2])] for i in range(d // 2)],
            "rotated": [[float(qp[i]), float(qp[i + d // 2])] for i in range(d // 2)],
            "score": float(qp @ k0 / math.sqrt(d)),
            "curve": curve.tolist(),
        }

    sliders = [
        Slider("p", "Query position i", ps, 0),
        Slider("base", "Base", bs, bs.index(10000) if 10000 in bs else 0),
    ]
    return _grid("rope", sliders, make)


def alibi(max_heads: int = 12, n_k: int = 8) -> Explorable:
    """ALiBi with ``n_heads`` heads, head ``k``: its slope ``m_k = 2^(−e_k)``
    ([`alibi_exponents`][attention_math.positional.alibi_exponents]) and the bias row
    ``−m_k |i − j|`` of the last of ``n_k`` queries
    ([`alibi_bias`][attention_math.positional.alibi_bias]).

    Raises:
        ValueError: ``max_heads`` or ``n_k`` not a positive integer.

    Examples:
        >>> from attention_site.explore import alibi
        >>> f = alibi(8, 3).frame(n_heads=8, head=2)
        >>> f["slope"], f["exponent"], f["bias"]
        (0.25, '2', [-0.5, -0.25, 0.0])
    """
    from attention_math.positional import alibi_bias, alibi_exponents, alibi_slopes

    top = _stops("max_heads", [max_heads], integer=True)[0]
    nk = _stops("n_k", [n_k], integer=True)[0]
    counts = tuple(range(1, top + 1))

    def make(n: int, head: int) -> Frame:
        bias = alibi_bias(n, nk)[head - 1, -1]  # (n_k,): the last query's row
        return {
            "n_heads": n,
            "head": head,
            "exponent": str(alibi_exponents(n)[head - 1]),
            "slope": float(alibi_slopes(n)[head - 1]),
            "slopes": alibi_slopes(n).tolist(),
            "bias": bias.tolist(),
        }

    sliders = [
        Slider("n_heads", "Heads", counts, counts.index(8) if 8 in counts else 0),
        Slider("head", "Head", counts, 0, limit="n_heads"),
    ]
    return _grid("alibi", sliders, make)


def online_softmax(length: int = 12, *, seed: int = 0) -> Explorable:
    """One query row of ``length`` seeded scores and scalar values, read tile by tile for
    every tile size: the states ``(m, λ, o)`` after each tile
    ([`numeric_trace`][attention_math.derivations.online_softmax.numeric_trace]), the output
    ``o / λ``, and the softmax-weighted sum of the whole row it must equal.

    Raises:
        ValueError: ``length`` not a positive integer.

    Examples:
        >>> from attention_site.explore import online_softmax
        >>> f = online_softmax(4).frame(block_size=3)
        >>> f["tiles"], len(f["m"]), abs(f["output"] - f["reference"]) < 1e-15
        (2, 2, True)
    """
    from attention_math.derivations.online_softmax import numeric_trace
    from attention_math.numeric import softmax

    n = _stops("length", [length], integer=True)[0]
    rng = np.random.default_rng(seed)
    s = 2.0 * rng.standard_normal(n)  # (L,): one row of scores, spread enough to move m
    v = rng.standard_normal(n)  # (L,): one value per key (d_v = 1)
    reference = float(softmax(s) @ v)

    def make(block_size: int) -> Frame:
        trace = numeric_trace(s, v[:, None], block_size)  # per tile: (m, λ, o (1,))
        ms = [float(t[0]) for t in trace]
        ells = [float(t[1]) for t in trace]
        os_ = [float(t[2][0]) for t in trace]
        return {
            "block_size": block_size,
            "scores": s.tolist(),
            "values": v.tolist(),
            "tiles": len(trace),
            "m": ms,
            "ell": ells,
            "o": os_,
            "output": os_[-1] / ells[-1],
            "reference": reference,
        }

    sizes = tuple(range(1, n + 1))
    slider = Slider("block_size", "Tile size", sizes, min(4, n) - 1)
    return _grid("online-softmax", [slider], make)


EXPLORABLES: dict[str, Callable[[], Explorable]] = {
    "temperature": temperature,
    "scaling": scaling,
    "mask": mask,
    "window": window,
    "kv-heads": kv_heads,
    "rope": rope,
    "alibi": alibi,
    "online-softmax": online_softmax,
}
"""Each explorable's name (its ``data-explorable`` on the site) and the function of its data."""
