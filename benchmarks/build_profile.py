"""Where a cold ``mkdocs build --strict`` spends its CPU time: per page, per executed block.

Runs one strict build in this process (into a temporary directory, no execution cache) and
measures, in CPU seconds of this process (``time.process_time``):

- each page's whole processing (Markdown, executed blocks, template, post-page hooks);
- each executed block (markdown-exec's runner), with the first line of its code;
- MathJax typesetting (the Python side waiting for ``hooks/typeset.cjs``; the Node
  process's own CPU time is reported from its exit, as children's CPU);
- the rest (configuration, plugins, navigation, search index, copying files).

Prints the top of each list; ``--json`` writes everything to
``benchmarks/results/build_profile.json`` (``--json FILE``: to FILE, a scratch copy outside
the results). Run from the project root::

    python3 -m uv run python benchmarks/build_profile.py [--top 25] [--json [FILE]]
        [--site DIR] [--cprofile out.prof]

``--site`` keeps the built site (to compare the HTML before and after a change);
``--cprofile`` also records a cProfile of the build (functions by cumulative time).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, result_path  # benchmarks/, the script's directory


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def profile(site_dir: Path | None = None, cprofile: Path | None = None) -> dict[str, Any]:
    """One strict build, timed per page and per block (into ``site_dir`` if given)."""
    os.environ.pop("ATTENTION_MATH_EXEC_CACHE", None)
    os.environ["ATTENTION_MATH_PARALLEL"] = "0"  # the work itself, all in this process
    os.environ["NO_MKDOCS_2_WARNING"] = "1"
    os.chdir(ROOT)  # the pages read the repository's files by relative paths
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.structure.pages import Page

    from attention_site.checks.hooks import load_hook

    pages: dict[str, float] = {}
    blocks: list[dict[str, Any]] = []
    current = {"page": "(none)"}
    typeset = {"cpu": 0.0, "wall": 0.0}

    # markdown-exec's runner, through its adapter (hooks/markdown_exec_adapter.py)
    exec_ = load_hook("markdown_exec_adapter")
    real_run = exec_.runner()

    def timed_run(code: str, *args: Any, **kwargs: Any) -> str:
        start = time.process_time()
        wall = time.perf_counter()
        try:
            return str(real_run(code, *args, **kwargs))
        finally:
            first = next((line for line in code.splitlines() if line.strip()), "")
            blocks.append(
                {
                    "page": current["page"],
                    "cpu_s": round(time.process_time() - start, 3),
                    "wall_s": round(time.perf_counter() - wall, 3),
                    "session": kwargs.get("session"),
                    "first_line": first[:90],
                }
            )

    # the exec-cache hook captures markdown-exec's runner when it loads: patch before that
    exec_.set_original_runner(timed_run)

    real_render = Page.render

    def timed_render(self: Page, config: Any, files: Any) -> None:
        current["page"] = self.file.src_uri
        start = time.process_time()
        try:
            real_render(self, config, files)
        finally:
            pages[self.file.src_uri] = pages.get(self.file.src_uri, 0.0) + (
                time.process_time() - start
            )

    Page.render = timed_render  # type: ignore[method-assign]

    config = load_config(str(ROOT / "mkdocs.yml"), strict=True)
    hooks_assets = sys.modules.get("assets")
    with tempfile.TemporaryDirectory() as tmp:
        config["site_dir"] = str(site_dir.resolve()) if site_dir else tmp
        children = _children_cpu()
        start, wall = time.process_time(), time.perf_counter()
        # the typesetter is created by the assets hook; wrap it once the hooks are loaded
        config.plugins.on_startup(command="build", dirty=False)
        for module in list(sys.modules.values()):
            typesetter = getattr(module, "Typesetter", None)
            if typesetter is not None and getattr(module, "__file__", "").endswith("assets.py"):
                hooks_assets = module
                real_typeset = typesetter.typeset

                def timed_typeset(self: Any, items: Any, _real: Any = real_typeset) -> Any:
                    t, w = time.process_time(), time.perf_counter()
                    try:
                        return _real(self, items)
                    finally:
                        typeset["cpu"] += time.process_time() - t
                        typeset["wall"] += time.perf_counter() - w

                typesetter.typeset = timed_typeset
        if cprofile is not None:
            import cProfile

            profiler = cProfile.Profile()
            profiler.runcall(build, config)
            profiler.dump_stats(cprofile)
        else:
            build(config)
        config.plugins.on_shutdown()
        total = time.process_time() - start
        total_wall = time.perf_counter() - wall
        children = _children_cpu() - children
    del hooks_assets
    page_post: dict[str, float] = {}
    return {
        "total_cpu_s": round(total, 2),
        "total_wall_s": round(total_wall, 2),
        "children_cpu_s": round(children, 2),
        "pages_cpu_s": round(sum(pages.values()), 2),
        "blocks_cpu_s": round(sum(b["cpu_s"] for b in blocks), 2),
        "blocks": len(blocks),
        "typeset_wait_wall_s": round(typeset["wall"], 2),
        "load": os.getloadavg()[0],
        "pages": {k: round(v, 3) for k, v in sorted(pages.items(), key=lambda kv: -kv[1])},
        "block_list": sorted(blocks, key=lambda b: -b["cpu_s"]),
        **page_post,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--json", type=Path, nargs="?", const=result_path(__file__), help="write everything"
    )
    parser.add_argument("--site", type=Path, help="build into this directory (kept)")
    parser.add_argument("--cprofile", type=Path, help="also write cProfile stats here")
    args = parser.parse_args()
    result = profile(args.site, args.cprofile)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    summary = {k: v for k, v in result.items() if not isinstance(v, (dict, list))}
    print(json.dumps(summary, indent=1))
    print(f"\npages by CPU s (top {args.top}):")
    for name, seconds in list(result["pages"].items())[: args.top]:
        block_s = sum(b["cpu_s"] for b in result["block_list"] if b["page"] == name)
        print(f"  {seconds:7.2f}  (blocks {block_s:6.2f})  {name}")
    print(f"\nblocks by CPU s (top {args.top}):")
    for b in result["block_list"][: args.top]:
        print(f"  {b['cpu_s']:7.2f}  {b['page']:40s} {b['first_line']}")


if __name__ == "__main__":
    main()
