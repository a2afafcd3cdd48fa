"""MkDocs hook: the trained toy model's weights, shipped with the site for the live heads.

"A model that learned" (docs/model.md) redraws every head in the reader's browser from
these weights (``assets/toy/weights.json``, written by ``attention_site.figures.toy_heads``,
which imports no matplotlib). The model comes from ``attention_math.toy.load()``: from the
user cache when it is warm, else trained here once (about 30 s of CPU) before any page is
rendered.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

from attention_site.figures.toy_heads import WEIGHTS_PATH, weights_file


def on_files(files: Files, config: Any) -> Files:
    from attention_math.toy import load

    files.append(File.generated(config, WEIGHTS_PATH, content=weights_file(load())))
    return files
