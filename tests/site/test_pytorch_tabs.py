"""The forward pages show each step in NumPy and in PyTorch, and the PyTorch code is run here.

Every forward page with code (but the notation table) has NumPy | PyTorch content tabs
(``attention_site.pages.pytorch_tabs``). The NumPy tab runs when the site is built; the
PyTorch tab is only shown there (the build has no PyTorch), so this test runs it: each name
the PyTorch code prints must equal the NumPy code's value of that name, and the text the
PyTorch code prints must be the output the page shows under it (printed by the build from the
NumPy run, in PyTorch's format).
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

from attention_site.pages import pytorch_tabs

ROOT = Path(__file__).resolve().parents[2]
FORWARD = ROOT / "docs" / "forward"

#: the forward pages whose code has PyTorch beside it: every one that runs code, but the
#: notation table (its code checks the shapes it lists) and the chapter's opening page
TABBED = (
    "qkv.md",
    "scores.md",
    "scaling.md",
    "masking.md",
    "softmax.md",
    "weighted-sum.md",
    "formula.md",
    "dropout.md",
    "own-example.md",
)
NOT_TABBED = ("notation.md", "index.md")


def _pairs() -> list[tuple[str, int, pytorch_tabs.TabPair]]:
    found = []
    for page in TABBED:
        pairs = pytorch_tabs.tab_pairs((FORWARD / page).read_text(encoding="utf-8"))
        found += [(f"forward/{page}", n, pair) for n, pair in enumerate(pairs)]
    return found


PAIRS = _pairs()


def test_every_forward_page_with_code_has_its_pytorch_tab() -> None:
    running = {p.name for p in FORWARD.glob("*.md") if 'exec="on"' in p.read_text(encoding="utf-8")}
    assert running == set(TABBED) | set(NOT_TABBED)  # a new page is placed in one of the two
    with_pairs = {page.removeprefix("forward/") for page, _, _ in PAIRS}
    assert with_pairs == set(TABBED), set(TABBED) - with_pairs


@pytest.mark.parametrize(("page", "n", "pair"), PAIRS, ids=[f"{p}#{n}" for p, n, _ in PAIRS])
def test_the_pytorch_tab_shows_its_own_output(page: str, n: int, pair) -> None:
    """The hidden block under the PyTorch code prints this pair's output, and only that;
    the PyTorch code prints names its NumPy twin defines."""
    call = re.fullmatch(
        r"from attention_site\.pages\.pytorch_tabs import pytorch_output\n\n"
        r'print\(pytorch_output\("(?P<page>[^"]+)", (?P<n>\d+)\)\)',
        pair.output_call,
    )
    assert call, f"{page}, pair {n}: its output block is {pair.output_call!r}"
    assert (call["page"], int(call["n"])) == (page, n)
    names = pytorch_tabs.printed_names(pair.pytorch)
    assert names
    numpy_names = pytorch_tabs.run_numpy(pair.numpy)
    assert set(names) <= set(numpy_names)
    assert "torch" not in pair.numpy  # the NumPy tab runs without PyTorch


def _run(code: str) -> tuple[dict[str, object], str]:
    namespace: dict[str, object] = {"__name__": "__pytorch_tab__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<pytorch tab>", "exec"), namespace)
    return namespace, out.getvalue()


@pytest.mark.oracle
@pytest.mark.parametrize(("page", "n", "pair"), PAIRS, ids=[f"{p}#{n}" for p, n, _ in PAIRS])
def test_the_pytorch_code_computes_what_the_numpy_code_does(torch, page, n, pair) -> None:
    found, printed = _run(pair.pytorch)
    expected = pytorch_tabs.run_numpy(pair.numpy)
    for name in pytorch_tabs.printed_names(pair.pytorch):
        ours, theirs = expected[name], found[name]
        if isinstance(theirs, torch.Tensor):
            assert theirs.dtype in (torch.float32, torch.bool), f"{page}#{n} {name}"
            theirs = theirs.numpy()
            assert theirs.shape == np.shape(ours), f"{page}#{n} {name}"
            if theirs.dtype == bool:
                np.testing.assert_array_equal(theirs, ours, err_msg=name)
            else:  # float32 against float64: a few float32 ε
                np.testing.assert_allclose(theirs, ours, rtol=1e-6, atol=1e-6, err_msg=name)
        else:
            assert theirs == ours, f"{page}#{n} {name}: {theirs!r} != {ours!r}"
            if isinstance(ours, bool | np.bool_):  # a check the tab prints: it holds
                assert ours, f"{page}#{n} {name} is False"
    # what the page shows under the PyTorch code is what PyTorch prints
    assert printed == pytorch_tabs.pytorch_output(page, n) + "\n"


@pytest.mark.oracle
def test_the_formula_page_checks_its_function_against_sdpa(torch) -> None:
    """The summit's PyTorch function is held to ``F.scaled_dot_product_attention`` by the
    tab itself, and the check can fail: with the scaling left out it does."""
    (pair,) = pytorch_tabs.tab_pairs((FORWARD / "formula.md").read_text(encoding="utf-8"))
    assert "F.scaled_dot_product_attention" in pair.pytorch
    assert "numeric.attention" not in pair.numpy and "reference" not in pair.numpy
    body = pair.numpy.split("def attention", 1)[1].split("\n\n", 1)[0]
    assert len(body.strip().splitlines()) == 6  # the six lines the page speaks of
    broken = pair.pytorch.replace("/ math.sqrt(d_k)", "")
    assert broken != pair.pytorch
    with pytest.raises(AssertionError):
        _run(broken)
