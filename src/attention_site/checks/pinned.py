"""Files from a package registry, fetched once into a cache and kept only if their hash is the
pinned one.

Prepare takes Pyodide's core from the npm registry and the wheels of SymPy and mpmath from
PyPI (``attention_site.live_runtime``); the browser tests take axe-core from the npm registry
(``axe``).
Each pin names a URL and the hash the registry publishes for it (``npm view NAME@VERSION
dist.integrity``, or ``uv.lock``'s ``hash``), so a download that differs is refused, not used.
Nothing fetched is committed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import tarfile
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from attention_math._cache import write_atomic

__all__ = ["PinError", "fetch", "npm_files", "verify"]


class PinError(RuntimeError):
    """A pinned file could not be fetched, or is not the pinned one; the message says which."""


def fetch(url: str, dest: Path) -> Path:
    """Download ``url`` to ``dest`` once (an existing file is kept: callers verify hashes),
    under a temporary name first, so that no reader sees half a file."""
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + f".{os.getpid()}.part")
    try:
        with urllib.request.urlopen(url, timeout=60) as r, part.open("wb") as f:
            shutil.copyfileobj(r, f)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise PinError(f"cannot fetch {url}: {exc}") from None
    part.replace(dest)
    return dest


def verify(path: Path, algorithm: str, expected: bytes, what: str) -> None:
    """``PinError`` unless ``path`` hashes to ``expected``; a bad file is removed, so that the
    next run fetches it again.

    Examples:
        >>> import hashlib, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     p = Path(tmp) / "f"
        ...     _ = p.write_bytes(b"axe")
        ...     verify(p, "sha256", hashlib.sha256(b"axe").digest(), "f")
        ...     try:
        ...         verify(p, "sha256", b"0" * 32, "f (npm)")
        ...     except PinError as e:
        ...         print(e, p.exists())
        f (npm): sha256 hash mismatch for f; removed, not used False
    """
    got = hashlib.new(algorithm, path.read_bytes()).digest()
    if got != expected:
        path.unlink()
        raise PinError(f"{what}: {algorithm} hash mismatch for {path.name}; removed, not used")


def npm_files(pin: Mapping[str, str], members: list[str], cache: Path) -> Path:
    """The folder under ``cache`` holding ``package/<member>`` for each of ``members`` of the
    npm tarball ``pin`` names (``name``, ``version``, ``tarball``, ``integrity``), verified
    against ``integrity``; only the listed files, by name, are read from the tarball."""
    out = cache / f"{pin['name']}-{pin['version']}"
    if all((out / m).is_file() for m in members):
        return out
    algorithm, _, digest = pin["integrity"].partition("-")
    tgz = fetch(pin["tarball"], cache / f"{pin['name']}-{pin['version']}.tgz")
    verify(tgz, algorithm, base64.b64decode(digest), f"{pin['name']} (npm)")
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tgz) as tar:
        for m in members:
            try:
                found = tar.extractfile(f"package/{m}")
            except KeyError:
                found = None
            if found is None:  # absent, or not a regular file
                raise PinError(f"{pin['name']} {pin['version']}: package/{m} missing")
            write_atomic(out / m, found.read())
    return out
