"""``attention_site.prepare``: the API pages and their SUMMARY.md, the notebooks and their
index, each step skipped when its inputs did not change; and the two Markdown extensions that
read what it wrote (the notebook link, the answer boxes' loader)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import markdown
import pytest

from attention_site import notebooks
from attention_site import prepare as prep
from attention_site.live_loader import LiveLoaderExtension
from attention_site.notebook_link import NotebookLinkExtension, fingerprint

ROOT = Path(__file__).resolve().parents[2]

CODE_PAGE = '# Softmax\n\nProse.\n\n```python exec="on"\nprint(1)\n```\n'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A checkout in miniature: the real sources (linked), mkdocs.yml, three pages."""
    (tmp_path / "src").symlink_to(ROOT / "src")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    docs = tmp_path / "docs"
    (docs / "forward").mkdir(parents=True)
    (docs / "why").mkdir()
    (docs / "forward" / "softmax.md").write_text(CODE_PAGE, encoding="utf-8")
    (docs / "why" / "index.md").write_text(CODE_PAGE.replace("Softmax", "Why"), encoding="utf-8")
    (docs / "index.md").write_text(CODE_PAGE.replace("Softmax", "Home"), encoding="utf-8")
    (docs / "prose.md").write_text("# Prose only\n\n```python\nshown()\n```\n", encoding="utf-8")
    return tmp_path


def test_the_api_pages_are_written_and_each_summary_lists_them(root: Path) -> None:
    done = prep.prepare(root, ["reference"])
    assert list(done.ran) == ["reference"]
    for section in ("api", "derivations"):
        folder = root / "docs" / "reference" / section
        summary = (folder / "SUMMARY.md").read_text(encoding="utf-8")
        listed = set(re.findall(r"\]\(([^)]+\.md)\)", summary)) - {"index.md"}
        written = {
            p.relative_to(folder).as_posix() for p in folder.rglob("*.md") if p.name != "SUMMARY.md"
        }
        assert listed and listed == written, section
        page = (folder / sorted(written)[0]).read_text(encoding="utf-8")
        assert page.startswith("::: attention_math.")


def test_a_step_whose_inputs_did_not_change_is_skipped(root: Path) -> None:
    steps = ["reference", "notebooks"]
    assert list(prep.prepare(root, steps).ran) == steps
    again = prep.prepare(root, steps)
    assert again.ran == {} and again.skipped == steps
    page = root / "docs" / "forward" / "softmax.md"
    page.write_text(CODE_PAGE + "\nMore prose.\n", encoding="utf-8")  # a page edited
    edited = prep.prepare(root, steps)
    assert list(edited.ran) == ["notebooks"] and edited.skipped == ["reference"]
    # an output removed by hand is made again, although the inputs are the same
    (root / "docs" / "reference" / "api" / "SUMMARY.md").unlink()
    assert list(prep.prepare(root, steps).ran) == ["reference"]


def test_each_page_that_runs_code_gets_its_notebook_beside_its_html(root: Path) -> None:
    prep.prepare(root, ["notebooks"])
    docs = root / "docs"
    made = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.ipynb"))
    assert made == ["forward/softmax/forward-softmax.ipynb", "index.ipynb", "why/why.ipynb"]
    nb = json.loads((docs / "forward/softmax/forward-softmax.ipynb").read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert code == [notebooks.RICH_PRINT, "print(1)"]  # the page's code, print shown rich
    index = json.loads((root / ".prepare" / "notebooks.json").read_text(encoding="utf-8"))
    source = (docs / "forward" / "softmax.md").read_text(encoding="utf-8")
    assert index[fingerprint(source)] == {
        "name": "forward-softmax.ipynb",
        "link": "softmax/forward-softmax.ipynb",
        "home": False,
        "title": "# Softmax",
    }
    # a page that stops running code loses its notebook
    (docs / "why" / "index.md").write_text("# Why\n\nProse.\n", encoding="utf-8")
    prep.prepare(root, ["notebooks"])
    assert not (docs / "why" / "why.ipynb").exists()
    assert (docs / "index.ipynb").is_file()


def test_an_unchanged_file_is_not_rewritten(root: Path) -> None:
    """``mkdocs serve`` watches docs/: a rewrite with the same bytes would rebuild for nothing."""
    prep.prepare(root, ["notebooks"])
    nb = root / "docs" / "index.ipynb"
    before = nb.stat().st_mtime_ns
    (root / "docs" / "prose.md").write_text("# Prose only\n\nEdited.\n", encoding="utf-8")
    assert list(prep.prepare(root, ["notebooks"]).ran) == ["notebooks"]
    assert nb.stat().st_mtime_ns == before


def test_under_serve_what_changed_is_handed_over_not_written_into_docs(root: Path) -> None:
    """``mkdocs serve`` watches docs/: after its first build, the files an edit changes are
    handed to the build in memory (hooks/prepare.py), and only .prepare/ is written."""
    steps = ["reference", "notebooks"]
    prep.prepare(root, steps)
    assert prep.changed(root, steps) == {}  # nothing changed since
    page = root / "docs" / "forward" / "softmax.md"
    page.write_text(CODE_PAGE.replace("print(1)", "print(2)"), encoding="utf-8")
    on_disk = (root / "docs" / "forward" / "softmax" / "forward-softmax.ipynb").read_bytes()
    handed = prep.changed(root, steps)
    new = handed["docs/forward/softmax/forward-softmax.ipynb"]
    assert b"print(2)" in new and b"print(2)" not in on_disk
    assert on_disk == (root / "docs" / "forward" / "softmax" / "forward-softmax.ipynb").read_bytes()
    index = json.loads((root / ".prepare" / "notebooks.json").read_text(encoding="utf-8"))
    assert fingerprint(page.read_text(encoding="utf-8")) in index  # the link finds the page
    assert all(path.startswith("docs/") for path in handed)
    # the next prepare writes docs/
    assert list(prep.prepare(root, steps).ran) == ["notebooks"]
    assert prep.changed(root, steps) == {}


def test_an_edit_undone_under_serve_is_prepared_again(root: Path) -> None:
    """A rebuild of ``mkdocs serve`` writes .prepare/ for an edit; once the edit is undone,
    the next prepare must not take .prepare/ as made for the page as it is again."""
    prep.prepare(root, ["notebooks"])
    page = root / "docs" / "forward" / "softmax.md"
    page.write_text(CODE_PAGE + "\nAn edit.\n", encoding="utf-8")
    assert prep.changed(root, ["notebooks"])  # .prepare/notebooks.json now for the edit
    page.write_text(CODE_PAGE, encoding="utf-8")  # undone
    assert list(prep.prepare(root, ["notebooks"]).ran) == ["notebooks"]
    index = json.loads((root / ".prepare" / "notebooks.json").read_text(encoding="utf-8"))
    assert fingerprint(CODE_PAGE) in index


def test_a_process_first_build_prepares_and_its_rebuilds_take_changes_in_memory(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What hooks/prepare.py asks for: the count lives in attention_site.prepare, since
    MkDocs loads the hook afresh for each rebuild of ``mkdocs serve``."""
    monkeypatch.setitem(prep._BUILDS, "count", 0)
    assert prep.for_build(root, ["notebooks"]) == {}  # the first build: written to docs/
    assert (root / "docs" / "index.ipynb").is_file()
    (root / "docs" / "index.md").write_text(CODE_PAGE.replace("Softmax", "Home!"), "utf-8")
    assert list(prep.for_build(root, ["notebooks"])) == ["docs/index.ipynb"]


def _html(source: str, index: Path) -> str:
    md = markdown.Markdown(extensions=[NotebookLinkExtension(index=str(index)), "attr_list"])
    return md.convert(source)


def test_the_notebook_link_goes_under_the_title_and_at_the_home_pages_end(root: Path) -> None:
    prep.prepare(root, ["notebooks"])
    index = root / ".prepare" / "notebooks.json"
    docs = root / "docs"
    page = _html((docs / "forward" / "softmax.md").read_text(encoding="utf-8"), index)
    assert re.match(
        r'<h1>Softmax</h1>\s*<p class="notebook-link"><a download="forward-softmax.ipynb"'
        r' href="softmax/forward-softmax.ipynb">Download notebook</a>',
        page,
    ), page
    home = _html((docs / "index.md").read_text(encoding="utf-8"), index)
    assert home.startswith("<h1>Home</h1>\n<p>")
    assert home.rstrip().endswith("to run in Jupyter)</p>")
    assert "notebook-link" not in _html((docs / "prose.md").read_text(encoding="utf-8"), index)


def test_a_page_edited_after_prepare_warns_and_keeps_its_link_if_its_title_is_known(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """What ``zensical serve`` meets at every edit (it runs no hook, so no prepare): the
    server goes on, the warning says what to run, and MkDocs' strict mode counts it."""
    prep.prepare(root, ["notebooks"])
    index = root / ".prepare" / "notebooks.json"
    edited = _html(CODE_PAGE.replace("Prose.", "Prose, edited."), index)
    assert 'href="softmax/forward-softmax.ipynb"' in edited
    new = _html(CODE_PAGE.replace("Softmax", "New page"), index)
    assert "notebook-link" not in new and "<h1>New page</h1>" in new
    warned = [r for r in caplog.records if r.levelname == "WARNING"]
    assert [r.name.split(".")[0] for r in warned] == ["mkdocs", "mkdocs"]
    assert "'# Softmax'" in warned[0].getMessage() and "as it was" in warned[0].getMessage()
    assert "'# New page'" in warned[1].getMessage() and "left out" in warned[1].getMessage()
    assert all("attention_site.prepare" in r.getMessage() for r in warned)
    # two pages with one title: an edit of either cannot tell which notebook is its own
    twin = root / "docs" / "why" / "softmax.md"
    twin.write_text(CODE_PAGE.replace("Prose.", "Other prose."), encoding="utf-8")
    prep.prepare(root, ["notebooks"])
    assert "notebook-link" not in _html(CODE_PAGE.replace("Prose.", "Prose, edited."), index)


def test_the_answer_box_loader_is_added_once_when_a_box_is_there(tmp_path: Path) -> None:
    state = tmp_path / "live.json"
    state.write_text(json.dumps({"version": "v1", "reason": ""}), encoding="utf-8")
    box = (
        '<form class="exercise-check"><span class="exercise-check__verdict" role="status"'
        ' aria-live="polite"></span></form>'
    )

    def convert(text: str) -> str:
        md = markdown.Markdown(extensions=[LiveLoaderExtension(state=str(state))])
        return md.convert(text)

    twice = convert(convert(box))  # as markdown-exec renders a block inside the page
    assert twice.count("data-live-loader") == 1 and "live.js?v=v1" in twice
    assert "data-live-loader" not in convert("No box here.")
    state.write_text(json.dumps({"version": None, "reason": "offline"}), encoding="utf-8")
    off = convert(box)
    assert "data-live-loader" not in off and 'data-verdict="error">Checking in the browser' in off


@pytest.mark.parametrize(
    "line",
    [
        'site_url: !ENV [SITE_URL, "https://x.org/a/"]',
        'site_url: &site_url !ENV [SITE_URL, "https://x.org/a/"]',  # an anchor before the tag
        "site_url: &site_url https://x.org/a/",
    ],
)
def test_the_site_url_is_read_past_an_anchor(
    tmp_path: Path, line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SITE_URL", raising=False)
    (tmp_path / "mkdocs.yml").write_text(f"site_name: x\n{line}\n", encoding="utf-8")
    assert prep.site_url(tmp_path) == "https://x.org/a/"
