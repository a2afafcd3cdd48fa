"""The explorables' HTML: sliders over stops the package computed when the site was built.

`explorable_html(name)` renders one explorable of `attention_site.explore`: an element
``data-explorable="NAME"`` holding a labelled ``<input type="range">`` per slider (its value
is the stop's index, so the arrow keys move one stop), an ``aria-live="polite"`` readout whose
``data-quantity`` elements hold the numbers as text (``data-value``: the float64 itself), an
SVG drawing, and every stop's texts and drawing as JSON (``<script type="application/json">``).
The page's one script, ``docs/javascripts/explorables.js``, only swaps in the chosen stop.
Every number is formatted here by the package's rules (`render.decimal_text`), so the page
shows the text a reader would get from ``attention_math`` itself.
"""

from __future__ import annotations

import functools
import html
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from attention_math.display import decimal_text
from attention_site import explore

__all__ = ["QUANTITIES", "explorable_html", "quantity_text", "quantity_value", "stop_text"]

Frame = dict[str, Any]
# (text before, quantity, text after) … : the readout's sentence, one slot per number
Readout = tuple[tuple[str, str, str], ...]


def stop_text(stop: float | int | str) -> str:
    """A slider stop as the page writes it: a number by ``decimal_text``, a string as is.

    Examples:
        >>> from attention_site.pages.explorables import stop_text
        >>> stop_text(0.25), stop_text(1024), stop_text("top-left")
        ('0.25', '1024', 'top-left')
    """
    if isinstance(stop, str):
        return stop
    return decimal_text(stop, 6)


def _d(digits: int) -> Callable[[float], str]:
    return lambda x: decimal_text(x, digits)


def _int(x: float) -> str:
    return str(int(x))


# Each explorable's readout and how each of its numbers is written. A quantity is a key of
# the frame, or derived from it (``DERIVED``).
QUANTITIES: dict[str, dict[str, Callable[[Any], str]]] = {
    "temperature": {
        "T": stop_text,
        "max-weight": _d(6),
        "entropy": _d(4),
        "uniform-entropy": _d(4),
    },
    "scaling": {
        "d_k": _int,
        "std-unscaled": _d(3),
        "max-weight-unscaled": _d(3),
        "std-scaled": _d(3),
        "max-weight-scaled": _d(3),
    },
    "mask": {
        "alignment": str,
        "L_q": _int,
        "L_k": _int,
        "rule": str,
        "visible-pairs": str,
        "empty-rows-text": str,
    },
    "window": {
        "w": _int,
        "n_layers": _int,
        "receptive-field": _int,
        "length": _int,
        "formula": _int,
    },
    "kv-heads": {
        "model": str,
        "h": _int,
        "h_kv": _int,
        "sharing": str,
        "kv-noun": str,
        "published-note": str,
        "bytes-per-token": _int,
        "kib-per-token": _d(4),
        "context": _int,
        "gib-at-context": _d(4),
        "comparison": str,
        "saving-percent": _d(4),
    },
    "rope": {
        "p": _int,
        "base": _int,
        "angle-0": _d(4),
        "angle-1": _d(4),
        "theta-1": _d(4),
        "score": _d(6),
    },
    "alibi": {
        "n_heads": _int,
        "head": _int,
        "exponent": str,
        "slope": _d(6),
        "far": _int,
        "bias-far": _d(6),
    },
    "online-softmax": {
        "block_size": _int,
        "tiles": _int,
        "m": _d(6),
        "ell": _d(6),
        "o": _d(6),
        "output": _d(12),
        "reference": _d(12),
    },
}
"""For each explorable, the quantities its readout shows and how each is written."""

DERIVED: dict[str, Callable[[Frame], Any]] = {
    # the diagonal's offset written into the rule: "j ≤ i", "j ≤ i + 2", "j ≤ i − 1"
    "rule": lambda f: (
        "j ≤ i"
        if f["offset"] == 0
        else f"j ≤ i + {f['offset']}"
        if f["offset"] > 0
        else f"j ≤ i − {-f['offset']}"
    ),
    "visible-pairs": lambda f: (
        f"{f['visible']} (query, key) pair is"
        if f["visible"] == 1
        else f"{f['visible']} (query, key) pairs are"
    ),
    "empty-rows-text": lambda f: (
        "1 row sees" if f["empty-rows"] == 1 else f"{f['empty-rows']} rows see"
    ),
    "published-note": lambda f: ", the model's own choice" if f["published"] else "",
    "kv-noun": lambda f: " kv head" if f["h_kv"] == 1 else " kv heads",
    # one query head per kv head is multi-head attention itself: no "1 times smaller"
    "sharing": lambda f: (
        "one query head per kv head: multi-head attention"
        if f["group"] == 1
        else f"{f['group']} query heads share each"
    ),
    "comparison": lambda f: (
        "as large as multi-head attention's, since it is multi-head attention"
        if f["factor"] == 1
        else f"{f['factor']} times smaller than multi-head attention's"
    ),
    "saving-percent": lambda f: 100 * f["saving"],
    "kib-per-token": lambda f: f["bytes-per-token"] / 2**10,
    "gib-at-context": lambda f: f["context-bytes"] / 2**30,
    "angle-0": lambda f: f["angles"][0],
    "angle-1": lambda f: f["angles"][1],
    "theta-1": lambda f: f["theta"][1],
    "far": lambda f: len(f["bias"]) - 1,
    "bias-far": lambda f: f["bias"][0],
    "m": lambda f: f["m"][-1],
    "ell": lambda f: f["ell"][-1],
    "o": lambda f: f["o"][-1],
}


def quantity_value(frame: Frame, quantity: str) -> Any:
    """The value of ``quantity`` at ``frame``: a key of the frame, or derived from it
    (``DERIVED``: bytes as KiB, the last state of a trace …).

    Examples:
        >>> from attention_site.explore import kv_heads
        >>> from attention_site.pages.explorables import quantity_value
        >>> quantity_value(kv_heads().frame(h_kv=8), "kib-per-token")
        320.0
    """
    if quantity in DERIVED:
        return DERIVED[quantity](frame)
    return frame[quantity]


def quantity_text(name: str, frame: Frame, quantity: str) -> str:
    """The text explorable ``name`` shows for ``quantity`` at ``frame``.

    Raises:
        ValueError: an explorable or quantity the site does not show.

    Examples:
        >>> from attention_site.explore import temperature
        >>> from attention_site.pages.explorables import quantity_text
        >>> quantity_text("temperature", temperature().frame(T=1), "max-weight")
        '0.576117'
        >>> quantity_text("temperature", temperature().frame(T=1), "weights")
        Traceback (most recent call last):
        ...
        ValueError: the temperature explorable shows no quantity 'weights'
    """
    if name not in QUANTITIES:
        raise ValueError(f"no explorable named {name!r}; the names: {sorted(QUANTITIES)}")
    if quantity not in QUANTITIES[name]:
        raise ValueError(f"the {name} explorable shows no quantity {quantity!r}")
    return QUANTITIES[name][quantity](quantity_value(frame, quantity))


READOUTS: dict[str, Readout] = {
    "temperature": (
        ("Temperature ", "T", ": "),
        ("the largest weight is ", "max-weight", ", "),
        ("the entropy ", "entropy", " nats "),
        ("(at most ", "uniform-entropy", ", for equal weights)."),
    ),
    "scaling": (
        ("dₖ = ", "d_k", ". "),
        ("Unscaled: standard deviation ", "std-unscaled", ", "),
        ("mean largest weight ", "max-weight-unscaled", ". "),
        ("Divided by √dₖ: standard deviation ", "std-scaled", ", "),
        ("mean largest weight ", "max-weight-scaled", "."),
    ),
    "mask": (
        ("", "alignment", ", "),
        ("L_q = ", "L_q", ", "),
        ("L_k = ", "L_k", ": "),
        ("query i sees key j when ", "rule", "; "),
        ("", "visible-pairs", " visible, "),
        ("", "empty-rows-text", " no key."),
    ),
    "window": (
        ("Window w = ", "w", ", "),
        ("", "n_layers", " layers: "),
        ("the last token reads ", "receptive-field", " "),
        ("of ", "length", " tokens; "),
        ("the derived min(L, n_layers (w − 1) + 1) = ", "formula", "."),
    ),
    "kv-heads": (
        ("", "model", ", "),
        ("h = ", "h", " query heads, "),
        ("h_kv = ", "h_kv", ""),
        ("", "kv-noun", " "),
        ("(", "sharing", ")"),
        ("", "published-note", ": "),
        ("the cache holds ", "bytes-per-token", " bytes per token "),
        ("(", "kib-per-token", " KiB), "),
        ("", "gib-at-context", " GiB "),
        ("at its context of ", "context", " tokens; "),
        ("", "comparison", ", "),
        ("a saving of ", "saving-percent", " % of the cache, with the same h query heads."),
    ),
    "rope": (
        ("Query at position i = ", "p", ", key at 0, "),
        ("base ", "base", ": "),
        ("pair 0 is turned by i θ₀ = ", "angle-0", " rad, "),
        ("pair 1 by i θ₁ = ", "angle-1", " rad "),
        ("(θ₁ = ", "theta-1", "); "),
        ("the score q·k/√dₖ is ", "score", "."),
    ),
    "alibi": (
        ("", "n_heads", " heads, "),
        ("head ", "head", ": "),
        ("slope β = 2 to the power −(", "exponent", ") "),
        ("= ", "slope", "; "),
        ("the key ", "far", " positions back "),
        ("gets the bias ", "bias-far", "."),
    ),
    "online-softmax": (
        ("Tile size ", "block_size", ": "),
        ("", "tiles", " tiles. After the last, "),
        ("m = ", "m", ", "),
        ("λ = ", "ell", ", "),
        ("o = ", "o", "; "),
        ("o / λ = ", "output", ", "),
        ("the softmax-weighted sum of the whole row ", "reference", "."),
    ),
}


# ---- drawings: small SVGs, styled by the site's stylesheet (classes ex-*) ---------------


def _n(x: float) -> str:
    """An SVG coordinate: one decimal is a tenth of a pixel, enough."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _svg(width: int, height: int, body: str, label: str) -> str:
    """One panel, never drawn wider than its own coordinates (the text stays 12 px); the
    panels of a figure sit side by side, or one above the other on a phone."""
    return (
        f'<svg viewBox="0 0 {width} {height}" style="max-width:{width}px" role="img"'
        f' aria-label="{html.escape(label)}" xmlns="http://www.w3.org/2000/svg">{body}</svg>'
    )


def _text(x: float, y: float, s: str, anchor: str = "middle", cls: str = "ex-text") -> str:
    return (
        f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}" class="{cls}">'
        f"{html.escape(s)}</text>"
    )


def _rect(x: float, y: float, w: float, h: float, cls: str, extra: str = "") -> str:
    return f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" class="{cls}"{extra}/>'


def _bars(values: Sequence[float], labels: Sequence[str], top: float, *, width: int = 360) -> str:
    """Vertical bars of ``values`` in ``[0, top]`` with their value above and label below."""
    h, base, n = 150, 125, len(values)
    step = (width - 20) / n
    out = [f'<line x1="10" x2="{width - 10}" y1="{base}" y2="{base}" class="ex-axis"/>']
    for i, (v, lab) in enumerate(zip(values, labels, strict=True)):
        bh = 100 * v / top
        x = 10 + i * step + step * 0.15
        out.append(_rect(x, base - bh, step * 0.7, bh, "ex-bar"))
        out.append(_text(x + step * 0.35, base - bh - 4, decimal_text(v, 3)))
        out.append(_text(x + step * 0.35, base + 15, lab))
    return _svg(width, h, "".join(out), "bar chart")


def _figure_temperature(f: Frame, _: explore.Explorable) -> str:
    labels = [f"token {j + 1}" for j in range(len(f["weights"]))]
    body = _bars(f["weights"], labels, 1.0)
    return body.replace('aria-label="bar chart"', 'aria-label="the weights of the row"')


def _figure_scaling(f: Frame, ex: explore.Explorable) -> str:
    top = max(max(g["hist-scaled"] + g["hist-unscaled"]) for g in ex.frames.values())
    edges = f["edges"]
    span = edges[-1]
    panels = []
    for tag, title in (("unscaled", "q·k, unscaled"), ("scaled", "q·k / √dₖ")):
        out = []
        x0, w, base = 20, 280, 150
        shares = f[f"hist-{tag}"]
        step = w / len(shares)
        out.append(_text(x0 + w / 2, 16, title))
        for i, share in enumerate(shares):
            bh = 120 * share / top
            if bh > 0:
                out.append(_rect(x0 + i * step, base - bh, step * 0.9, bh, "ex-bar"))
        out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{base}" y2="{base}" class="ex-axis"/>')
        for x, lab in ((x0, f"−{stop_text(span)}"), (x0 + w / 2, "0"), (x0 + w, stop_text(span))):
            out.append(_text(x, base + 15, lab))
        outside = decimal_text(100 * f[f"outside-{tag}"], 3)
        out.append(_text(x0 + w / 2, base + 32, f"{outside} % beyond ±{stop_text(span)}"))
        panels.append(_svg(320, 190, "".join(out), f"histogram of {title}"))
    return "".join(panels)


def _figure_mask(f: Frame, _: explore.Explorable) -> str:
    m, p = f["mask"], f["weights"]
    cell, x0, y0 = 40, 40, 24
    out = [_text(x0 + cell * len(m[0]) / 2, 14, "keys j")]
    for i, row in enumerate(m):
        out.append(_text(x0 - 8, y0 + i * cell + cell / 2 + 4, f"q{i + 1}", "end"))
        for j, seen in enumerate(row):
            x, y = x0 + j * cell, y0 + i * cell
            if seen:
                weight = p[i][j]
                shade = f' style="fill-opacity:{_n(0.15 + 0.85 * weight)}"'
                out.append(_rect(x + 1, y + 1, cell - 2, cell - 2, "ex-cell", shade))
                cls = "ex-text ex-on" if weight > 0.5 else "ex-text"
                out.append(_text(x + cell / 2, y + cell / 2 + 4, decimal_text(weight, 2), cls=cls))
            else:
                out.append(_rect(x + 1, y + 1, cell - 2, cell - 2, "ex-masked"))
    width = x0 + cell * 6 + 10
    height = y0 + cell * 6 + 10
    return _svg(width, height, "".join(out), "the mask (grey: blocked) and the weights")


def _figure_window(f: Frame, _: explore.Explorable) -> str:
    n, cell, x0, y0 = f["length"], 18, 60, 24
    out = [_text(x0 + n * cell / 2, 14, "tokens that reach the last one")]
    for depth, row in enumerate(f["reach"]):
        y = y0 + depth * (cell + 4)
        out.append(_text(x0 - 8, y + cell / 2 + 4, f"layer {depth + 1}", "end"))
        out.append(_rect(x0, y, n * cell, cell, "ex-masked"))  # the row; reached tokens on it
        out += [_rect(x0 + j * cell + 1, y, cell - 2, cell, "ex-cell") for j in range(n) if row[j]]
    height = y0 + 6 * (cell + 4) + 4
    return _svg(x0 + n * cell + 10, height, "".join(out), "the receptive field, layer by layer")


def _figure_kv_heads(f: Frame, _: explore.Explorable) -> str:
    h, group = f["h"], f["group"]
    per_row = 16
    cell = 20
    out = [_text(10, 14, "query heads, coloured by the kv head they share", "start")]
    for i in range(h):
        r, c = divmod(i, per_row)
        cls = "ex-cell" if (i // group) % 2 == 0 else "ex-cell2"
        out.append(_rect(10 + c * cell, 22 + r * cell, cell - 3, cell - 3, cls))
    y = 30 + math.ceil(h / per_row) * cell
    share = 320 / f["factor"]  # multi-head attention's cache: the whole bar
    out.append(_text(10, y + 6, "cache per token against multi-head attention", "start"))
    out.append(_rect(10, y + 14, 320, 18, "ex-masked"))
    out.append(_rect(10, y + 14, share, 18, "ex-bar"))
    return _svg(340, int(y + 40), "".join(out), "the query heads grouped, and the cache")


def _figure_rope(f: Frame, ex: explore.Explorable) -> str:
    out = []
    cx, cy, r = 100, 110, 70
    scale = max(max(math.hypot(*pair) for pair in f["pairs"]), 1e-9)
    out.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" class="ex-axis"/>')
    out.append(_text(cx, 20, "the query's pairs, turned"))
    out.append(_text(cx, 200, "dashed: at position 0"))
    for i, (before, after) in enumerate(zip(f["pairs"], f["rotated"], strict=True)):
        cls = "ex-line" if i == 0 else "ex-line2"
        for (x, y), extra in ((before, ' stroke-dasharray="4 3" opacity="0.5"'), (after, "")):
            x2, y2 = cx + r * x / scale, cy - r * y / scale
            out.append(
                f'<line x1="{cx}" y1="{cy}" x2="{_n(x2)}" y2="{_n(y2)}" class="{cls}"{extra}/>'
            )
        x, y = after
        out.append(_text(cx + (r + 14) * x / scale, cy - (r + 14) * y / scale + 4, f"{i}"))
    circle = _svg(200, 210, "".join(out), "the query's pairs before and after the rotation")
    out = []
    curve = f["curve"]
    lo = float(min(min(g["curve"]) for g in ex.frames.values()))
    hi = float(max(max(g["curve"]) for g in ex.frames.values()))
    x0, w, y0, h = 20, 320, 30, 150
    step = w / (len(curve) - 1)

    def y_of(s: float) -> float:
        return y0 + h - h * (s - lo) / (hi - lo)

    points = " ".join(f"{_n(x0 + i * step)},{_n(y_of(s))}" for i, s in enumerate(curve))
    out.append(_text(x0 + w / 2, 20, "score against the offset"))
    zero = y_of(0.0)
    out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{_n(zero)}" y2="{_n(zero)}" class="ex-axis"/>')
    out.append(f'<polyline points="{points}" class="ex-line"/>')
    px, py = x0 + f["p"] * step, y_of(f["score"])
    out.append(f'<circle cx="{_n(px)}" cy="{_n(py)}" r="5" class="ex-dot"/>')
    out.append(_text(x0, y0 + h + 16, "0"))
    out.append(_text(x0 + w, y0 + h + 16, str(len(curve) - 1)))
    return circle + _svg(360, 210, "".join(out), "the score against the offset")


def _figure_alibi(f: Frame, ex: explore.Explorable) -> str:
    bias = f["bias"]
    lo = min(min(g["bias"]) for g in ex.frames.values())
    out = [_text(190, 14, "bias of the last query, key by key")]
    n, x0, w, top = len(bias), 20, 340, 30
    step = w / n
    out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{top}" y2="{top}" class="ex-axis"/>')
    for j, b in enumerate(bias):
        bh = 110 * b / lo if lo else 0.0
        out.append(_rect(x0 + j * step + step * 0.15, top, step * 0.7, bh, "ex-bar"))
        out.append(_text(x0 + j * step + step * 0.5, top + bh + 14, decimal_text(b, 3)))
    out.append(_text(x0 + w / 2, top + 150, "key j (the query is the last)"))
    row = _svg(380, 190, "".join(out), "the bias row of the head")
    out = []
    slopes = f["slopes"]
    steepest = max(max(g["slopes"]) for g in ex.frames.values())
    sx, sw = 20, 220
    sstep = sw / len(slopes)
    out.append(_text(sx + sw / 2, 14, "slopes of the heads"))
    for k, s in enumerate(slopes):
        cls = "ex-bar" if k == f["head"] - 1 else "ex-masked"
        bh = 120 * s / steepest
        out.append(_rect(sx + k * sstep, 160 - bh, sstep * 0.8, bh, cls))
    out.append(f'<line x1="{sx}" x2="{sx + sw}" y1="160" y2="160" class="ex-axis"/>')
    return row + _svg(260, 190, "".join(out), "the slopes of all heads, this one in colour")


def _figure_online_softmax(f: Frame, _: explore.Explorable) -> str:
    s, block = f["scores"], f["block_size"]
    n = len(s)
    x0, w, mid, h = 10, 340, 90, 60
    top = max(abs(x) for x in s)
    step = w / n
    out = [_text(x0 + w / 2, 14, "scores, tile by tile; the line: the running maximum m")]
    out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{mid}" y2="{mid}" class="ex-axis"/>')
    for j, x in enumerate(s):
        bh = h * abs(x) / top
        y = mid - bh if x > 0 else mid
        tile = j // block
        out.append(
            _rect(x0 + j * step + 2, y, step - 4, bh, "ex-bar" if tile % 2 == 0 else "ex-bar2")
        )
    points = []
    for t, m in enumerate(f["m"]):
        xa, xb = x0 + t * block * step, x0 + min(n, (t + 1) * block) * step
        ym = mid - h * m / top
        points += [f"{_n(xa)},{_n(ym)}", f"{_n(xb)},{_n(ym)}"]
    out.append(f'<polyline points="{" ".join(points)}" class="ex-line"/>')
    svg = _svg(360, 165, "".join(out), "the scores in tiles and the running maximum")
    rows = "".join(
        f"<tr><td>{t + 1}</td><td>{t * block + 1}–{min(n, (t + 1) * block)}</td>"
        f"<td>{decimal_text(m, 4)}</td><td>{decimal_text(ell, 4)}</td>"
        f"<td>{decimal_text(o, 4)}</td></tr>"
        for t, (m, ell, o) in enumerate(zip(f["m"], f["ell"], f["o"], strict=True))
    )
    table = (
        '<div class="ex-scroll" tabindex="0" role="region" aria-label="the trace, tile by tile">'
        '<table class="ex-trace"><thead><tr><th scope="col">tile</th><th scope="col">keys</th>'
        '<th scope="col">m</th><th scope="col">λ</th><th scope="col">o</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )
    return svg + table


FIGURES: dict[str, Callable[[Frame, explore.Explorable], str]] = {
    "temperature": _figure_temperature,
    "scaling": _figure_scaling,
    "mask": _figure_mask,
    "window": _figure_window,
    "kv-heads": _figure_kv_heads,
    "rope": _figure_rope,
    "alibi": _figure_alibi,
    "online-softmax": _figure_online_softmax,
}


def _json(data: object) -> str:
    """JSON safe inside ``<script>``: no ``<`` at all, so no ``</script>`` and no tag that a
    later pass over the page's HTML could take for one of its own."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _readout_html(name: str, frame: Frame) -> str:
    parts = []
    for before, quantity, after in READOUTS[name]:
        text = quantity_text(name, frame, quantity)
        value = quantity_value(frame, quantity)
        attr = "" if isinstance(value, str) else f' data-value="{float(value)!r}"'
        parts.append(
            f'{html.escape(before)}<span data-quantity="{quantity}"{attr}>'
            f"{html.escape(text)}</span>{html.escape(after)}"
        )
    return "".join(parts)


def explorable_html(name: str, ex: explore.Explorable | None = None) -> str:
    """The HTML of explorable ``name`` (its data: ``explore.EXPLORABLES[name]()`` unless given).

    Raises:
        ValueError: a name that is not an explorable.

    Examples:
        >>> from attention_site.pages.explorables import explorable_html
        >>> page = explorable_html("kv-heads")
        >>> 'data-explorable="kv-heads"' in page, '<input type="range"' in page
        (True, True)
        >>> explorable_html("gravity")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: no explorable named 'gravity'; the names: ['alibi', 'kv-heads', ...]
    """
    if name not in explore.EXPLORABLES:
        raise ValueError(f"no explorable named {name!r}; the names: {sorted(explore.EXPLORABLES)}")
    return _default_html(name) if ex is None else _html(name, ex)


@functools.cache  # the package's own data for ``name``: computed once per process
def _default_html(name: str) -> str:
    return _html(name, explore.EXPLORABLES[name]())


def _html(name: str, ex: explore.Explorable) -> str:
    start = tuple(s.start for s in ex.sliders)
    first = ex.frames[start]
    sliders = []
    for s, at in zip(ex.sliders, start, strict=True):
        ident = f"explorable-{name}-{s.name}".replace("_", "-")
        limit = f' data-limit="{s.limit}"' if s.limit else ""
        # a limited slider's range ends at its limit's stop (a head index ≤ the head count)
        top = start[[t.name for t in ex.sliders].index(s.limit)] if s.limit else len(s.stops) - 1
        texts = [stop_text(x) for x in s.stops]
        sliders.append(
            f'<div class="ex-slider"><label for="{ident}">{html.escape(s.label)}</label>'
            f'<input type="range" id="{ident}" data-slider="{s.name}" min="0"'
            f' max="{top}" step="1" value="{at}"'
            f' aria-valuetext="{html.escape(texts[at])}"{limit}></div>'
        )
    figure = FIGURES[name]
    frames = {
        ",".join(map(str, key)): {
            "q": {q: quantity_text(name, frame, q) for q in QUANTITIES[name]},
            "v": {
                q: float(quantity_value(frame, q))
                for q in QUANTITIES[name]
                if not isinstance(quantity_value(frame, q), str)
            },
            "fig": figure(frame, ex),
        }
        for key, frame in ex.frames.items()
    }
    data = {
        "stops": {s.name: [stop_text(x) for x in s.stops] for s in ex.sliders},
        "frames": frames,
    }
    extra = ""
    if name == "temperature":  # the row itself, for tests of the page from outside
        extra = f' data-scores="{html.escape(json.dumps(first["scores"]))}"'
    return (
        f'<div class="explorable" data-explorable="{name}" data-stop="{",".join(map(str, start))}"'
        f"{extra}>"
        f'<div class="ex-sliders">{"".join(sliders)}</div>'
        f'<p class="ex-readout" aria-live="polite">{_readout_html(name, first)}</p>'
        f'<div class="ex-figure" data-figure>{figure(first, ex)}</div>'
        f'<script type="application/json">{_json(data)}</script>'
        "</div>"
    )
