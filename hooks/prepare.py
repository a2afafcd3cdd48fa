"""MkDocs hook: run ``attention_site.prepare`` before each build, so that ``mkdocs serve`` (and
a bare ``mkdocs build``) find the API pages, notebooks, in-browser runtime and toy weights in
``docs/`` as the build command (``python -m attention_site.build``) leaves them. Each step is
keyed by its inputs: a rebuild after an edit redoes only what the edit touched.

Zensical runs no hooks; the build command runs prepare before either generator.
"""

from __future__ import annotations

import logging
from typing import Any

from attention_site.prepare import prepare

log = logging.getLogger("mkdocs.hooks.prepare")


def on_pre_build(config: Any) -> None:
    done = prepare()
    if done.ran:
        log.info("%s", done)
