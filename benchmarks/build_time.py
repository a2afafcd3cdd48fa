"""Measure the site's build times on this machine and record them.

- cold: ``mkdocs build --strict`` into an empty directory (every block executed), as
  ``mkdocs build`` runs it (the executed blocks on two processes, ``hooks/parallel_exec.py``)
  and with ``ATTENTION_MATH_PARALLEL=0`` (all in one process), with the CPU time of each;
- rebuild: under ``mkdocs serve``, the time from saving an edit to one page until the
  served page shows the edit, with the execution cache (``hooks/exec_cache.py``) as
  ``serve`` uses it; the same under ``mkdocs serve --dirty`` (only changed pages are
  rebuilt); and once with the cache turned off.

In the same run, the calibration workload of ``benchmarks/loop_time.py`` (divide a time by
it to compare machines) and the load average before each step: the machine may be shared.
Writes ``data/build_time.json`` and ``build_time.md`` (the table the
About page includes). Run from the project root::

    python3 -m uv run --locked --group test python benchmarks/build_time.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from _common import ROOT, result_path  # benchmarks/, the script's directory
from loop_time import calibration, children_cpu, load, strict_build  # the same workload

OUT = result_path(__file__)
TARGETS = {"cold_build_s": 12.0, "rebuild_s": 3.0}  # issue 13 (cold), on 2 cores
ENV = os.environ | {"NO_MKDOCS_2_WARNING": "1"}


def cold_build(parallel: bool = True) -> tuple[float, float]:
    """Wall and CPU seconds for one ``mkdocs build --strict`` into a fresh directory."""
    env = {k: v for k, v in ENV.items() if k != "ATTENTION_MATH_EXEC_CACHE"}
    env["ATTENTION_MATH_PARALLEL"] = "1" if parallel else "0"
    with tempfile.TemporaryDirectory() as site:
        start, cpu = time.perf_counter(), children_cpu()
        strict_build(site, env)
        return time.perf_counter() - start, children_cpu() - cpu


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _wait_for(url: str, marker: str, timeout: float, server: subprocess.Popen) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if server.poll() is not None:
            raise RuntimeError(f"mkdocs serve exited with status {server.returncode}")
        if marker in _fetch(url):
            return time.perf_counter()
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not show {marker!r} within {timeout} s")


def serve_rebuilds(page: str, edits: int, *, cache: bool, dirty: bool = False) -> list[float]:
    """Seconds from saving an edit of ``docs/<page>`` to ``mkdocs serve`` serving it."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/" + page.removesuffix(".md").removesuffix("index") + "/"
    url = url.replace("//", "/").replace("http:/", "http://")
    source = ROOT / "docs" / page
    original = source.read_bytes()
    env = ENV | {"ATTENTION_MATH_EXEC_CACHE": "1" if cache else "0"}
    # served at the root of this address (the hosted site_url has a sub-path, /attention-math/)
    env["SITE_URL"] = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"]
        # a dirty build warns that other pages' navigation may be stale: not --strict
        + (["--dirty", "--no-strict"] if dirty else ["--strict"]),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    times = []
    try:
        _wait_for(url, "</html>", 300, server)  # the first build is done
        for n in range(edits):
            marker = f"benchmark-edit-{os.getpid()}-{n}"
            time.sleep(1.0)  # let the watcher settle after the previous build
            source.write_bytes(original + f"\n\n{marker}\n".encode())
            start = time.perf_counter()
            times.append(_wait_for(url, marker, 300, server) - start)
    finally:
        source.write_bytes(original)
        server.terminate()
        server.wait(timeout=30)
    return times


def table(result: dict) -> str:
    """The results as a Markdown table (what docs/about.md includes)."""
    cal = result.get("calibration_s")

    def row(what: str, key: str, target: float | None, cpu: str = "") -> str:
        seconds = result[key]
        verdict = "" if target is None else ("met" if seconds <= target else "**not met**")
        shown = "" if target is None else f"≤ {target:g} s: {verdict}"
        ratio = f"{seconds / cal:.1f}×" if cal else ""
        cpu_s = f"{result[cpu]:.1f} s" if cpu and result.get(cpu) is not None else ""
        loads = result.get("loads", {}).get(key, "")
        return f"| {what} | {seconds:.1f} s | {ratio} | {cpu_s} | {shown} | {loads} |"

    lines = [
        "| Measurement | Wall time | ÷ calibration | CPU time | Target | Load |",
        "|---|---:|---:|---:|---|---:|",
        row(
            "Cold `mkdocs build --strict`",
            "cold_build_s",
            TARGETS["cold_build_s"],
            "cold_build_cpu_s",
        ),
    ]
    if result.get("cold_build_sequential_s") is not None:
        lines.append(
            row(
                "The same, every block in one process (`ATTENTION_MATH_PARALLEL=0`)",
                "cold_build_sequential_s",
                None,
                "cold_build_sequential_cpu_s",
            )
        )
    lines.append(
        row("One-page rebuild under `mkdocs serve` (median)", "rebuild_s", TARGETS["rebuild_s"])
    )
    lines.append(
        row(
            "The same under `mkdocs serve --dirty` (only the edited page)",
            "rebuild_dirty_s",
            TARGETS["rebuild_s"],
        )
    )
    if result.get("rebuild_uncached_s") is not None:
        lines.append(
            row("The same rebuild without the execution cache", "rebuild_uncached_s", None)
        )
    m = result["machine"]
    lines.append("")
    when = f" on {result['date']}," if result.get("date") else ""
    calibrated = (
        f" Calibration workload (`benchmarks/loop_time.py`): {cal} s, best of 3; "
        "divide by it to compare machines."
        if cal
        else ""
    )
    lines.append(
        f"Measured by `benchmarks/build_time.py`{when} on {m['cpus']} CPU cores, "
        f"Python {m['python']}, {m['platform']}.{calibrated} CPU time: the build's processes, "
        "the worker's and Node's included. Load: the 1-minute load average before the step."
    )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default="forward/softmax.md", help="page to edit, under docs/")
    parser.add_argument("--edits", type=int, default=3, help="rebuilds to time")
    parser.add_argument("--no-uncached", action="store_true", help="skip the uncached rebuild")
    args = parser.parse_args(argv)

    loads = {}
    cal = round(calibration(), 3)
    loads["cold_build_s"] = load()
    cold, cold_cpu = cold_build()
    print(f"cold build: {cold:.1f} s ({cold_cpu:.1f} s CPU)", flush=True)
    loads["cold_build_sequential_s"] = load()
    seq, seq_cpu = cold_build(parallel=False)
    print(f"cold build, one process: {seq:.1f} s ({seq_cpu:.1f} s CPU)", flush=True)
    loads["rebuild_s"] = load()
    rebuilds = serve_rebuilds(args.page, args.edits, cache=True)
    print("rebuilds (cache):", [round(t, 2) for t in rebuilds], flush=True)
    loads["rebuild_dirty_s"] = load()
    dirty = serve_rebuilds(args.page, args.edits, cache=True, dirty=True)
    print("rebuilds (cache, --dirty):", [round(t, 2) for t in dirty], flush=True)
    loads["rebuild_uncached_s"] = load()
    uncached = None if args.no_uncached else serve_rebuilds(args.page, 1, cache=False)[0]
    if uncached is not None:
        print(f"rebuild (no cache): {uncached:.1f} s", flush=True)
    result = {
        "cold_build_s": round(cold, 2),
        "cold_build_cpu_s": round(cold_cpu, 2),
        "cold_build_sequential_s": round(seq, 2),
        "cold_build_sequential_cpu_s": round(seq_cpu, 2),
        "rebuild_s": round(statistics.median(rebuilds), 2),
        "rebuilds_s": [round(t, 2) for t in rebuilds],
        "rebuild_dirty_s": round(statistics.median(dirty), 2),
        "rebuild_uncached_s": None if uncached is None else round(uncached, 2),
        "edited_page": args.page,
        "calibration_s": cal,
        "loads": loads,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "targets": TARGETS,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        },
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    OUT.with_suffix(".md").write_text(table(result), encoding="utf-8")
    met = cold <= TARGETS["cold_build_s"] and result["rebuild_s"] <= TARGETS["rebuild_s"]
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
