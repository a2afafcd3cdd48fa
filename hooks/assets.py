"""MkDocs hook: serve MathJax from the installed PyPI package, never from a CDN.

The files come from ``django-static-mathjax`` (MathJax 3, plain static files) at build
time and are copied into ``site/assets/mathjax``; nothing third-party is committed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.structure.files import File, Files

DEST = "assets/mathjax"
# tex-svg.js draws glyphs as SVG paths (no font files); the TeX extensions it may autoload.
WANTED = ("tex-svg.js", "input/tex/extensions")


def _mathjax_root() -> Path:
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("MathJax is missing: install the docs group (django-static-mathjax)")
    root = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"
    if not (root / "tex-svg.js").is_file():
        raise RuntimeError(f"MathJax's tex-svg.js not found under {root}")
    return root


def on_files(files: Files, config) -> Files:
    root = _mathjax_root()
    for wanted in WANTED:
        p = root / wanted
        paths = [p] if p.is_file() else sorted(q for q in p.rglob("*.js"))
        for src in paths:
            rel = src.relative_to(root).as_posix()
            files.append(
                File(
                    rel,
                    src_dir=str(root),
                    dest_dir=config["site_dir"] + "/" + DEST,
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files
