"""MkDocs hook: under ``mkdocs serve``, reuse the output of executed blocks that cannot differ.

A one-page edit makes ``mkdocs serve`` rebuild every page, and the executed Python blocks
dominate that time. This hook stores each block's printed output under a key made of

- the block's source code,
- a hash of every file of the ``attention_math`` and ``attention_site`` packages (so any
  change to either re-executes every block, whether or not the block imports the changed
  module),
- the Python version and the name and version of every installed distribution,

and serves it back when the key matches. A block in a ``session`` also depends on the
session's earlier blocks (their globals are its input), so its key holds the source of
every block of the session so far, in order. The session's history is the one markdown-exec
itself counts (``hooks/fresh_state.py`` starts every page afresh); a block the hook cannot
place in it is run and not cached. When a session block misses after earlier blocks were
served from the cache, their code is run first (output dropped) so that the block finds the
globals it would have found. Blocks that fail are never cached. Anything else a block could
depend on is out of the key. Entries live in ``.cache/markdown-exec/`` at the project root
(gitignored), outside ``docs/``.

``mkdocs build`` (what CI and the deploy run) executes every block, cache or no cache,
unless ``ATTENTION_MATH_EXEC_CACHE=1``; ``ATTENTION_MATH_EXEC_CACHE=0`` turns the cache off
under ``serve`` too.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import markdown_exec_adapter as _exec  # hooks/markdown_exec_adapter.py: markdown-exec's internals

log = logging.getLogger("mkdocs.hooks.exec_cache")

PACKAGES = ("attention_math", "attention_site")  # the library and the site's machinery
CACHE_DIR = Path(__file__).resolve().parents[1] / ".cache" / "markdown-exec"

# markdown-exec's own runner (the adapter keeps it, so that loading this hook twice in one
# process never wraps a wrapper, whose salt could be stale)
_run_uncached: Callable[..., str] = _exec.original_runner()
_state: dict[str, Any] = {"enabled": False, "salt": "", "hits": 0, "misses": 0}


def package_hash(package: str) -> str:
    """SHA-256 over the relative paths and bytes of every file in ``package``'s directory."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"cannot find the package {package!r} to key the execution cache")
    digest = hashlib.sha256()
    for root in spec.submodule_search_locations:
        for path in sorted(Path(root).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def environment_fingerprint() -> str:
    """Python version and every installed distribution's name and version, as one string."""
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    return sys.version + "\n" + "\n".join(dists)


def block_key(code: str, salt: str) -> str:
    """The cache key of a block: its source and the build's salt (package + environment)."""
    return hashlib.sha256(salt.encode() + b"\0" + code.encode()).hexdigest()


def session_key(history: list[tuple[str, str | None, str | None]], salt: str) -> str:
    """The key of a session's last block: every (code, id, title) of the session so far."""
    text = "\0session\0".join(f"{code}\0{id}\0{title}" for code, id, title in history)
    return block_key("\0session\0" + text, salt)


# per session: the blocks markdown-exec has been given so far (code, id, title), and whether
# the session's globals are in this process (its blocks ran here) rather than skipped
_sessions: dict[str, list[tuple[str, str | None, str | None]]] = {}
_local: set[str] = set()


def _store(entry: Path, output: str) -> None:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = entry.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(output, encoding="utf-8")
    tmp.replace(entry)  # atomic: a concurrent build never reads half an entry


def _run_session(
    code: str, session: str, returncode: int | None = None, id: str | None = None, **extra: Any
) -> str:
    """A session block: served by its history's key, or run where its globals are."""
    count = _exec.session_blocks(session)  # the session's blocks so far
    if count == 0:  # a fresh session (a new page): nothing of it ran or was skipped yet
        _sessions[session] = []
        _local.discard(session)
    history = _sessions.get(session)
    if history is None or len(history) != count:
        # markdown-exec ran blocks of this session that the hook did not see: its history
        # is unknown, so nothing is served or stored until the session starts afresh
        _sessions.pop(session, None)
        return _run_uncached(code, returncode=returncode, session=session, id=id, **extra)
    history.append((code, id, extra.get("title")))
    entry = CACHE_DIR / (session_key(history, _state["salt"]) + ".out")
    if session not in _local and entry.is_file():
        _state["hits"] += 1
        _exec.count_block(session)  # as if it ran: later blocks count on
        return entry.read_text(encoding="utf-8")
    if session not in _local:
        # the earlier blocks were served, so their globals are not here: run them first
        _exec.restart_session(session)
        for earlier, earlier_id, title in history[:-1]:
            more = {"title": title} if title is not None else {}
            _run_uncached(earlier, session=session, id=earlier_id, **more)
        _local.add(session)
    output = _run_uncached(code, returncode=returncode, session=session, id=id, **extra)
    _state["misses"] += 1
    _store(entry, output)
    return output


def _run_cached(
    code: str,
    returncode: int | None = None,
    session: str | None = None,
    id: str | None = None,
    **extra: Any,
) -> str:
    if not _state["enabled"]:
        return _run_uncached(code, returncode=returncode, session=session, id=id, **extra)
    if session:
        return _run_session(code, session, returncode=returncode, id=id, **extra)
    entry = CACHE_DIR / (block_key(code, _state["salt"]) + ".out")
    if entry.is_file():
        _state["hits"] += 1
        return entry.read_text(encoding="utf-8")
    output = _run_uncached(code, returncode=returncode, session=session, id=id, **extra)
    _state["misses"] += 1
    _store(entry, output)
    return output


def switched_on(serving: bool) -> bool:
    """The caches' one switch: on under ``serve``, unless ``ATTENTION_MATH_EXEC_CACHE`` says
    otherwise (``1`` on, ``0`` off). This cache, the build memos (``hooks/memo.py``) and the
    typeset maths (``hooks/assets.py``) all follow it."""
    setting = os.environ.get("ATTENTION_MATH_EXEC_CACHE")
    return serving if setting is None else setting == "1"


def on_startup(command: str, dirty: bool) -> None:
    _state["enabled"] = command == "serve"


def on_pre_build(config: Any) -> None:
    enabled = switched_on(_state["enabled"])
    _exec.set_runner(_run_cached if enabled else _run_uncached)
    _state.update(hits=0, misses=0, enabled=enabled)
    _sessions.clear()
    _local.clear()
    if enabled:
        # recomputed every build: under `serve`, an edit in src/ changes every key
        _state["salt"] = (
            "\n".join(package_hash(p) for p in PACKAGES) + "\n" + environment_fingerprint()
        )


def on_post_build(config: Any) -> None:
    if _state["enabled"]:
        log.info("execution cache: %d blocks reused, %d executed", _state["hits"], _state["misses"])
