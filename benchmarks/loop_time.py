"""Time a contributor's loop from a clean clone, beside a calibration workload.

In one run, from a fresh ``git clone`` of the current commit (the package cache of uv stays
warm, as it is on a contributor's second clone):

- ``setup_s``: ``uv sync --locked --group test`` and the PyTorch oracle install;
- ``cold_build_s``: the clone's first ``mkdocs build --strict`` (no execution cache, no site;
  the in-browser runtime is fetched into the clone's ``.prepare/`` by its first
  ``attention_site.prepare``);
- ``test_command_first_s``: the README's test command, browser and oracle tests included,
  with no kept browser visits (the machine's are removed first): every page is visited, as
  under CI or on a machine's first run; with pytest's 40 slowest steps
  (``test_command_first_slowest``: the run's critical path) and its "browser visit" line;
- ``test_command_s``: the same command again, as a contributor's next run of the same
  sources: every page's bytes are unchanged, so their kept visits are reused
  (``attention_site.checks.visits``); ``test_command_slowest`` as above;
- ``quick_loop_s``: the quick loop as CONTRIBUTING.md shows it, ``.venv/bin/pytest -m "not browser
  and not docs and not slow"`` (after the full run, as a contributor runs it: pytest's caches
  warm; no ``pip install uv`` or ``uv run`` before it);
- ``serve_first_s`` and ``serve_restart_s``: ``mkdocs serve`` started twice after the cold
  build, each until it serves the first page (each runs every executed block: nothing of a
  build is kept on disk);
- ``calibration_s``: a fixed CPU workload (pure Python, NumPy, SymPy), best of 3, before and
  after: divide a figure by it to compare machines (a ratio, not seconds).

Each step also records ``*_cpu_s``, the CPU seconds (user + system) its processes used. On a
shared machine the wall time grows with the other work; the CPU time hardly does, and
``cpu / cores`` is the least wall time the step could take on an idle machine of as many
cores. The load average is recorded with every figure: the machine is shared. Results are
written after each step, so a run stopped during the test command keeps its build figures
(``--skip-tests`` measures setup and build only). Writes
``data/loop_time.json`` (data), ``loop_time.md`` (the table the About
page includes) and, after a complete run, CONTRIBUTING.md's paragraph of durations. Then it
runs ``benchmarks/build_time.py`` (a cold build, rebuilds under ``mkdocs serve``; its own
table, also on the About page) unless
``--skip-build-times``. One unattended command, from the project root, alone on the
machine if you can (about 15 minutes on an idle 2-core machine)::

    python3 -m uv run --locked --group test python benchmarks/loop_time.py
    # --skip-tests: setup and build only; --table: the table again from loop_time.json
"""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, result_path  # benchmarks/, the script's directory

from attention_site.address import KEPT

OUT = result_path(__file__)
# on the 2-core machine: issue 51's bars (its 600 s restates issue 36's 300 s, which cannot
# hold while every page is visited in Chromium), and issue 36's serve restart
TARGETS = {
    "test_command_first_s": 600.0,
    "quick_loop_s": 45.0,
    "serve_restart_s": 15.0,
    "cold_build_s": 90.0,
}
QUICK = "not browser and not docs and not slow"  # the quick loop's marker expression
PORT = 8712
_UV_BIN = shutil.which("uv")
UV = (_UV_BIN,) if _UV_BIN else ("python3", "-m", "uv")


def strict_build(out: str | Path, env: dict[str, str]) -> None:
    """``mkdocs build --strict`` of this checkout into ``out``; exit with its log if it fails.

    Never ``--quiet``: it drops the warnings ``--strict`` counts, and a block that raises
    would build with exit status 0.
    """
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)]
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"mkdocs build --strict failed:\n{run.stderr[-3000:]}")


def calibration() -> float:
    """Seconds for a fixed workload; the best of 3 (the least disturbed by other load)."""
    import numpy as np
    import sympy as sp

    def once() -> float:
        start = time.perf_counter()
        sum(i * i % 7 for i in range(4_000_000))  # the interpreter
        a = np.random.default_rng(0).standard_normal((300, 300))  # (300, 300)
        for _ in range(60):
            a = np.tanh(a @ a.T / 300)  # (300, 300): BLAS and ufuncs
        x = sp.Symbol("x")
        sp.simplify(sp.exp(x) / (1 + sp.exp(x)) - 1 / (1 + sp.exp(-x)))  # SymPy
        sp.Matrix(4, 4, lambda i, j: sp.exp(sp.log(i + 2) * (j + 1))).inv()
        return time.perf_counter() - start

    return min(once() for _ in range(3))


def load() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def children_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str] | str, cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds and CPU seconds for ``cmd`` to finish (it must succeed); its output."""
    start, cpu = time.perf_counter(), children_cpu()
    run = subprocess.run(
        cmd, cwd=cwd, env=env, shell=isinstance(cmd, str), capture_output=True, text=True
    )
    seconds, cpu = time.perf_counter() - start, children_cpu() - cpu
    if run.returncode != 0:
        raise SystemExit(f"failed ({run.returncode}): {cmd}\n{run.stdout[-3000:]}{run.stderr}")
    return seconds, cpu, run.stdout + run.stderr


SLOWEST = 40
DURATION = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S.*?)\s*$", re.MULTILINE)


def slowest(output: str) -> list[list[Any]]:
    """pytest's ``--durations`` report: [seconds, step, test id], slowest first."""
    return [[float(s), step, test] for s, step, test in DURATION.findall(output)]


def readme_quick_command() -> str:
    """The quick loop as CONTRIBUTING.md shows it (``.venv/bin/pytest -m "…"``), whose marker
    expression must be ``QUICK``: the step times what a reader runs, not the set-up command."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    found = re.findall(r'^(\.venv/bin/pytest -m "([^"]+)")$', text, re.MULTILINE)
    if [expression for _, expression in found] != [QUICK]:
        raise SystemExit(f'CONTRIBUTING.md must show the quick loop once, as -m "{QUICK}": {found}')
    return str(found[0][0])


def readme_test_command() -> str:
    """The line of the code block after the ``test-command`` marker in README.md (``.ci/run``
    holds the same line: tests/build/test_ci.py)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- test-command[^>]*-->\n```sh\n(.*?)\n```", text, re.DOTALL)
    if not block:
        raise SystemExit("README.md has no code block after its <!-- test-command --> marker")
    return block[1]


def measure(figures: dict[str, Any], skip_tests: bool) -> dict[str, Any]:
    """Fill ``figures`` step by step, writing the results after each step."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CI")}
    env["NO_MKDOCS_2_WARNING"] = "1"
    # a reader's shell does not forbid .pyc files; a sandbox's may (each process would then
    # recompile SymPy and the tests): measure the reader's loop
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # `uv run` puts this environment's bin/ first on PATH: the README's `python3` must be the
    # machine's, as for a new user (this environment's python3 has no pip)
    here = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != here)
    figures |= {"load_start": load(), "calibration_s": round(calibration(), 3)}
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "attention-math"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        wheels = ["--find-links", "/opt/wheels"] if Path("/opt/wheels").is_dir() else []
        s1, c1, _ = timed([*UV, "sync", "-q", "--locked", "--group", "test"], clone, env)
        torch = [*UV, "pip", "install", "-q", "--python", ".venv/bin/python", *wheels]
        s2, c2, _ = timed([*torch, "torch==2.13.0"], clone, env)
        figures |= {"setup_s": round(s1 + s2, 1), "setup_cpu_s": round(c1 + c2, 1)}

        figures["load_before_build"] = load()
        # never --quiet: it drops the warnings --strict counts, and a raising block passes
        build = [".venv/bin/python", "-m", "mkdocs", "build", "--strict", "-d", "site"]
        seconds, cpu, _ = timed(build, clone, env)
        figures |= {"cold_build_s": round(seconds, 1), "cold_build_cpu_s": round(cpu, 1)}
        command = readme_test_command()
        figures["test_command"] = command
        write(figures)

        if not skip_tests:
            # twice: first with no kept browser visits (every page visited, as under CI or on
            # a machine's first run), then again as a contributor's next run of the same
            # sources (every page's bytes unchanged: the kept visits reused)
            shutil.rmtree(clone / KEPT.name / "visits", ignore_errors=True)  # the clone's own
            for key, when in (("test_command_first", "tests_first"), ("test_command", "tests")):
                figures[f"load_before_{when}"] = load()
                # pytest's 40 slowest steps (setup, call, teardown) come with the figure: the
                # critical path of the run (its output changes, not what it runs)
                tests_env = env | {"PYTEST_ADDOPTS": f"--durations={SLOWEST}"}
                seconds, cpu, output = timed(command, clone, tests_env)
                figures |= {f"{key}_s": round(seconds, 1), f"{key}_cpu_s": round(cpu, 1)}
                summary = re.findall(r"=+ (\d+ passed.*?) in [\d.]+s", output)
                figures[f"{key}_summary"] = summary[-1] if summary else output.splitlines()[-1]
                figures[f"{key}_browser"] = " ".join(
                    re.findall(r"^browser visit: .*$", output, re.M)
                )
                figures[f"{key}_slowest"] = slowest(output)
                write(figures)

            figures["load_before_quick"] = load()
            # the README's quick loop (its .venv/ is the one the test command just made)
            seconds, cpu, output = timed(readme_quick_command(), clone, env)
            figures |= {"quick_loop_s": round(seconds, 1), "quick_loop_cpu_s": round(cpu, 1)}
            summary = re.findall(r"=+ (\d+ passed.*?) in [\d.]+s", output)
            figures["quick_summary"] = summary[-1] if summary else output.splitlines()[-1]
        write(figures)

        # a contributor's first serve, then the restart the target is about: the cold build
        # keeps nearly every block's output, but not quite all of them (the blocks its
        # parallel worker ran in a session it handed back), which the first serve keeps
        figures["load_before_serve_first"] = load()
        seconds, cpu, _ = serve_start(clone, env)
        figures |= {"serve_first_s": round(seconds, 1), "serve_first_cpu_s": round(cpu, 1)}
        figures["load_before_serve"] = load()
        seconds, cpu, banner = serve_start(clone, env)
        figures |= {"serve_restart_s": round(seconds, 1), "serve_restart_cpu_s": round(cpu, 1)}
        figures["serve_output_before_serving"] = banner
    figures["load_end"] = load()
    figures["calibration_end_s"] = round(calibration(), 3)
    return figures


def _group_cpu(pgid: int) -> float:
    """CPU seconds used so far by the live processes of process group ``pgid`` (Linux)."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[2]) == pgid:  # fields after the name: state, ppid, pgrp, …
                total += sum(int(t) for t in stat[11:15]) / tick  # utime stime cutime cstime
        except (OSError, IndexError, ValueError):
            continue
    return total


def serve_start(clone: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """``uv run --locked mkdocs serve`` as the README starts it: seconds until it serves
    the first page, CPU seconds its processes used by then, and what it printed before."""
    import signal
    import urllib.request

    cmd = [*UV, "run", "--locked", "mkdocs", "serve", "-a", f"127.0.0.1:{PORT}"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=clone,
        env=env | {"NO_MKDOCS_2_WARNING": "1"},  # as the README's command sets it
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: measured and stopped as one
    )
    url = f"http://127.0.0.1:{PORT}/attention-math/"
    try:
        while proc.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=2) as page:
                    if page.status == 200:
                        break
            except OSError:
                time.sleep(0.2)
        seconds, cpu = time.perf_counter() - start, _group_cpu(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            output = proc.communicate(timeout=30)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output = proc.communicate()[0].decode(errors="replace")
    if proc.returncode not in (0, 1, -signal.SIGINT) and "Serving on" not in output:
        raise SystemExit(f"mkdocs serve failed ({proc.returncode}):\n{output[-3000:]}")
    before = output.split("Serving on", 1)[0].splitlines()
    return seconds, cpu, "\n".join(line for line in before if "INFO" not in line).strip()


def table(f: dict[str, Any]) -> str:
    cal = f["calibration_s"]
    rows = [
        (
            "README test command, clean clone, every page visited (CI; a machine's first run)",
            "test_command_first_s",
            "load_before_tests_first",
        ),
        (
            "The same command again (a contributor's next run: unchanged pages' visits reused)",
            "test_command_s",
            "load_before_tests",
        ),
        (f'Quick loop (`-m "{QUICK}"`)', "quick_loop_s", "load_before_quick"),
        ("`mkdocs serve` restarted, to the first page", "serve_restart_s", "load_before_serve"),
        (
            "`mkdocs serve` first started after the cold build",
            "serve_first_s",
            "load_before_serve_first",
        ),
        ("Cold `mkdocs build --strict`", "cold_build_s", "load_before_build"),
        ("Setup: `uv sync`, PyTorch", "setup_s", "load_start"),
    ]
    lines = [
        "| Step | Wall time | ÷ calibration | CPU time | Target | Load |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for name, key, load_key in rows:
        if key not in f:
            lines.append(f"| {name} | not measured in this run | | | | |")
            continue
        target = TARGETS.get(key)
        verdict = "" if target is None else ("met" if f[key] <= target else "**not met**")
        goal = "" if target is None else f"≤ {target:g} s: {verdict}"
        cpu = f[key.replace("_s", "_cpu_s")]
        lines.append(
            f"| {name} | {f[key]} s | {f[key] / cal:.0f}× | {cpu} s | {goal} | {f[load_key]} |"
        )
    tests = "".join(
        f"{label}: {f[key + '_summary']} ({f[key + '_browser'] or 'no browser visit line'}). "
        for label, key in (("First run", "test_command_first"), ("Again", "test_command"))
        if key + "_summary" in f
    )
    if "quick_summary" in f:
        tests += f"Quick loop: {f['quick_summary']}. "
    if "serve_output_before_serving" in f:
        said = f["serve_output_before_serving"]
        tests += (
            "`mkdocs serve` printed nothing but its INFO lines before serving. "
            if not said
            else (f"`mkdocs serve` printed, besides its INFO lines: `{said[:200]}`. ")
        )
    lines += [
        "",
        f"Calibration workload: {cal} s (best of 3; after the run: {f['calibration_end_s']}"
        f"{' s' if isinstance(f['calibration_end_s'], float) else ''}). "
        f"{tests}Command: `{f.get('test_command') or readme_test_command()}`. "
        "CPU time: what the step's processes used, which the machine's other work hardly "
        f"changes; on an idle machine of {f['cpus']} cores a step takes at least its CPU time "
        f"÷ {f['cpus']} (every core busy throughout), and about its CPU time if it kept one core "
        "busy at a time. The build runs the pages' executed blocks in its own process "
        "and the tests on a pytest worker per core. Load: the "
        "1-minute load average when the step started.",
        "",
        f"Measured by `benchmarks/loop_time.py` on {f['date']}, on {f['cpus']} CPU cores "
        f"shared with other work, Python {f['python']}, {f['platform']}.",
    ]
    return "\n".join(lines) + "\n"


#: CONTRIBUTING.md's paragraph of the loop's durations, between these two lines: written from
#: a complete run's figures by `write`
README_START = "<!-- loop-time: written by benchmarks/loop_time.py from its results -->"
README_END = "<!-- /loop-time -->"
README_FIGURES = ("test_command_first_s", "test_command_s", "quick_loop_s")


def readme_paragraph(f: dict[str, Any]) -> str:
    """CONTRIBUTING.md's paragraph of durations, from a run's figures."""
    first, again, quick = (f"{f[k]:.1f} s" for k in README_FIGURES)
    return (
        "Measured from a clean clone by `benchmarks/loop_time.py` on the project's "
        f"{f['cpus']}-core\nmachine ({f['date']}; the whole table is "
        "`data/loop_time.md`): the\n"
        f"first run, visiting every page, took {first}; the same command again, reusing every\n"
        f"page, {again}; the quick loop below, {quick}. The machine is shared and its speed\n"
        "drifts from run to run (the table's calibration column shows by how much)."
    )


def write_readme(figures: dict[str, Any]) -> None:
    """Put ``readme_paragraph`` between CONTRIBUTING.md's markers (a complete run only)."""
    if not all(isinstance(figures.get(k), float) for k in README_FIGURES):
        return
    readme = ROOT / "CONTRIBUTING.md"
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(README_START) + len(README_START), text.index(README_END)
    paragraph = "\n" + readme_paragraph(figures) + "\n"
    readme.write_text(text[:start] + paragraph + text[end:], encoding="utf-8")


def write(figures: dict[str, Any]) -> None:
    """``loop_time.json`` (everything measured so far) and ``loop_time.md`` (its table), and
    CONTRIBUTING.md's paragraph when the run is complete."""
    OUT.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    write_readme(figures)
    if "calibration_end_s" not in figures:  # a partial run: the table needs the end figures
        figures = figures | {
            "calibration_end_s": "not measured: the run stopped before",
            "load_end": load(),
        }
    OUT.with_suffix(".md").write_text(table(figures), encoding="utf-8")


def main() -> None:
    figures: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "targets": TARGETS,
    }
    measure(figures, skip_tests="--skip-tests" in sys.argv[1:])
    write(figures)
    print(table(figures))
    print("wrote", shlex.quote(str(OUT)), flush=True)
    if "--skip-build-times" not in sys.argv[1:]:
        # exit status 1 there means a target missed, which the tables say: not a failure here
        build_time = ROOT / "benchmarks" / "build_time.py"
        subprocess.run([sys.executable, str(build_time)], cwd=ROOT, check=False)


if __name__ == "__main__":
    if sys.argv[1:] == ["--table"]:  # the table again from loop_time.json (a stopped run)
        write(json.loads(OUT.read_text(encoding="utf-8")))
    else:
        main()
