"""The exact side imports and runs with NumPy blocked, as it does in the browser (Pyodide with
SymPy and mpmath only): `attention_math.symbolic` and the exercise checker."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

BLOCK = """
import sys

class NoNumPy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError(f"NumPy is blocked in this test, yet {name!r} was imported")

sys.meta_path.insert(0, NoNumPy())
"""


def run_without_numpy(code: str) -> str:
    """Run ``code`` in a fresh interpreter where importing NumPy raises; return its stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_blocker_blocks() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK + "import attention_math.numeric"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0 and "NumPy is blocked" in proc.stderr


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_symbolic_and_checker_run_without_numpy() -> None:
    out = run_without_numpy(
        """
        import sympy as sp
        from attention_math import symbolic
        from attention_math.exercises import catalogue, check
        from attention_math.exercises.cli import check_answer

        mask = [[True, False], [True, True]]
        o = symbolic.attention(sp.eye(2), sp.eye(2), [[1, 2], [3, 4]], mask=mask)
        assert o[0, :] == sp.Matrix([[1, 2]]), o
        for ex in catalogue().values():
            assert check(ex.id, ex.answer).correct, ex.id
            for m in ex.mistakes:
                assert check(ex.id, m.answer).diagnosis == m.diagnosis, (ex.id, m.diagnosis)
        print(check("softmax-logs", "[1, 2, 3]").diagnosis)
        try:
            check("scaling-factor", "__import__('os')")
        except ValueError as exc:
            print(exc)
        assert "numpy" not in sys.modules
        """
    )
    assert out.splitlines()[0] == "unnormalized"
    assert "'__import__'" in out.splitlines()[1] and "not allowed" in out.splitlines()[1]


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_the_answer_box_check_and_its_mathml_run_without_numpy() -> None:
    out = run_without_numpy(
        """
        from attention_math.exercises.live import check_text

        r = check_text("softmax-logs", "[1/6, 1/3, 1/2]")
        print(r["verdict"], r["mathml"].startswith("<math"), "&" in r["mathml"])
        assert "numpy" not in sys.modules
        """
    )
    assert out.split() == ["correct", "True", "False"]
