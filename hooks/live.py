"""MkDocs hook: the answer boxes check answers in the reader's browser, with no server.

At build time it gathers, once, into the git-ignored ``.cache/live/``:

- the Pyodide core from the npm registry's ``pyodide`` tarball, pinned with its integrity
  hash in ``hooks/live.lock.json``;
- the pure-Python wheels of SymPy and mpmath at the versions and hashes of ``uv.lock``;
- and builds ``attention_math``'s own wheel with hatchling;

then adds them to the site under ``assets/live/`` with a ``manifest.json`` for the worker
(``docs/javascripts/live/``). A page holding an answer box gets one short inline script that
imports the checker on the first "Check": nothing is downloaded before the reader asks.

If the runtime cannot be fetched, the build says so (under ``CI`` it fails instead, as CI
must exercise the real runtime) and every answer box says that checking in the browser is
unavailable in this build; the rest of the site is unaffected.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import shutil
import tarfile
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url

log = logging.getLogger("mkdocs.hooks.live")

ROOT = Path(__file__).resolve().parents[1]
LOCK = Path(__file__).with_suffix(".lock.json")
CACHE = ROOT / ".cache" / "live"
DEST = "assets/live"  # in the site
SCRIPTS = "javascripts/live"  # our own worker and page code, in docs/
UNAVAILABLE = "Checking in the browser is unavailable in this build: use the Python or Shell tab."
BOX = 'class="exercise-check"'

_state: dict[str, Any] = {"manifest": None, "reason": ""}


class LiveError(RuntimeError):
    """The in-browser runtime could not be gathered; the message says what and why."""


def _fetch(url: str, dest: Path) -> Path:
    """Download ``url`` to ``dest`` once (an existing file is kept: callers verify hashes)."""
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + f".{os.getpid()}.part")
    try:
        with urllib.request.urlopen(url, timeout=60) as r, part.open("wb") as f:
            shutil.copyfileobj(r, f)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise LiveError(f"cannot fetch {url}: {exc}") from None
    part.replace(dest)
    return dest


def _verify(path: Path, algorithm: str, expected: bytes, what: str) -> None:
    got = hashlib.new(algorithm, path.read_bytes()).digest()
    if got != expected:
        path.unlink()  # a bad download is not kept: the next build fetches it again
        raise LiveError(f"{what}: {algorithm} hash mismatch for {path.name}; removed, not used")


def pyodide_core(lock: dict[str, Any]) -> Path:
    """The directory holding the pinned Pyodide core files, verified against the lock."""
    pin = lock["pyodide"]
    algorithm, _, digest = pin["integrity"].partition("-")
    tgz = _fetch(pin["tarball"], CACHE / f"pyodide-{pin['version']}.tgz")
    _verify(tgz, algorithm, base64.b64decode(digest), "pyodide (npm)")
    out = CACHE / f"pyodide-{pin['version']}"
    if not all((out / name).is_file() for name in pin["files"]):
        out.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tgz) as tar:
            for name in pin["files"]:  # only the listed files, by name: nothing else is read
                member = tar.extractfile(f"package/{name}")
                if member is None:
                    raise LiveError(f"pyodide {pin['version']}: package/{name} missing")
                (out / name).write_bytes(member.read())
    return out


def pypi_wheels(names: list[str]) -> list[tuple[str, str, Path]]:
    """``(name, version, wheel)`` for each pure-Python wheel pinned in ``uv.lock``, verified."""
    packages = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))["package"]
    out = []
    for name in names:
        found = [p for p in packages if p["name"] == name]
        if len(found) != 1:
            raise LiveError(f"uv.lock pins {len(found)} versions of {name}; need exactly one")
        wheels = [w for w in found[0].get("wheels", []) if w["url"].endswith("-py3-none-any.whl")]
        if not wheels:
            raise LiveError(f"uv.lock has no pure-Python wheel of {name}")
        url, (algorithm, _, digest) = wheels[0]["url"], wheels[0]["hash"].partition(":")
        path = _fetch(url, CACHE / "wheels" / url.rsplit("/", 1)[1])
        _verify(path, algorithm, bytes.fromhex(digest), f"{name} (PyPI)")
        out.append((name, found[0]["version"], path))
    return out


def project_wheel() -> Path:
    """``attention_math``'s wheel, built by hatchling from the sources (cached by content)."""
    from hatchling.builders.wheel import WheelBuilder

    package = [
        p
        for p in (ROOT / "src" / "attention_math").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts  # code and any package data
    ]
    sources = [*sorted(package), ROOT / "pyproject.toml"]
    h = hashlib.sha256()
    for p in sources:
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    out = CACHE / f"project-{h.hexdigest()[:16]}"
    built = sorted(out.glob("*.whl"))
    if not built:
        tmp = out.with_name(out.name + f".{os.getpid()}.part")
        shutil.rmtree(tmp, ignore_errors=True)
        built = [Path(p) for p in WheelBuilder(str(ROOT)).build(directory=str(tmp))]
        tmp.replace(out) if not out.exists() else shutil.rmtree(tmp)
        built = sorted(out.glob("*.whl"))
        # each edit of the sources makes a new wheel: keep the last few, not every one
        done = [d for d in CACHE.glob("project-*") if "." not in d.name]  # not a *.part
        stale = sorted(done, key=lambda d: d.stat().st_mtime)[:-3]
        for old in stale:
            shutil.rmtree(old, ignore_errors=True)
    return built[0]


def _file(src: Path, dest: str, config: Any) -> File:
    return File(
        src.name,
        src_dir=str(src.parent),
        dest_dir=str(Path(config["site_dir"]) / dest),
        use_directory_urls=config["use_directory_urls"],
    )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def on_files(files: Files, config: Any) -> Files:
    _state.update(manifest=None, reason="")
    try:
        lock = json.loads(LOCK.read_text(encoding="utf-8"))
        core = pyodide_core(lock)
        wheels = [*pypi_wheels(lock["wheels"]), ("attention_math", "", project_wheel())]
    except (LiveError, OSError, KeyError, ValueError, tarfile.TarError) as exc:
        if os.environ.get("CI"):
            raise LiveError(f"in-browser checking: {exc} (required under CI)") from exc
        _state["reason"] = str(exc)
        log.info("in-browser checking is UNAVAILABLE in this build (%s); answer boxes say so", exc)
        return files
    for name in lock["pyodide"]["files"]:
        files.append(_file(core / name, f"{DEST}/pyodide", config))
    entries = []
    for name, version, path in wheels:
        files.append(_file(path, f"{DEST}/wheels", config))
        entries.append(
            {"name": name, "version": version, "path": f"wheels/{path.name}", "sha": _digest(path)}
        )
    manifest = {"pyodide": lock["pyodide"]["version"], "wheels": entries}
    blob = json.dumps(manifest, indent=1, sort_keys=True).encode()
    _state["manifest"] = manifest
    _state["version"] = hashlib.sha256(
        blob + b"".join(f.read_bytes() for f in sorted((ROOT / "docs" / SCRIPTS).glob("*.js")))
    ).hexdigest()[:16]
    files.append(File.generated(config, f"{DEST}/manifest.json", content=blob))
    return files


def _loader(page_url: str) -> str:
    """The page's one inline script: on the first "Check", import the checker (not before)."""
    if _state["manifest"] is None:
        return ""
    live = get_relative_url(f"{SCRIPTS}/live.js", page_url) + f"?v={_state['version']}"
    return (
        '<script type="module">document.addEventListener("submit",e=>{'
        'const f=e.target.closest(".exercise-check, .own-example");if(!f)return;'
        f"e.preventDefault();import(new URL({json.dumps(live)},location.href))"
        ".then(m=>m.submit(f))})</script>"
    )


def on_post_page(output: str, page: Any, config: Any) -> str:
    if BOX not in output and 'class="own-example"' not in output:
        return output
    if _state["manifest"] is None:  # say so in every box, and do not offer the button
        output = output.replace(
            '<span class="exercise-check__verdict" role="status" aria-live="polite"></span>',
            '<span class="exercise-check__verdict" role="status" aria-live="polite"'
            f' data-verdict="error">{UNAVAILABLE}</span>',
        ).replace('<button type="submit" class="md-button">', '<button type="submit" disabled>')
        return output
    return output.replace("</body>", _loader(page.url) + "</body>", 1)
