"""The answer boxes check in the page, under Pyodide in a Web Worker, as the command line does.

One tab serves the whole module: the site is served under its sub-path, every request outside
that sub-path (another origin, or the server's root) is blocked (``Tab``), and the runtime is
loaded once by the first check and reused by the others, as on a reader's page.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import sympy as sp

from attention_math.exercises import catalogue
from attention_math.exercises.cli import check_answer
from attention_math.exercises.parse import MAX_NESTING, MAX_OPERATORS
from attention_math.own_example import own_example
from attention_math.terminal import UsageError
from tests.library.test_safe_parse import MALICIOUS

from .conftest import ROOT, Tab, _open_tab

pytestmark = pytest.mark.browser

SUB = "/attention-math"  # a project site lives under a sub-path of its host
PAGE = "/exercises/softmax/"
FIRST_CHECK_MS = 300_000  # the first check downloads and starts Python on two shared cores


def cli_says(exercise_id: str, text: str) -> str:
    """What ``python -m attention_math check ID TEXT`` says (run in this process): its verdict,
    or the error it gives on stderr after ``error:``; unwrapped (the terminal wraps at 100)."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            check_answer(exercise_id, text)
    except UsageError as exc:
        return str(exc)
    return " ".join(out.getvalue().split())


def typed(answer: sp.Basic) -> str:
    """An exact answer as a learner types it: nested lists for a matrix."""
    return sp.sstr(answer.tolist() if isinstance(answer, sp.MatrixBase) else answer)


@pytest.fixture(scope="module")
def live(browser, base_url: str) -> Iterator[Tab]:
    """A fresh tab of its own on the site served under its sub-path, on the softmax exercises."""
    tab = _open_tab(browser, base_url)
    tab.goto(PAGE)
    try:
        yield tab
    finally:
        tab.page.context.close()


def check_in_page(tab: Tab, exercise_id: str, text: str, timeout: int = 60_000) -> tuple[str, str]:
    """Type ``text`` into the box of ``exercise_id``, press Check; the verdict and message."""
    box = tab.page.locator(f'.exercise-check[data-exercise-id="{exercise_id}"]')
    verdict = box.locator(".exercise-check__verdict")
    verdict.evaluate("e => e.removeAttribute('data-verdict')")
    box.locator("input[data-exercise-id]").fill(text)
    box.get_by_role("button", name="Check").click()
    box.locator(".exercise-check__verdict[data-verdict]").wait_for(timeout=timeout)
    return verdict.get_attribute("data-verdict"), verdict.inner_text()


def test_every_exercise_has_a_box(built_site: Path) -> None:
    boxes = set()
    for page in built_site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        boxes |= set(re.findall(r'<form class="exercise-check" data-exercise-id="([^"]+)"', text))
    assert boxes == set(catalogue())


def test_an_unclicked_page_loads_nothing_live(desktop: Tab) -> None:
    seen: list[str] = []

    def record(request) -> None:
        seen.append(request.url)

    desktop.page.on("request", record)
    try:
        desktop.goto(PAGE)
        desktop.page.wait_for_load_state("networkidle")
    finally:
        desktop.page.remove_listener("request", record)
    assert desktop.page.locator(".exercise-check").count() == sum(
        ex.chapter == "softmax" for ex in catalogue().values()
    )
    assert seen and not [u for u in seen if "/live/" in u]  # worker, Pyodide, wheels


def test_correct_answers_are_correct_and_echoed_as_maths(live: Tab) -> None:
    first = True
    for ex in catalogue().values():
        if ex.chapter != "softmax":
            continue
        text = typed(ex.answer)
        verdict, message = check_in_page(live, ex.id, text, FIRST_CHECK_MS if first else 60_000)
        first = False
        assert (verdict, message) == ("correct", cli_says(ex.id, text)), ex.id
        # MathML from the worker, drawn by the browser itself (no MathJax in the page)
        echo = live.page.locator(f'.exercise-check[data-exercise-id="{ex.id}"] math')
        assert echo.count() == 1, ex.id
        assert echo.evaluate("m => m.namespaceURI") == "http://www.w3.org/1998/Math/MathML"
        assert echo.bounding_box()["width"] > 10, ex.id  # drawn, not left as raw text
    assert live.page.locator("[data-verdict='correct']").count() >= 5


def test_slips_get_the_command_lines_diagnosis(live: Tab) -> None:
    tried = 0
    for ex in catalogue().values():
        if ex.chapter != "softmax":
            continue
        for mistake in ex.mistakes:
            text = typed(mistake.answer)
            verdict, message = check_in_page(live, ex.id, text, FIRST_CHECK_MS)
            assert (verdict, message) == ("wrong", cli_says(ex.id, text)), (ex.id, text)
            tried += 1
    decimals = typed(catalogue()["softmax-logs"].answer.evalf(4))
    assert check_in_page(live, "softmax-logs", decimals) == (
        "rounding",
        cli_says("softmax-logs", decimals),
    )
    assert tried >= 4


def test_hostile_strings_get_a_clear_message_and_the_page_keeps_working(live: Tab) -> None:
    # the parser's limits, just inside: deep enough to have crashed Pyodide's small stack
    edges = [f"{'(' * MAX_NESTING}1{')' * MAX_NESTING}", "-" * MAX_OPERATORS + "1"]
    for template in [*MALICIOUS, *edges]:
        text = template.format(path="/tmp/pwned-by-the-answer-box")
        verdict, message = check_in_page(live, "softmax-logs", text, FIRST_CHECK_MS)
        assert verdict == ("wrong" if template in edges else "error"), text
        if text.strip():  # an empty box is answered in the page, without Python
            assert message == cli_says("softmax-logs", text), text
        else:
            assert message == "Type an answer first."
    assert not Path("/tmp/pwned-by-the-answer-box").exists()
    assert check_in_page(live, "softmax-logs", "[1/6, 1/3, 1/2]")[0] == "correct"


def test_the_runtime_is_loaded_once_from_the_sites_own_sub_path(
    built_site: Path, live: Tab
) -> None:
    check_in_page(live, "softmax-logs", "[1/6, 1/3, 1/2]", FIRST_CHECK_MS)
    requests = [url for _, url in live.requests]  # since the page was opened
    assert sum(u.split("?")[0].endswith("pyodide.asm.wasm") for u in requests) == 1
    # every core file from a folder named after Pyodide's version: a browser's cached core
    # of another release is never used (Pyodide loads them with no query to bust a cache)
    version = json.loads((built_site / "assets/live/manifest.json").read_text())["pyodide"]
    lock = json.loads((ROOT / "hooks/live.lock.json").read_text())["pyodide"]["files"]
    core = [u for u in requests if u.split("?")[0].rsplit("/", 1)[-1] in lock]
    assert len(core) == len(lock), core  # each core file once
    assert all(f"/assets/live/pyodide-{version}/" in u for u in core), core
    assert all(u.startswith(live.base_url + "/") for u in requests), requests
    assert live.external == [] and live.errors == []


def _modules(archive: Path) -> tuple[list[str], list[bytes]]:
    """An archive's ``.py`` names, and the 8-byte header of each of its ``.pyc``."""
    with zipfile.ZipFile(archive) as z:
        py = [n for n in z.namelist() if n.endswith(".py")]
        headers = [z.open(n).read(8) for n in z.namelist() if n.endswith(".pyc")]
    return py, headers


def test_the_runtime_comes_compiled_to_bytecode(built_site: Path, live: Tab) -> None:
    """The build compiled the standard library and the wheels with Pyodide's own Python, so
    the reader's browser compiles nothing: no ``.py`` is served, and the checks above ran on
    the ``.pyc`` alone. Each ``.pyc`` carries one interpreter's magic number, and is
    hash-based and never checked against a source (there is none)."""
    assets = built_site / "assets" / "live"
    manifest = json.loads((assets / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["bytecode"] is True
    archives = [assets / manifest["stdlib"]["path"]] + [
        assets / w["path"] for w in manifest["wheels"]
    ]
    magics = set()
    for archive in archives:
        py, headers = _modules(archive)
        assert py == [] and len(headers) > 10, archive.name
        magics |= {h[:4] for h in headers}
        assert {h[4:8] for h in headers} == {(1).to_bytes(4, "little")}, archive.name
    assert len(magics) == 1 and next(iter(magics))[2:] == b"\r\n"
    with zipfile.ZipFile(assets / "wheels" / "sympy-1.14.0-py3-none-any.whl") as z:
        assert not [n for n in z.namelist() if "/tests/" in n]  # no test suites shipped
    # the worker asked for this build's standard library, not Pyodide's default one
    stdlib = f"{manifest['stdlib']['path']}?v={manifest['stdlib']['sha']}"
    check_in_page(live, "softmax-logs", "[1/6, 1/3, 1/2]", FIRST_CHECK_MS)
    assert [u for _, u in live.requests if u.endswith(stdlib)], stdlib


# "Your own example": the same tab, moved to its page after the answer-box tests (a page of
# its own loads the runtime again, from the browser's cache).
OWN = "/forward/own-example/"


def own_in_page(
    tab: Tab, matrices: dict[str, str], mask: str = "none", timeout: int = FIRST_CHECK_MS
) -> tuple[str, str]:
    """Fill the form (the mode follows the matrices given), press its button; the verdict and
    message of its status line."""
    form = tab.page.locator("form.own-example")
    form.locator(f'input[name="mode"][value="{"x" if "X" in matrices else "qkv"}"]').check()
    form.locator(f'input[name="mask"][value="{mask}"]').check()
    for name, text in matrices.items():
        form.locator(f'textarea[name="{name}"]').fill(text)
    status = form.locator(".exercise-check__verdict")
    status.evaluate("e => e.removeAttribute('data-verdict')")
    form.get_by_role("button", name="Show every step").click()
    form.locator(".exercise-check__verdict[data-verdict]").wait_for(timeout=timeout)
    return status.get_attribute("data-verdict"), status.inner_text()


def math_text(markup: str) -> str:
    return "".join(ET.fromstring(markup).itertext())


def shown_steps(tab: Tab) -> list[str]:
    return tab.page.locator(".own-example__step").evaluate_all(
        "steps => steps.map(s => [...s.querySelectorAll('math')].map(m => m.textContent).join('|'))"
    )


@pytest.mark.parametrize(
    ("matrices", "mask"),
    [
        ({"Q": "1 0\n0 1", "K": "1 0\n0 1", "V": "1 2\n3 4"}, "none"),
        (
            {
                "X": "1 0 1\n0 1 1/2\nsqrt(2) 1 0",
                "W_Q": "1 1 0\n0 1 1\n1/2 0 1",
                "W_K": "1 0 0\n0 1 0\n0 0 1",
                "W_V": "1 2 3\n0 1 0\n1 1 1",
            },
            "causal",
        ),
    ],
)
def test_own_example_shows_every_step_as_python_computes_it(
    live: Tab, matrices: dict[str, str], mask: str
) -> None:
    if live.page.url != live.base_url + OWN:
        live.goto(OWN)
    verdict, message = own_in_page(live, matrices, mask)
    expected = own_example(matrices, mask)
    assert verdict == "correct", message
    steps = expected["steps"]
    assert message.startswith(f"{len(steps)} steps")
    want = [
        "|".join(
            math_text(s[k])
            for k in (("decimal", "exact") if len(s["latex"]) > 400 else ("exact", "approx"))
        )
        for s in steps
    ]
    assert shown_steps(live) == want
    assert live.page.locator(".own-example__step math").first.bounding_box()["width"] > 10


def test_own_example_bad_input_gets_the_message_and_the_page_keeps_working(live: Tab) -> None:
    if live.page.url != live.base_url + OWN:
        live.goto(OWN)
    good = {"Q": "1 0\n0 1", "K": "1 0\n0 1", "V": "1 2\n3 4"}
    bad = [
        {**good, "Q": "1 2\n3"},  # ragged
        {**good, "K": "1 0 0\n0 1 0"},  # shapes that do not fit
        {**good, "V": "1 2 3 4 5\n1 2 3 4 5"},  # past the size limit
        {**good, "V": ""},
        *({**good, "Q": t.format(path="/tmp/pwned-by-own-example")} for t in MALICIOUS[:8]),
    ]
    for matrices in bad:
        verdict, message = own_in_page(live, matrices)
        assert (verdict, message) == ("error", own_example(matrices)["error"]), matrices
        assert live.page.locator(".own-example__step").count() == 0
    assert not Path("/tmp/pwned-by-own-example").exists()
    assert own_in_page(live, good)[0] == "correct"
    assert live.external == [] and live.errors == []
