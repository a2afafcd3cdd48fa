"""The conventions every figure follows: matplotlib drawn as SVG text.

Every figure is deterministic (fixed SVG hash salt, no date in the metadata), so two
builds of the same commit give the same bytes, and uses ``currentColor`` for text and
axes so that it reads in both the light and the dark colour scheme.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import html
import io
import math
import re
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import numpy as np

from attention_math.display import Svg
from attention_math.terminal import plain

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn
    from matplotlib.figure import Figure

__all__ = ["LEGIBLE_PX", "description", "drawn_once", "fluid", "legible", "style", "svg"]

_P = ParamSpec("_P")
_S = TypeVar("_S", bound=str)  # SVG text, which cannot be changed
KEPT = 256
"""Figures `drawn_once` keeps per function, the least recently drawn dropped first."""


def _content(value: object) -> Hashable:
    """A hashable stand-in for an argument, equal for equal content: an array by its dtype,
    shape and bytes, a list, tuple or dict by its items; ``TypeError`` for what has none."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_content(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((_content(k), _content(v)) for k, v in value.items()))
    hash(value)  # TypeError when it cannot be a key
    return (type(value).__name__, value)  # 1, 1.0 and True draw different labels


def drawn_once(draw: Callable[_P, _S]) -> Callable[_P, _S]:
    """``draw``, remembering its figures in memory by the content of its arguments.

    A figure is a pure function of its arguments, and its SVG text cannot be changed, so
    the same arrays (the same dtype, shape and bytes) give the kept text back instead of
    drawing again: a page's block that draws runs on every build of ``mkdocs serve``, in
    one process. At most `KEPT` figures per function; an argument with no content to key
    on (an object of no value equality) draws afresh.

    Examples:
        >>> import numpy as np
        >>> from attention_math.plot.style import drawn_once
        >>> calls = []
        >>> @drawn_once
        ... def figure(w, *, title):
        ...     calls.append(title)
        ...     return Svg(f"<svg>{title} {np.asarray(w).sum()}</svg>")
        >>> figure(np.eye(2), title="a") is figure(np.eye(2), title="a")
        True
        >>> _ = figure(np.eye(2) * 2, title="a"); _ = figure([[1.0, 0.0]], title="a")
        >>> calls
        ['a', 'a', 'a']
    """
    kept: collections.OrderedDict[Hashable, _S] = collections.OrderedDict()

    @functools.wraps(draw)
    def drawn(*args: _P.args, **kwargs: _P.kwargs) -> _S:
        try:
            key = (_content(args), _content(dict(sorted(kwargs.items()))))
        except TypeError:
            return draw(*args, **kwargs)
        if key in kept:
            kept.move_to_end(key)
            return kept[key]
        figure = draw(*args, **kwargs)
        kept[key] = figure
        if len(kept) > KEPT:
            kept.popitem(last=False)
        return figure

    return drawn


_FG = "#808080"  # replaced by currentColor in the SVG text, see svg()

LEGIBLE_PX = 10
"""The smallest text a figure shows on a screen, in CSS pixels: on a phone a figure is drawn
no narrower than keeps its smallest text this large (`legible`), and scrolls in its box."""


def style() -> contextlib.AbstractContextManager[None]:
    """The site's matplotlib style; draw every figure inside ``with style():``.

    Text and axes use a placeholder grey that `svg` turns into ``currentColor``.

    Examples:
        >>> import matplotlib
        >>> from attention_math.plot.style import style
        >>> with style():
        ...     matplotlib.rcParams["svg.fonttype"]
        'none'
    """
    import matplotlib  # optional dependency: imported when a figure is drawn

    return matplotlib.rc_context(
        {
            "svg.hashsalt": "attention-math",
            "svg.fonttype": "none",  # text stays text: smaller, selectable, themable
            "font.size": 10,
            "text.color": _FG,
            "axes.edgecolor": _FG,
            "axes.labelcolor": _FG,
            "xtick.color": _FG,
            "ytick.color": _FG,
            "axes.facecolor": "none",
            "figure.facecolor": "none",
            "savefig.facecolor": "none",
        }
    )


def _check_labelled(fig: Figure) -> None:
    """Raise ValueError unless every plot in ``fig`` has a title and both axis labels."""
    suptitle = fig.get_suptitle()  # "" when there is none
    for n, ax in enumerate(fig.axes):
        if getattr(ax, "_colorbar", None) is not None:
            continue  # a colour bar is read through its plot's title
        title = suptitle or "".join(ax.get_title(loc) for loc in ("left", "center", "right"))
        missing = [
            what
            for what, text in (
                ("title", title),
                ("x-axis label", ax.get_xlabel()),
                ("y-axis label", ax.get_ylabel()),
            )
            if not text.strip()
        ]
        if missing:
            raise ValueError(f"figure axes {n} has no {', no '.join(missing)}: label every plot")


def _scope_ids(text: str) -> str:
    """Prefix the SVG's element ids with a hash of its content.

    Several figures inlined in one page would otherwise share ids such as ``figure_1``
    (invalid HTML, and a clip path could then refer to another figure's).
    """
    prefix = "f" + hashlib.sha256(text.encode()).hexdigest()[:10] + "-"
    text = re.sub(r'\bid="', f'id="{prefix}', text)
    return re.sub(r'(url\(#|href="#)', rf"\g<1>{prefix}", text)


def svg(fig: Figure) -> Svg:
    """The figure as inline SVG text (deterministic), then closed.

    The same figure gives the same bytes on every run: fixed hash salt, no date or
    creator in the metadata. Text and axes drawn in the placeholder grey become
    ``currentColor`` (so they follow the page's light or dark scheme), and ids are
    prefixed per figure so that several figures can share a page.

    Raises:
        ValueError: if a plot has no title (its own or the figure's) or an axis label.

    Examples:
        >>> import matplotlib.pyplot as plt
        >>> from attention_math.plot.style import style, svg
        >>> with style():
        ...     fig, ax = plt.subplots()
        ...     _ = ax.set(title="a title", xlabel="key", ylabel="weight")
        ...     text = svg(fig)
        >>> text.startswith("<svg") and "currentColor" in text
        True
        >>> with style():
        ...     fig, ax = plt.subplots()
        ...     _ = ax.loglog([0.1, 100], [1, 2])
        ...     _ = ax.set(title="log axes", xlabel="m", ylabel="error")
        ...     text = svg(fig)
        >>> "$" in text or "<!--" in text
        False
        >>> with style():
        ...     fig, ax = plt.subplots()
        ...     svg(fig)
        Traceback (most recent call last):
        ValueError: figure axes 0 has no title, no x-axis label, no y-axis label: label every plot
    """
    import matplotlib  # optional dependency: imported when a figure is drawn
    import matplotlib.pyplot as plt

    try:
        _check_labelled(fig)
        buf = io.StringIO()
        with matplotlib.rc_context({"svg.hashsalt": "attention-math"}):
            fig.savefig(
                buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight"
            )
    finally:
        plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and doctype: inline in HTML
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    # matplotlib comments each mathtext label with its source ($\mathdefault{10^{2}}$ on a log
    # axis); the glyphs are drawn already, and the site's maths typesetter would read the TeX
    text = re.sub(r"\s*<!--.*?-->", "", text, flags=re.S)
    text = text.replace(_FG, "currentColor").replace(_FG.upper(), "currentColor")
    # the glyphs are paths: the text alternative names what the figure shows, for screen
    # readers and for search (titles, axes and legend entries, maths in Unicode)
    sizes = [t.get_fontsize() for t in fig.findobj(_text_class()) if _shown(t)]  # type: ignore[attr-defined]
    width = re.search(r'<svg [^>]*?width="([0-9.]+)pt"', text)
    if sizes and width is not None:
        text = legible(text, float(width.group(1)), min(sizes))
    label = html.escape(description(fig), quote=True)
    text = text.replace("<svg ", f'<svg role="img" aria-label="{label}" ', 1)
    return Svg(_scope_ids(text))


def _text_class() -> type:
    from matplotlib.text import Text

    return Text


def _shown(text: object) -> bool:
    """A text the figure draws: visible, not empty, on a visible plot."""
    axes = getattr(text, "axes", None)
    return bool(
        text.get_visible()  # type: ignore[attr-defined]
        and text.get_text().strip()  # type: ignore[attr-defined]
        and (axes is None or axes.get_visible())
    )


def legible(text: str, width: float, smallest: float) -> str:
    """The SVG ``text`` told how narrow it may be drawn: its smallest text, ``smallest``
    units high in a drawing ``width`` units wide, is then `LEGIBLE_PX` CSS pixels.

    The width is a custom property (``--min-width``) on the ``<svg>``: the site's style sheet
    applies it on screens narrower than a desktop's column, where the figure's box scrolls
    sideways instead of shrinking its text below legibility.

    Examples:
        >>> from attention_math.plot.style import legible
        >>> legible('<svg width="400pt" viewBox="0 0 400 300">', 400, 8)
        '<svg style="--min-width: 500px" width="400pt" viewBox="0 0 400 300">'
    """
    if not width > 0 or not smallest > 0:
        raise ValueError(f"width and smallest must be positive, got {width!r}, {smallest!r}")
    need = math.ceil(LEGIBLE_PX * width / smallest)
    return text.replace("<svg ", f'<svg style="--min-width: {need}px" ', 1)


def description(fig: Figure) -> str:
    r"""A text alternative for ``fig``: its title, then each plot's title, axis labels and
    legend entries, with the maths written in Unicode.

    Examples:
        >>> import matplotlib.pyplot as plt
        >>> from attention_math.plot.style import description, style
        >>> with style():
        ...     fig, ax = plt.subplots()
        ...     _ = ax.plot([0, 1], [0, 1], label="$d_k = 4$")
        ...     _ = ax.set(title="scores $q \\cdot k$", xlabel="key", ylabel="weight")
        ...     _ = ax.legend()
        ...     print(description(fig))
        ...     plt.close(fig)
        Figure. scores q · k: weight against key; legend: dₖ = 4.
    """
    parts = []
    parts.append(fig.get_suptitle())
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        about = f"{ax.get_title()}: " if ax.get_title() else ""
        # "y against x", as a figure is described in words
        about += " against ".join(x for x in (ax.get_ylabel(), ax.get_xlabel()) if x)
        legend = ax.get_legend()
        if legend is not None:
            about += "; legend: " + ", ".join(t.get_text() for t in legend.get_texts())
        parts.append(about)
    words = ". ".join(p.strip() for p in parts if p.strip())
    return "Figure. " + plain(words).replace("$", "") + "."


def fluid(text: str, max_width: str | None = None) -> Svg:
    """The SVG ``text`` sized to the width of its box (its viewBox keeps the proportions),
    at most ``max_width`` (a CSS length) when given.

    Examples:
        >>> from attention_math.plot.style import fluid
        >>> fluid('<svg width="300pt" height="200pt" viewBox="0 0 300 200">')
        '<svg width="100%" viewBox="0 0 300 200">'
        >>> fluid('<svg width="3pt" height="2pt">', max_width="20rem")
        '<svg width="100%" style="max-width: 20rem">'
        >>> fluid('<svg style="--min-width: 5px" width="3pt" height="2pt">', max_width="20rem")
        '<svg style="max-width: 20rem; --min-width: 5px" width="100%">'
    """
    text = re.sub(r'width="[^"]*pt" height="[^"]*pt"', 'width="100%"', text, count=1)
    if max_width:
        head, sep, rest = text.partition(">")
        if ' style="' in head:  # one style attribute: `legible`'s width joins it
            head = head.replace(' style="', f' style="max-width: {max_width}; ', 1)
        else:
            head = head.replace('width="100%"', f'width="100%" style="max-width: {max_width}"', 1)
        text = head + sep + rest
    return Svg(text)
