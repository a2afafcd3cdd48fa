"""The browser visit's records kept between runs, each reused only for the very same bytes.

What ``browser.visit`` records of a page (its probes' answers and its two screenshots) follows
from what Chromium was given: the page's HTML, every file the page requested, and the code that
looked (the probes, axe-core, Chromium and Playwright themselves). So a record is kept on disk
under a fingerprint of that code, with the SHA-256 of every file its page requested, and is
reused only while each of those files is byte for byte what it was at that visit; any other
page is visited afresh. A clean build of the same sources is byte-identical
(``tests/build/test_reproducible_build.py``), so a run after an edit visits the pages the edit
changed (every page, when the edit reaches the theme, a stylesheet or the navigation).

The served address holds a port chosen per run: it is replaced by ``ORIGIN`` in the bytes
hashed and in the records kept, and put back on reuse.

Reuse is on for a contributor's runs and off under CI (``CI`` set), which visits every page.
The records live in the clone's ``.prepare/visits/``: delete it to visit every page again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from attention_math._cache import write_atomic
from attention_site.address import KEPT
from attention_site.checks import browser
from attention_site.checks.axe import axe_source

__all__ = ["ORIGIN", "VisitStore", "fingerprint", "switched_on"]

#: What stands for the served origin (``http://127.0.0.1:PORT``) in what is hashed and kept.
ORIGIN = "http://served.invalid"
KEEP = 3  # fingerprints kept: the newest ones (another branch's checks, say)


def switched_on() -> bool:
    """Whether records are reused: not under CI (``CI`` set), which visits every page.

    Examples:
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"CI": "true"}):
        ...     switched_on()
        False
    """
    return not os.environ.get("CI")


def fingerprint(browser_version: str, code: Iterable[Path] = ()) -> str:
    """SHA-256 of what looks at a page: the modules of ``attention_site.checks``, every
    registered probe's module, the files ``code`` (the caller's fixtures), axe-core, the
    browser's and Playwright's versions, the sizes, the screenshots' setting and the scripts
    the site ships (``scripts.script_users``, which the ``assets`` probe asks about)."""
    from attention_site.checks.scripts import script_users

    here = Path(__file__).parent
    files = {*here.glob("*.py"), *map(Path, code)}
    files |= {Path(inspect.getsourcefile(fn) or "") for fn in browser.PROBES.values()}
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    facts = {
        "axe": hashlib.sha256(axe_source().encode()).hexdigest(),
        "browser": browser_version,
        "playwright": importlib.metadata.version("playwright"),
        "chromium": [str(browser.CHROMIUM), browser.CHROMIUM_ARGS],
        "sizes": [browser.DESKTOP, browser.PHONE],
        "probes": list(browser.PROBES),
        "scripts": script_users(),
    }
    digest.update(json.dumps(facts, sort_keys=True).encode())
    return digest.hexdigest()[:16]


class VisitStore:
    """The kept records of one fingerprint, for one built ``site`` served at ``base_url``.

    Examples:
        >>> import tempfile
        >>> tmp = Path(tempfile.mkdtemp())
        >>> site = tmp / "site"; (site / "a").mkdir(parents=True)
        >>> _ = (site / "a" / "index.html").write_text("<a href='http://127.0.0.1:1/am/a/'>")
        >>> store = VisitStore(site, "http://127.0.0.1:1/am", tmp / "kept", "fp")
        >>> record = {"requests": [["document", "http://127.0.0.1:1/am/a/"]], "status": 200}
        >>> store.put("/a/", record)
        >>> # another run: the site built again for another port, the same bytes but for it
        >>> _ = (site / "a" / "index.html").write_text("<a href='http://127.0.0.1:2/am/a/'>")
        >>> VisitStore(site, "http://127.0.0.1:2/am", tmp / "kept", "fp").get("/a/")["requests"]
        [['document', 'http://127.0.0.1:2/am/a/']]
        >>> _ = (site / "a" / "index.html").write_text("<p>changed</p>")
        >>> VisitStore(site, "http://127.0.0.1:2/am", tmp / "kept", "fp").get("/a/") is None
        True
    """

    def __init__(self, site: Path, base_url: str, root: Path, key: str) -> None:
        parts = urlsplit(base_url)
        self.site, self.base_url = site, base_url.rstrip("/")
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.root, self.dir = root, root / key
        self._hashes: dict[str, str] = {}

    @classmethod
    def for_run(
        cls, site: Path, base_url: str, browser_version: str, code: Iterable[Path] = ()
    ) -> VisitStore:
        """The store under ``.prepare/visits`` for this checking code."""
        return cls(site, base_url, KEPT / "visits", fingerprint(browser_version, code))

    def _file(self, url: str) -> Path | None:
        """The built file behind a URL of the site, or None for any other URL."""
        if not url.startswith(self.base_url + "/"):
            return None
        rel = urlsplit(url).path.removeprefix(urlsplit(self.base_url).path).lstrip("/")
        if rel == "" or rel.endswith("/"):
            rel += "index.html"
        return self.site / rel

    def file_hash(self, url: str) -> str:
        """SHA-256 of the bytes served at ``url``, the origin replaced by ``ORIGIN``; a URL
        outside the site stands for itself (the record says what became of it)."""
        url = url.split("#")[0]
        if url not in self._hashes:
            path = self._file(url)
            if path is None:
                data = b"url:" + url.replace(self.origin, ORIGIN).encode()
            elif path.is_file():
                data = path.read_bytes().replace(self.origin.encode(), ORIGIN.encode())
            else:
                data = b"missing"
            self._hashes[url] = hashlib.sha256(data).hexdigest()
        return self._hashes[url]

    def _inputs(self, path: str, record: dict[str, Any]) -> dict[str, str]:
        urls = [self.base_url + path] + [url for _, url in record.get("requests", [])]
        return {url.replace(self.origin, ORIGIN): self.file_hash(url) for url in urls}

    def get(self, path: str) -> dict[str, Any] | None:
        """The kept record of ``path`` if every file it requested is unchanged (its
        screenshots copied to ``browser.ARTIFACTS``), else None."""
        entry_file = self.dir / f"{browser.slug(path)}.json"
        try:
            entry = json.loads(entry_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        kept: dict[str, str] = entry["inputs"]
        now = {url: self.file_hash(url.replace(ORIGIN, self.origin)) for url in kept}
        shots = [self.dir / name for name in entry["shots"]]
        if now != kept or entry["path"] != path or not all(s.is_file() for s in shots):
            return None
        browser.ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for shot in shots:
            shutil.copyfile(shot, browser.ARTIFACTS / shot.name)
        record: dict[str, Any] = json.loads(entry["record"].replace(ORIGIN, self.origin))
        return record

    def put(self, path: str, record: dict[str, Any]) -> None:
        """Keep ``record``, just made by a visit of ``path``, and its screenshots."""
        self.dir.mkdir(parents=True, exist_ok=True)
        shots = [browser.ARTIFACTS / f"{name}.png" for name in _shots(path)]
        for shot in (s for s in shots if s.is_file()):
            write_atomic(self.dir / shot.name, shot.read_bytes())
        entry = {
            "path": path,
            "shots": [shot.name for shot in shots if shot.is_file()],
            "inputs": self._inputs(path, record),
            "record": json.dumps(record, sort_keys=True).replace(self.origin, ORIGIN),
        }
        write_atomic(self.dir / f"{browser.slug(path)}.json", json.dumps(entry).encode())

    def forget_others(self, keep: int = KEEP) -> None:
        """Remove all but the ``keep`` newest fingerprints' records (this one among them)."""
        if self.dir.is_dir():
            os.utime(self.dir)
        others = sorted(
            (d for d in self.root.glob("*") if d.is_dir() and d != self.dir),
            key=lambda d: d.stat().st_mtime,
            reverse=True,
        )
        for old in others[keep - 1 :]:
            shutil.rmtree(old, ignore_errors=True)


def _shots(path: str) -> list[str]:
    return [browser.slug(path), browser.slug(path) + browser.PHONE_SHOT]
