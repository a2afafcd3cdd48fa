"""MkDocs hook: remember three pure, costly steps of a build across ``mkdocs serve`` rebuilds.

After the execution cache (``hooks/exec_cache.py``), a rebuild under ``serve`` still spent
about a third of its time redoing work whose result is a function of its input alone:

- **search indexing** — Material's search plugin parses every page's HTML to cut it into
  sections. The sections depend only on that HTML string.
- **code highlighting** — Pygments highlights the source tab of every executed block and
  every code block again. For a code *block* the HTML depends only on the arguments and the
  highlighter's settings. Inline code (which comes back as an element the caller edits in
  place) and titled blocks (whose title goes to the page's stash) are not memoised.
- **signature formatting** — mkdocstrings-python runs ``ruff format`` in a subprocess for
  every long signature on the API pages (``separate_signature``), some sixty processes per
  build. The output depends on the code, the line length, the ruff binary (fixed for the
  life of the process) and ruff's configuration files, which are part of the key.

Each memo is keyed on its whole input (the text itself, or a SHA-256 digest of it), so a hit
returns what a fresh call would return: nothing can be stale. The memos live on the patched
modules (through each library's adapter, ``hooks/material_adapter.py``,
``hooks/pymdownx_adapter.py``, ``hooks/mkdocstrings_adapter.py``), which outlast the reloads
of this hook that ``serve`` does on every rebuild, and keep only the entries the last build
used.

Under ``mkdocs serve`` the three memos are also written to disk after each build
(``$XDG_CACHE_HOME/attention-math/memo/``, a pickle of our own making), in a file named by a
digest of the Python version and every installed distribution's version (the search
plugin's parser, Pygments, ruff), so that a restarted ``serve`` answers from them too: about
a third of a warm restart's time. A build (CI, the deploy, the tests' builds) neither reads
nor writes them unless ``ATTENTION_MATH_EXEC_CACHE=1``, the execution cache's own switch.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import logging
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

# the three libraries' internals, each through its adapter (hooks/*_adapter.py), which keeps
# the originals and the memos on the libraries' modules: they outlast this hook's reloading
import material_adapter as _material  # mkdocs-material's search parser
import mkdocstrings_adapter as _mkdocstrings  # mkdocstrings-python's signature formatter
import pymdownx_adapter as _pymdownx  # pymdown-extensions' highlighter
from exec_cache import environment_fingerprint, switched_on  # hooks/exec_cache.py

log = logging.getLogger("mkdocs.hooks.memo")

Memo = dict[str, Any]  # {"used": {key: value}, "old": {key: value}, "hits": int, ...}

_PARSER: type[Any] = _material.original_parser()
_SECTIONS: Memo = _material.shared_memo("memo", {"used": {}, "old": {}, "hits": 0})
_HIGHLIGHT: Callable[..., Any] = _pymdownx.original_highlight()
_HIGHLIGHT_SIGNATURE = inspect.signature(_HIGHLIGHT)
_HIGHLIGHTED: Memo = _pymdownx.shared_memo("memo", {"used": {}, "old": {}, "hits": 0})
_SIGNATURES: Memo = _mkdocstrings.shared_memo("memo", {"used": {}, "old": {}, "hits": 0})

_RUFF_CONFIGS = ("pyproject.toml", "ruff.toml", ".ruff.toml")

#: the memos by the name they are stored under on disk
_ON_DISK: dict[str, Memo] = {"search": _SECTIONS, "highlight": _HIGHLIGHTED, "sign": _SIGNATURES}
# where this process keeps them between runs of `serve` (None: a build; set in on_startup)
_disk: dict[str, Path | None] = {"file": None}


def _lookup(
    memo: Memo,
    key: object,
    compute: Callable[[], Any],
    keep: Callable[[Any], bool] = lambda value: True,
) -> Any:
    """``compute()``, or the value stored under ``key`` by this build or the previous one."""
    for generation in ("used", "old"):
        if key in memo[generation]:
            memo["hits"] += 1
            value = memo[generation][key]
            break
    else:
        value = compute()
        if not keep(value):
            return value
    memo["used"][key] = value
    return value


class MemoParser:
    """Material's search ``Parser`` with the same interface, parsing each distinct HTML once."""

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self.data: list[Any] = []

    def feed(self, data: str) -> None:
        self._chunks.append(data)

    def close(self) -> None:
        html = "".join(self._chunks)

        def parse() -> list[Any]:
            parser = _PARSER()
            parser.feed(html)
            parser.close()
            return list(parser.data)

        key = hashlib.sha256(html.encode("utf-8")).digest()
        # copies: the plugin fills in a missing section title from the page (it assigns
        # the attribute, so copying the sections, not their lists, keeps the memo intact)
        self.data = [copy.copy(section) for section in _lookup(_SECTIONS, key, parse)]


def _memo_highlight(self: Any, *args: Any, **kwargs: Any) -> Any:
    call = _HIGHLIGHT_SIGNATURE.bind(self, *args, **kwargs)
    call.apply_defaults()
    if call.arguments["inline"] or call.arguments["title"] or self.auto_title:
        return _HIGHLIGHT(self, *args, **kwargs)
    # the highlighter's class, every setting (but its Markdown instance) and every argument
    settings = repr(sorted((k, v) for k, v in vars(self).items() if k != "md"))
    arguments = repr([(k, v) for k, v in call.arguments.items() if k != "self"])
    key = (type(self).__module__, type(self).__qualname__, settings, arguments)
    return _lookup(
        _HIGHLIGHTED,
        key,
        lambda: _HIGHLIGHT(self, *args, **kwargs),
        keep=lambda html: isinstance(html, str),
    )


def _ruff_configs() -> str:
    """The text of every file ruff could read its settings from, here and in the parents."""
    texts = []
    for directory in (Path.cwd(), *Path.cwd().parents):
        for name in _RUFF_CONFIGS:
            path = directory / name
            if path.is_file():
                texts.append(f"{path}\0{path.read_text(encoding='utf-8', errors='replace')}")
    return "\0".join(texts)


def _memo_formatter() -> Callable[[str, int], str]:
    formatter = _mkdocstrings.original_formatter()

    def format_code(code: str, line_length: int) -> str:
        return str(
            _lookup(
                _SIGNATURES,
                (code, line_length, _SIGNATURES["configs"]),
                lambda: formatter(code, line_length),
                keep=lambda out: out != code,  # the formatter failed and gave the code back
            )
        )

    return format_code


def _disk_file() -> Path:
    """The memos' file: named by the environment, which decides what each call returns."""
    from attention_math._cache import user_cache

    digest = hashlib.sha256(environment_fingerprint().encode()).hexdigest()[:32]
    return user_cache() / "memo" / f"{digest}.pickle"


def _read_disk(path: Path) -> None:
    """Fill empty memos from the last ``serve``'s file, if any (a bad file is ignored)."""
    if any(memo["used"] or memo["old"] for memo in _ON_DISK.values()):
        return  # this process has memos of its own already
    try:
        stored = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return
    for name, memo in _ON_DISK.items():
        memo["used"] = dict(stored.get(name, {}))


def _write_disk(path: Path) -> None:
    """What this build used, atomically (a concurrent ``serve`` never reads half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps({n: m["used"] for n, m in _ON_DISK.items()}))
    tmp.replace(path)
    for other in path.parent.glob("*.pickle"):  # another environment's: never read again
        if other != path:
            other.unlink(missing_ok=True)


def on_startup(command: str, dirty: bool) -> None:
    # the execution cache's switch: a build with ATTENTION_MATH_EXEC_CACHE=1 fills these too
    _disk["file"] = _disk_file() if switched_on(command == "serve") else None


def on_pre_build(config: Any) -> None:
    if _disk["file"] is not None:
        _read_disk(_disk["file"])
    _material.set_parser(MemoParser)
    _pymdownx.set_highlight(_memo_highlight)
    _mkdocstrings.set_formatter(_memo_formatter)
    _SIGNATURES["configs"] = _ruff_configs()
    for memo in (_SECTIONS, _HIGHLIGHTED, _SIGNATURES):
        # what the last build used stays available; anything older is dropped
        memo["old"], memo["used"], memo["hits"] = memo["used"], {}, 0


def on_post_build(config: Any) -> None:
    if _disk["file"] is not None:
        _write_disk(_disk["file"])
    log.info(
        "memo: calls answered from memory: %d search parses (%d distinct pages), "
        "%d highlightings (%d distinct blocks), %d signature formats (%d distinct)",
        _SECTIONS["hits"],
        len(_SECTIONS["used"]),
        _HIGHLIGHTED["hits"],
        len(_HIGHLIGHTED["used"]),
        _SIGNATURES["hits"],
        len(_SIGNATURES["used"]),
    )
