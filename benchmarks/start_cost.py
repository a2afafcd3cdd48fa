"""Main-thread work of starting a page on a throttled phone: two builds of the site, page by page.

Lighthouse's blocking time is one simulated run per page, and moves by a few hundred
milliseconds between runs of the same build. This measures a page the way a lever is judged:
the same pages of two built sites, loaded in turn in one Chromium at 4x CPU throttling and a
412 px phone viewport, several times each, and the median of each figure reported:

- script: time in JavaScript (``Performance.getMetrics`` ScriptDuration);
- style and layout: time restyling and laying out the page (RecalcStyle + Layout durations);
- blocking: the part of each long task beyond 50 ms, summed (``longtask`` entries), the
  quantity Lighthouse's total blocking time adds up, here measured instead of simulated;
- blocking at the first interaction: the same, for the tasks after a first scroll 2.5 s
  after the load event (the theme's script waits for one: overrides/main.html), so that
  work moved out of the start-up is shown where it went, not lost.

Both sites are served as the host serves them (gzip, under ``/attention-math/``) by
``attention_site.checks.server.SiteServer``. Chromium: ``CHROME_PATH`` (default
``/usr/bin/chromium``).

    python benchmarks/start_cost.py BEFORE_SITE AFTER_SITE PAGE... [--runs 3] [--variant V]

Writes ``benchmarks/results/start_cost.json`` (every run) and ``start_cost.md`` (the
medians); ``--variant V``: ``start_cost.V.json`` and ``.md`` (``theme``, ``tables``: earlier
changes measured the same way).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from _common import result_path  # benchmarks/, the script's directory
from lighthouse import launch_chromium

from attention_site.checks.server import SiteServer

LONG_TASKS = """() => new Promise((done) => {
  const found = [];
  new PerformanceObserver((list) =>
    found.push(...list.getEntries().map((e) => [e.startTime, e.duration])))
    .observe({type: 'longtask', buffered: true});
  setTimeout(() => done(found), 50);
})"""


def load(browser: Any, url: str) -> dict[str, float]:
    """One cold load of ``url``: the figures above, 2.5 s after the load event."""
    context = browser.new_context(
        viewport={"width": 412, "height": 823},
        device_scale_factor=2.6,
        is_mobile=True,
        has_touch=True,
    )
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        page.goto(url, wait_until="load")
        page.wait_for_timeout(2500)  # the theme's start-up tasks ran after the load event
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        touched = page.evaluate("() => performance.now()")
        page.mouse.wheel(0, 400)  # the reader's first scroll
        page.wait_for_timeout(2500)
        tasks = page.evaluate(LONG_TASKS)
    finally:
        context.close()
    return {
        "script_ms": metrics["ScriptDuration"] * 1000,
        "style_layout_ms": (metrics["RecalcStyleDuration"] + metrics["LayoutDuration"]) * 1000,
        "blocking_ms": sum(max(0.0, d - 50) for s, d in tasks if s < touched),
        "long_tasks": sum(1 for s, _ in tasks if s < touched),
        "blocking_later_ms": sum(max(0.0, d - 50) for s, d in tasks if s >= touched),
    }


def measure(sites: dict[str, Path], pages: list[str], runs: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    servers = {label: SiteServer(compress=True) for label in sites}
    bases = {label: servers[label].start(site).rstrip("/") for label, site in sites.items()}
    found: dict[str, dict[str, list[dict[str, float]]]] = {p: {k: [] for k in sites} for p in pages}
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            for _ in range(runs):  # interleaved, so that a busy moment hits both builds alike
                for path in pages:
                    for label in sites:
                        found[path][label].append(load(browser, bases[label] + path))
            browser.close()
    finally:
        for server in servers.values():
            server.close()
    return {"runs": runs, "load": list(os.getloadavg()), "pages": found}


def median(runs: list[dict[str, float]], figure: str) -> float:
    return statistics.median(r[figure] for r in runs)


def table(result: dict[str, Any], labels: list[str]) -> str:
    before, after = labels
    lines = [
        f"Start-up work on a throttled phone (Chromium, 4× CPU throttling, 412 px), median of "
        f"{result['runs']} loads of each page of each build; {before} → {after}. Load average "
        f"{result['load'][0]:.2f} (2 shared cores).",
        "",
        "| Page | Script (ms) | Style and layout (ms) | Blocking (ms) "
        "| Blocking at the first scroll (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for path, by in result["pages"].items():
        cells = [
            f"{median(by[before], f):.0f} → {median(by[after], f):.0f}"
            for f in ("script_ms", "style_layout_ms", "blocking_ms", "blocking_later_ms")
        ]
        lines.append(f"| `{path}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="the built site before the change")
    parser.add_argument("after", type=Path, help="the built site after it")
    parser.add_argument("pages", nargs="+", help='page paths below the site ("/", "/glossary/")')
    parser.add_argument("--runs", type=int, default=3, help="loads of each page of each build")
    parser.add_argument("--variant", help="results/start_cost.VARIANT.json and .md instead")
    parser.add_argument("--labels", nargs=2, default=["before", "after"], metavar="LABEL")
    args = parser.parse_args()
    for site in (args.before, args.after):
        if not (site / "index.html").is_file():
            raise SystemExit(f"{site} is not a built site (no index.html)")
    for path in args.pages:
        if not (path.startswith("/") and path.endswith("/")):
            raise SystemExit(f"page paths start and end with '/': {path!r}")
    started = time.monotonic()
    result = measure(
        dict(zip(args.labels, (args.before, args.after), strict=True)), args.pages, args.runs
    )
    result["labels"] = args.labels
    out = result_path(__file__, args.variant)
    out.write_text(json.dumps(result, indent=1) + "\n")
    text = table(result, args.labels)
    out.with_suffix(".md").write_text(text)
    print(text + f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
