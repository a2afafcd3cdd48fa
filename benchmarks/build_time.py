"""Measure the site's build times on this machine and record them.

- cold: ``mkdocs build --strict`` into an empty directory (every block executed), with its
  CPU time (the build's process and its children: Node's typesetting);
- rebuild: under ``mkdocs serve``, the time from saving an edit to one page until the
  served page shows the edit (every page rebuilt, every block run again in the serving
  process, whose in-memory caches are warm); the same under ``mkdocs serve --dirty`` (only
  changed pages are rebuilt) and under ``zensical serve`` (which rebuilds what changed, after
  ``python -m attention_site.prepare``: it runs no hook).

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
from pathlib import Path

from _common import ROOT, result_path, status_kib  # benchmarks/, the script's directory
from loop_time import calibration, children_cpu, load, strict_build  # the same workload

from attention_site.prepare import prepare

OUT = result_path(__file__)
TARGETS = {"cold_build_s": 90.0, "rebuild_s": 20.0}  # issue 51, on 2 cores
ENV = os.environ | {"NO_MKDOCS_2_WARNING": "1"}


def cold_build() -> tuple[float, float]:
    """Wall and CPU seconds for one ``mkdocs build --strict`` into a fresh directory."""
    with tempfile.TemporaryDirectory() as site:
        start, cpu = time.perf_counter(), children_cpu()
        strict_build(site, ENV)
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
            raise RuntimeError(f"the server exited with status {server.returncode}")
        if marker in _fetch(url):
            return time.perf_counter()
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not show {marker!r} within {timeout} s")


def _rss_mb(pid: int) -> float | None:
    """The resident memory of process ``pid`` in MB (Linux's /proc), or None elsewhere."""
    try:
        return round(status_kib("VmRSS", pid) / 1024, 1)
    except OSError:
        return None


def serve_command(port: int, engine: str = "mkdocs", *, dirty: bool = False) -> list[str]:
    """The command that serves this checkout at ``port`` with ``engine``.

    Examples:
        >>> serve_command(8001, dirty=True)[1:]
        ['-m', 'mkdocs', 'serve', '-a', '127.0.0.1:8001', '--dirty', '--no-strict']
        >>> serve_command(8001, "zensical")[1:]
        ['serve', '-a', '127.0.0.1:8001']
    """
    address = ["-a", f"127.0.0.1:{port}"]
    if engine == "zensical":
        return [str(Path(sys.executable).with_name("zensical")), "serve", *address]
    # a dirty build warns that other pages' navigation may be stale: not --strict
    flags = ["--dirty", "--no-strict"] if dirty else ["--strict"]
    return [sys.executable, "-m", "mkdocs", "serve", *address, *flags]


def serve_rebuilds(
    page: str, edits: int, *, dirty: bool = False, engine: str = "mkdocs"
) -> tuple[list[float], list[float | None]]:
    """Seconds from saving an edit of ``docs/<page>`` to the server (``mkdocs serve``, or
    ``zensical serve`` after prepare) serving it, and the serving process's resident memory
    (MB) after its first build and after each rebuild."""
    if engine == "zensical":
        print(prepare(ROOT), flush=True)  # what mkdocs serve's hook does: Zensical runs none
    port = _free_port()
    url = f"http://127.0.0.1:{port}/" + page.removesuffix(".md").removesuffix("index") + "/"
    url = url.replace("//", "/").replace("http:/", "http://")
    source = ROOT / "docs" / page
    original = source.read_bytes()
    env = dict(ENV)
    # served at the root of this address (the hosted site_url has a sub-path, /attention-math/)
    env["SITE_URL"] = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen(
        serve_command(port, engine, dirty=dirty),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    times: list[float] = []
    memory: list[float | None] = []
    try:
        _wait_for(url, "</html>", 300, server)  # the first build is done
        memory.append(_rss_mb(server.pid))
        for n in range(edits):
            marker = f"benchmark-edit-{os.getpid()}-{n}"
            time.sleep(1.0)  # let the watcher settle after the previous build
            source.write_bytes(original + f"\n\n{marker}\n".encode())
            start = time.perf_counter()
            times.append(_wait_for(url, marker, 300, server) - start)
            memory.append(_rss_mb(server.pid))
    finally:
        source.write_bytes(original)
        server.terminate()
        server.wait(timeout=30)
    return times, memory


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
    if "rebuild_zensical_s" in result:
        lines.append(
            row(
                "The same under `zensical serve` (what changed is rebuilt)",
                "rebuild_zensical_s",
                TARGETS["rebuild_s"],
            )
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
        "Node's included. Load: the 1-minute load average before the step."
    )
    said = []
    for key, server in (
        ("serve_memory_mb", "mkdocs serve"),
        ("zensical_serve_memory_mb", "zensical serve"),
    ):
        memory = result.get(key)
        if memory and None not in memory:
            said.append(f"`{server}`: {', '.join(f'{mb:.0f}' for mb in memory)} MB")
    if said:
        lines.append("")
        lines.append(
            "Resident memory of the serving process after its first build, then after each "
            f"rebuild, {'; '.join(said)}."
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default="forward/softmax.md", help="page to edit, under docs/")
    parser.add_argument("--edits", type=int, default=3, help="rebuilds to time")
    args = parser.parse_args(argv)

    loads = {}
    cal = round(calibration(), 3)
    loads["cold_build_s"] = load()
    cold, cold_cpu = cold_build()
    print(f"cold build: {cold:.1f} s ({cold_cpu:.1f} s CPU)", flush=True)
    loads["rebuild_s"] = load()
    rebuilds, memory = serve_rebuilds(args.page, args.edits)
    print("rebuilds:", [round(t, 2) for t in rebuilds], "memory, MB:", memory, flush=True)
    loads["rebuild_dirty_s"] = load()
    dirty, _ = serve_rebuilds(args.page, args.edits, dirty=True)
    print("rebuilds (--dirty):", [round(t, 2) for t in dirty], flush=True)
    loads["rebuild_zensical_s"] = load()
    zensical, zensical_memory = serve_rebuilds(args.page, args.edits, engine="zensical")
    print("rebuilds (zensical):", [round(t, 2) for t in zensical], zensical_memory, flush=True)
    result = {
        "cold_build_s": round(cold, 2),
        "cold_build_cpu_s": round(cold_cpu, 2),
        "rebuild_s": round(statistics.median(rebuilds), 2),
        "rebuilds_s": [round(t, 2) for t in rebuilds],
        "rebuild_dirty_s": round(statistics.median(dirty), 2),
        "rebuild_zensical_s": round(statistics.median(zensical), 2),
        "rebuilds_zensical_s": [round(t, 2) for t in zensical],
        "zensical_serve_memory_mb": zensical_memory,
        # resident memory of the serving process after its first build, then each rebuild
        "serve_memory_mb": memory,
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
