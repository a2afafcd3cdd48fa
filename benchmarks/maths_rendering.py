"""Three ways to put the site's maths on a page, measured on every formula of the built site.

- MathJax at build time (what the site does): SVG drawn, MathML beside it for screen
  readers; MathJax 3.2.2 from PyPI, the engine and version the browser ran before.
- KaTeX at build time (npm ``katex``): HTML drawn with KaTeX's stylesheet and fonts,
  MathML beside it.
- MathML alone (KaTeX's MathML output), drawn by the browser with a math font.

Fidelity is the count of formulas each cannot typeset (the site's TeX is MathJax's);
weight is the bytes added to the pages, and what every page must load besides; time is
the CPU time of the typesetting process (Node) to typeset them all, which the load of
this shared machine (recorded) changes less than the wall time, also recorded.

    python benchmarks/maths_rendering.py [--site DIR [--commit C]] [--table]

Writes ``data/maths_rendering.json`` (with the date and the commit of the
build measured) and ``data/maths_rendering.md`` (shown on the About page);
``--table`` writes the ``.md`` again from the ``.json``, measuring nothing.
"""

from __future__ import annotations

import argparse
import gzip
import html
import importlib.util
import json
import os
import re
import resource
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, result_path  # benchmarks/, the script's directory
from lighthouse import NODE_BIN, build, head_commit, install_lighthouse

from attention_site.checks.hooks import load_hook

# what the hook left beside each drawn formula: its TeX, and <div> for displayed maths
TEX = re.compile(r'<(span|div) class="arithmatex" data-tex="([^"]*)"')


def formulas(site: Path) -> dict[str, list[dict[str, Any]]]:
    """Per page: every formula's TeX and whether it is displayed, in page order."""
    found = {}
    for page in sorted(site.rglob("*.html")):
        items = [
            {"tex": html.unescape(m.group(2)), "display": m.group(1) == "div"}
            for m in TEX.finditer(page.read_text(encoding="utf-8"))
        ]
        if items:
            found[str(page.relative_to(site))] = items
    return found


def child_cpu() -> float:
    """CPU seconds used so far by the finished child processes (Node)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def mathjax(pages: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The site's own typesetter (hooks/assets.py), page by page as the build runs it."""
    assets = load_hook("assets", "assets")
    cpu = child_cpu()
    typesetter = assets.Typesetter()
    started = time.perf_counter()
    size, failed = 0, 0
    for items in pages.values():
        done = typesetter.typeset(items)
        failed += len(done["errors"])
        size += sum(len(h.encode()) for h in done["html"]) + len(done["cache"].encode())
        size += len(done["css"].encode())
    seconds = time.perf_counter() - started
    typesetter.close()
    cpu = child_cpu() - cpu
    return {"bytes": size, "seconds": seconds, "cpu": cpu, "failed": failed, "errors": {}}


def katex(pages: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    cpu = child_cpu()
    with tempfile.TemporaryDirectory() as tmp:
        items = Path(tmp) / "items.json"
        items.write_text(json.dumps([i for page in pages.values() for i in page]))
        script = ROOT / "benchmarks" / "katex_run.cjs"
        out = subprocess.run(
            [str(NODE_BIN / "node"), str(script), str(items)],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
    result = dict(json.loads(out.stdout))
    result["cpu"] = child_cpu() - cpu  # the one process, both outputs
    return result


def gzipped(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), 9))


def extras() -> dict[str, int]:
    """What a page loads besides its own HTML, per way (gzip bytes; fonts as they are)."""
    spec = importlib.util.find_spec("mathjax")
    assert spec is not None and spec.submodule_search_locations
    mathjax_root = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax"
    dist = ROOT / "node_modules" / "katex" / "dist"
    return {
        "mathjax_in_browser_js_gzip": gzipped(mathjax_root / "es5" / "tex-svg.js"),
        "katex_css_gzip": gzipped(dist / "katex.min.css"),
        "katex_fonts_woff2_all": sum(f.stat().st_size for f in (dist / "fonts").glob("*.woff2")),
    }


def table(result: dict[str, Any]) -> str:
    n = result["formulas"]
    mj, kx, mml, extra = result["mathjax"], result["katex"], result["mathml"], result["extras"]

    def kib(b: int) -> str:
        return f"{b / 1024:,.0f} KiB"

    def fails(r: dict[str, Any]) -> str:
        if not r["failed"]:
            return "0"
        top = sorted(r["errors"].items(), key=lambda kv: -kv[1])[:3]
        return f"{r['failed']} (" + "; ".join(f"{c}× {html.escape(e)}" for e, c in top) + ")"

    when = ""
    if "date" in result:
        of = f" of {result['commit']}" if "commit" in result else ""
        when = f", measured {result['date']} on a build{of}"

    return "\n".join(
        [
            f"{n} formulas on {result['pages']} pages{when}; load average "
            f"{result['load'][0]:.2f} "
            f"(2 shared cores). Before: MathJax ran in the reader's browser, "
            f"`tex-svg.js` {kib(extra['mathjax_in_browser_js_gzip'])} gzip on every page, "
            "and typeset there.",
            "",
            "| Way | Formulas it cannot typeset | Added to the pages (all, uncompressed) "
            "| Loaded by every page besides | Build time: CPU (wall) |",
            "|---|---|---:|---|---:|",
            f"| **MathJax at build time, SVG + MathML (chosen)** | {fails(mj)} | "
            f"{kib(mj['bytes'])} | nothing | {mj['cpu']:.1f} s ({mj['seconds']:.1f} s) |",
            f"| KaTeX {result['katex_version']} at build time, HTML + MathML | {fails(kx)} | "
            f"{kib(kx['bytes'])} | its stylesheet ({kib(extra['katex_css_gzip'])} gzip) and "
            f"the fonts a page uses (of {kib(extra['katex_fonts_woff2_all'])}) "
            f"| {result['katex_cpu']:.1f} s for both KaTeX rows ({kx['seconds']:.1f} s) |",
            f"| MathML alone (KaTeX's), drawn by the browser | {fails(mml)} | "
            f"{kib(mml['bytes'])} | a math font, if the reader has none | "
            f"({mml['seconds']:.1f} s) |",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    parser.add_argument(
        "--commit",
        help="the commit --site was built from, recorded with the figures (without --site: "
        "the checkout's)",
    )
    parser.add_argument("--table", action="store_true", help="only write the .md from the .json")
    args = parser.parse_args()
    out = result_path(__file__)
    if args.table:
        out.with_suffix(".md").write_text(table(json.loads(out.with_suffix(".json").read_text())))
        return
    commit = args.commit or (None if args.site else head_commit())
    install_lighthouse()  # npm ci: KaTeX is in the same package.json
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            build("https://attention-math.github.io/attention-math/", site)
        pages = formulas(site)
    k = katex(pages)
    result = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        **({"commit": commit} if commit else {}),
        "pages": len(pages),
        "formulas": sum(len(v) for v in pages.values()),
        "load": list(os.getloadavg()),
        "mathjax": mathjax(pages),
        "katex": k["htmlAndMathml"],
        "mathml": k["mathml"],
        "katex_version": k["version"],
        "katex_cpu": k["cpu"],
        "extras": extras(),
    }
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(table(result))
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
