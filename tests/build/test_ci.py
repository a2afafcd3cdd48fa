"""CI runs what README.md tells a contributor to run, word for word, and nothing runs twice.

``.ci/run`` holds the test command as a line of its own, after a comment naming it; README.md
holds it in the code block after its ``test-command`` marker. Neither reads the other: this
test keeps the two lines identical. The workflow runs ``.ci/run``'s steps, one each.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CI_RUN = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def readme_test_command() -> str:
    """The one line of the code block after README.md's ``<!-- test-command`` marker."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- test-command[^>]*-->\n```sh\n(.*?)\n```", readme, re.DOTALL)
    assert block, "README.md has no code block after its <!-- test-command --> marker"
    lines = block[1].splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def ci_test_command() -> str:
    """The line after ``.ci/run``'s comment ``# README.md's test command:``."""
    found = re.search(r"^ *# README\.md's test command:\n *(.+)$", CI_RUN, re.MULTILINE)
    assert found, ".ci/run has no line after '# README.md's test command:'"
    return found[1]


def test_ci_runs_the_readme_test_command_word_for_word() -> None:
    assert ci_test_command() == readme_test_command()


def test_ci_reads_no_prose() -> None:
    """The command is held in .ci/run, not scraped from README.md and evaluated."""
    assert "README.md" not in re.sub(r"#.*", "", CI_RUN)
    assert not re.search(r"^\s*eval\b", CI_RUN, re.MULTILINE)


def test_the_workflow_runs_each_step_once_in_order() -> None:
    steps = re.search(r"^STEPS=\((.*)\)$", CI_RUN, re.MULTILINE)
    assert steps, ".ci/run names its STEPS"
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "site.yml").read_text())
    runs = [s["run"] for s in workflow["jobs"]["test"]["steps"] if "run" in s]
    assert runs == [f".ci/run {step}" for step in steps[1].split()]
    assert steps[1].split()[-1] == "tests"  # the tests last, after lint, types and contracts
