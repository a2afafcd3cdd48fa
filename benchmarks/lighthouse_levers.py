"""Lighthouse on the slowest pages with the site's speed levers taken away one at a time.

One built site, served in three variants side by side, each page measured in every variant
in turn (so all see the same machine load):

- ``before``: uncompressed, every code block mounted at once;
- ``gzip``: served gzip-compressed, as the host (GitHub Pages) serves it;
- ``gzip+lazy``: and code blocks mounted when they come into view (``content.lazy``): the
  site as published.

    python benchmarks/lighthouse_levers.py [--site DIR] [--only /gradients/ ...]

Writes ``benchmarks/lighthouse_levers.json`` and ``.md``; about 10 minutes on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lighthouse import NODE_BIN, PORT, build, install_lighthouse, page_of  # noqa: E402
from tests.browser.server import SiteServer  # noqa: E402

PAGES = ["/", "/about/", "/glossary/", "/gradients/", "/reference/api/numeric/"]
# name: (served gzip-compressed, code blocks mounted lazily)
VARIANTS = {"before": (False, False), "gzip": (True, False), "gzip+lazy": (True, True)}


def variant(site: Path, out: Path, lazy: bool) -> Path:
    """A copy of ``site`` without the levers that are off."""
    shutil.copytree(site, out)
    if not lazy:
        for page in out.rglob("*.html"):
            text = page.read_text(encoding="utf-8")
            page.write_text(text.replace('"content.lazy", ', ""), encoding="utf-8")
    return out


def table(rows: list[dict[str, Any]]) -> str:
    by = {(r["page"], r["variant"], r["preset"]): r for r in rows}
    pages = list(dict.fromkeys(r["page"] for r in rows))
    names = [n for n in VARIANTS if any(r["variant"] == n for r in rows)]
    loads = [r["load"][0] for r in rows]
    speed = [r["benchmark_index"] for r in rows]
    head = " | ".join(names)
    lines = [
        f"Each lever taken away in turn, on {len(pages)} of the slowest pages; mobile "
        "performance / total blocking time (ms) / largest contentful paint (s), then desktop "
        f"performance. 1-minute load average {min(loads):.2f}–{max(loads):.2f}, Lighthouse's "
        f"benchmark index {min(speed)}–{max(speed)}."
        + "".join(f" Not measured in this run: {n}." for n in VARIANTS if n not in names),
        "",
        f"| Page | {head} |",
        "|---|" + "---|" * len(names),
    ]
    for page in pages:
        cells = []
        for name in names:
            m, d = by[(page, name, "mobile")], by[(page, name, "desktop")]
            cells.append(
                f"{m['performance']} / {m['total-blocking-time']} / "
                f"{m['largest-contentful-paint'] / 1000:.1f}; {d['performance']}"
            )
        lines.append(f"| `{page}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one)")
    parser.add_argument("--only", nargs="*", default=PAGES, help="page paths")
    parser.add_argument("--out", default="lighthouse_levers", help="name of the result files")
    parser.add_argument("--table", action="store_true", help="only write NAME.md from NAME.json")
    args = parser.parse_args()
    out = ROOT / "benchmarks" / f"{args.out}.json"
    if args.table:
        out.with_suffix(".md").write_text(table(json.loads(out.read_text())))
        return
    install_lighthouse()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            build(f"http://127.0.0.1:{PORT}/attention-math/", site)
        bases = {}
        for name, (gzip, lazy) in VARIANTS.items():
            server = stack.enter_context(SiteServer(compress=gzip))
            bases[name] = server.start(variant(site, Path(tmp) / name, lazy))
        urls = [bases[name] + p.lstrip("/") for p in args.only for name in VARIANTS]
        raw = Path(tmp) / "lighthouse.json"
        script = ROOT / "benchmarks" / "lighthouse_run.mjs"
        subprocess.run([str(NODE_BIN / "node"), str(script), str(raw), *urls], cwd=ROOT, check=True)
        rows = json.loads(raw.read_text())
    for row in rows:
        row["variant"] = next(n for n, b in bases.items() if row["url"].startswith(b))
        row["page"] = page_of(row["url"])
    out.write_text(json.dumps(rows, indent=1) + "\n")
    out.with_suffix(".md").write_text(table(rows))
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
