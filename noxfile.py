#!/usr/bin/env -S uv run --script
# /// script
# dependencies = ["nox>=2024.4.15"]
# ///
"""Task runner: ``nox -s NAME`` (``python3 -m uv tool run nox -s NAME`` without nox installed).

Every session runs the tools pinned in ``uv.lock`` through ``uv run``; none builds a virtual
environment of its own. ``nox -l`` lists them; plain ``nox`` runs lint, types and tests.
"""

from __future__ import annotations

import nox

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "none"  # uv run uses the project's .venv

# `uv` on PATH: nox itself may run in an environment (uvx, pipx) whose python3 has no uv
UV_RUN = ("uv", "run", "--locked", "--group", "test")


@nox.session(default=True)
def lint(session: nox.Session) -> None:
    """ruff: lint and format check."""
    session.run(*UV_RUN, "ruff", "check", "src", "tests", "benchmarks", "hooks", "noxfile.py")
    session.run(*UV_RUN, "ruff", "format", "--check", "src", "tests", "benchmarks", "hooks")


@nox.session(default=True)
def types(session: nox.Session) -> None:
    """mypy --strict over src/ and hooks/ (configured in pyproject.toml)."""
    session.run(*UV_RUN, "mypy")


@nox.session(default=True)
def tests(session: nox.Session) -> None:
    """The test suite; extra arguments go to pytest (``nox -s tests -- -m "not browser"``)."""
    session.run(*UV_RUN, "pytest", *session.posargs)


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """Build the site with ``--strict``; ``nox -s docs -- serve`` serves it instead."""
    if session.posargs[:1] == ["serve"]:
        session.run(*UV_RUN, "mkdocs", "serve", *session.posargs[1:])
    else:
        session.run(*UV_RUN, "mkdocs", "build", "--strict", *session.posargs)


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """The fast-loop benchmarks: README test command, cold build, calibration, then
    benchmarks/build_time.py (``-- --skip-build-times`` to leave it out)."""
    session.run(*UV_RUN, "python", "benchmarks/loop_time.py", *session.posargs)


if __name__ == "__main__":
    nox.main()
