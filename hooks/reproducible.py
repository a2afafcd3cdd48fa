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
