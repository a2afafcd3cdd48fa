"""Shared fixtures and the rule that CI never silently skips an oracle or browser test."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

# the tests import it from here too (explicit re-export)
from attention_site.checks.hooks import mkdocs_config as mkdocs_config

#: The one message every PyTorch oracle test skips with. The .venv made by uv has no pip of
#: its own, so the command is uv's.
TORCH_MISSING = (
    "PyTorch, the optional test-time oracle, is not installed; install it with: "
    "python3 -m uv pip install --python .venv/bin/python torch==2.13.0"
)


ROOT = Path(__file__).resolve().parents[1]


def nav_pages(entry: object) -> list[str]:
    """Every Markdown page under a nav entry (the whole nav by default), in reading order."""
    if isinstance(entry, str):
        return [entry] if entry.endswith(".md") else []
    if isinstance(entry, dict):
        return [p for value in entry.values() for p in nav_pages(value)]
    if isinstance(entry, list):
        return [p for item in entry for p in nav_pages(item)]
    return []


def require_or_skip(module: str, reason: str):
    """Import ``module`` or skip with ``reason``; under CI (``CI`` set) a missing module fails.

    Works in a fixture, a test or at module level (the whole module is skipped)."""
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is required in CI: {reason}")
        pytest.skip(reason, allow_module_level=True)


@pytest.fixture(scope="session")
def torch():
    """PyTorch, imported when a test first asks for it: at a module's top it would be
    imported while collecting, which every pytest-xdist worker does (about 2 s of CPU each),
    whereas the oracle tests all run on one worker (``uses_torch``). Without PyTorch the test
    skips, saying how to install it (a failure under CI)."""
    return require_or_skip("torch", TORCH_MISSING)


@pytest.fixture(scope="session")
def site_server():
    """A localhost server for the built site under ``/attention-math/``, bound, not yet serving.

    Bound first so that the one build of the session is made for its address (``SITE_URL``),
    as the hosted site is built for the address it is served at.
    """
    from attention_site.checks.server import SiteServer

    with SiteServer() as server:
        yield server


#: The reproducibility test's second build, started beside the shared one (see built_site).
SECOND_BUILD: dict[str, Any] = {}


def _wants_second_build(session: pytest.Session) -> bool:
    return any("two_builds" in getattr(item, "fixturenames", ()) for item in session.items)


@pytest.fixture(scope="session")
def built_site(request, tmp_path_factory, site_server):
    """The site built once per test session with ``mkdocs build --strict``; its directory.

    Built for the sub-path address of ``site_server`` (``SITE_URL``), as it is hosted. When
    the session also runs tests/build/test_reproducible_build.py, its second build runs at the same
    time, on the other core, instead of after this one. Both run every executed block.
    """
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": site_server.url}
    if _wants_second_build(request.session):
        from tests.build.test_reproducible_build import start_second_build

        SECOND_BUILD["build"] = start_second_build(tmp_path_factory, site_server.url)
        # a session that ends before the test collects it (-x, Ctrl-C) leaves no process behind
        request.addfinalizer(lambda: SECOND_BUILD.pop("build").stop() if SECOND_BUILD else None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
            cwd=root,
            capture_output=True,
            text=True,
            env=env,
        )
    except BaseException:
        if "build" in SECOND_BUILD:
            SECOND_BUILD.pop("build").stop()
        raise
    # not --quiet: it drops warnings before --strict can count them, so a failing block passed
    if proc.returncode != 0 or "WARNING" in proc.stderr:
        pytest.fail(f"mkdocs build --strict failed or warned:\n{proc.stdout}\n{proc.stderr}")
    return out


# Under CI every optional dependency is installed (.ci/run), so no test may skip: a skip
# there would hide a missing install step behind a green run.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, which installs everything: {report.longrepr}"
    browser = sys.modules.get("tests.browser.conftest")
    if browser and browser.VISITS and not browser.VISITS.get("told"):
        # how the browser visit came by its records, told once, on a report (the way
        # pytest-xdist carries it from a worker to the terminal)
        report.user_properties.append(("browser visits", dict(browser.VISITS)))
        browser.VISITS["told"] = True


_VISITS: dict[str, object] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _VISITS.update(dict(report.user_properties).get("browser visits", {}))


def skip_reasons(reports: list[pytest.TestReport]) -> list[tuple[int, str]]:
    """Each reason a test was skipped for, with how many were, most first.

    Examples:
        >>> from types import SimpleNamespace as R
        >>> why = "Skipped: PyTorch is not installed"
        >>> skip_reasons([R(longrepr=("a.py", 3, why)), R(longrepr=("b.py", 9, why)),
        ...               R(longrepr=("c.py", 1, "Skipped: no Chromium"))])
        [(2, 'PyTorch is not installed'), (1, 'no Chromium')]
    """
    counts: dict[str, int] = {}
    for report in reports:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = " ".join(reason.removeprefix("Skipped: ").split())
        counts[reason] = counts.get(reason, 0) + 1
    return sorted(((n, r) for r, n in counts.items()), key=lambda c: (-c[0], c[1]))


def pytest_terminal_summary(terminalreporter) -> None:
    """One line per reason tests were skipped for, with its count (``-rs`` lists each test);
    and how many pages the browser really visited and how many reused a kept record."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if r.when != "teardown"]
    if skipped and "s" not in terminalreporter.reportchars.lower():
        terminalreporter.section("skipped, by reason", sep="-")
        for n, reason in skip_reasons(skipped):
            terminalreporter.write_line(f"{n:>5} skipped: {reason}")
    if _VISITS:
        kept = (
            f"{_VISITS['reused']} reused a record kept for the very same bytes "
            "(delete .prepare/visits/ to visit every page)"
            if _VISITS["kept"]
            else "no kept records used"
        )
        terminalreporter.write_line(
            f"browser visit: {_VISITS['visited']} pages visited in Chromium, {kept}"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"module skipped under CI, which installs everything: {report.longrepr}"


class _GroupIds:
    """pytest-xdist 3.8 writes a test's group into ``item._nodeid``, which pytest 9.2's
    structured ids no longer read (pytest-xdist issue 1386), and the group is lost: write it
    where pytest reads it, once xdist has had its turn (a fixed xdist leaves nothing to do)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]):
        if not getattr(config.option, "loadgroup", False):  # set in xdist's workers only
            return
        for item in items:
            groups = sorted({str(m.args[0]) for m in item.iter_markers("xdist_group")})
            if groups and "@" not in item.nodeid:
                from _pytest.nodeid import coerce_node_id  # pytest >= 9.2 only gets here

                item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(groups)}")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_GroupIds(), "attention-math-xdist-groups")


#: Tests (by function name, every parametrization; doctests by their object's dotted name)
#: that each take a second or more of CPU, measured with the per-test CPU of a quick-loop
#: run (benchmarks/loop_time.py records the suite's slowest): marked ``slow``, so the quick
#: loop (``-m "not browser and not docs and not slow"``) leaves them to the full suite, which
#: runs them all. Most start a fresh interpreter (a build, mypy, the command line, a check
#: without NumPy) or compare whole SymPy derivations. Named here rather than by a decorator
#: on each test so that the list survives tests moving between files.
SLOW_DOCTESTS = frozenset(
    {
        # doctests cannot carry a marker: whole derivations in SymPy, a figure drawn
        "attention_math.derivations.gradients.verify_projection_backward",
        "attention_math.derivations.block.rms_norm_vs_layer_norm",
        "attention_math.plot.panels.running_pipeline",
        "attention_math.plot.panels.running_heads",
        "attention_math.plot.panels.heads_through_w_o",
        "attention_math.latent.rope_breaks_absorption",
    }
)


def _name(item: pytest.Item) -> str:
    """A test function's name without its parameters; a doctest's dotted name."""
    return getattr(item, "originalname", None) or item.name


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that needs the built site is a ``docs`` test, marked or not, so that
    ``-m "not docs"`` never builds the site; under pytest-xdist (``-n``, on by default in
    pyproject.toml) they all go to one worker, so that the site is built once per run.

    A browser test needs the site even when it asks for its tab at run time
    (``request.getfixturevalue``), which its fixture names do not show: left out of the group,
    it built a second site on the other worker.

    The tests whose oracle is PyTorch (``uses_torch``) go to one worker too: importing torch
    and its first call cost about 3 s of CPU, paid once per run rather than once per worker.

    The doctests named in ``SLOW_DOCTESTS`` are marked ``slow`` (a test function carries
    ``@pytest.mark.slow`` itself)."""
    for item in items:
        if _name(item) in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
        if "built_site" in getattr(item, "fixturenames", ()) or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.docs)
            item.add_marker(pytest.mark.xdist_group("built_site"))
        elif uses_torch(item):
            item.add_marker(pytest.mark.xdist_group("torch"))


def uses_torch(item: pytest.Item) -> bool:
    """Whether PyTorch is ``item``'s oracle: a test asks for the ``torch`` fixture, the one way
    a test gets PyTorch; a doctest, which cannot ask for a fixture, calls ``torch_or_none()``
    (``attention_site.pages.conventions``). ``test_suite_grouping`` keeps both so."""
    if "torch" in getattr(item, "fixturenames", ()):
        return True
    dtest = getattr(item, "dtest", None)  # a doctest's examples
    return dtest is not None and any("torch_or_none()" in ex.source for ex in dtest.examples)
