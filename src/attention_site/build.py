"""Build the site with either generator: ``python -m attention_site.build --engine mkdocs|zensical
--site-dir DIR``.

In order: ``attention_site.prepare`` (what pages need, written into git-ignored folders), the
generator reading ``mkdocs.yml`` (``mkdocs build --strict``, or ``zensical build --strict
--clean`` through `attention_site.strict`, which fails on a logged warning as MkDocs' strict
mode does and Zensical's does not), and no pass over the HTML: every page transform is a
Python-Markdown extension or a markdown-exec block, which both generators run. MkDocs is the
default.

Zensical takes no ``--site-dir`` (its documentation: "Set site_dir in your configuration file
instead") and refuses a ``site_dir`` outside the project ("site_dir must be within project
root"), so for it the command writes a copy of ``mkdocs.yml`` beside it with ``site_dir`` set
to a folder of the project (``.zensical-<pid>.yml`` and ``.zensical-<pid>/``, git-ignored),
builds from that, and moves the built site to ``--site-dir``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from attention_site.prepare import ROOT, prepare

__all__ = ["ENGINES", "build", "command", "main"]

ENGINES = ("mkdocs", "zensical")


def _tool(name: str) -> str:
    """The generator's command beside this interpreter (the project's environment)."""
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.is_file() else name


def command(engine: str, site_dir: Path, config: Path) -> list[str]:
    """The generator's command line.

    Examples:
        >>> command("mkdocs", Path("/tmp/s"), Path("mkdocs.yml"))[1:]
        ['build', '--strict', '--config-file', 'mkdocs.yml', '--site-dir', '/tmp/s']
        >>> command("zensical", Path("/tmp/s"), Path(".zensical-1.yml"))[1:4]
        ['-m', 'attention_site.strict', 'build']
    """
    if engine == "mkdocs":
        return [
            *(_tool("mkdocs"), "build", "--strict", "--config-file", str(config)),
            *("--site-dir", str(site_dir)),
        ]
    if engine == "zensical":
        # --clean: Zensical's own cache of rendered pages is not used, as MkDocs keeps none;
        # attention_site.strict: a logged warning fails the build, as it does under MkDocs
        return [
            *(sys.executable, "-m", "attention_site.strict"),
            *("build", "--strict", "--clean", "--config-file", str(config)),
        ]
    raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")


def zensical_config(root: Path = ROOT) -> tuple[Path, Path]:
    """A copy of ``mkdocs.yml`` beside it (relative paths keep their meaning) whose
    ``site_dir`` is a folder of the project, and that folder; the caller removes both."""
    text = (root / "mkdocs.yml").read_text(encoding="utf-8")
    path = root / f".zensical-{os.getpid()}.yml"
    out = root / path.stem
    path.write_text(f"{text.rstrip()}\n\nsite_dir: {out.name}\n", encoding="utf-8")
    return path, out


def build(engine: str, site_dir: Path, root: Path = ROOT) -> float:
    """Prepare, then run the generator into ``site_dir``; its seconds. A failed generator
    raises ``subprocess.CalledProcessError`` (its output already shown)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    start = time.perf_counter()
    print(prepare(root), flush=True)
    if engine == "mkdocs":
        subprocess.run(command(engine, site_dir, root / "mkdocs.yml"), cwd=root, check=True)
        return time.perf_counter() - start
    config, out = zensical_config(root)
    try:
        subprocess.run(command(engine, site_dir, config), cwd=root, check=True)
        shutil.rmtree(site_dir, ignore_errors=True)
        site_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(out, site_dir)
    finally:
        config.unlink(missing_ok=True)
        shutil.rmtree(out, ignore_errors=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_site.build", description=__doc__)
    parser.add_argument("--engine", choices=ENGINES, default="mkdocs")
    parser.add_argument("--site-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        seconds = build(args.engine, args.site_dir)
    except subprocess.CalledProcessError as exc:
        print(f"{args.engine} failed (exit status {exc.returncode})", file=sys.stderr)
        return 1
    print(f"built with {args.engine} into {args.site_dir} in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
