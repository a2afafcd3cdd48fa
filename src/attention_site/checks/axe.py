"""axe-core, the accessibility engine Lighthouse uses, run inside a Playwright page.

Its script is ``axe.min.js`` from the npm registry's ``axe-core`` tarball, pinned below with
the integrity hash the registry publishes and fetched once into the user's cache (as the
build fetches Pyodide: ``pinned``) into the clone's ``.prepare/axe/``, so the README's test
command needs no npm. Nothing of
it is committed. The browser tests' probes and ``benchmarks/lighthouse.py`` both run it
from here. 4.13 made its colour-contrast rule, the costliest probe of the browser tests'
visit, about a third cheaper than the 4.12 that a PyPI wheel shipped.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from attention_site.address import KEPT
from attention_site.checks.pinned import npm_files

__all__ = ["AXE_CORE", "SEVERE", "axe_path", "axe_source", "run_axe"]

#: The axe-core release the tests run: ``npm view axe-core@VERSION dist.tarball dist.integrity``
AXE_CORE = {
    "name": "axe-core",
    "version": "4.14.1",
    "tarball": "https://registry.npmjs.org/axe-core/-/axe-core-4.14.1.tgz",
    "integrity": "sha512-"
    "FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==",
}
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


def axe_path() -> Path:
    """``axe.min.js`` of ``AXE_CORE``, fetched and verified on first use, under
    ``.prepare/axe/`` (named by its version); ``pinned.PinError`` says why if it cannot be."""
    return npm_files(AXE_CORE, ["axe.min.js"], KEPT / "axe") / "axe.min.js"


@functools.cache
def axe_source() -> str:
    """The text of ``axe.min.js`` of the pinned release (``AXE_CORE``).

    Examples:
        >>> AXE_CORE["tarball"].endswith(f"/axe-core-{AXE_CORE['version']}.tgz")
        True
    """
    return axe_path().read_text(encoding="utf-8")


def run_axe(page: Any) -> list[dict[str, Any]]:
    """Every axe-core violation on the page now shown by ``page`` (a Playwright page), each
    ``{id, impact, help, nodes}``; axe-core is injected into the page on first use."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    return list(page.evaluate(RUN))
