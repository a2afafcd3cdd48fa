"""The default path of ``attention``: a fixed rule on the shapes and the dtype picks the tiled
path, ``block_size=`` picks it by hand, both paths agree, and a call writes nothing."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from attention_math import reference, tiled
from attention_math.numeric import attention, attention_weights, attention_with_lse


@pytest.fixture
def spy(monkeypatch):
    """The tiles each call of the tiled path used (``tiled_attention`` and its ``_with_lse``)."""
    calls: list[object] = []
    for name in ("tiled_attention", "tiled_attention_with_lse"):
        real = getattr(tiled, name)

        def wrapped(*args, _real=real, **kwargs):
            calls.append(kwargs["block_size"])
            return _real(*args, **kwargs)

        monkeypatch.setattr(tiled, name, wrapped)
    return calls


def test_the_rule_tiles_from_the_per_head_threshold():
    n = math.isqrt(tiled.TILED_FROM_SCORES)
    for dtype in (np.float32, np.float64):
        assert not tiled.takes_tiles((n - 1, n), np.dtype(dtype))
        assert tiled.takes_tiles((n, n), np.dtype(dtype))
        assert tiled.takes_tiles((1, n * n), np.dtype(dtype))  # one query, many keys: per head
        assert not tiled.takes_tiles((n, 0), np.dtype(dtype))  # no scores: nothing to tile


def test_the_budget_counts_every_head_and_the_dtype():
    # 768 heads of 256 × 256 scores: 192 MiB in float32, 384 MiB in float64
    per_head = 256
    heads = 3 * tiled.SCORES_BUDGET_BYTES // (4 * 4 * per_head * per_head)
    assert per_head * per_head < tiled.TILED_FROM_SCORES
    shape = (heads, per_head, per_head)
    assert not tiled.takes_tiles(shape, np.dtype(np.float32))
    assert tiled.takes_tiles(shape, np.dtype(np.float64))


@pytest.mark.parametrize("f", [attention, attention_with_lse])
def test_attention_follows_the_rule(spy, monkeypatch, f):
    monkeypatch.setattr(tiled, "TILED_FROM_SCORES", 30 * 30)
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 30, 4))
    f(q[:29], k, v)  # 29 × 30 scores: below the threshold
    assert spy == []
    f(q, k, v)
    assert spy == [tiled.DEFAULT_BLOCK]
    f(q, k, v, dropout_p=0.1, rng=0)  # dropout needs the weights whole: never tiled
    attention_weights(q, k, v)  # the weights are formed whole: never tiled
    assert spy == [tiled.DEFAULT_BLOCK]


def test_block_size_chooses_tiles_by_hand(spy):
    q = k = v = np.eye(3)
    attention(q, k, v, block_size=2)
    attention_with_lse(q, k, v, block_size=(1, 2))
    assert spy == [(2, 2), (1, 2)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_default_agrees_with_the_reference_across_the_threshold(monkeypatch, causal, dtype):
    monkeypatch.setattr(tiled, "TILED_FROM_SCORES", 48 * 48)
    rng = np.random.default_rng(1)
    eps = np.finfo(dtype).eps
    for n in (40, 48, 100):  # untiled, tiled from the threshold, tiled
        q, k, v = rng.normal(size=(3, 2, n, 8)).astype(dtype)  # two heads
        got = attention(q, k, v, is_causal=causal)
        want = reference.attention(q, k, v, is_causal=causal)
        assert got.dtype == dtype
        assert np.abs(got - want).max() <= 32 * eps * np.abs(v).max()
        out, lse = attention_with_lse(q, k, v, is_causal=causal)
        assert np.array_equal(out, got)
        assert np.isfinite(lse).all()


def test_the_same_input_gives_the_same_bits():
    # nothing measured, nothing remembered: two calls at a size the rule tiles are equal
    n = math.isqrt(tiled.TILED_FROM_SCORES)
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((3, n, 8)).astype(np.float32)
    assert tiled.takes_tiles((n, n), np.dtype(np.float32))
    assert np.array_equal(attention(q, k, v), attention(q, k, v))


def test_attention_writes_nothing(tmp_path):
    """A fresh process with its home, cache and working directories empty calls every path
    (untiled, tiled by the rule, tiled by hand, the weights, the log-sum-exp): they stay empty."""
    home, cache, work = (tmp_path / name for name in ("home", "cache", "work"))
    for folder in (home, cache, work):
        folder.mkdir()
    code = textwrap.dedent(
        """
        import math
        import numpy as np
        from attention_math import tiled
        from attention_math.numeric import attention, attention_weights, attention_with_lse

        n = math.isqrt(tiled.TILED_FROM_SCORES)
        rng = np.random.default_rng(3)
        for dtype in (np.float32, np.float64):
            q, k, v = rng.standard_normal((3, n, 8)).astype(dtype)
            assert tiled.takes_tiles((n, n), q.dtype)
            attention(q, k, v)
            attention(q, k, v, is_causal=True)
            attention_with_lse(q, k, v)
            attention(q[:64], k[:64], v[:64])
            attention(q[:64], k[:64], v[:64], block_size=16)
            attention_weights(q[:64], k[:64], v[:64])
        print("ran")
        """
    )
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran"
    assert [p for p in tmp_path.rglob("*") if p not in (home, cache, work)] == []
