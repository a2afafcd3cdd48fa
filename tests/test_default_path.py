"""The default path of ``attention``: tile size from the cache, tiled or not from a one-off
timing, always tiled above the memory budget; results equal either way."""

from __future__ import annotations

import time

import numpy as np
import pytest

from attention_math import numeric, tiled


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(tiled, "_crossover", {})
    return monkeypatch


@pytest.mark.parametrize(("l2", "dtype", "want"), [
    (512 * 1024, np.float32, (256, 1024)),
    (512 * 1024, np.float64, (256, 512)),
    (1024 * 1024, np.float32, (256, 2048)),
    (64 * 1024 * 1024, np.float32, (256, 4096)),  # capped
    (16 * 1024, np.float64, (256, 256)),  # floored
    (None, np.float32, tiled.DEFAULT_BLOCK),  # unreadable: the fallback
])  # fmt: skip
def test_default_block_from_l2(monkeypatch, l2, dtype, want):
    monkeypatch.setattr(tiled, "cache_bytes", lambda level=2: l2)
    assert tiled.default_block(np.dtype(dtype)) == want


def test_cache_bytes_reads_sysfs_or_none():
    size = tiled.cache_bytes(2)
    assert size is None or (isinstance(size, int) and size >= 16 * 1024)
    assert tiled.cache_bytes(9) is None  # no such level


def test_small_problems_never_calibrate(fresh):
    calls = []
    assert not tiled.tiles_pay((512, 512), np.dtype(np.float32), lambda *a: calls.append(a))
    assert calls == [] and tiled._crossover == {}


def test_above_budget_always_tiles(fresh):
    fresh.setattr(tiled, "SCORES_BUDGET_BYTES", 100)
    assert tiled.tiles_pay((8, 8), np.dtype(np.float64), lambda *a: None)


def test_calibration_picks_the_faster_and_is_kept(fresh):
    fresh.setattr(tiled, "_CALIBRATION_LENGTHS", (32, 64))
    calls = []

    def slow_untiled(q, k, v):
        calls.append(q.shape)
        time.sleep(0.05)  # far slower than tiles of a 32 × 64 problem

    assert tiled.tiles_pay((32, 32), np.dtype(np.float32), slow_untiled)
    assert tiled._crossover["float32"] == 32 * 32
    n = len(calls)
    assert tiled.tiles_pay((40, 40), np.dtype(np.float32), slow_untiled)
    assert len(calls) == n  # kept: no second timing
    assert not tiled.tiles_pay((16, 16), np.dtype(np.float32), slow_untiled)  # below the floor


def test_calibration_keeps_untiled_when_it_is_faster(fresh):
    fresh.setattr(tiled, "_CALIBRATION_LENGTHS", (32, 64))
    real = tiled.tiled_attention

    def slow_tiled(*args, **kwargs):
        time.sleep(0.05)
        return real(*args, **kwargs)

    fresh.setattr(tiled, "tiled_attention", slow_tiled)
    assert not tiled.tiles_pay((64, 64), np.dtype(np.float64), lambda *a: None)
    assert tiled._crossover["float64"] == 128 * 128


@pytest.mark.parametrize("causal", [False, True])
def test_default_equals_untiled_across_the_threshold(fresh, causal):
    fresh.setattr(tiled, "_CALIBRATION_LENGTHS", (32, 64))
    fresh.setattr(tiled, "_crossover", {"float64": 48 * 48})  # as if calibrated
    rng = np.random.default_rng(0)
    for n in (40, 48, 100):
        q, k, v = rng.normal(size=(3, n, 8))
        got = numeric.attention(q, k, v, is_causal=causal)
        ref, _ = numeric.attention(q, k, v, is_causal=causal, return_weights=True)
        assert np.allclose(got, ref, rtol=0, atol=32 * np.finfo(float).eps)
