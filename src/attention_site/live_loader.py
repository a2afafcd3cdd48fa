"""The answer boxes' loader: a Python-Markdown extension, so both generators run it.

A page holding an answer box (``exercise-check``), the own-example form or the toy model's
live heads gets one short inline script that imports the checker
(``docs/javascripts/live/live.js``) on the first "Check": nothing is downloaded before the
reader asks. The script finds the site's root from the page's favicon link (the theme writes
it, relative, on every page), since an extension is not told where its page lies. If prepare
could not gather the in-browser runtime (``.prepare/live.json`` says why), every box says
that checking in the browser is unavailable and offers no button; the rest of the site is
unaffected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor

__all__ = ["STATE", "UNAVAILABLE", "LiveLoaderExtension", "loader", "makeExtension"]

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / ".prepare" / "live.json"
"""``{"version": <hash of the runtime and the scripts> or null, "reason": why not}``."""
UNAVAILABLE = "Checking in the browser is unavailable in this build: use the Python or Shell tab."
FORMS = re.compile(r'class="(exercise-check|own-example|toy-live)"')
MARK = "data-live-loader"
SCRIPT = re.compile(rf"<script type=\"module\" {MARK}>.*?</script>", re.S)


def loader(version: str) -> str:
    """The page's one inline script: on the first "Check", import the checker (not before).

    Examples:
        >>> "live.js?v=abc" in loader("abc")
        True
    """
    live = json.dumps(f"../javascripts/live/live.js?v={version}")
    return (
        f'<script type="module" {MARK}>document.addEventListener("submit",e=>{{'
        'const f=e.target.closest(".exercise-check, .own-example, .toy-live");if(!f)return;'
        # the favicon is assets/favicon.svg: its "../" is the site's root
        "const root=document.querySelector('link[rel=\"icon\"]').href;"
        f"e.preventDefault();import(new URL({live},root))"
        ".then(m=>m.submit(f,e.submitter))})</script>"
    )


class _LoaderPostprocessor(Postprocessor):  # type: ignore[misc]  # Python-Markdown is untyped
    def __init__(self, md: Markdown, state: Path) -> None:
        super().__init__(md)
        self.state = state

    def run(self, text: str) -> str:
        if not FORMS.search(text):
            return text
        state: dict[str, Any] = (
            json.loads(self.state.read_text(encoding="utf-8"))
            if self.state.is_file()
            else {"version": None}
        )
        if not state.get("version"):  # say so in every box, and do not offer the button
            return text.replace(
                '<span class="exercise-check__verdict" role="status" aria-live="polite"></span>',
                '<span class="exercise-check__verdict" role="status" aria-live="polite"'
                f' data-verdict="error">{UNAVAILABLE}</span>',
            ).replace('<button type="submit" class="md-button">', '<button type="submit" disabled>')
        # markdown-exec renders a block's output with a Markdown of its own, which runs this
        # too: the page's own pass, the last, keeps one script
        return SCRIPT.sub("", text) + loader(state["version"])


class LiveLoaderExtension(Extension):  # type: ignore[misc]  # Python-Markdown is untyped
    """Adds the answer boxes' loader to each page that holds one."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = {"state": [str(STATE), "what prepare wrote about the runtime"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        # after the raw HTML (markdown-exec's output among it) is back in place (30)
        state = Path(self.getConfig("state"))
        md.postprocessors.register(_LoaderPostprocessor(md, state), "live_loader", 5)


def makeExtension(**kwargs: Any) -> LiveLoaderExtension:
    return LiveLoaderExtension(**kwargs)
