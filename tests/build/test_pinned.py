"""Third-party files fetched from a package registry are kept only if their hash is the pinned
one (``attention_site.checks.pinned``: Pyodide for the build, axe-core for the tests)."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from attention_site.checks import axe
from attention_site.checks.pinned import PinError, npm_files


def _tarball(tmp_path: Path, files: dict[str, bytes]) -> dict[str, str]:
    """An npm-like tarball (every file under ``package/``) and the pin naming it."""
    tgz = tmp_path / "registry" / "demo-1.0.0.tgz"
    tgz.parent.mkdir()
    with tarfile.open(tgz, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    digest = base64.b64encode(hashlib.sha512(tgz.read_bytes()).digest()).decode()
    return {
        "name": "demo",
        "version": "1.0.0",
        "tarball": tgz.as_uri(),
        "integrity": f"sha512-{digest}",
    }


def test_the_listed_files_are_taken_from_a_verified_tarball(tmp_path: Path) -> None:
    pin = _tarball(tmp_path, {"a.js": b"axe", "b.js": b"not asked for"})
    out = npm_files(pin, ["a.js"], tmp_path / "cache")
    assert (out / "a.js").read_bytes() == b"axe"
    assert not (out / "b.js").exists()  # only what is listed leaves the tarball


def test_a_tarball_of_another_hash_is_refused_and_not_kept(tmp_path: Path) -> None:
    pin = _tarball(tmp_path, {"a.js": b"axe"})
    wrong = base64.b64encode(hashlib.sha512(b"something else").digest()).decode()
    cache = tmp_path / "cache"
    with pytest.raises(PinError, match=r"demo \(npm\): sha512 hash mismatch"):
        npm_files({**pin, "integrity": f"sha512-{wrong}"}, ["a.js"], cache)
    assert not list(cache.rglob("*.js")) and not list(cache.glob("*.tgz"))


def test_a_missing_file_and_an_unreachable_registry_are_named(tmp_path: Path) -> None:
    pin = _tarball(tmp_path, {"a.js": b"axe"})
    with pytest.raises(PinError, match=r"demo 1.0.0: package/c.js missing"):
        npm_files(pin, ["c.js"], tmp_path / "cache")
    gone = {**pin, "tarball": (tmp_path / "nowhere.tgz").as_uri()}
    with pytest.raises(PinError, match=r"cannot fetch file://.*nowhere\.tgz"):
        npm_files(gone, ["a.js"], tmp_path / "other-cache")


def test_axe_core_is_pinned_to_one_release_of_the_npm_registry() -> None:
    pin = axe.AXE_CORE
    url = f"https://registry.npmjs.org/axe-core/-/axe-core-{pin['version']}.tgz"
    assert pin["tarball"] == url
    assert pin["integrity"].startswith("sha512-")
    assert len(base64.b64decode(pin["integrity"].removeprefix("sha512-"))) == 64
