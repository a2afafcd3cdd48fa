"""The default path of ``attention``: tile size from the cache, tiled or not from a one-off
timing kept per machine in a cache file (or switched off), always tiled above the memory
budget; results equal either way."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from attention_math import default_path, numeric, tiled


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A process that has not calibrated yet, with an empty calibration directory."""
    monkeypatch.setattr(default_path, "_crossover", {})
    monkeypatch.setenv(default_path.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(default_path.CALIBRATE_ENV, raising=False)
    monkeypatch.setattr(default_path, "_BLAS_SPIN_SECONDS", 0.0)  # a wait, not a computation
    return monkeypatch


def _no_timing(*args):
    raise AssertionError("timed a path that should have been read back")


@pytest.mark.parametrize(("l2", "dtype", "want"), [
    (512 * 1024, np.float32, (256, 1024)),
    (512 * 1024, np.float64, (256, 512)),
    (1024 * 1024, np.float32, (256, 2048)),
    (64 * 1024 * 1024, np.float32, (256, 4096)),  # capped
    (16 * 1024, np.float64, (256, 256)),  # floored
    (None, np.float32, tiled.DEFAULT_BLOCK),  # unreadable: the fallback
])  # fmt: skip
def test_default_block_from_l2(monkeypatch, l2, dtype, want):
    monkeypatch.setattr(default_path, "cache_bytes", lambda level=2: l2)
    assert default_path.default_block(np.dtype(dtype)) == want


def test_cache_bytes_reads_sysfs_or_none():
    size = default_path.cache_bytes(2)
    assert size is None or (isinstance(size, int) and size >= 16 * 1024)
    assert default_path.cache_bytes(9) is None  # no such level


def test_small_problems_never_calibrate(fresh):
    calls = []
    assert not default_path.tiles_pay((512, 512), np.dtype(np.float32), lambda *a: calls.append(a))
    assert calls == [] and default_path._crossover == {}


def test_above_budget_always_tiles(fresh):
    fresh.setattr(default_path, "SCORES_BUDGET_BYTES", 100)
    assert default_path.tiles_pay((8, 8), np.dtype(np.float64), lambda *a: None)


def test_calibration_picks_the_faster_and_is_kept(fresh):
    fresh.setattr(default_path, "CALIBRATION_LENGTHS", (32, 64))
    calls = []

    def slow_untiled(q, k, v):
        calls.append(q.shape)
        time.sleep(0.01)  # far slower than tiles of a 32 × 64 problem (tens of µs)

    assert default_path.tiles_pay((32, 32), np.dtype(np.float32), slow_untiled)
    assert default_path._crossover["float32"] == 32 * 32
    n = len(calls)
    assert default_path.tiles_pay((40, 40), np.dtype(np.float32), slow_untiled)
    assert len(calls) == n  # kept: no second timing
    # below the floor
    assert not default_path.tiles_pay((16, 16), np.dtype(np.float32), slow_untiled)


def test_calibration_keeps_untiled_when_it_is_faster(fresh):
    fresh.setattr(default_path, "CALIBRATION_LENGTHS", (32, 64))
    real = tiled.tiled_attention

    def slow_tiled(*args, **kwargs):
        time.sleep(0.01)
        return real(*args, **kwargs)

    fresh.setattr(tiled, "tiled_attention", slow_tiled)
    assert not default_path.tiles_pay((64, 64), np.dtype(np.float64), lambda *a: None)
    assert default_path._crossover["float64"] == 128 * 128


@pytest.mark.parametrize("causal", [False, True])
def test_default_equals_untiled_across_the_threshold(fresh, causal):
    fresh.setattr(default_path, "CALIBRATION_LENGTHS", (32, 64))
    fresh.setattr(default_path, "_crossover", {"float64": 48 * 48})  # as if calibrated
    rng = np.random.default_rng(0)
    for n in (40, 48, 100):
        q, k, v = rng.normal(size=(3, n, 8))
        got = numeric.attention(q, k, v, is_causal=causal)
        ref, _ = numeric.attention(q, k, v, is_causal=causal, return_weights=True)
        assert np.allclose(got, ref, rtol=0, atol=32 * np.finfo(float).eps)


def test_calibration_is_saved_and_read_back_by_the_next_process(fresh, tmp_path):
    fresh.setattr(default_path, "CALIBRATION_LENGTHS", (32, 64))
    fresh.setattr(default_path, "_calibrate", lambda dtype, untiled: 48 * 48)
    assert default_path.tiles_pay((50, 50), np.dtype(np.float32), _no_timing)
    # only the calibration file, in the calibration directory: no temporary left over
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["cache", default_path.CALIBRATION_FILE]
    doc = json.loads((tmp_path / "cache" / default_path.CALIBRATION_FILE).read_text())
    assert doc == {default_path.machine_key(): {"float32": 48 * 48}}
    fresh.setattr(default_path, "_crossover", {})  # a new process on the same machine
    fresh.setattr(default_path, "_calibrate", _no_timing)
    assert not default_path.tiles_pay((40, 40), np.dtype(np.float32), _no_timing)
    assert default_path.tiles_pay((48, 48), np.dtype(np.float32), _no_timing)


def test_another_machine_or_a_damaged_file_calibrates_again(fresh, tmp_path):
    fresh.setattr(default_path, "CALIBRATION_LENGTHS", (32, 64))
    cache = tmp_path / "cache"
    cache.mkdir()
    for text in ("{not json", "[1, 2]", '{"another machine": {"float64": 1}}'):
        (cache / default_path.CALIBRATION_FILE).write_text(text)
        fresh.setattr(default_path, "_crossover", {})
        fresh.setattr(default_path, "_calibrate", lambda dtype, untiled: 60 * 60)
        assert not default_path.tiles_pay((50, 50), np.dtype(np.float64), _no_timing)
        doc = json.loads((cache / default_path.CALIBRATION_FILE).read_text())
        assert doc[default_path.machine_key()] == {"float64": 60 * 60}
    assert doc["another machine"] == {"float64": 1}  # the other machine's entry is kept


def test_unwritable_or_empty_cache_dir_keeps_it_in_the_process(fresh, tmp_path):
    fresh.setattr(default_path, "CALIBRATION_LENGTHS", (32, 64))
    fresh.setattr(default_path, "_calibrate", lambda dtype, untiled: 48 * 48)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for where in (str(blocker / "cache"), ""):  # under a file: mkdir fails; "": nowhere
        fresh.setattr(default_path, "_crossover", {})
        fresh.setenv(default_path.CACHE_DIR_ENV, where)
        assert default_path.tiles_pay((50, 50), np.dtype(np.float32), _no_timing)
        assert default_path._crossover == {"float32": 48 * 48}
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a-file"]


def test_calibration_switched_off_depends_on_the_shape_only(fresh, tmp_path):
    fresh.setenv(default_path.CALIBRATE_ENV, "0")
    fresh.setattr(default_path, "_calibrate", _no_timing)
    n = int(np.sqrt(default_path.UNCALIBRATED_CROSSOVER))
    assert not default_path.tiles_pay((n - 1, n), np.dtype(np.float32), _no_timing)
    assert default_path.tiles_pay((n, n), np.dtype(np.float32), _no_timing)
    assert not (tmp_path / "cache").exists()


def test_the_docs_build_never_times_a_path(built_site):
    # the build's own calibration dir (tests/conftest.py) stays empty: no page calls the
    # default path at a size where the choice would depend on a timing
    assert list((built_site.parent / f"{built_site.name}-calibration").iterdir()) == []


def test_committed_benchmark_covers_the_issue_cases():
    """benchmarks/results/default_path_bench.json, shown on the Performance page: every length,
    dtype and mask the targets name, with the machine, the load and the one-thread profile."""
    from pathlib import Path

    path = Path(__file__).parents[1] / "benchmarks/results/default_path_bench.json"
    doc = json.loads(path.read_text())
    assert {"cpu", "blas", "blas_kernel", "l2_cache_bytes"} <= doc["machine"].keys()
    assert len(doc["load_before"]) == 3 and len(doc["load_after"]) == 3
    timed = {(r["L"], r["dtype"], r["causal"]) for r in doc["results"] if "ratio" in r}
    for n in (2048, 4096, 8192):
        for dtype in ("float32", "float64"):
            assert {(n, dtype, False), (n, dtype, True)} <= timed
    for r in doc["results"]:
        assert r["met"] == (r["ratio"] <= r["target"]) and np.isfinite(r["load"])
        assert r["target"] == (1.25 if r["L"] >= 4096 else 1.5)
    prof = {p["dtype"]: p for p in doc["profile"]}
    assert prof.keys() == {"float32", "float64"}
    for p in prof.values():
        steps = p["gemm_scores_s"] + p["exp_s"] + p["gemm_values_s"] + p["rest_s"]
        assert 0 < steps <= 1.5 * p["default_s"]  # the steps are (most of) the default path
        assert p["ratio"] == pytest.approx(p["default_s"] / p["torch_s"])


def test_the_docstrings_state_the_constants_they_describe():
    """The API pages show the docstrings, not the private constants: their values are written
    out in the text, and this keeps the two in step."""
    assert f"{default_path.BLOCK_Q} query rows" in (default_path.default_block.__doc__ or "")
    a, b = default_path.CALIBRATION_LENGTHS
    warm, calls = default_path._CALIBRATION_WARMUP, default_path._CALIBRATION_CALLS
    said = f"lengths {a} and {b} (d = 64, {warm} untimed calls of each, then the best of {calls};"
    assert said in " ".join((default_path.tiles_pay.__doc__ or "").split())
