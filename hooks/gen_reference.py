"""The reference pages and their navigation, written at build time by the ``gen-files`` plugin.

What is written, and why, is in `attention_site.pages.reference`; this script only hands it
to ``mkdocs_gen_files`` (the files exist in the build, never in ``docs/``). Each section's
``SUMMARY.md`` is read by ``literate-nav`` and is not a page of its own.
"""

from __future__ import annotations

import mkdocs_gen_files
from mkdocs.structure.files import InclusionLevel
from mkdocs_gen_files.editor import FilesEditor

from attention_site.pages.reference import SECTIONS, generated_files

for path, text in generated_files().items():
    with mkdocs_gen_files.open(path, "w") as file:
        file.write(text)
for section in SECTIONS:
    # literate-nav reads it; the site does not publish it
    summary = FilesEditor.current().files.get_file_from_path(f"{section.folder}/SUMMARY.md")
    assert summary is not None
    summary.inclusion = InclusionLevel.EXCLUDED
