"""A Markdown extension: a figure's ``<svg>`` (printed by a page's code) is raw HTML.

Python-Markdown treats ``<svg>`` as an inline tag, so the text between its tags went through
the inline processors: the site's abbreviations (``includes/abbreviations.md``) wrapped the
"softmax" of a legend in ``<abbr>``, which SVG ``<text>`` does not draw ("P = (S)"), and
emphasis or links could do the same. Declaring ``svg`` block-level is not enough: a figure in
the result tab of a code block is indented, where Markdown looks for no raw HTML. So each
``<svg …>…</svg>`` is stashed whole before the blocks are parsed, wherever it stands (fenced
code is stashed before, and stays code), and comes back unchanged at the end, in the paragraph
Markdown made for it, as before. Registered in ``mkdocs.yml`` (``markdown_extensions``);
markdown-exec's inner renderer registers the same extensions.

Examples:
    >>> import markdown
    >>> md = markdown.Markdown(extensions=["abbr", "attention_site.svg_block"])
    >>> md.convert('<svg viewBox="0 0 1 1"><text>P = softmax(S)</text></svg>\\n\\n*[softmax]: s')
    '<p><svg viewBox="0 0 1 1"><text>P = softmax(S)</text></svg></p>'
    >>> md.convert('- a figure:\\n\\n    <svg x="0"><text>softmax</text></svg>\\n\\n*[softmax]: s')
    '<ul>\\n<li>\\n<p>a figure:</p>\\n<p><svg x="0"><text>softmax</text></svg></p>\\n</li>\\n</ul>'
"""

from __future__ import annotations

import re

from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

__all__ = ["SvgBlockExtension", "makeExtension"]

# a figure's <svg …> has attributes; a mention in prose or inline code ("`<svg>`") has none
SVG = re.compile(r"(?<![`\w])<svg\s[^>]*>.*?</svg>", re.S)


class _StashSvg(Preprocessor):  # type: ignore[misc]  # Markdown has no type stubs
    """Each figure's ``<svg …>…</svg>`` becomes a placeholder of the raw-HTML stash."""

    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        if "<svg" not in text:
            return lines
        stashed = SVG.sub(lambda m: str(self.md.htmlStash.store(m.group(0))), text)
        return stashed.split("\n")


class SvgBlockExtension(Extension):  # type: ignore[misc]  # Markdown has no type stubs
    """Stashes every figure's ``<svg>`` before the block parser."""

    def extendMarkdown(self, md: Markdown) -> None:
        """Register the preprocessor on ``md``: after fenced code (25), before raw HTML (20)."""
        md.preprocessors.register(_StashSvg(md), "attention_svg_stash", 22)


def makeExtension(**kwargs: object) -> SvgBlockExtension:
    """The extension, as ``markdown_extensions: [attention_site.svg_block]`` loads it."""
    return SvgBlockExtension(**kwargs)
