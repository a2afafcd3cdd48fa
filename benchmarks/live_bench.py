"""The live parts in a real browser: how long a check takes and how much it downloads.

Headless Chromium (Playwright) against the built site served on localhost under its
sub-path. Each cold measurement uses a fresh browser context (empty HTTP cache):

- an untouched exercise page: every byte it downloads, and how many of those requests
  are the live runtime's (target: none); and, in the same run, the same page without the
  live parts (its answer boxes, their loader and their style rules taken out of a copy), so
  that what the boxes add to a page nobody clicks is a measured difference;
- the first check on that page, cold: seconds from the click to the verdict (≤ 15 s on the
  two-core machine), split by the progress line's phases, and the bytes it downloads;
- the same first check with the runtime's modules served as sources (as before the build
  compiled them to bytecode), on a copy of the site: what the bytecode saves, in one run;
- later checks on the same page (≤ 1 s each);
- "Your own example" with 3×3 inputs once the runtime is loaded (≤ 3 s).

Bytes are as served (this server does not compress) and, beside them, gzip-compressed as
GitHub Pages serves them. The machine is shared: the load average is recorded.

    python benchmarks/live_bench.py [--site DIR] [--variant V] [--repeat N] [--no-sources]

Without ``--site`` the site is built first (the official run: one command, unattended).
``--repeat`` takes each cold first check N times (alternating bytecode and sources; the
table gives the median, and the phases of the median run); ``--no-sources`` skips the
sources copy; ``--table`` writes the table again from the JSON, measuring nothing. Writes
``data/live_bench.json`` and the table ``live_bench.md`` that the engineering
appendix (docs/about.md) includes (``--variant V``: ``live_bench.V.json`` and ``.md``).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _common import result_path  # benchmarks/, the script's directory
from loop_time import strict_build

from attention_site.checks.browser import CHROMIUM
from attention_site.checks.server import SUBPATH, SiteServer

PAGE = "exercises/softmax/"
BARE = "exercises/softmax-without-boxes/"  # PAGE without the live parts (a copy made here)
CSS = "stylesheets/extra.css"
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


FORMS = re.compile(r'<form class="exercise-check".*?</form>', re.S)
LOADER = re.compile(r'<script type="module">document\.addEventListener\("submit".*?</script>')


def box_bytes(site: Path) -> int:
    """Bytes the answer boxes add to PAGE's HTML: their forms and the one inline loader."""
    html = (site / PAGE / "index.html").read_text(encoding="utf-8")
    return sum(len(x.encode()) for x in [*FORMS.findall(html), *LOADER.findall(html)])


def without_boxes(site: Path) -> None:
    """Write BARE: PAGE with its forms and loader taken out, and a stylesheet without the
    boxes' rules (the site's stylesheet holds them for every page)."""
    html = (site / PAGE / "index.html").read_text(encoding="utf-8")
    bare = LOADER.sub("", FORMS.sub("", html)).replace(CSS, CSS.replace(".css", "-bare.css"))
    if "exercise-check" in bare or CSS.replace(".css", "-bare.css") not in bare:
        raise RuntimeError(f"{PAGE}: the live parts could not be taken out of the copy")
    (site / BARE).mkdir(parents=True, exist_ok=True)
    (site / BARE / "index.html").write_text(bare, encoding="utf-8")
    rules = (site / CSS).read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [r for r in rules if "exercise-check" not in r and "own-example" not in r]
    (site / CSS.replace(".css", "-bare.css")).write_text("".join(kept), encoding="utf-8")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def with_sources(site: Path, dest: Path) -> Path:
    """A copy of ``site`` whose runtime serves its modules as sources (the standard library
    and the wheels as fetched and built, uncompiled), with a manifest to match."""
    from attention_site import live_runtime as live
    from attention_site.prepare import ROOT, STATE

    cache = ROOT / STATE / "live"  # where prepare keeps the runtime's downloads
    shutil.copytree(site, dest)
    lock = json.loads(live.LOCK.read_text(encoding="utf-8"))
    manifest_path = dest / "assets/live/manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    core = live.pyodide_core(lock, cache)
    stdlib = core / "python_stdlib.zip"
    shutil.copyfile(stdlib, dest / "assets/live" / manifest["stdlib"]["path"])
    manifest["stdlib"]["sha"] = _digest(stdlib)
    sources = {path.name: path for _, _, path in live.pypi_wheels(lock["wheels"], cache)}
    project = live.project_wheel(cache)
    sources |= {project.name: project}
    for wheel in manifest["wheels"]:
        src = sources[wheel["path"].rsplit("/", 1)[1]]
        shutil.copyfile(src, dest / "assets/live" / wheel["path"])
        wheel["sha"] = _digest(src)
    manifest["bytecode"] = False
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return dest


PHASES = """el => { window.__phases = [];
  new MutationObserver(() => window.__phases.push([performance.now(), el.textContent]))
    .observe(el, {childList: true, characterData: true, subtree: true});
  window.__t0 = performance.now(); }"""


def phases(page: Any) -> dict[str, float]:
    """Seconds spent on each progress line of the first check (the worker's own words)."""
    marks = page.evaluate("[window.__t0, window.__phases]")
    t0, seen = marks[0], marks[1]
    out: dict[str, float] = {}
    last, text = t0, "(click)"
    for t, new in seen:
        out[text] = round(out.get(text, 0) + (t - last) / 1000, 2)
        last, text = t, new or "(verdict)"
    return {k: v for k, v in out.items() if k != "(verdict)"}


def first_check(browser: Any, site: Path, base: str) -> dict[str, Any]:
    """The first check on PAGE in a fresh context: seconds, phases, downloads, verdict."""
    ctx = browser.new_context()
    page = ctx.new_page()
    seen = Bytes(site, base)
    seen.listen(page)
    page.goto(base + PAGE, wait_until="networkidle")
    start = len(seen.urls)
    box = page.locator(f'.exercise-check[data-exercise-id="{FIRST[0]}"]')
    box.locator(".exercise-check__progress").evaluate(PHASES)
    seconds = check(page, *FIRST)
    page.wait_for_load_state("networkidle")
    out = {
        "s": round(seconds, 2),
        "phases": phases(page),
        # the runtime's files only: the theme's search index may arrive in the same seconds
        "download": seen.total(start, only="/live/"),
        "files": {
            urlsplit(u).path.rsplit("/", 1)[-1]: seen.file(u).stat().st_size
            for u in seen.urls[start:]
            if seen.file(u).is_file() and "/live/" in u
        },
        "verdict": box.locator(".exercise-check__verdict").get_attribute("data-verdict"),
    }
    ctx.close()
    return out


def untouched(browser: Any, site: Path, base: str, path: str) -> dict[str, int]:
    """Every byte a cold, untouched ``path`` downloads, and how many requests are live."""
    ctx = browser.new_context()
    page = ctx.new_page()
    seen = Bytes(site, base)
    seen.listen(page)
    page.goto(base + path, wait_until="networkidle")
    page.wait_for_timeout(1000)  # anything a script would fetch late, after the load
    out = seen.total()
    out["live_requests"] = sum("/live/" in u for u in seen.urls)
    ctx.close()
    return out


def median_run(seconds: list[float]) -> int:
    """Index of the median run (of an even count, the faster of the middle two).

    Examples:
        >>> median_run([11.66, 9.55, 9.6])
        2
        >>> median_run([4.0, 3.0, 5.0, 6.0])
        0
    """
    order = sorted(range(len(seconds)), key=seconds.__getitem__)
    return order[(len(seconds) - 1) // 2]


def measure(site: Path, base: str, sources: tuple[Path, str] | None, repeat: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {"load_before": load(), "native_import_s": calibration()}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        out["chromium"] = browser.version

        out["untouched_page"] = untouched(browser, site, base, PAGE)
        out["untouched_page"]["answer_box_bytes"] = box_bytes(site)
        out["untouched_page_without_boxes"] = untouched(browser, site, base, BARE)

        runs: dict[str, list[dict[str, Any]]] = {"bytecode": [], "sources": []}
        for _ in range(repeat):  # alternating, so that a change of load hits both alike
            runs["bytecode"].append(first_check(browser, site, base))
            if sources is not None:
                runs["sources"].append(first_check(browser, *sources))
        first = runs["bytecode"]
        out["first_check_each_s"] = [r["s"] for r in first]
        out["first_check_s"] = round(statistics.median(out["first_check_each_s"]), 2)
        # the phases of the median run, so that they add up to about the median
        out["first_check_phases_run"] = m = median_run(out["first_check_each_s"])
        out["first_check_phases"] = first[m]["phases"]
        out["first_check_download"] = first[0]["download"]
        out["first_check_files"] = first[0]["files"]
        out["first_check_verdict"] = first[0]["verdict"]
        if runs["sources"]:
            src = runs["sources"]
            out["first_check_sources_each_s"] = [r["s"] for r in src]
            out["first_check_sources_s"] = round(statistics.median(r["s"] for r in src), 2)
            m = median_run(out["first_check_sources_each_s"])
            out["first_check_sources_phases_run"] = m
            out["first_check_sources_phases"] = src[m]["phases"]
            out["first_check_sources_download"] = src[0]["download"]

        ctx = browser.new_context()  # later checks, the runtime loaded by a first one
        page = ctx.new_page()
        page.goto(base + PAGE, wait_until="networkidle")
        check(page, *FIRST)
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
        runs3 = [own_example(page) for _ in range(3)]
        out["own_example_3x3_s"] = {
            "each": [round(x, 3) for x in runs3],
            "median": round(statistics.median(runs3), 3),
            "max": round(max(runs3), 3),
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


def _phases(ph: dict[str, float]) -> str:
    names = {"(click)": "starting", "Working…": "checking"}
    return "; ".join(f"{names.get(k, k.rstrip('…'))} {v:.1f} s" for k, v in ph.items())


def _download(d: dict[str, int]) -> str:
    return f"{kib(d['bytes'])} ({kib(d['gzip_bytes'])} gzipped), {d['requests']} requests"


def _which_run(r: dict[str, Any], kind: str) -> str:
    """Which run of ``kind`` ("first_check", "first_check_sources") the phases are from, and
    its time; results written before the key was kept took the first run's."""
    each = r[f"{kind}_each_s"]
    if len(each) == 1:
        return ""
    i = r.get(f"{kind}_phases_run", 0)
    return f" in run {i + 1} of {len(each)} ({each[i]:.1f} s)"


def table(r: dict[str, Any]) -> str:
    v = verdicts(r)
    u, b, d = r["untouched_page"], r["untouched_page_without_boxes"], r["first_check_download"]
    each = r["first_check_each_s"]
    rows = [
        (
            "First check on a page, cold cache"
            + (f" (median of {len(each)})" if len(each) > 1 else ""),
            f"{r['first_check_s']:.1f} s",
            "≤ 15 s",
            v["first_check_s"],
        ),
        (
            f"&nbsp;&nbsp;its phases{_which_run(r, 'first_check')}, as its progress line says",
            _phases(r["first_check_phases"]),
            "",
            "",
        ),
    ]
    if "first_check_sources_s" in r:
        rows += [
            (
                "The same, modules served as sources (not compiled at build time)",
                f"{r['first_check_sources_s']:.1f} s",
                "",
                f"bytecode saves {r['first_check_sources_s'] - r['first_check_s']:.1f} s",
            ),
            (
                f"&nbsp;&nbsp;its phases{_which_run(r, 'first_check_sources')}",
                _phases(r["first_check_sources_phases"]),
                "",
                "",
            ),
        ]
    rows += [
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
        ("Downloaded by the first check", _download(d), "", ""),
    ]
    if "first_check_sources_download" in r:
        rows.append(
            (
                "&nbsp;&nbsp;the same, modules as sources",
                _download(r["first_check_sources_download"]),
                "",
                "",
            )
        )
    diff, gz = u["bytes"] - b["bytes"], u["gzip_bytes"] - b["gzip_bytes"]
    rows += [
        (
            "Exercise page, nothing clicked",
            f"{_download(u)}, {u['live_requests']} of them live",
            "no live file",
            "met" if u["live_requests"] == 0 else "missed",
        ),
        (
            "The same page without the live parts (boxes, loader, style rules)",
            f"{_download(b)}",
            "equal",
            f"{diff:+,} bytes ({gz:+,} gzipped, {100 * gz / b['gzip_bytes']:+.1f} %)",
        ),
    ]
    lines = ["| Measurement | Measured | Target | Verdict |", "|---|---|---|---|"]
    lines += [f"| {a} | {b_} | {c} | {e} |" for a, b_, c, e in rows]
    lines.append("")
    lines.append(
        f"Measured by `benchmarks/live_bench.py` in headless Chromium {r['chromium']} on "
        f"{r['cpus']} shared CPU cores ({r['date']}), load average "
        f"{r['load_before'][0]} before and {r['load_after'][0]} after (CPython importing the "
        f"checker took {r['native_import_s']} s in the same run). The first check's download "
        f"is Pyodide {r['pyodide']}, SymPy, mpmath and attention_math, their modules compiled "
        f"to bytecode by the build with Pyodide's own Python (without their test suites). "
        f"A page without the live parts differs by the boxes' own markup "
        f"({u['answer_box_bytes']:,} bytes of HTML here) and their style rules; it loads "
        f"the same files otherwise."
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, help="a built site (default: build one)")
    ap.add_argument("--variant", help="results/live_bench.VARIANT.json and .md instead")
    ap.add_argument("--repeat", type=int, default=1, help="cold first checks of each kind")
    ap.add_argument("--no-sources", action="store_true", help="skip the sources copy")
    ap.add_argument("--table", action="store_true", help="only write the .md from the .json")
    args = ap.parse_args()
    out = result_path(__file__, args.variant)
    if args.table:
        kept = json.loads(out.read_text())
        out.with_suffix(".md").write_text(table(kept))
        return
    with SiteServer() as server, SiteServer() as second, tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        if args.site is None:
            strict_build(site, {**os.environ, "SITE_URL": server.url, "NO_MKDOCS_2_WARNING": "1"})
        else:
            shutil.copytree(args.site, site)  # the copies below are made in it, not in yours
        without_boxes(site)
        sources = None
        if not args.no_sources:
            copy = with_sources(site, Path(tmp) / "sources")
            sources = (copy, second.start(copy))
        base = server.start(site)
        manifest = json.loads((site / "assets/live/manifest.json").read_text(encoding="utf-8"))
        r = measure(site, base, sources, max(1, args.repeat))
    r |= {
        "pyodide": manifest["pyodide"],
        "bytecode": manifest.get("bytecode", False),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "targets": TARGETS,
    }
    r["verdicts"] = verdicts(r)
    out.write_text(json.dumps(r, indent=1) + "\n")
    out.with_suffix(".md").write_text(table(r))
    print(table(r))


if __name__ == "__main__":
    main()
