"""Benchmark: the live heads of "A model that learned" (docs/model.md) in headless Chromium.

Not a test. Serve a built site under ``/attention-math/`` first, then:

    python benchmarks/toy_live.py http://127.0.0.1:PORT/attention-math/

Opens the page in a fresh context, presses "Random repeated sequence" once (that first
redraw also downloads and starts Python in the page), then redraws with ``--repeat`` more
seeds. Each redraw's time is the page's own measurement (``data-ms`` on the heads: from
the request to the worker to the last head drawn, weights already fetched). Writes
``benchmarks/results/toy_live.json`` with the size of the weights file and the load average.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import time
import urllib.parse
import urllib.request

from _common import result_path  # benchmarks/, the script's directory
from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("ATTENTION_MATH_CHROMIUM", "/usr/bin/chromium")
RESULTS = result_path(__file__)
READY = (
    "b => { const t = document.querySelector('input[data-toy-tokens]').dataset.toyTokens;"
    " return t !== b && document.querySelector('[data-toy-heads]').dataset.state === 'ready' }"
)


def redraw(page, seed: int) -> float:
    page.locator("input.toy-live__seed").fill(str(seed))
    before = page.locator("input[data-toy-tokens]").get_attribute("data-toy-tokens")
    page.get_by_role("button", name="Random repeated sequence").click()
    page.wait_for_function(READY, arg=before, timeout=300_000)
    return float(page.locator("[data-toy-heads]").get_attribute("data-ms"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url", help="the site's address, ending in /attention-math/")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    url = args.url.rstrip("/") + "/model/"
    load_before = os.getloadavg()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_context().new_page()
        page.goto(url)
        weights = page.locator("form.toy-live").get_attribute("data-weights")
        size = len(urllib.request.urlopen(urllib.parse.urljoin(url, weights)).read())
        t0 = time.perf_counter()
        first = redraw(page, 1)
        first_total = (time.perf_counter() - t0) * 1000
        later = [redraw(page, seed) for seed in range(2, 2 + args.repeat)]
        version = browser.version
        browser.close()
    result = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "chromium": version,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "weights_bytes": size,
        "first_redraw_ms_with_python_start": round(first_total),
        "first_redraw_ms_page": round(first, 1),
        "later_redraw_ms": [round(x, 1) for x in later],
        "later_redraw_ms_median": round(statistics.median(later), 1),
        "later_redraw_ms_max": round(max(later), 1),
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
