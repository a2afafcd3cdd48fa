"""``attention_site.checks.compare`` on small sites: what it finds, and what it lets pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from attention_site.checks import compare

PAGE = (
    '<h1>T</h1><p class="notebook-link"><a href="t.ipynb" download>n</a></p>'
    '<p><mjx-container>x</mjx-container> and <a class="checked" href="../e/">✓</a></p>'
    '<form class="exercise-check"></form><div data-explorable="k"></div>'
)


def _site(root: Path, pages: dict[str, str]) -> Path:
    for path, html in pages.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(html, encoding="utf-8")
    (root / "t" / "t.ipynb").parent.mkdir(parents=True, exist_ok=True)
    (root / "t" / "t.ipynb").write_text("{}", encoding="utf-8")
    return root


def test_two_equal_sites_have_no_difference(tmp_path: Path) -> None:
    pages = {"t/index.html": PAGE, "e/index.html": "<p>ε</p>"}
    a, b = _site(tmp_path / "a", pages), _site(tmp_path / "b", pages)
    result = compare.compare(a, b)
    assert result.problems() == {} and result.report() == ("", "")


def test_each_kind_of_difference_is_named_with_its_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compare, "KNOWN_GAPS", {})  # every difference fails
    a = _site(tmp_path / "a", {"t/index.html": PAGE, "e/index.html": "", "x/index.html": ""})
    raw = PAGE.replace("<mjx-container>x</mjx-container>", "\\(x\\)")
    gone = raw.replace('"../e/"', '"../gone/"') + '<link href="/s/e/"><link href="/s/f/">'
    b = _site(tmp_path / "b", {"t/index.html": gone, "e/index.html": ""})
    problems = compare.compare(a, b, base="/s/").problems()
    assert problems["typeset formulas"] == ["t/index.html: mkdocs 1, zensical 0"]
    assert problems["raw TeX"] == ["t/index.html (zensical)"]
    # from the server's root: /s/e/ is there, /s/f/ is not
    assert problems["links"] == ["t/index.html (zensical): 2 lead nowhere: ../gone/, /s/f/"]
    assert problems["pages"] == ["x/index.html: only in the mkdocs build"]
    failed, known = compare.compare(a, b).report()
    assert "typeset formulas: 1 page(s) differ\n  t/index.html" in failed and known == ""


def test_a_known_gap_is_reported_apart_and_does_not_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _site(tmp_path / "a", {"t/index.html": PAGE, "e/index.html": ""})
    lost = PAGE.replace('data-explorable="k"', "")
    b = _site(tmp_path / "b", {"t/index.html": lost, "e/index.html": ""})
    monkeypatch.setitem(compare.KNOWN_GAPS, "explorables", "no sliders yet (upstream #1)")
    failed, known = compare.compare(a, b).report()
    assert failed == ""
    assert known.startswith("explorables: 1 page(s) differ (known: no sliders yet (upstream #1))")
    assert "t/index.html: mkdocs 1, zensical 0" in known


def test_a_link_that_leads_nowhere_fails_even_if_named_a_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _site(tmp_path / "a", {"t/index.html": PAGE, "e/index.html": ""})
    gone = PAGE.replace('"../e/"', '"../gone/"')
    b = _site(tmp_path / "b", {"t/index.html": gone, "e/index.html": ""})
    monkeypatch.setitem(compare.KNOWN_GAPS, "links", "resolved otherwise (upstream #2)")
    failed, known = compare.compare(a, b).report()
    assert failed.startswith("links: 1 page(s) differ\n") and "../gone/" in failed
    assert known == ""
