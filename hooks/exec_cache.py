"""MkDocs hook: under ``mkdocs serve``, reuse the output of executed blocks that cannot differ.

A one-page edit makes ``mkdocs serve`` rebuild every page, and the executed Python blocks
dominate that time. This hook stores each block's printed output under a key made of

- the block's source code,
- a hash of every file of the ``attention_math`` package (so any change to the package
  re-executes every block, whether or not the block imports the changed module),
- the Python version and the name and version of every installed distribution,

and serves it back when the key matches. Anything else a block could depend on is out of
the key, so blocks with a ``session`` (whose output depends on earlier blocks) are never
cached, nor are blocks that fail. Entries live in ``.cache/markdown-exec/`` at the project
root (gitignored), outside ``docs/``.

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
from pathlib import Path

from markdown_exec._internal.formatters import python as _python

log = logging.getLogger("mkdocs.hooks.exec_cache")

PACKAGE = "attention_math"
CACHE_DIR = Path(__file__).resolve().parents[1] / ".cache" / "markdown-exec"

# markdown-exec's own runner, kept on its module so that loading this hook twice in one
# process never wraps a wrapper (whose salt could be stale)
if not hasattr(_python, "_attention_math_uncached_run"):
    _python._attention_math_uncached_run = _python._run_python
_run_uncached = _python._attention_math_uncached_run
_state = {"enabled": False, "salt": "", "hits": 0, "misses": 0}


def package_hash(package: str = PACKAGE) -> str:
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


def _run_cached(code: str, returncode=None, session=None, id=None, **extra) -> str:
    if not _state["enabled"] or session:
        return _run_uncached(code, returncode=returncode, session=session, id=id, **extra)
    entry = CACHE_DIR / (block_key(code, _state["salt"]) + ".out")
    if entry.is_file():
        _state["hits"] += 1
        return entry.read_text(encoding="utf-8")
    output = _run_uncached(code, returncode=returncode, session=session, id=id, **extra)
    _state["misses"] += 1
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = entry.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(output, encoding="utf-8")
    tmp.replace(entry)  # atomic: a concurrent build never reads half an entry
    return output


def on_startup(command, dirty):
    _state["enabled"] = command == "serve"


def on_pre_build(config):
    setting = os.environ.get("ATTENTION_MATH_EXEC_CACHE")
    enabled = _state["enabled"] if setting is None else setting == "1"
    _python._run_python = _run_cached if enabled else _run_uncached
    _state.update(hits=0, misses=0, enabled=enabled)
    if enabled:
        # recomputed every build: under `serve`, an edit in src/ changes every key
        _state["salt"] = package_hash(PACKAGE) + "\n" + environment_fingerprint()


def on_post_build(config):
    if _state["enabled"]:
        log.info("execution cache: %d blocks reused, %d executed", _state["hits"], _state["misses"])
