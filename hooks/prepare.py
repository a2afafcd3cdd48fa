"""MkDocs hook: ``attention_site.prepare`` for ``mkdocs serve`` (and a bare ``mkdocs build``), so
that they find the API pages, notebooks, in-browser runtime and toy weights as the build
command (``python -m attention_site.build``) leaves them. Zensical runs no hooks; the build
command runs prepare before either generator.

The first build of the process runs prepare, which writes into ``docs/`` what changed. Later
builds of ``mkdocs serve`` (after an edit) must not write into ``docs/``, which serve watches:
each write would start a second build of the whole site. So they take what changed in
memory (``attention_site.prepare.for_build``) and put it in place of the file in ``docs/``
with MkDocs' public ``Files`` API; the next ``python -m attention_site.prepare`` (or serve)
writes it to ``docs/``. (MkDocs loads this module afresh for each rebuild: it keeps nothing.)
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel

from attention_site.prepare import for_build

_changed: dict[str, bytes] = {}


def on_pre_build(config: Any) -> None:
    _changed.clear()
    _changed.update(for_build())


def on_files(files: Files, config: Any) -> Files:
    for path, data in _changed.items():
        uri = path.removeprefix("docs/")
        old = files.get_file_from_path(uri)
        inclusion = InclusionLevel.UNDEFINED
        if old is not None:  # the file prepare wrote before, now stale
            inclusion = old.inclusion  # (a SUMMARY.md stays excluded: exclude_docs)
            files.remove(old)
        files.append(File.generated(config, uri, content=data, inclusion=inclusion))
    return files
