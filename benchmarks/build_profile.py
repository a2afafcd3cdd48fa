"""Where a build's executed blocks spend their CPU time: per block, per page.

Runs every executed block of ``docs/`` (```` ```python exec="on" ````) the way markdown-exec
runs it, without a build and without markdown-exec's runner: each block in fresh globals, a
block with ``session="NAME"`` in that session's globals on its page, the working directory
the project root. It measures each block in CPU seconds of this process
(``time.process_time``), in page order, in one process, so a block that warms a cache
(``functools.cache`` in the package) shows the cost once, as a cold build pays it. A block
that raises is reported, not fatal.

With ``--warm`` it runs them all twice in the process and reports the second run: what a
``mkdocs serve`` rebuild pays, its process's caches filled by the first build.

Prints the pages and the blocks that cost most; ``--json`` writes everything to
``benchmarks/results/build_profile.json`` (``--json FILE``: to FILE). Run from the project
root::

    python3 -m uv run python benchmarks/build_profile.py [--top 25] [--json [FILE]]
        [--pages forward/softmax.md ...] [--warm] [--cprofile out.prof]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import textwrap
import time
from pathlib import Path
from typing import Any

from _common import ROOT, result_path  # benchmarks/, the script's directory

# an executed fence: its indentation, its backticks, its options
FENCE = re.compile(
    r'^(?P<indent>[ \t]*)(?P<ticks>`{3,})python\b(?P<options>[^\n]*exec="(?:on|1|true)"[^\n]*)$'
)
SESSION = re.compile(r'session="([^"]+)"')


def blocks(page: Path) -> list[dict[str, Any]]:
    """The executed blocks of ``page``: their code, session and line."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[dict[str, Any]] = []
    n = 0
    while n < len(lines):
        m = FENCE.match(lines[n])
        if m is None:
            n += 1
            continue
        indent, ticks = m["indent"], m["ticks"]
        end = n + 1
        while end < len(lines) and lines[end].strip() != ticks:
            end += 1
        code = textwrap.dedent("\n".join(line.removeprefix(indent) for line in lines[n + 1 : end]))
        session = SESSION.search(m["options"])
        found.append({"line": n + 1, "code": code, "session": session[1] if session else None})
        n = end + 1
    return found


def profile(pages: list[str] | None = None) -> dict[str, Any]:
    """Run every executed block of the pages (all of ``docs/``), timing each."""
    os.chdir(ROOT)  # markdown-exec runs blocks where mkdocs runs: the pages read files so
    docs = ROOT / "docs"
    chosen = [docs / p for p in pages] if pages else sorted(docs.rglob("*.md"))
    results: list[dict[str, Any]] = []
    start, wall = time.process_time(), time.perf_counter()
    for page in chosen:
        sessions: dict[str, dict[str, Any]] = {}
        for block in blocks(page):
            scope = (
                sessions.setdefault(block["session"], {"__name__": "__main__"})
                if block["session"]
                else {"__name__": "__main__"}
            )
            error = None
            t = time.process_time()
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(block["code"], f"{page}:{block['line']}", "exec"), scope)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"[:200]
            first = next((line for line in block["code"].splitlines() if line.strip()), "")
            results.append(
                {
                    "page": page.relative_to(docs).as_posix(),
                    "line": block["line"],
                    "cpu_s": round(time.process_time() - t, 3),
                    "session": block["session"],
                    "first_line": first[:90],
                    **({"error": error} if error else {}),
                }
            )
    per_page: dict[str, float] = {}
    for b in results:
        per_page[b["page"]] = per_page.get(b["page"], 0.0) + b["cpu_s"]
    return {
        "blocks_cpu_s": round(time.process_time() - start, 2),
        "blocks_wall_s": round(time.perf_counter() - wall, 2),
        "blocks": len(results),
        "errors": sum("error" in b for b in results),
        "load": os.getloadavg()[0],
        "pages": {k: round(v, 3) for k, v in sorted(per_page.items(), key=lambda kv: -kv[1])},
        "block_list": sorted(results, key=lambda b: -b["cpu_s"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--json", type=Path, nargs="?", const=result_path(__file__), help="write everything"
    )
    parser.add_argument("--pages", nargs="*", help="only these pages (paths under docs/)")
    parser.add_argument("--cprofile", type=Path, help="also write cProfile stats here")
    parser.add_argument("--warm", action="store_true", help="report a second run (serve)")
    args = parser.parse_args()
    cold = None
    if args.warm:
        cold = profile(args.pages)
        print(f"first run: {cold['blocks_cpu_s']} CPU s; the second, warm:", flush=True)
    if args.cprofile is not None:
        import cProfile

        profiler = cProfile.Profile()
        result = profiler.runcall(profile, args.pages)
        profiler.dump_stats(args.cprofile)
    else:
        result = profile(args.pages)
    if cold is not None:
        result["first_run_blocks_cpu_s"] = cold["blocks_cpu_s"]
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    summary = {k: v for k, v in result.items() if not isinstance(v, (dict, list))}
    print(json.dumps(summary, indent=1))
    print(f"\npages by CPU s of their blocks (top {args.top}):")
    for name, seconds in list(result["pages"].items())[: args.top]:
        print(f"  {seconds:7.2f}  {name}")
    print(f"\nblocks by CPU s (top {args.top}):")
    for b in result["block_list"][: args.top]:
        where = f"{b['page']}:{b['line']}"
        print(f"  {b['cpu_s']:7.2f}  {where:44s} {b['first_line']}")
    for b in result["block_list"]:
        if "error" in b:
            print(f"  error {b['page']}:{b['line']}: {b['error']}")


if __name__ == "__main__":
    main()
