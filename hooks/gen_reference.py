"""The reference pages and their navigation, written at build time by the ``gen-files`` plugin.

What is written, and why, is in `attention_site.pages.reference`; this script only hands it
to ``mkdocs_gen_files`` (the files exist in the build, never in ``docs/``). Each section's
``SUMMARY.md`` is read by ``literate-nav`` and is not a page of its own.
"""

from __future__ import annotations

import mkdocs_gen_files
from mkdocs.structure.files import InclusionLevel
from mkdocs_gen_files.editor import FilesEditor

from attention_site.pages.reference import SECTIONS, module_page, modules, nav_file, page_path

for section in SECTIONS:
    for name in modules(section):
        with mkdocs_gen_files.open(f"{section.folder}/{page_path(section, name)}", "w") as page:
            page.write(module_page(section, name))
    with mkdocs_gen_files.open(f"{section.folder}/SUMMARY.md", "w") as nav:
        nav.write(nav_file(section))
    # literate-nav reads it; the site does not publish it
    summary = FilesEditor.current().files.get_file_from_path(f"{section.folder}/SUMMARY.md")
    assert summary is not None
    summary.inclusion = InclusionLevel.EXCLUDED
