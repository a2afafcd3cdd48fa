"""Lighthouse on a fixed list of slow pages, one build served in cumulative variants.

One built site, served in three variants side by side, each page measured in every variant
in turn (so all see the same machine load); each variant adds one lever to the one before:

- ``before``: uncompressed, every code block mounted at once;
- ``gzip``: served gzip-compressed, as the host (GitHub Pages) serves it;
- ``gzip+lazy``: and code blocks mounted when they come into view (``content.lazy``): the
  site as published.

The site's other levers (the API reference split by module, the project's own colour-scheme
toggle, formulas skipped off screen) are in every variant.

    python benchmarks/lighthouse_levers.py [--site DIR [--commit C]] [--only /gradients/ ...]

Writes ``benchmarks/results/lighthouse_levers.json`` (with when and on which commit's build) and
``.md`` (``--table``: the ``.md`` again from the ``.json``); about 10 minutes on a quiet
machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from _common import ROOT, result_path  # benchmarks/, the script's directory
from lighthouse import NODE_BIN, PORT, build, head_commit, install_lighthouse, page_of

from attention_site.checks.server import SiteServer

PAGES = ["/", "/about/", "/glossary/", "/gradients/", "/reference/api/numeric/"]
# name: (served gzip-compressed, code blocks mounted lazily)
VARIANTS = {"before": (False, False), "gzip": (True, False), "gzip+lazy": (True, True)}
WHAT = {
    "before": "served uncompressed, every code block's copy button set up as the page starts",
    "gzip": "the same served gzip-compressed, as the host serves it",
    "gzip+lazy": "and a copy button set up when its block comes into view (`content.lazy`)",
}


def variant(site: Path, out: Path, lazy: bool) -> Path:
    """A copy of ``site`` without the levers that are off."""
    shutil.copytree(site, out)
    if not lazy:
        for page in out.rglob("*.html"):
            text = page.read_text(encoding="utf-8")
            page.write_text(text.replace('"content.lazy", ', ""), encoding="utf-8")
    return out


def table(result: dict[str, Any]) -> str:
    """The Markdown the About page includes, from ``result`` (``main``'s JSON).

    Examples:
        >>> row = {"page": "/", "load": [1.5], "benchmark_index": 1500, "performance": 99,
        ...     "total-blocking-time": 80, "largest-contentful-paint": 1400}
        >>> rows = [row | {"variant": v, "preset": p} for v in ("before", "gzip")
        ...     for p in ("mobile", "desktop")]
        >>> md = table({"measured": {"date": "2026-11-23", "commit": "653d003"}, "rows": rows})
        >>> "measured 2026-11-23 on a build of 653d003" in md
        True
        >>> "Not measured in this run: *gzip+lazy*" in md
        True
        >>> md.splitlines()[-1]
        '| `/` | 99 / 80 / 1.4; 99 | 99 / 80 / 1.4; 99 |'
    """
    rows, measured = result["rows"], result.get("measured")
    by = {(r["page"], r["variant"], r["preset"]): r for r in rows}
    pages = list(dict.fromkeys(r["page"] for r in rows))
    names = [n for n in VARIANTS if any(r["variant"] == n for r in rows)]
    loads = [r["load"][0] for r in rows]
    speed = [r["benchmark_index"] for r in rows]
    head = " | ".join(names)
    when = ""
    if measured:
        of = f" on a build of {measured['commit']}" if "commit" in measured else ""
        when = f", measured {measured['date']}{of}"
    missing = [n for n in VARIANTS if n not in names]
    lines = [
        f"Lighthouse on a fixed list of {len(pages)} slow pages{when}, the build served in "
        "variants that each add a lever to the one before, every page measured in each "
        "variant in turn: "
        + "; ".join(f"*{n}*, {WHAT[n]}" for n in names)
        + "."
        + (f" Not measured in this run: {', '.join(f'*{n}*' for n in missing)}." if missing else "")
        + " Each cell: mobile performance / total blocking time (ms) / largest contentful "
        "paint (s); desktop performance. 1-minute load average during the runs "
        f"{min(loads):.2f}–{max(loads):.2f} (2 shared cores), Lighthouse's benchmark index "
        f"{min(speed)}–{max(speed)}"
        + (
            ": below the 1000 its presets assume, so the blocking times are inflated and move "
            "with the load: indicative only."
            if min(speed) < 1000
            else "."
        ),
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
    parser.add_argument("--variant", help="results/lighthouse_levers.VARIANT.json and .md instead")
    parser.add_argument("--table", action="store_true", help="only write the .md from the .json")
    parser.add_argument(
        "--commit",
        help="the commit --site was built from, recorded with the figures (without --site: "
        "the checkout's)",
    )
    args = parser.parse_args()
    out = result_path(__file__, args.variant)
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
    commit = args.commit or (None if args.site else head_commit())
    measured = {"date": time.strftime("%Y-%m-%d", time.gmtime())}
    measured |= {"commit": commit} if commit else {}
    for row in rows:
        row["variant"] = next(n for n, b in bases.items() if row["url"].startswith(b))
        row["page"] = page_of(row["url"])
    result = {"measured": measured, "rows": rows}
    out.write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(table(result))
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
