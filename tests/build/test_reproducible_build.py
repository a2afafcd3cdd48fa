"""Two builds of the same tree give the same bytes, file for file.

The session's shared build (``built_site``) is compared with a second build made in another
process with another hash seed (so set and dict-of-set ordering cannot hide) into another
directory. ``hooks/reproducible.py`` pins the
page dates to the commit time of ``HEAD`` instead of the day of the build. Both run every
executed block afresh, in the build's own process.
"""

from __future__ import annotations

import datetime as dt
import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from attention_site.checks.hooks import load_hook
from attention_site.checks.server import SiteServer
from tests.conftest import SECOND_BUILD

ROOT = Path(__file__).resolve().parents[2]


class SecondBuild:
    """A ``mkdocs build --strict`` running in the background into ``site``."""

    def __init__(self, site: Path, hash_seed: str, site_url: str) -> None:
        env = os.environ | {
            "PYTHONHASHSEED": hash_seed,
            "NO_MKDOCS_2_WARNING": "1",
            "SITE_URL": site_url,  # the shared build's address, or every canonical link differs
        }
        self.site = site
        # at a lower priority: the shared build, which every docs test waits for, runs beside
        # it, and this one is needed only by the two tests here (late on their worker)
        nice = ["nice", "-n", "10"] if shutil.which("nice") else []
        self.proc = subprocess.Popen(
            [*nice, sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def wait(self) -> Path:
        """The built site; a failed build fails the test with its log."""
        log, _ = self.proc.communicate(timeout=900)
        if self.proc.returncode != 0:
            pytest.fail(f"the second build failed ({self.proc.returncode}):\n{log[-5000:]}")
        return self.site

    def stop(self) -> None:
        self.proc.kill()
        self.proc.communicate()


def _prepare_once(site_url: str) -> None:
    """Run prepare once, for the builds' address, before two builds run at once: then both
    find its outputs up to date and only read them (two builds writing the same files at a
    time could race)."""
    from unittest import mock

    from attention_site.prepare import prepare

    with mock.patch.dict(os.environ, {"SITE_URL": site_url}):
        prepare()


def start_second_build(tmp_path_factory: pytest.TempPathFactory, site_url: str) -> SecondBuild:
    """The second build, started now (``built_site`` starts it beside the shared build)."""
    _prepare_once(site_url)
    second = tmp_path_factory.mktemp("reproducible") / "second"
    # a hash seed the shared build did not use (it ran with the environment's, or a random one)
    seed = os.environ.get("PYTHONHASHSEED", "")
    return SecondBuild(second, str(int(seed) + 1) if seed.isdigit() else "12345", site_url)


def _differences(a: Path, b: Path) -> list[str]:
    cmp = filecmp.dircmp(a, b)
    out = [f"only in one build: {n}" for n in cmp.left_only + cmp.right_only]
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    out += [str(Path(a.name) / n) for n in mismatch + errors]
    for sub in cmp.common_dirs:
        out += _differences(a / sub, b / sub)
    return out


def _load_hook() -> ModuleType:
    return load_hook("reproducible")


@pytest.fixture(scope="module")
def two_builds(
    built_site: Path, site_server: SiteServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    pending = SECOND_BUILD.pop("build", None)  # started beside built_site, in the session
    if pending is None:
        pending = start_second_build(tmp_path_factory, site_server.url)
    return built_site, pending.wait()


@pytest.mark.docs
@pytest.mark.slow
def test_two_builds_are_byte_identical(two_builds: tuple[Path, Path]) -> None:
    first, second = two_builds
    assert len(list(first.rglob("*.html"))) > 5
    assert _differences(first, second) == []


@pytest.mark.docs
@pytest.mark.slow
def test_page_dates_are_the_commit_date_not_the_build_date(two_builds: tuple[Path, Path]) -> None:
    if "SOURCE_DATE_EPOCH" in os.environ:
        epoch = int(os.environ["SOURCE_DATE_EPOCH"])  # the caller's choice wins (see the hook)
    else:
        epoch = _load_hook().commit_epoch(ROOT)
    if epoch is None:
        pytest.skip("not a git checkout: there is no commit date to pin the pages to")
    day = dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%d")
    sitemap = (two_builds[0] / "sitemap.xml").read_text(encoding="utf-8")
    assert set(re.findall(r"<lastmod>(.*?)</lastmod>", sitemap)) == {day}


def test_commit_epoch_reads_the_commit_time(tmp_path: Path) -> None:
    when = "2001-02-03T04:05:06+00:00"
    env = os.environ | {
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    for cmd in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "probe"]):
        subprocess.run(["git", *cmd], cwd=tmp_path, env=env, check=True)
    hook = _load_hook()
    assert hook.commit_epoch(tmp_path) == int(dt.datetime.fromisoformat(when).timestamp())
    assert hook.commit_epoch(tmp_path / "nowhere") is None
