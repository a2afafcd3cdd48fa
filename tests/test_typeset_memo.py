"""Under ``mkdocs serve``, a rebuild typesets only the pages whose maths changed.

``hooks/assets.py`` keeps MathJax's answer to each page by a digest of the page's formulas and
of the typesetter; the tests count the requests that reach the Node process, and check the
premise that makes a remembered answer right: the answer to a page does not depend on the
pages typeset before it in the same process.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from attention_site.checks.hooks import load_hook

PAGE_A = (
    "<html><head></head><body>"
    '<span class="arithmatex">\\(q_i^\\top k_j\\)</span>'
    '<div class="arithmatex">\\[\\mathrm{att} = \\operatorname{softmax}(S) V \\tag{1}\\]</div>'
    "</body></html>"
)
PAGE_B = (
    "<html><head></head><body>"
    '<span class="arithmatex">\\(\\sqrt{d_k}\\)</span>'
    '<div class="arithmatex">\\[P = \\frac{e^{s}}{\\sum_j e^{s_j}} \\tag{1}\\]</div>'
    "</body></html>"
)


def _hook(name: str) -> ModuleType:
    return load_hook("assets", name)


def _counting(hook: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of formulas in each request that reaches the Node process."""
    asked: list[int] = []
    real = hook.Typesetter.typeset

    def typeset(self: Any, items: list[dict[str, Any]]) -> dict[str, Any]:
        asked.append(len(items))
        return dict(real(self, items))

    monkeypatch.setattr(hook.Typesetter, "typeset", typeset)
    return asked


@pytest.mark.docs
def test_a_rebuild_typesets_only_the_pages_whose_maths_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hook = _hook("assets_memo_probe")
    asked = _counting(hook, monkeypatch)
    first = [hook.typeset_page(PAGE_A, "a.md"), hook.typeset_page(PAGE_B, "b.md")]
    hook.end_maths_build()
    assert asked == [2, 2] and "<svg" in first[0] and "<mjx-assistive-mml" in first[1]

    # the next build: A unchanged is not asked again; B with one formula changed is
    edited_b = PAGE_B.replace("\\sqrt{d_k}", "\\sqrt{d_v}")
    second = [hook.typeset_page(PAGE_A, "a.md"), hook.typeset_page(edited_b, "b.md")]
    hook.end_maths_build()
    assert asked == [2, 2, 2]
    assert second[0] == first[0] and second[1] != first[1]

    # only what the last build used is kept: B's old formulas are typeset again
    assert hook.typeset_page(PAGE_B, "b.md") == first[1]
    hook.end_maths_build()
    assert asked == [2, 2, 2, 2]


@pytest.mark.docs
def test_a_pages_maths_does_not_depend_on_the_pages_before_it() -> None:
    after_a = _hook("assets_order_probe_1")
    after_a.typeset_page(PAGE_A, "a.md")
    b_after_a = after_a.typeset_page(PAGE_B, "b.md")
    after_a.end_maths_build()
    alone = _hook("assets_order_probe_2")
    b_alone = alone.typeset_page(PAGE_B, "b.md")
    alone.end_maths_build()
    assert b_after_a == b_alone


@pytest.mark.docs
def test_after_a_page_defines_a_macro_nothing_is_served_or_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mkdocs.exceptions import PluginError

    hook = _hook("assets_macro_probe")
    asked = _counting(hook, monkeypatch)
    defines = PAGE_A.replace("q_i^\\top k_j", "\\newcommand{\\qk}{q^\\top k} \\qk")
    uses = PAGE_B.replace("\\sqrt{d_k}", "\\qk")
    hook.typeset_page(PAGE_A, "a.md")  # before any definition: kept
    hook.typeset_page(defines, "defines.md")
    hook.typeset_page(uses, "uses.md")  # typeset after the definition: not kept
    hook.end_maths_build()
    assert asked == [2, 2, 2]
    # the next build: the definition is gone, so the page using it must fail, not be served
    hook.typeset_page(PAGE_A, "a.md")
    assert asked == [2, 2, 2]
    with pytest.raises(PluginError, match="qk"):
        hook.typeset_page(uses, "uses.md")
    hook.end_maths_build()


@pytest.mark.docs
def test_a_formula_met_again_on_a_page_is_typeset_as_it_was_the_first_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """typeset.cjs reuses a repeated formula's markup within a page, but not where the
    markup depends on what came before: equation numbers, and formulas after a macro is
    (re)defined. Each reused answer must equal what typesetting it afresh gives."""
    hook = _hook("assets_repeat_probe")
    got = hook.typeset_items(
        [{"tex": t, "display": d} for t, d in [("q_i^\\top k_j", False)] * 2]
        + [{"tex": "\\begin{equation} y \\end{equation}", "display": True}] * 2
        + [
            {"tex": "\\newcommand{\\w}{a} \\w", "display": False},
            {"tex": "\\w", "display": False},
            {"tex": "\\renewcommand{\\w}{b} \\w", "display": False},
            {"tex": "\\w", "display": False},
        ]
    )["html"]
    hook.end_maths_build()
    assert got[0] == got[1] and "<svg" in got[0]
    assert "(1)" in got[2] and "(2)" in got[3]  # numbered in order, never reused
    assert got[5] != got[7]  # \w after its redefinition is b, not a reused a
    assert "<mi>a</mi>" in got[5] and "<mi>b</mi>" in got[7]


@pytest.mark.docs
def test_a_restarted_serve_reads_the_answers_a_fresh_process_would_give(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """``serve`` keeps the answers on disk by the same digest: a new process (a restarted
    ``serve``) asks MathJax only for maths no earlier one typeset, and reads the same answer."""
    first_process = _hook("assets_disk_probe_1")
    first_process.on_startup(command="serve", dirty=False)
    monkeypatch.setitem(first_process._disk, "dir", tmp_path)
    asked = _counting(first_process, monkeypatch)
    typeset = first_process.typeset_page(PAGE_A, "a.md")
    first_process.end_maths_build()
    assert asked == [2] and len(list(tmp_path.glob("*.json"))) == 1

    restarted = _hook("assets_disk_probe_2")
    restarted.on_startup(command="serve", dirty=False)
    monkeypatch.setitem(restarted._disk, "dir", tmp_path)
    asked_again = _counting(restarted, monkeypatch)
    assert restarted.typeset_page(PAGE_A, "a.md") == typeset
    assert restarted.typeset_page(PAGE_B, "b.md") != typeset
    restarted.end_maths_build()
    assert asked_again == [2]  # B only: A was read from disk

    # a build never reads nor writes them, unless the execution cache's switch says so
    monkeypatch.delenv("ATTENTION_MATH_EXEC_CACHE", raising=False)
    built = _hook("assets_disk_probe_3")
    built.on_startup(command="build", dirty=False)
    assert built._disk["dir"] is None
    monkeypatch.setenv("ATTENTION_MATH_EXEC_CACHE", "1")
    built.on_startup(command="build", dirty=False)
    assert built._disk["dir"] is not None
    monkeypatch.setenv("ATTENTION_MATH_EXEC_CACHE", "0")
    restarted.on_startup(command="serve", dirty=False)
    assert restarted._disk["dir"] is None
