"""MkDocs hook: remember two pure, costly steps of a build across ``mkdocs serve`` rebuilds.

After the execution cache (``hooks/exec_cache.py``), a rebuild under ``serve`` still spent
about a third of its time redoing work whose result is a function of its input alone:

- **signature formatting** — mkdocstrings-python runs ``ruff format`` in a subprocess for
  every long signature on the API pages (``separate_signature``), some sixty processes per
  build. Its output depends only on the code, the line length and the ruff binary, which
  is fixed for the life of the process.
- **search indexing** — Material's search plugin parses every page's HTML to cut it into
  sections. The sections depend only on that HTML string.
- **code highlighting** — Pygments highlights the source tab of every executed block and
  every signature again. The HTML depends only on the arguments and the highlighter's
  settings (calls with a title, which writes to the page's stash, are not memoised).
- **template compilation** — every rebuild makes new Jinja environments (the theme's and
  mkdocstrings'), which compile each template again. Jinja's own bytecode cache, kept in
  memory here, reuses the compiled code; Jinja itself checks it against a checksum of the
  template's source and recompiles an edited template.

Each is memoised on its exact input (the full text, not a summary of it), so a hit returns
what a fresh call would return: nothing can be stale. The memos live on the patched
modules, which outlast the reloads of this hook that ``serve`` does on every rebuild, and
keep only the entries the last build used.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import logging

import jinja2
from jinja2 import bccache as _bccache
from material.plugins.search import plugin as _search
from mkdocstrings_handlers.python._internal import rendering as _rendering
from pymdownx import highlight as _highlight

log = logging.getLogger("mkdocs.hooks.memo")

# The originals, kept on their modules so that loading this hook twice never wraps a wrapper.
if not hasattr(_search, "_attention_math_parser"):
    _search._attention_math_parser = _search.Parser
    _search._attention_math_memo = {"used": {}, "old": {}, "hits": 0}
if not hasattr(_rendering, "_attention_math_get_formatter"):
    _rendering._attention_math_get_formatter = _rendering._get_formatter
    _rendering._attention_math_memo = {"used": {}, "old": {}, "hits": 0}

if not hasattr(_highlight, "_attention_math_highlight"):
    _highlight._attention_math_highlight = _highlight.Highlight.highlight
    _highlight._attention_math_memo = {"used": {}, "old": {}, "hits": 0}
if not hasattr(_bccache, "_attention_math_memo"):
    _bccache._attention_math_memo = {}  # environment kind -> {bucket key: bytecode}

_PARSER = _search._attention_math_parser
_SECTIONS = _search._attention_math_memo
_SIGNATURES = _rendering._attention_math_memo
_HIGHLIGHT = _highlight._attention_math_highlight
_HIGHLIGHTED = _highlight._attention_math_memo
_HIGHLIGHT_SIGNATURE = inspect.signature(_HIGHLIGHT)


def _lookup(memo: dict, key: object, compute):
    """``compute()``, or the value stored under ``key`` by this build or the previous one."""
    for generation in ("used", "old"):
        if key in memo[generation]:
            memo["hits"] += 1
            value = memo[generation][key]
            break
    else:
        value = compute()
    memo["used"][key] = value
    return value


class MemoParser:
    """Material's search ``Parser`` with the same interface, parsing each distinct HTML once."""

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self.data: list = []

    def feed(self, data: str) -> None:
        self._chunks.append(data)

    def close(self) -> None:
        html = "".join(self._chunks)

        def parse() -> list:
            parser = _PARSER()
            parser.feed(html)
            parser.close()
            return parser.data

        key = hashlib.sha256(html.encode("utf-8")).digest()
        # copies: the plugin fills in a missing section title from the page (it assigns
        # the attribute, so copying the sections, not their lists, keeps the memo intact)
        self.data = [copy.copy(section) for section in _lookup(_SECTIONS, key, parse)]


def _memo_formatter():
    formatter = _rendering._attention_math_get_formatter()

    def format_code(code: str, line_length: int) -> str:
        return _lookup(_SIGNATURES, (code, line_length), lambda: formatter(code, line_length))

    return format_code


def _memo_highlight(self, *args, **kwargs):
    call = _HIGHLIGHT_SIGNATURE.bind(self, *args, **kwargs)
    call.apply_defaults()
    if call.arguments["title"] or self.auto_title:
        return _HIGHLIGHT(self, *args, **kwargs)  # the title goes to the page's stash
    # every setting of the highlighter (but its Markdown instance) and every argument
    settings = repr(sorted((k, v) for k, v in vars(self).items() if k != "md"))
    arguments = repr([(k, v) for k, v in call.arguments.items() if k != "self"])
    return _lookup(_HIGHLIGHTED, (settings, arguments), lambda: _HIGHLIGHT(self, *args, **kwargs))


class MemoryBytecodeCache(jinja2.BytecodeCache):
    """Jinja's bytecode cache in a dict; Jinja rejects an entry whose source has changed."""

    def __init__(self, store: dict[str, bytes]) -> None:
        self.store = store

    def load_bytecode(self, bucket: _bccache.Bucket) -> None:
        if bucket.key in self.store:
            bucket.bytecode_from_string(self.store[bucket.key])

    def dump_bytecode(self, bucket: _bccache.Bucket) -> None:
        self.store[bucket.key] = bucket.bytecode_to_string()


def _bytecode_cache(kind: str) -> MemoryBytecodeCache:
    # one store per kind of environment: the compiled code depends on its options
    return MemoryBytecodeCache(_bccache._attention_math_memo.setdefault(kind, {}))


def on_env(env, config, files):
    env.bytecode_cache = _bytecode_cache("theme")
    if "mkdocstrings" in config.plugins:
        handler = config.plugins["mkdocstrings"].handlers.get_handler("python")
        handler.env.bytecode_cache = _bytecode_cache("mkdocstrings-python")
    return env


def on_pre_build(config):
    _search.Parser = MemoParser
    _rendering._get_formatter = _memo_formatter
    _highlight.Highlight.highlight = _memo_highlight
    for memo in (_SECTIONS, _SIGNATURES, _HIGHLIGHTED):
        # what the last build used stays available; anything older is dropped
        memo["old"], memo["used"], memo["hits"] = memo["used"], {}, 0


def on_post_build(config):
    log.info(
        "memo: reused %d of %d pages' search sections, %d of %d signatures, "
        "%d of %d highlighted blocks",
        _SECTIONS["hits"],
        len(_SECTIONS["used"]),
        _SIGNATURES["hits"],
        len(_SIGNATURES["used"]),
        _HIGHLIGHTED["hits"],
        len(_HIGHLIGHTED["used"]),
    )
