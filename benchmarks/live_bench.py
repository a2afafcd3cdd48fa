"""The live parts in a real browser: how long a check takes and how much it downloads.

Headless Chromium (Playwright) against the built site served on localhost under its
sub-path. Each cold measurement uses a fresh browser context (empty HTTP cache):

- an untouched exercise page: every byte it downloads, and how many of those requests
  are the live runtime's (targets: none; the page weighs what it did before the boxes);
- the first check on that page, cold: seconds from the click to the verdict (≤ 15 s on the
  two-core machine) and the bytes it downloads;
- later checks on the same page (≤ 1 s each);
- "Your own example" with 3×3 inputs once the runtime is loaded (≤ 3 s).

Bytes are as served (this server does not compress) and, beside them, gzip-compressed as
GitHub Pages serves them. The machine is shared: the load average is recorded.

    python benchmarks/live_bench.py [--site DIR] [--out NAME]

Without ``--site`` the site is built first. Writes ``benchmarks/NAME.json`` and the table
``benchmarks/NAME.md`` that the engineering appendix (docs/about.md) includes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.server import SUBPATH, SiteServer  # noqa: E402

CHROMIUM = os.environ.get("ATTENTION_MATH_CHROMIUM", "/usr/bin/chromium")
PAGE = "exercises/softmax/"
OWN = "forward/own-example/"
# (exercise, answer) for the first check and the later ones: all on PAGE
FIRST = ("softmax-logs", "[1/6, 1/3, 1/2]")
LATER = [
    ("softmax-logs", "[1/6, 1/3, 1/2]"),
    ("softmax-logs", "[1/6, 1/3, 1/3]"),
    ("softmax-shift", "[[1/4, 3/4]]"),
    ("softmax-logs", "[0.1667, 0.3333, 0.5]"),
    ("softmax-logs", "import os"),
]
OWN_3X3 = {
    "Q": "1 0 1\n0 1 1/2\nsqrt(2) 1 0",
    "K": "1 1 0\n0 1 1\n1/2 0 1",
    "V": "1 2 3\n0 1 0\n1 1 1",
}
TARGETS = {"first_check_s": 15.0, "later_check_s": 1.0, "own_example_3x3_s": 3.0}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


class Bytes:
    """Bytes of every response a page receives, as served and gzip-compressed."""

    def __init__(self, site: Path, base: str) -> None:
        self.site, self.base = site, base
        self.urls: list[str] = []

    def listen(self, page: Any) -> None:
        page.on("requestfinished", lambda r: self.urls.append(r.url))

    def file(self, url: str) -> Path:
        path = urlsplit(url).path.removeprefix(SUBPATH.rstrip("/"))
        f = self.site / path.lstrip("/")
        return f / "index.html" if path.endswith("/") else f

    def total(self, since: int = 0, only: str = "") -> dict[str, int]:
        """Bytes of the responses since request ``since``, of URLs containing ``only``."""
        raw = packed = 0
        urls = [u for u in self.urls[since:] if only in u]
        for url in urls:
            f = self.file(url)
            if f.is_file():
                data = f.read_bytes()
                raw += len(data)
                packed += len(gzip.compress(data, 6))
        return {"requests": len(urls), "bytes": raw, "gzip_bytes": packed}


def check(page: Any, exercise: str, answer: str, timeout_ms: int = 300_000) -> float:
    box = page.locator(f'.exercise-check[data-exercise-id="{exercise}"]')
    verdict = box.locator(".exercise-check__verdict")
    verdict.evaluate("e => e.removeAttribute('data-verdict')")
    box.locator("input[data-exercise-id]").fill(answer)
    t = time.perf_counter()
    box.get_by_role("button", name="Check").click()
    box.locator(".exercise-check__verdict[data-verdict]").wait_for(timeout=timeout_ms)
    return time.perf_counter() - t


def own_example(page: Any, timeout_ms: int = 300_000) -> float:
    form = page.locator("form.own-example")
    for name, text in OWN_3X3.items():
        form.locator(f'textarea[name="{name}"]').fill(text)
    status = form.locator(".exercise-check__verdict")
    status.evaluate("e => e.removeAttribute('data-verdict')")
    t = time.perf_counter()
    form.get_by_role("button", name="Show every step").click()
    form.locator(".exercise-check__verdict[data-verdict]").wait_for(timeout=timeout_ms)
    elapsed = time.perf_counter() - t
    if status.get_attribute("data-verdict") != "correct":
        raise RuntimeError(f"own example failed: {status.inner_text()}")
    return elapsed


def calibration() -> float:
    """Seconds for this machine's CPython to import the checker (SymPy) in a fresh process:
    the same work the first check does in WebAssembly, as a yardstick for the load."""
    t = time.perf_counter()
    code = "import attention_math.exercises.live"
    subprocess.run([sys.executable, "-c", code], check=True)
    return round(time.perf_counter() - t, 2)


def box_bytes(site: Path) -> int:
    """Bytes the answer boxes add to PAGE's HTML: their forms and the one inline loader."""
    html = (site / PAGE / "index.html").read_text(encoding="utf-8")
    forms = re.findall(r'<form class="exercise-check".*?</form>', html, re.S)
    loader = re.findall(
        r'<script type="module">document\.addEventListener\("submit".*?</script>', html
    )
    return sum(len(x.encode()) for x in [*forms, *loader])


def measure(site: Path, base: str) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {"load_before": load(), "native_import_s": calibration()}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        out["chromium"] = browser.version

        ctx = browser.new_context()  # an untouched page, cold
        page = ctx.new_page()
        seen = Bytes(site, base)
        seen.listen(page)
        page.goto(base + PAGE, wait_until="networkidle")
        out["untouched_page"] = seen.total()
        out["untouched_page"]["live_requests"] = sum("/live/" in u for u in seen.urls)
        out["untouched_page"]["answer_box_bytes"] = box_bytes(site)

        start = len(seen.urls)  # the first check on it, still cold
        out["first_check_s"] = round(check(page, *FIRST), 2)
        page.wait_for_load_state("networkidle")
        # the runtime's files only: the theme's search index may arrive in the same seconds
        out["first_check_download"] = seen.total(start, only="/live/")
        out["first_check_files"] = {
            urlsplit(u).path.rsplit("/", 1)[-1]: seen.file(u).stat().st_size
            for u in seen.urls[start:]
            if seen.file(u).is_file()
        }
        out["first_check_verdict"] = page.locator(
            f'.exercise-check[data-exercise-id="{FIRST[0]}"] .exercise-check__verdict'
        ).get_attribute("data-verdict")

        later = [check(page, e, a) for e, a in LATER]
        out["later_check_s"] = {
            "each": [round(x, 3) for x in later],
            "median": round(statistics.median(later), 3),
            "max": round(max(later), 3),
        }
        ctx.close()

        ctx = browser.new_context()  # own example: load the runtime once, then time 3×3
        page = ctx.new_page()
        page.goto(base + OWN, wait_until="networkidle")
        out["own_example_first_s"] = round(own_example(page), 2)
        runs = [own_example(page) for _ in range(3)]
        out["own_example_3x3_s"] = {
            "each": [round(x, 3) for x in runs],
            "median": round(statistics.median(runs), 3),
            "max": round(max(runs), 3),
        }
        ctx.close()
        browser.close()
    out["load_after"] = load()
    return out


def verdicts(r: dict[str, Any]) -> dict[str, str]:
    got = {
        "first_check_s": r["first_check_s"],
        "later_check_s": r["later_check_s"]["max"],
        "own_example_3x3_s": r["own_example_3x3_s"]["max"],
    }
    return {k: "met" if got[k] <= TARGETS[k] else "missed" for k in TARGETS}


def kib(n: int) -> str:
    return f"{n / 1024:,.0f} KiB"


def table(r: dict[str, Any]) -> str:
    v = verdicts(r)
    u, d = r["untouched_page"], r["first_check_download"]
    rows = [
        (
            "First check on a page, cold cache",
            f"{r['first_check_s']:.1f} s",
            "≤ 15 s",
            v["first_check_s"],
        ),
        (
            f"Later checks ({len(r['later_check_s']['each'])}, median / slowest)",
            f"{r['later_check_s']['median']:.2f} / {r['later_check_s']['max']:.2f} s",
            "≤ 1 s",
            v["later_check_s"],
        ),
        (
            "Your own example, 3×3, runtime loaded (median / slowest of 3)",
            f"{r['own_example_3x3_s']['median']:.2f} / {r['own_example_3x3_s']['max']:.2f} s",
            "≤ 3 s",
            v["own_example_3x3_s"],
        ),
        (
            "Downloaded by the first check",
            f"{kib(d['bytes'])} ({kib(d['gzip_bytes'])} gzipped), {d['requests']} requests",
            "",
            "",
        ),
        (
            "Downloaded by the exercise page, nothing clicked",
            f"{kib(u['bytes'])} ({kib(u['gzip_bytes'])} gzipped), {u['requests']} requests, "
            f"{u['live_requests']} of them live; the boxes' HTML and loader: "
            f"{u['answer_box_bytes']:,} bytes",
            "no live file",
            "met" if u["live_requests"] == 0 else "missed",
        ),
    ]
    lines = ["| Measurement | Measured | Target | Verdict |", "|---|---:|---|---|"]
    lines += [f"| {a} | {b} | {c} | {e} |" for a, b, c, e in rows]
    lines.append("")
    lines.append(
        f"Measured by `benchmarks/live_bench.py` in headless Chromium {r['chromium']} on "
        f"{r['cpus']} shared CPU cores ({r['date']}), load average "
        f"{r['load_before'][0]} before and {r['load_after'][0]} after (CPython importing the "
        f"checker took {r['native_import_s']} s in the same run). The first check's download "
        f"is Pyodide {r['pyodide']}, SymPy, mpmath and attention_math."
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, help="a built site (default: build one)")
    ap.add_argument("--out", default="live", help="benchmarks/OUT.json and OUT.md")
    args = ap.parse_args()
    with SiteServer() as server, tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            env = {**os.environ, "SITE_URL": server.url, "NO_MKDOCS_2_WARNING": "1"}
            cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)]
            subprocess.run(cmd, cwd=ROOT, env=env, check=True)
        base = server.start(site)
        r = measure(site, base)
    manifest = json.loads((site / "assets/live/manifest.json").read_text(encoding="utf-8"))
    r |= {
        "pyodide": manifest["pyodide"],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "targets": TARGETS,
    }
    r["verdicts"] = verdicts(r)
    (ROOT / "benchmarks" / f"{args.out}.json").write_text(json.dumps(r, indent=1) + "\n")
    (ROOT / "benchmarks" / f"{args.out}.md").write_text(table(r))
    print(table(r))


if __name__ == "__main__":
    main()
