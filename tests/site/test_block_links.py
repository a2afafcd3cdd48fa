"""No executed block prints a relative link: MkDocs leaves it relative to the page's address,
Zensical resolves it from the page's source file, so it leads elsewhere (or nowhere) under
one of them. Blocks print `attention_site.address.page_url` (CONTRIBUTING, "Links that blocks
print are absolute"); ``tests/build/test_engines.py`` checks the built links, slowly. A link
of the home page (``docs/index.md``) resolves alike from its address and its source."""

from __future__ import annotations

import re

from attention_site.checks.doc_code import DOCS, blocks

# a Markdown link or an href in the block's text whose target is relative: no scheme, not
# absolute, not an anchor, not a value the block fills in ({...})
RELATIVE = re.compile(r"""\]\((?![a-z]+:|/|#|\{)[^)\s]+\)|href=\\?["'](?![a-z]+:|/|#|\{)""")


def test_relative_links_are_found() -> None:
    assert RELATIVE.search('"see [cost](../../why/cost/) and"')
    assert RELATIVE.search("f'<a href=\"../x/\">'")
    assert not RELATIVE.search("f\"[cost]({page_url('why/cost.md')})\"")
    assert not RELATIVE.search('"[paper](https://arxiv.org/abs/1) [here](#eq-1)"')


def test_no_executed_block_prints_a_relative_link() -> None:
    found = [
        f"{block.page.relative_to(DOCS)}:{block.line + n}: {line.strip()}"
        for page in sorted(DOCS.rglob("*.md"))
        if page != DOCS / "index.md"
        for block in blocks(page)
        for n, line in enumerate(block.code)
        if RELATIVE.search(line)
    ]
    assert found == [], "\n".join(found)
