"""The browser visit's kept records (``attention_site.checks.visits``): a record is reused only
for a page whose every requested byte is unchanged, looked at by unchanged checking code."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attention_site.checks import browser, visits

OLD, NEW = "http://127.0.0.1:40001/attention-math", "http://127.0.0.1:40002/attention-math"


def build(site: Path, base: str, *, css: str = "p{}", page: str = "<p>softmax</p>") -> None:
    """A two-page site as the build writes it for ``base`` (its canonical links hold it)."""
    for rel, body in (("forward/", page), ("why/", "<p>why</p>")):
        (site / rel).mkdir(parents=True, exist_ok=True)
        (site / rel / "index.html").write_text(f'<link rel="canonical" href="{base}/{rel}">{body}')
    (site / "assets").mkdir(exist_ok=True)
    (site / "assets" / "extra.css").write_text(css)


def record(base: str) -> dict:
    requests = [["document", f"{base}/forward/"], ["stylesheet", f"{base}/assets/extra.css"]]
    return {"status": 200, "requests": requests, "page": {"canonical": f"{base}/forward/"}}


@pytest.fixture
def shots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The screenshots' folder, moved into the test's directory."""
    monkeypatch.setattr(browser, "ARTIFACTS", tmp_path / "shots")
    return browser.ARTIFACTS


def kept_then_seen(tmp_path: Path, **change: str) -> dict | None:
    """Keep a visit of a first build, build again for another port (with ``change``), look."""
    site, root = tmp_path / "site", tmp_path / "kept"
    build(site, OLD)
    visits.VisitStore(site, OLD, root, "fp").put("/forward/", record(OLD))
    build(site, NEW, **change)
    return visits.VisitStore(site, NEW, root, "fp").get("/forward/")


def test_the_same_bytes_on_another_port_reuse_the_record(tmp_path: Path, shots: Path) -> None:
    assert kept_then_seen(tmp_path) == record(NEW)


@pytest.mark.parametrize(
    "change", [{"page": "<p>softmax(0) = 1/n</p>"}, {"css": "p{color:red}"}], ids=["page", "css"]
)
def test_a_changed_byte_of_the_page_or_of_what_it_loads_is_visited_again(
    tmp_path: Path, shots: Path, change: dict[str, str]
) -> None:
    assert kept_then_seen(tmp_path, **change) is None


def test_a_page_it_did_not_load_changing_does_not_matter(tmp_path: Path, shots: Path) -> None:
    site, root = tmp_path / "site", tmp_path / "kept"
    build(site, OLD)
    visits.VisitStore(site, OLD, root, "fp").put("/forward/", record(OLD))
    (site / "why" / "index.html").write_text("<p>another page</p>")
    assert visits.VisitStore(site, OLD, root, "fp").get("/forward/") == record(OLD)


def test_screenshots_come_back_and_a_lost_one_means_a_new_visit(
    tmp_path: Path, shots: Path
) -> None:
    site, root = tmp_path / "site", tmp_path / "kept"
    build(site, OLD)
    shots.mkdir()
    names = ["forward.png", f"forward{browser.PHONE_SHOT}.png"]
    for i, name in enumerate(names):
        (shots / name).write_bytes(b"\x89PNG" + bytes([i]))
    visits.VisitStore(site, OLD, root, "fp").put("/forward/", record(OLD))
    for name in names:
        (shots / name).unlink()
    assert visits.VisitStore(site, OLD, root, "fp").get("/forward/") is not None
    assert [(shots / n).read_bytes() for n in names] == [b"\x89PNG\0", b"\x89PNG\1"]
    (root / "fp" / names[1]).unlink()
    assert visits.VisitStore(site, OLD, root, "fp").get("/forward/") is None


def test_other_checking_code_has_other_records(tmp_path: Path) -> None:
    probe_file = tmp_path / "probes.py"
    probe_file.write_text("A = 1\n")
    before = visits.fingerprint("Chromium 1", [probe_file])
    assert visits.fingerprint("Chromium 1", [probe_file]) == before
    assert visits.fingerprint("Chromium 2", [probe_file]) != before
    probe_file.write_text("A = 2\n")
    assert visits.fingerprint("Chromium 1", [probe_file]) != before


def test_only_the_newest_fingerprints_are_kept(tmp_path: Path, shots: Path) -> None:
    site, root = tmp_path / "site", tmp_path / "kept"
    build(site, OLD)
    for age, key in enumerate(["d", "c", "b", "a"]):  # "a" is the oldest
        store = visits.VisitStore(site, OLD, root, key)
        store.put("/forward/", record(OLD))
        os.utime(store.dir, (1e9 - age, 1e9 - age))
    visits.VisitStore(site, OLD, root, "new").put("/forward/", record(OLD))
    visits.VisitStore(site, OLD, root, "new").forget_others(keep=3)
    assert sorted(p.name for p in root.iterdir()) == ["c", "d", "new"]


def test_ci_visits_every_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert not visits.switched_on()
    monkeypatch.delenv("CI")
    assert visits.switched_on()
