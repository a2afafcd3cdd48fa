"""The explorables in a real browser: how long a redraw takes (target ≤ 50 ms) and what they
add to their pages.

Headless Chromium (Playwright) against the built site served on localhost under its
sub-path. On each page holding an explorable (found in the built HTML):

- whether ``explorables.js`` was requested before the reader's first interaction (it should
  not be: ``overrides/main.html`` loads the page's scripts then, so the first paint never
  waits for it);
- the redraw at every stop (up to ``--stops`` of them, spread over the frames, each visited
  ``--repeat`` times): the slider's value set and its ``input`` event sent, then (a) the
  synchronous part, the texts and the drawing swapped in and the page's style and layout
  brought up to date (a forced layout), and (b) input to the next animation frame, the
  reader's delay, which includes waiting for the frame (≤ 16.7 ms at 60 Hz). Median and
  largest, in milliseconds;
- the explorable's bytes in the page, as served and gzip-compressed.

The machine is shared: the load average is recorded with the figures.

    python benchmarks/explorables_bench.py [--site DIR] [--stops N] [--repeat N]

Without ``--site`` the site is built first (one command, unattended). Writes
``benchmarks/results/explorables_bench.json`` (the data) and ``explorables_bench.md`` (a
table).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any

from _common import result_path  # benchmarks/, the script's directory
from loop_time import strict_build

from attention_site.checks.server import SiteServer

CHROMIUM = os.environ.get("ATTENTION_MATH_CHROMIUM", "/usr/bin/chromium")
TARGET_MS = 50.0
SCRIPT = "/javascripts/explorables.js"

# one redraw: set the sliders to the stop, send the input events, force style and layout;
# then wait for the next animation frame. Both times in ms.
REDRAW = """async ([root, indices]) => {
  const el = document.querySelector(root);
  const inputs = [...el.querySelectorAll('input[type="range"]')];
  const t0 = performance.now();
  inputs.forEach((input, i) => {
    input.value = String(indices[i]);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
  el.getBoundingClientRect();  // style and layout now, not at the next frame
  void document.body.offsetHeight;
  const t1 = performance.now();
  await new Promise(done => requestAnimationFrame(() => done()));
  const t2 = performance.now();
  return [t1 - t0, t2 - t0, el.dataset.stop];
}"""


def pages_with_explorables(site: Path) -> dict[str, str]:
    """Explorable name -> page path below the sub-path ("forward/softmax/")."""
    found = {}
    for page in sorted(site.rglob("index.html")):
        for name in re.findall(r'data-explorable="([^"]+)"', page.read_text(encoding="utf-8")):
            found[name] = page.parent.relative_to(site).as_posix() + "/"
    return found


def explorable_bytes(site: Path, path: str, name: str) -> tuple[int, int]:
    text = (site / path / "index.html").read_text(encoding="utf-8")
    m = re.search(
        rf'<div class="explorable" data-explorable="{re.escape(name)}".*?</script></div>',
        text,
        re.S,
    )
    assert m, (path, name)
    raw = m.group(0).encode()
    return len(raw), len(gzip.compress(raw, compresslevel=6, mtime=0))


def spread(keys: list[str], n: int) -> list[str]:
    if len(keys) <= n:
        return keys
    return [keys[round(i * (len(keys) - 1) / (n - 1))] for i in range(n)]


def measure(site: Path, url: str, stops: int, repeat: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    results: dict[str, Any] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        for name, path in pages_with_explorables(site).items():
            requests.clear()
            page.goto(url + path, wait_until="load")
            before = any(u.endswith(SCRIPT) for u in requests)
            page.keyboard.press("Shift")  # the first interaction: the page's scripts load
            root = f'[data-explorable="{name}"]'
            page.wait_for_function(
                f"() => document.querySelector('{root}').dataset.explorableReady"
            )
            page.locator(root).scroll_into_view_if_needed()
            data = json.loads(
                page.locator(f'{root} script[type="application/json"]').text_content()
            )
            keys = spread(sorted(data["frames"]), stops)
            sync, frame = [], []
            for _ in range(repeat):
                for key in keys:
                    a, b, shown = page.evaluate(REDRAW, [root, [int(i) for i in key.split(",")]])
                    assert shown == key, (name, key, shown)
                    sync.append(a)
                    frame.append(b)
            raw, gz = explorable_bytes(site, path, name)
            results[name] = {
                "page": path,
                "stops": len(data["frames"]),
                "redraws": len(sync),
                "script_before_interaction": before,
                "outside_requests": [u for u in requests if not u.startswith(url)],
                "sync_ms_median": round(statistics.median(sync), 2),
                "sync_ms_max": round(max(sync), 2),
                "to_next_frame_ms_median": round(statistics.median(frame), 2),
                "to_next_frame_ms_p95": round(statistics.quantiles(frame, n=20)[-1], 2),
                "to_next_frame_ms_max": round(max(frame), 2),
                "bytes": raw,
                "bytes_gzip": gz,
            }
            r = results[name]
            print(
                f"{name:15} {r['stops']:4} stops  redraw median {r['sync_ms_median']:6.2f} ms,"
                f" max {r['sync_ms_max']:6.2f} ms; to next frame median"
                f" {r['to_next_frame_ms_median']:6.2f} ms, p95 {r['to_next_frame_ms_p95']:6.2f} ms,"
                f" max {r['to_next_frame_ms_max']:6.2f} ms;"
                f" {raw / 1024:.0f} KiB ({gz / 1024:.1f} KiB gzip)"
            )
        browser.close()
    return results


def table(figures: dict[str, Any]) -> str:
    rows = [
        "| explorable | page | stops | redraw, median / max (ms) "
        "| to the next frame, median / p95 / max (ms) | bytes (gzip) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for name, r in figures["explorables"].items():
        rows.append(
            f"| {name} | /{r['page']} | {r['stops']} | {r['sync_ms_median']:.2f} / "
            f"{r['sync_ms_max']:.2f} | {r['to_next_frame_ms_median']:.2f} / "
            f"{r['to_next_frame_ms_p95']:.2f} / {r['to_next_frame_ms_max']:.2f} | "
            f"{r['bytes'] / 1024:.0f} KiB "
            f"({r['bytes_gzip'] / 1024:.1f} KiB) |"
        )
    worst = max(r["to_next_frame_ms_max"] for r in figures["explorables"].values())
    p95 = max(r["to_next_frame_ms_p95"] for r in figures["explorables"].values())
    rows += [
        "",
        f"Target: a redraw ≤ {TARGET_MS:g} ms. Input to the next frame here: at most {p95:.2f} ms"
        f" in 95 % of the redraws of every explorable, {worst:.2f} ms at the slowest. "
        f"Load average at the start: {figures['load_before']}, at the end: "
        f"{figures['load_after']} ({figures['cpus']} CPUs, {figures['machine']}).",
    ]
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--site", type=Path, help="a site built for any address (default: build)")
    parser.add_argument("--stops", type=int, default=40, help="stops per explorable (spread)")
    parser.add_argument("--repeat", type=int, default=3, help="visits of each stop")
    parser.add_argument("--variant", help="results/explorables_bench.VARIANT.json and .md instead")
    args = parser.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    with SiteServer() as server, tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            env = {**os.environ, "SITE_URL": server.url, "NO_MKDOCS_2_WARNING": "1"}
            strict_build(site, env)
        server.start(site)
        results = measure(site, server.url, args.stops, args.repeat)
    figures = {
        "target_ms": TARGET_MS,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "explorables": results,
    }
    out = result_path(__file__, args.variant)
    out.with_suffix(".json").write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(table(figures), encoding="utf-8")
    worst = max(r["to_next_frame_ms_max"] for r in results.values())
    late = [
        n for n, r in results.items() if r["script_before_interaction"] or r["outside_requests"]
    ]
    print(f"slowest input to next frame: {worst:.2f} ms (target {TARGET_MS:g} ms)")
    if late:
        print(f"script loaded before the first interaction, or a request left the site: {late}")


if __name__ == "__main__":
    main()
