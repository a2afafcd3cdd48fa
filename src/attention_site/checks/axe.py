"""axe-core, the accessibility engine Lighthouse uses, run inside a Playwright page.

Its script comes from PyPI: the wheel of ``axe-playwright-python`` (the test group) ships
axe-core's ``axe.min.js``, so the README's test command installs it with no npm; nothing of
it is committed. Only the script is used, not that package's Python. The browser tests'
probes and ``benchmarks/lighthouse.py`` both run it from here.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

__all__ = ["AXE", "SEVERE", "axe_source", "run_axe"]


def _axe_path() -> Path:
    spec = importlib.util.find_spec("axe_playwright_python")
    if spec is None or not spec.submodule_search_locations:
        return Path("axe_playwright_python") / "axe.min.js"  # not installed: reported on use
    return Path(next(iter(spec.submodule_search_locations))) / "axe.min.js"


AXE = _axe_path()
SEVERE = ("serious", "critical")

# WCAG 2.1 A/AA rules plus best practices, as Lighthouse runs them.
RUN = """async () => {
  const r = await axe.run(document, {resultTypes: ['violations']});
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => {
      let el = null;
      try { el = document.querySelector(n.target[0]); } catch (e) {}
      // the project's own content: the page's article (Markdown, executed blocks, maths)
      return {target: n.target.join(' '), impact: n.impact, html: n.html.slice(0, 160),
              content: !!(el && el.closest('article')),
              maths: !!(el && el.querySelector('mjx-container'))};
    })}));
}"""


@functools.cache
def axe_source() -> str:
    """The text of ``axe.min.js``; ``FileNotFoundError`` naming the install step if missing.

    Examples:
        >>> "axe" in axe_source()[:2000]
        True
    """
    if not AXE.is_file():
        raise FileNotFoundError(f"{AXE} is missing: install the test group (uv sync --group test)")
    return AXE.read_text(encoding="utf-8")


def run_axe(page: Any) -> list[dict[str, Any]]:
    """Every axe-core violation on the page now shown by ``page`` (a Playwright page), each
    ``{id, impact, help, nodes}``; axe-core is injected into the page on first use."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    return list(page.evaluate(RUN))
