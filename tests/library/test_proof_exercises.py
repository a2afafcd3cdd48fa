"""The exercises that ask for understanding (issue 53): proofs and explanations, each with a
checkable final answer, a slip the checker names, and a worked solution whose algebra is
verified step by step (`attention_math.exercises.steps`)."""

from __future__ import annotations

import inspect

import pytest
import sympy as sp

from attention_math.exercises import CHAPTERS, catalogue, check
from attention_math.exercises.checker import compare
from attention_math.exercises.convert import to_sympy
from attention_math.exercises.model import TASKS, Exercise
from attention_math.exercises.steps import StepError, fact, step

PROOFS = [ex for ex in catalogue().values() if ex.task != "compute"]
IDS = [ex.id for ex in PROOFS]


def test_at_least_twelve_proofs_spread_over_the_chapters() -> None:
    assert len(PROOFS) >= 12
    assert len({ex.chapter for ex in PROOFS}) >= 6
    assert {ex.task for ex in PROOFS} == {"prove", "explain"}


@pytest.mark.parametrize("ex", PROOFS, ids=IDS)
def test_a_proof_checks_its_answer_and_names_its_slip(ex: Exercise) -> None:
    assert check(ex.id, ex.answer).correct
    assert ex.mistakes, "a proof's answer must have a slip the checker recognises"
    for m in ex.mistakes:
        r = check(ex.id, m.answer)
        assert (r.correct, r.diagnosis) == (False, m.diagnosis), r.message


# a second or more of SymPy (the house's `slow`): the quick loop leaves them to the suite
SLOW_PROOFS = {"scaling-variance-means"}


@pytest.mark.parametrize(
    "ex",
    [pytest.param(ex, marks=pytest.mark.slow) if ex.id in SLOW_PROOFS else ex for ex in PROOFS],
    ids=IDS,
)
def test_a_proofs_solution_verifies_its_steps_and_reaches_the_answer(ex: Exercise) -> None:
    assert ex.solution is not None
    source = inspect.getsource(ex.solution)
    assert "step(" in source or "fact(" in source  # its algebra is checked, not only shown
    assert check(ex.id, to_sympy(ex.solution(ex), ex.symbols)).correct
    assert len(ex.explanation) > 300 and "1. " in ex.explanation  # worked, in steps


def test_a_step_that_does_not_hold_raises() -> None:
    a, c = sp.symbols("a c", real=True)
    assert step("shift", sp.exp(a + c) / (sp.exp(a + c) + sp.exp(c)), 1 / (1 + sp.exp(-a))) == (
        1 / (1 + sp.exp(-a))
    )
    with pytest.raises(StepError, match="'no shift'"):
        step("no shift", sp.exp(a + c), sp.exp(a))
    with pytest.raises(StepError, match="shape"):
        step("shapes", sp.zeros(2, 1), sp.zeros(1, 2))
    p1, p2, p3 = sp.symbols("p_1:4", positive=True)
    with pytest.raises(StepError):  # true only when the weights sum to one
        step("sum", p1 + p2 + p3, 1)
    assert step("sum", p1 + p2 + p3, 1, given={p3: 1 - p1 - p2}) == 1
    fact("holds", sp.Integer(2) > 1)
    with pytest.raises(StepError):
        fact("fails", sp.Integer(1) > 2)


def test_an_unknown_task_is_refused() -> None:
    assert set(TASKS) == {"compute", "prove", "explain"}
    with pytest.raises(ValueError, match="unknown task 'proof'"):
        Exercise(id="x", chapter=next(iter(CHAPTERS)), title="t", statement="s",
                 answer=sp.Integer(1), task="proof")  # fmt: skip


def test_an_infinite_answer_is_compared_exactly() -> None:
    assert compare(-sp.oo, -sp.oo, 1e-3) == "exact"
    assert compare(sp.oo, -sp.oo, 1e-3) is None
    assert compare(sp.Integer(-65504), -sp.oo, 1e-3) is None
    assert compare(sp.Matrix([[1, -sp.oo]]), sp.Matrix([[1, -sp.oo]]), 1e-3) == "exact"
    assert compare(sp.Matrix([[2, -sp.oo]]), sp.Matrix([[1, -sp.oo]]), 1e-3) is None
    assert check("mask-fill-float16", "-oo").correct
    assert check("mask-fill-float16", float("-inf")).correct
    assert check("mask-fill-float16", "-65504").diagnosis == "fp16_saturates"
    assert not check("mask-fill-float16", "oo").correct


def test_the_float_facts_the_explanations_state(torch) -> None:
    """What the float16 and float32 items say, against PyTorch: float16(−1e9) is −∞, a
    fully blocked float16 row is NaN, float32 swallows the scores into a uniform row, and
    SDPA (since 2.5, pytorch/pytorch#133882) gives a zero output for an empty row."""
    import numpy as np

    fill16 = torch.tensor(-1e9, dtype=torch.float16)
    assert torch.isinf(fill16) and fill16 < 0
    row16 = torch.tensor([1.0, 3.0, -2.0], dtype=torch.float16) + fill16
    assert torch.isnan(torch.softmax(row16, dim=-1)).all()
    row32 = torch.tensor([1.0, 3.0, -2.0]) + torch.tensor(-1e9)
    weights = torch.softmax(row32, dim=-1).numpy()  # (3,)
    answer = catalogue()["mask-fill-float32"].answer  # (1, 3)
    expected = np.array(answer.evalf(), dtype=float)
    np.testing.assert_allclose(weights, expected.ravel(), rtol=1e-6)
    q = k = v = torch.ones(1, 1, 2, 4)  # (B, H, L, d)
    blocked = torch.tensor([[False, False], [True, True]])  # query 1 sees nothing
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=blocked)
    assert torch.equal(out[0, 0, 0], torch.zeros(4)) and torch.isfinite(out).all()


def test_the_command_line_labels_a_proof_too() -> None:
    from attention_math.exercises.cli import show_exercise

    text = show_exercise("softmax-shift-proof")
    assert "\n\nProof. Show that" in text and "the value your argument arrives at" in text
    assert "Proof." not in show_exercise("softmax-logs")
