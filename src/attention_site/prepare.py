"""What the pages need before any generator runs, written into git-ignored folders.

``python -m attention_site.prepare`` (the build command, ``attention_site.build``, runs it
first; ``mkdocs serve`` runs it before each build from ``hooks/prepare.py``) writes:

- the API reference's pages and each section's ``SUMMARY.md`` (read by literate-nav), under
  ``docs/reference/api/`` and ``docs/reference/derivations/`` (``attention_site.pages.reference``);
- one notebook per page that runs code, in the folder of the page's HTML
  (``docs/forward/softmax/forward-softmax.ipynb``: ``attention_site.notebooks``), and the
  index from which ``attention_site.notebook_link`` links each page to its notebook;
- the in-browser runtime of the answer boxes under ``docs/assets/live/``
  (``attention_site.live_runtime``), and what ``attention_site.live_loader`` needs to know;
- the trained toy model's weights, ``docs/assets/toy/weights.json``.

Each of the four is keyed by the content it is made from (``.prepare/keys.json``): a step
whose inputs did not change is skipped, and a file whose bytes did not change is not
rewritten (``mkdocs serve`` watches ``docs/``). A file a step wrote before and no longer
makes is removed. ``.prepare/`` also keeps the runtime's downloads and compiled archives,
each named by what it is made from. Together these are one disk cache (CONTRIBUTING.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import posixpath
import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from attention_math._cache import write_atomic
from attention_site.address import KEPT, site_url

__all__ = ["STEPS", "Prepared", "changed", "for_build", "main", "prepare", "site_url"]

ROOT = Path(__file__).resolve().parents[2]
STATE = KEPT.name  # under the root: keys, the notebooks' index, the runtime's downloads

Outputs = dict[str, bytes]  # path under the root -> bytes


@dataclass
class Prepared:
    """What one run of `prepare` did: the steps it ran and those it skipped, with seconds."""

    ran: dict[str, float] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        ran = ", ".join(f"{k} {v:.1f} s" for k, v in self.ran.items()) or "nothing"
        done = f"prepare: made {ran}; up to date: {', '.join(self.skipped) or 'nothing'}"
        return "\n".join([done, *self.notes])


def _hash(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:20]


def _files(folder: Path, pattern: str, root: Path) -> list[bytes]:
    """Each file's path and content, in order: the names count as much as the bytes."""
    return [
        p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes()
        for p in sorted(folder.rglob(pattern))
        if "__pycache__" not in p.parts
    ]


# --- the four steps: each is (key of its inputs, maker of its outputs) ---------------------


def reference_key(root: Path) -> str:
    """The reference pages depend on the package's module names, not their text."""
    src = root / "src"
    names = [
        p.relative_to(src).as_posix().encode()
        for p in sorted((src / "attention_math").rglob("*.py"))
        if "__pycache__" not in p.parts
    ]
    this = root / "src" / "attention_site" / "pages" / "reference.py"
    return _hash([*names, this.read_bytes()])


def reference_files(root: Path) -> Outputs:
    from attention_site.pages.reference import generated_files

    return {f"docs/{path}": text.encode() for path, text in generated_files().items()}


def _pages(root: Path) -> list[Path]:
    """The docs' Markdown pages (the reference's, written first, run no code)."""
    return sorted((root / "docs").rglob("*.md"))


def notebooks_key(root: Path) -> str:
    # the notebooks' writer, and the index's (this file, with notebook_link's keys)
    code = [root / "src" / "attention_site" / n for n in ("notebooks.py", "notebook_link.py")]
    pages = [p.relative_to(root).as_posix().encode() + p.read_bytes() for p in _pages(root)]
    here = Path(__file__).read_bytes()
    return _hash([*pages, *(c.read_bytes() for c in code), here, site_url(root).encode()])


def notebook_files(root: Path) -> Outputs:
    import nbformat

    from attention_site import notebook_link, notebooks

    url = site_url(root)
    out: Outputs = {}
    index: dict[str, dict[str, object]] = {}
    for page in _pages(root):
        source = page.read_text(encoding="utf-8")
        if not notebooks.runs_code(source):
            continue
        src_uri = page.relative_to(root / "docs").as_posix()
        title = next(
            (m[1] for m in re.finditer(r"^#\s+(.+?)(?:\s*\{[^}]*\})?\s*$", source, re.M)),
            notebooks.notebook_name(src_uri),
        )
        nb = notebooks.notebook(source, src_uri, url, title)
        text: str = nbformat.writes(nb)  # type: ignore[no-untyped-call]
        out[f"docs/{notebooks.notebook_path(src_uri)}"] = text.encode() + b"\n"
        key = notebook_link.fingerprint(source)
        if key in index:
            raise ValueError(f"docs/{src_uri} has the same text as another page")
        index[key] = {
            "name": notebooks.notebook_name(src_uri),
            # relative to the page's source, as the page's other links are
            "link": posixpath.relpath(notebooks.notebook_path(src_uri), posixpath.dirname(src_uri)),
            "home": src_uri == "index.md",
            # what finds the notebook of a page edited since (notebook_link, zensical serve)
            "title": notebook_link.title(source),
        }
    out[f"{STATE}/notebooks.json"] = json.dumps(index, indent=1, sort_keys=True).encode()
    return out


def live_key(root: Path) -> str:
    from attention_site import live_runtime

    parts = [
        (root / "uv.lock").read_bytes(),
        *(p.read_bytes() for p in [live_runtime.LOCK, *live_runtime.COMPILE]),
        *(
            p.relative_to(root).as_posix().encode() + p.read_bytes()
            for p in live_runtime.project_sources()
        ),
        *_files(root / "docs" / "javascripts" / "live", "*.js", root),  # the loader's ?v=
        Path(live_runtime.__file__).read_bytes(),
        os.environ.get("CI", "").encode(),
    ]
    return _hash(parts)


def live_files(root: Path) -> Outputs:
    from attention_site import live_runtime
    from attention_site.checks.pinned import PinError

    cache = root / STATE / "live"
    try:
        files, manifest, why = live_runtime.gather(cache)
    except (live_runtime.LiveError, PinError, OSError, KeyError, ValueError) as exc:
        if os.environ.get("CI"):
            raise live_runtime.LiveError(f"in-browser checking: {exc} (required under CI)") from exc
        state = {"version": None, "reason": f"in-browser checking is UNAVAILABLE: {exc}"}
        return {f"{STATE}/live.json": json.dumps(state).encode()}
    out = {f"docs/assets/live/{name}": path.read_bytes() for name, path in files.items()}
    blob = json.dumps(manifest, indent=1, sort_keys=True).encode()
    out["docs/assets/live/manifest.json"] = blob
    scripts = _files(root / "docs" / "javascripts" / "live", "*.js", root)
    version = hashlib.sha256(blob + b"".join(scripts)).hexdigest()[:16]
    reason = f"the runtime ships SOURCES, not bytecode ({why})" if why else ""
    out[f"{STATE}/live.json"] = json.dumps({"version": version, "reason": reason}).encode()
    return out


def toy_key(root: Path) -> str:
    src = root / "src"
    return _hash(
        [
            *_files(src / "attention_math" / "toy", "*.py", root),
            *(p.read_bytes() for p in sorted((src / "attention_math").glob("*.py"))),
            (src / "attention_site" / "figures" / "toy_heads.py").read_bytes(),
        ]
    )


def toy_files(root: Path) -> Outputs:
    from attention_math.toy import load
    from attention_site.figures.toy_heads import WEIGHTS_PATH, weights_file

    return {f"docs/{WEIGHTS_PATH}": weights_file(load())}


STEPS: dict[str, tuple[Callable[[Path], str], Callable[[Path], Outputs]]] = {
    "reference": (reference_key, reference_files),
    "notebooks": (notebooks_key, notebook_files),
    "live": (live_key, live_files),
    "toy": (toy_key, toy_files),
}
"""The steps, in order: name -> (key of its inputs, maker of its files)."""


# --- running them ----------------------------------------------------------------------------


def _differs(path: Path, data: bytes) -> bool:
    return not (path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data)


def _write(root: Path, outputs: Outputs) -> int:
    """Write each file whose bytes differ from what is there; how many were written."""
    written = 0
    for rel, data in outputs.items():
        path = root / rel
        if not _differs(path, data):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
        written += 1
    return written


def prepare(root: Path = ROOT, steps: Iterable[str] | None = None) -> Prepared:
    """Run each step whose inputs changed since it last ran in ``root``; see the module."""
    state = root / STATE
    state.mkdir(exist_ok=True)
    keys_file = state / "keys.json"
    keys: dict[str, dict[str, object]] = (
        json.loads(keys_file.read_text(encoding="utf-8")) if keys_file.is_file() else {}
    )
    done = Prepared()
    for name in steps or STEPS:
        key_of, make = STEPS[name]
        key = key_of(root)
        last = keys.get(name, {})
        before = [str(p) for p in last.get("files", [])]  # type: ignore[attr-defined]
        if last.get("key") == key and all((root / p).is_file() for p in before):
            done.skipped.append(name)
            continue
        start = time.perf_counter()
        outputs = make(root)
        _write(root, outputs)
        for stale in set(before) - set(outputs):
            (root / stale).unlink(missing_ok=True)
        keys[name] = {"key": key, "files": sorted(outputs)}
        write_atomic(keys_file, json.dumps(keys, indent=1, sort_keys=True).encode())
        done.ran[name] = time.perf_counter() - start
    live = state / "live.json"
    if live.is_file() and (why := json.loads(live.read_text(encoding="utf-8")).get("reason")):
        done.notes.append(why)
    return done


_MEMO: dict[str, tuple[str, Outputs]] = {}  # root:step -> (key, outputs), in a serving process


def changed(root: Path = ROOT, steps: Iterable[str] | None = None) -> Outputs:
    """For a build inside ``mkdocs serve`` after the first: the ``docs/`` files, in memory,
    that differ from those there, of each step whose inputs changed since prepare last ran,
    for the build to use in their place (``hooks/prepare.py`` hands them over in ``on_files``).

    Written into ``docs/``, they would make ``mkdocs serve``, which watches it, build the whole
    site a second time after each edit. The steps' other files (``.prepare/``, which no one
    watches) are written, and the step's key in ``keys.json`` is forgotten, so the next
    `prepare` makes the step again and writes ``docs/``, even when the edit was undone
    (``.prepare/`` then holds what the edit made, which the kept key no longer describes).
    Each step's outputs are kept in memory by key, so an edit of one page remakes the
    notebooks once.
    """
    keys_file = root / STATE / "keys.json"
    keys: dict[str, dict[str, object]] = (
        json.loads(keys_file.read_text(encoding="utf-8")) if keys_file.is_file() else {}
    )
    out: Outputs = {}
    forgotten = False
    for name in steps or STEPS:
        key_of, make = STEPS[name]
        key = key_of(root)
        last = keys.get(name, {})
        before = [str(p) for p in last.get("files", [])]  # type: ignore[attr-defined]
        if last.get("key") == key and all((root / p).is_file() for p in before):
            continue
        memo = f"{root}:{name}"
        if memo not in _MEMO or _MEMO[memo][0] != key:
            _MEMO[memo] = (key, make(root))
        outputs = _MEMO[memo][1]
        if _write(root, {p: data for p, data in outputs.items() if not p.startswith("docs/")}):
            if last.get("key") is not None:
                last["key"], forgotten = None, True
    if forgotten:
        write_atomic(keys_file, json.dumps(keys, indent=1, sort_keys=True).encode())
        out.update(
            {
                p: data
                for p, data in outputs.items()
                if p.startswith("docs/") and _differs(root / p, data)
            }
        )
    return out


_BUILDS = {"count": 0}  # the builds of this process that asked `for_build`


def for_build(root: Path = ROOT, steps: Iterable[str] | None = None) -> Outputs:
    """What a build started by MkDocs itself (``hooks/prepare.py``) uses: the process's first
    build runs `prepare` (``mkdocs serve`` watches ``docs/`` only once it has built) and needs
    nothing in memory; each later one, a rebuild of ``mkdocs serve``, takes `changed`.

    Counted here, not in the hook: MkDocs loads the hook's module afresh for each rebuild.
    """
    _BUILDS["count"] += 1
    if _BUILDS["count"] == 1:
        done = prepare(root, steps)
        if done.ran:
            print(done, flush=True)
        return {}
    return changed(root, steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_site.prepare", description=__doc__)
    parser.add_argument("steps", nargs="*", help=f"only these of {', '.join(STEPS)}")
    args = parser.parse_args(argv)
    if unknown := [s for s in args.steps if s not in STEPS]:
        parser.error(f"no step {', '.join(unknown)}: the steps are {', '.join(STEPS)}")
    print(prepare(ROOT, args.steps or None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
