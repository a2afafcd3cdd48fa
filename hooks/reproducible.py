"""MkDocs hook: the same commit builds to the same bytes.

MkDocs stamps every page with the build date (sitemap ``<lastmod>``) and the gzip header
of ``sitemap.xml.gz`` with the newest of those dates, so a build tomorrow differs from one
today. MkDocs honours ``SOURCE_DATE_EPOCH`` (reproducible-builds.org); this hook sets it
to the commit time of ``HEAD`` when the caller has not set it, so the dates say when the
content last changed, not when it was built.
"""

from __future__ import annotations

import logging
import os
import subprocess
import zlib
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.reproducible")


def commit_epoch(directory: str | os.PathLike[str]) -> int | None:
    """Commit time of ``HEAD`` in ``directory`` (seconds since the epoch), or None without git."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%ct"],
            cwd=directory,
            capture_output=True,
            text=True,
            check=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return int(out) if out.isdigit() else None


def on_config(config: Any) -> Any:
    if "SOURCE_DATE_EPOCH" not in os.environ:
        epoch = commit_epoch(Path(config["config_file_path"]).parent)
        if epoch is None:
            log.info("no git commit found: page dates are today's date (not reproducible)")
        else:
            os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    return config


def on_post_build(config: Any) -> None:
    """``objects.inv`` without the site package's names.

    The site's modules are not documented (the reference covers the library), yet griffe
    sometimes registers their imported names as aliases of the library's objects, and
    sometimes not: two builds of the same tree then differ in this file alone. Only the
    ``attention_site.`` lines are dropped; the rest is written back as it was, compressed the
    same way every time.
    """
    path = Path(config["site_dir"]) / "objects.inv"
    if not path.exists():
        return
    head, _, body = path.read_bytes().partition(b"zlib.\n")
    lines = zlib.decompress(body).decode("utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("attention_site.")]
    if len(kept) != len(lines):
        path.write_bytes(head + b"zlib.\n" + zlib.compress("".join(kept).encode("utf-8"), 9))
