"""What the browser tests' one visit of each page costs, step by step, in wall and CPU time.

Visits the pages of a built site as the ``seen`` fixture of ``tests/browser`` does (the same
code: ``attention_site.checks.browser.visit`` and every probe of ``attention_site.checks.probes``),
in one Chromium, timing
each step: the page load with the reader's first interaction, each probe (axe-core among
them), the screenshots. CPU time is the whole machine's, read from ``/proc/stat`` around each
step, because Chromium's processes are not the caller's children to count: run it on an
otherwise idle machine. Writes ``benchmarks/results/browser_cost.json`` and ``.md`` (on the
About page).

    python benchmarks/browser_cost.py [--site DIR] [--every N]

Without ``--site`` the site is built first. ``--every N`` visits every N-th page only.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import result_path  # benchmarks/, the script's directory
from lighthouse import build, head_commit

OUT = result_path(__file__)
PORT = 8767


def busy_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (``/proc/stat``)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def measure(site: Path, every: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    import attention_site.checks.probes  # noqa: F401  (registers the probes)
    from attention_site.checks import browser as bc
    from attention_site.checks.server import SiteServer

    wall: dict[str, float] = collections.defaultdict(float)
    cpu: dict[str, float] = collections.defaultdict(float)

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def step(*args: Any, **kwargs: Any) -> Any:
            t, c = time.perf_counter(), busy_s()
            try:
                return fn(*args, **kwargs)
            finally:
                wall[name] += time.perf_counter() - t
                cpu[name] += busy_s() - c

        return step

    probes = dict(bc.PROBES)
    goto, shot = bc.Tab.goto, bc.Tab.screenshot
    try:
        for name, fn in probes.items():
            bc.PROBES[name] = timed(f"probe {name}", fn)
        bc.Tab.goto = timed("load, first interaction", goto)  # type: ignore[method-assign]
        bc.Tab.screenshot = timed("screenshots", shot)  # type: ignore[method-assign]
        with SiteServer(PORT) as server, sync_playwright() as p:
            base = server.start(site).rstrip("/")
            pages = bc.sitemap_paths(site)[::every]
            browser = p.chromium.launch(executable_path=str(bc.CHROMIUM), args=bc.CHROMIUM_ARGS)
            tab = bc.open_tab(browser, base, viewport=bc.DESKTOP)
            t, c = time.perf_counter(), busy_s()
            bc.visit(tab, pages)
            total = {"wall_s": time.perf_counter() - t, "cpu_s": busy_s() - c}
            browser.close()
    finally:
        bc.PROBES.update(probes)
        bc.Tab.goto, bc.Tab.screenshot = goto, shot  # type: ignore[method-assign]
    steps = {k: {"wall_s": wall[k], "cpu_s": cpu[k]} for k in sorted(cpu, key=lambda k: -cpu[k])}
    return {"pages": len(pages), "total": total, "steps": steps}


def table(doc: dict[str, Any]) -> str:
    n = doc["pages"]
    rows = [
        "| Step | Wall time a page | CPU time a page | Share of the CPU time |",
        "|---|---:|---:|---:|",
    ]
    total_cpu = doc["total"]["cpu_s"]
    for name, t in doc["steps"].items():
        rows.append(
            f"| {name} | {t['wall_s'] / n:.2f} s | {t['cpu_s'] / n:.2f} s "
            f"| {100 * t['cpu_s'] / total_cpu:.0f} % |"
        )
    rows.append(
        f"| **the whole visit** | {doc['total']['wall_s'] / n:.2f} s "
        f"| {total_cpu / n:.2f} s | 100 % |"
    )
    return (
        "\n".join(rows)
        + f"\n\nMeasured by `benchmarks/browser_cost.py` on {doc['date']}, {n} pages of a build "
        f"of {doc['commit']} visited in one Chromium as the browser tests visit them, on "
        f"{doc['cpus']} CPU cores (load average {doc['load']:.2f} before the run). CPU time: the "
        "whole machine's, Chromium's processes included, from `/proc/stat`.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    parser.add_argument("--every", type=int, default=1, help="visit every N-th page only")
    args = parser.parse_args()

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            build(f"http://127.0.0.1:{PORT}/attention-math/", site)
        doc = measure(site, args.every)
    doc |= {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": head_commit(),
        "cpus": os.cpu_count(),
        "load": load,
        "platform": platform.platform(),
    }
    OUT.write_text(json.dumps(doc, indent=2) + "\n")
    OUT.with_suffix(".md").write_text(table(doc))
    print(table(doc))


if __name__ == "__main__":
    main()
