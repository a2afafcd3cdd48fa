"""Tiled attention (online softmax) against the untiled reference path."""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import numeric, tiled
from attention_math.numeric import attention, attention_weights, attention_with_lse, causal_mask


def _close(a, b, v, bound_eps=32):
    """Row-normwise: |a − b| ≤ bound · ε · max |v| (outputs are convex combinations of v)."""
    eps = np.finfo(a.dtype).eps
    scale = max(float(np.abs(v).max()), np.finfo(a.dtype).tiny)
    return float(np.abs(a.astype(np.float64) - b).max()) <= bound_eps * eps * scale


@settings(max_examples=60, deadline=None)
@given(
    n_q=st.integers(1, 40),
    n_k=st.integers(1, 40),
    d=st.integers(1, 5),
    block=st.tuples(st.integers(1, 16), st.integers(1, 16)),
    dtype=st.sampled_from([np.float32, np.float64]),
    mask_kind=st.sampled_from(["none", "bool", "bool_batch", "additive", "causal", "both"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_tiled_equals_untiled_on_random_masked_cases(n_q, n_k, d, block, dtype, mask_kind, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((2, n_q, d)).astype(dtype) * 2
    k = rng.standard_normal((n_k, d)).astype(dtype) * 2
    v = rng.standard_normal((2, n_k, 3)).astype(dtype)
    mask, causal = None, mask_kind in ("causal", "both")
    if mask_kind in ("bool", "both"):
        mask = rng.random((n_q, n_k)) < 0.6
    elif mask_kind == "bool_batch":
        mask = rng.random((2, n_q, n_k)) < 0.4  # one mask per batch entry
    elif mask_kind == "additive":
        mask = np.where(rng.random((n_q, n_k)) < 0.3, -np.inf, rng.standard_normal((n_q, n_k)))
    want = attention(q, k, v, mask, is_causal=causal)
    got = attention(q, k, v, mask, is_causal=causal, block_size=block)
    assert got.dtype == want.dtype == dtype
    assert got.shape == want.shape
    assert _close(got, want, v)


def test_is_causal_matches_the_causal_mask_in_both_paths():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 9, 4))
    for n_q, n_k in ((9, 9), (5, 9), (9, 5)):
        want = attention(q[:n_q], k[:n_k], v[:n_k], causal_mask(n_q, n_k))
        for block in (None, 2, (3, 4)):
            got = attention(q[:n_q], k[:n_k], v[:n_k], is_causal=True, block_size=block)
            assert _close(got, want, v, bound_eps=8)


def test_fully_masked_rows_are_zero_when_tiled():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((3, 6, 4))
    mask = rng.random((6, 6)) < 0.5
    mask[2] = False
    out = attention(q, k, v, mask, block_size=(4, 2))
    assert np.array_equal(out[2], np.zeros(4))
    assert _close(out, attention(q, k, v, mask), v)


def _probe(dtype=np.float32):
    """Queries 0..3 meet keys 4..7 with scores that overflow to +inf; queries 4..7 are 0."""
    q = np.zeros((8, 4), dtype=dtype)
    q[:4] = 1e10
    k = np.ones((8, 4), dtype=dtype)
    k[4:] = 1e30
    return q, k, np.ones((8, 2), dtype=dtype)


def test_tiles_above_the_diagonal_are_never_computed():
    q, k, v = _probe()
    with pytest.raises(ValueError, match="overflow"):
        attention(q, k, v, block_size=4)  # non-causal: the tile is computed
    out = attention(q, k, v, is_causal=True, block_size=4)  # causal: the tile is skipped
    assert np.isfinite(out).all()
    out = attention(q, k, v, causal_mask(8), block_size=4)  # an all-False bool tile too
    assert np.isfinite(out).all()


def test_memory_stays_o_of_l_times_d():
    n, d, budget = 4096, 16, 4 * 2**20  # float32 scores would be 64 MiB
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))
    tracemalloc.start()
    try:
        out = attention(q, k, v, block_size=(128, 512), is_causal=True)
        _, peak_tiled = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        attention_weights(q[:1024], k[:1024], v[:1024])  # always whole, a quarter: 4 MiB
        _, peak_untiled = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.dtype == np.float32
    assert peak_tiled < budget
    assert peak_untiled >= budget  # the bound is tight enough to catch an L×L buffer


def test_automatic_tiling_above_the_budget(monkeypatch):
    calls = []
    real = tiled.tiled_attention

    def spy(*args, **kwargs):
        calls.append(kwargs["block_size"])
        return real(*args, **kwargs)

    monkeypatch.setattr(tiled, "tiled_attention", spy)
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((3, 20, 4))
    want = attention(q, k, v)
    assert calls == []
    monkeypatch.setattr(tiled, "SCORES_BUDGET_BYTES", 20 * 20 * 8 - 1)
    got = attention(q, k, v)
    assert calls == [tiled.DEFAULT_BLOCK]  # the one default tile
    assert _close(got, want, v)
    attention_weights(q, k, v)  # the weights are formed whole: no tiling
    attention(q, k, v, dropout_p=0.5, rng=0)  # dropout needs the weights: no tiling
    assert len(calls) == 1


def test_dtypes_are_kept_when_tiled():
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((3, 7, 4))
    for dtype in (np.float16, np.float32, np.float64):
        out = attention(*(a.astype(dtype) for a in (q, k, v)), block_size=3)
        assert out.dtype == dtype
    assert attention(q.astype(int), k.astype(int), v.astype(int), block_size=3).dtype == np.float64


def test_large_finite_scores_give_finite_results():
    rng = np.random.default_rng(6)
    n, d = 256, 64
    q = rng.standard_normal((n, d)).astype(np.float32)
    k = rng.standard_normal((n, d)).astype(np.float32)
    q *= 1e4 * np.sqrt(d) / np.abs(q @ k.T).max()  # scores q kᵀ/√d up to |s| = 1e4
    v = rng.standard_normal((n, 8)).astype(np.float32)
    for causal in (False, True):
        got = attention(q, k, v, block_size=(64, 32), is_causal=causal)
        want = attention(q, k, v, is_causal=causal)
        assert np.isfinite(got).all() and np.isfinite(want).all()
        assert _close(got, want, v)


@pytest.mark.parametrize("rise", [0.5, 7.0, 9.0, 300.0])
def test_later_tiles_with_a_higher_max_lazy_and_rescaled(rise):
    # Tile j (4 keys each) has scores around j·rise: below tiled.RESCALE_MARGIN the first tile's
    # shift is kept (P grows up to e^rise), above it the state is rescaled.
    rng = np.random.default_rng(11)
    q = np.ones((6, 1))
    k = (np.repeat(np.arange(5.0), 4) * rise + rng.random(20) * 0.1)[:, None]
    v = rng.standard_normal((20, 3))
    for dtype in (np.float32, np.float64):
        args = (q.astype(dtype), k.astype(dtype), v.astype(dtype))
        got = attention(*args, scale=1.0, block_size=(6, 4))
        want = attention(*args, scale=1.0)
        assert np.isfinite(got).all()
        assert _close(got, want, v)


def test_a_row_that_sees_its_first_key_late_gets_its_own_shift():
    # Row 1's keys are all masked in the first tile, and its visible scores are about -200:
    # against a placeholder shift of 0 every e^s would underflow to 0 in float32 (a wrong
    # zero row). The tiled path must not skip the max pass until every row has a real shift.
    q = np.array([[0.0], [1.0]], dtype=np.float32)
    k = np.array([[0.0], [0.0], [-200.0], [-201.0]], dtype=np.float32)
    v = np.array([[1.0], [2.0], [3.0], [4.0]], dtype=np.float32)
    mask = np.array([[True, True, True, True], [False, False, True, True]])
    want = attention(q, k, v, mask, scale=1.0)
    for workers in (1, 2):
        got = tiled.tiled_attention(
            q, k, v, mask, scale=np.float32(1), block_size=(2, 2), workers=workers
        )
        assert got[1, 0] > 3  # a weighted mean of 3 and 4, not 0
        assert _close(got, want, v)


@pytest.mark.parametrize("level", [-100.0, -12.0, -9.0, 0.0, 14.0, 30.0])
def test_first_tile_without_a_max_pass_at_any_score_level(level):
    # The first tile is tried with base 0 and no max pass: kept when every row sum of e^S
    # lies in [e^-8, keys · e^8] (scores near -9 or 14 pass), redone with the max pass
    # otherwise (near -100 every e^s underflows in float32: a wrong zero row if kept).
    rng = np.random.default_rng(14)
    q = np.ones((8, 1))
    k = (level + rng.random(24))[:, None]
    v = rng.standard_normal((24, 3))
    for dtype in (np.float32, np.float64):
        args = (q.astype(dtype), k.astype(dtype), v.astype(dtype))
        want = attention(*args, scale=1.0)
        for workers in (1, 2):
            got = tiled.tiled_attention(*args, scale=dtype(1), block_size=(4, 8), workers=workers)
            assert np.isfinite(got).all()
            assert _close(got, want, v)


@pytest.mark.parametrize("workers", [1, 2])
def test_overflow_in_a_later_key_tile_raises(workers):
    # The first key tiles are ordinary, so every row already has its shift and later tiles
    # take the path without a max pass; a key in the last tile makes q·k overflow.
    rng = np.random.default_rng(10)
    q = np.abs(rng.standard_normal((64, 4))).astype(np.float32) + 0.5
    k = rng.standard_normal((64, 4)).astype(np.float32)
    k[60] = 3e38  # q·k ≥ 4 · 0.5 · 3e38 overflows float32 in every row
    with pytest.raises(ValueError, match="overflow"):
        attention(q, k, q, scale=1.0)  # the untiled path agrees
    with pytest.raises(ValueError, match=r"overflow the float32 range"):
        tiled.tiled_attention(q, k, q, scale=np.float32(1), block_size=(16, 16), workers=workers)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pad", [-1e4, -1e9, "min"])
def test_padding_in_the_first_tiles_keeps_full_accuracy(dtype, pad):
    # Left padding with a large finite additive mask: a row's first key tiles hold only
    # padded keys, so its first shift is near the pad value. Correcting a tile computed
    # against that shift would round the scores at its magnitude (1e9 in float32: to 64).
    rng = np.random.default_rng(12)
    n = 64
    q, k, v = (rng.standard_normal((n, 8)).astype(dtype) for _ in range(3))
    mask = np.zeros((n, n), dtype=dtype)
    mask[:, :20] = np.finfo(dtype).min if pad == "min" else pad
    for block in ((16, 16), (64, 8)):
        got = attention(q, k, v, mask, block_size=block)
        assert _close(got, attention(q, k, v, mask), v, bound_eps=8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_near_the_top_of_the_range_do_not_overflow(dtype):
    # o = Σ P v is summed before the one division: with |v| near the largest float it
    # would overflow to inf (or inf − inf = NaN) unless such columns are scaled first.
    big = np.finfo(dtype).max / 4
    rng = np.random.default_rng(13)
    q = np.ones((4, 1), dtype=dtype)
    k = np.zeros((32, 1), dtype=dtype)
    k[9] = 9.3  # a later tile's score rises by more than the lazy margin
    v = np.empty((32, 3), dtype=dtype)
    v[:, 0] = big  # the output is big, up to rounding
    v[:, 1] = np.where(np.arange(32) < 16, big, -big)
    v[:, 2] = rng.standard_normal(32)  # an ordinary column next to them keeps its accuracy
    want = attention(q, k, v, scale=1.0)
    for block in ((4, 8), (2, 16), (4, 32)):
        got = attention(q, k, v, scale=1.0, block_size=block)
        assert np.isfinite(got).all()
        eps = np.finfo(dtype).eps
        assert np.abs(got[:, :2] - want[:, :2]).max() <= 32 * eps * big
        assert np.abs(got[:, 0] - big).max() <= 32 * eps * big
        assert np.abs(got[:, 2] - want[:, 2]).max() <= 32 * eps * np.abs(v[:, 2]).max()


def test_threads_do_not_change_the_result():
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((100, 8)).astype(np.float32) for _ in range(3))
    s = np.float32(0.25)
    one = tiled.tiled_attention(q, k, v, scale=s, is_causal=True, block_size=(16, 32), workers=1)
    two = tiled.tiled_attention(q, k, v, scale=s, is_causal=True, block_size=(16, 32), workers=2)
    assert np.array_equal(one, two)


def test_overflow_message_is_the_untiled_one():
    # No np.errstate here: pytest turns RuntimeWarnings into errors, so a warning from the
    # tiled GEMM (instead of the ValueError) would fail this test.
    q = np.full((2, 2), 1e20, dtype=np.float32)
    match = r"the scores q kᵀ · scale overflow the float32 range \(NaN or \+inf\); rescale q and k"
    for block in (None, 1):
        with pytest.raises(ValueError, match=match):
            attention(q, q, q, block_size=block)


@pytest.mark.parametrize("workers", [1, 2])
def test_overflow_raises_in_every_query_block_and_thread(workers):
    rng = np.random.default_rng(9)
    q = rng.standard_normal((300, 4)).astype(np.float32)
    q[250] *= 1e19  # one row, in the last query block, overflows
    with pytest.raises(ValueError, match=r"overflow the float32 range"):
        tiled.tiled_attention(q, q, q, scale=np.float32(1), block_size=(16, 16), workers=workers)


def test_plus_inf_score_under_a_minus_inf_additive_mask_raises_in_both_paths():
    q = np.array([[1e20, 1e20], [1.0, 0.0]], dtype=np.float32)  # q₀·q₀ overflows to +inf
    mask = np.array([[-np.inf, 0.0], [0.0, 0.0]])  # +inf + -inf is NaN, not a blocked key
    for block in (None, 1):
        with pytest.raises(ValueError, match="overflow"):
            attention(q, q, q, mask, block_size=block)


@pytest.mark.parametrize("mask_kind", ["none", "bool", "additive", "causal"])
def test_untiled_path_holds_one_score_buffer(mask_kind, monkeypatch):
    n, d = 1000, 8  # float32 scores: 4 MiB, below the rule's threshold; the inputs a few KiB
    assert not tiled.takes_tiles((n, n), np.dtype(np.float32))
    rng = np.random.default_rng(10)
    q, k, v = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))
    mask = {
        "bool": rng.random((n, n)) < 0.5,
        "additive": np.where(rng.random((n, n)) < 0.5, -np.inf, 0.0),  # float64: cast, not copied
    }.get(mask_kind)
    one = n * n * 4
    tracemalloc.start()
    try:
        attention(q, k, v, mask, is_causal=mask_kind == "causal")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the float32 scores plus at most one L×L bool (a quarter of them): never a 2nd float copy
    assert one <= peak < 1.3 * one


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        (0, ValueError),
        (-1, ValueError),
        ((0, 4), ValueError),
        ((4, -3), ValueError),
        (1.5, TypeError),
        (True, TypeError),
        ((1, 2, 3), TypeError),
        ("8", TypeError),
        ((8, False), TypeError),
        ((8.0, 8), TypeError),
    ],
)
def test_bad_block_size_is_a_clear_error(bad, exc):
    # zero or negative: a ValueError; not an int (a bool, a float, a string): a TypeError;
    # both name block_size (or the element of the pair at fault) and the value.
    with pytest.raises(exc, match=r"block_size(\[\d\])? must be a positive integer.*, got"):
        attention(np.eye(2), np.eye(2), np.eye(2), block_size=bad)
    with pytest.raises(exc, match=r"block_size(\[\d\])? must be a positive integer"):
        tiled.tiled_attention(np.eye(2), np.eye(2), np.eye(2), block_size=bad)


def test_tiles_cannot_drop_out_weights_they_never_form():
    with pytest.raises(ValueError, match=r"dropout_p = 0\.5 needs the weights"):
        attention(np.eye(2), np.eye(2), np.eye(2), block_size=1, dropout_p=0.5)


def test_is_causal_must_be_a_bool():
    with pytest.raises(TypeError, match="is_causal must be True or False"):
        attention(np.eye(2), np.eye(2), np.eye(2), is_causal=1)


def test_mask_errors_are_unchanged_when_tiled():
    with pytest.raises(ValueError, match="not broadcastable"):
        attention(np.eye(2), np.eye(2), np.eye(2), mask=np.ones((3, 3), bool), block_size=1)
    with pytest.raises(TypeError, match="mask must be boolean"):
        attention(np.eye(2), np.eye(2), np.eye(2), mask=np.ones((2, 2), int), block_size=1)


def test_numeric_exports_callables_only():
    assert all(callable(getattr(numeric, name)) for name in numeric.__all__)
    # backward and multihead import numeric, so numeric does not hand out their functions
    for name in ("attention_backward", "multi_head_attention"):
        assert not hasattr(numeric, name)


def _forked_child(conn, q):  # runs in a forked child: the parent's pool threads are gone there
    conn.send(tiled.tiled_attention(q, q, q, scale=0.125, block_size=(64, 64), workers=2))


def test_a_forked_child_starts_its_own_threads():
    import multiprocessing

    rng = np.random.default_rng(15)
    q = rng.standard_normal((512, 16))
    want = tiled.tiled_attention(q, q, q, scale=0.125, block_size=(64, 64), workers=2)
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_forked_child, args=(child, q))
    proc.start()
    got = parent.recv() if parent.poll(60) else None  # a child waiting on dead threads hangs
    proc.join(10)
    if proc.is_alive():
        proc.kill()
    assert got is not None and proc.exitcode == 0
    assert np.array_equal(got, want)


# ---- the tile state: one object per query block, results unchanged ------------------------


def _cases() -> list[tuple[str, dict[str, object]]]:
    """Inputs that take each branch of the key-tile loop: the fast path, its rejection on
    the first tile, the lazy rescale, the recompute after a −1e9 base, skipped and fully
    masked tiles, both causal alignments."""
    rng = np.random.default_rng(21)
    q, k, v = rng.standard_normal((3, 2, 37, 5))  # (2, 37, 5) each: two heads
    rising = k + np.linspace(0, 40, 37)[:, None] / np.sqrt(5)  # maxima rise: lazy rescales
    pad = np.where(np.arange(37) < 9, -1e9, 0.0)  # the first keys padded: base near −1e9
    sparse = rng.random((37, 37)) < 0.25  # rows whose first tiles are fully masked
    sparse[3] = False  # one fully masked row: zero output, lse = −inf
    return [
        ("plain", dict(q=q, k=k, v=v)),
        ("rising", dict(q=np.abs(q), k=rising, v=v)),
        ("low", dict(q=q, k=k - 30, v=v)),  # first tile's sums below e^−8: redone
        ("padded", dict(q=q, k=k, v=v, mask=np.broadcast_to(pad, (37, 37)).copy())),
        ("sparse", dict(q=q, k=k, v=v, mask=sparse)),
        ("causal", dict(q=q, k=k, v=v, is_causal=True)),
        ("decode", dict(q=q[:, -8:], k=k, v=v, is_causal=True, causal_alignment="bottom-right")),
    ]


@pytest.mark.parametrize(("name", "case"), _cases(), ids=[n for n, _ in _cases()])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_tile_state_keeps_every_branch_within_rounding_of_the_untiled_path(
    name: str, case: dict[str, object], dtype: type
) -> None:
    # numeric.attention without block_size at these sizes is the untiled path, which the
    # tile-state object did not touch: the tiled result must stay within its bound of it.
    args = {n: np.asarray(a).astype(dtype) if n in "qkv" else a for n, a in case.items()}
    want, lse_want = attention_with_lse(**args)  # type: ignore[arg-type]
    for block in ((4, 8), (5, 3), 16):
        got, lse = attention_with_lse(**args, block_size=block)  # type: ignore[arg-type]
        assert _close(got, want, args["v"])
        finite = np.isfinite(lse_want)
        assert np.array_equal(finite, np.isfinite(lse))  # −inf exactly where fully masked
        eps = float(np.finfo(dtype).eps)
        gap = np.abs(lse[finite] - lse_want[finite]).max()
        assert gap <= 64 * eps * (1 + np.abs(lse_want[finite]).max())


@pytest.mark.parametrize(("name", "case"), _cases(), ids=[n for n, _ in _cases()])
def test_a_query_block_alone_gives_the_same_bits(name: str, case: dict[str, object]) -> None:
    # Each query block is computed from its own rows alone: rows 8:16 of a call with 8-row
    # blocks equal, bit for bit, a call on those 8 queries (rows 4:8 with 4-row blocks when
    # there are only 8) (the causal diagonal moved to
    # match). This pins the block indices the tile state carries.
    q, k, v = (np.asarray(case[n]) for n in "qkv")
    mask = case.get("mask")
    r0, r1 = (8, 16) if q.shape[-2] >= 16 else (4, 8)  # a whole query block of 8 or 4 rows
    align = case.get("causal_alignment", "top-left")
    offset = numeric.causal_offset(q.shape[-2], k.shape[-2], align)
    kw = {"scale": 0.5, "block_size": (r1 - r0, 6), "workers": 1}
    causal = bool(case.get("is_causal"))
    whole = tiled.tiled_attention(q, k, v, mask, is_causal=causal, causal_alignment=align, **kw)
    part_mask = None if mask is None else np.asarray(mask)[r0:r1]
    if case.get("is_causal"):  # rows r0:r1 see keys 0..i + offset: bottom-right of a cut
        k_cut, v_cut = k[..., : r1 + offset, :], v[..., : r1 + offset, :]
        part_mask = None if part_mask is None else part_mask[:, : r1 + offset]
        part = tiled.tiled_attention(
            q[..., r0:r1, :], k_cut, v_cut, part_mask, is_causal=True,
            causal_alignment="bottom-right", **kw,
        )  # fmt: skip
    else:
        part = tiled.tiled_attention(q[..., r0:r1, :], k, v, part_mask, **kw)
    assert np.array_equal(whole[..., r0:r1, :], part)


def test_scratch_is_reused_and_never_shared_between_calls():
    """Each thread keeps its tile buffers and [K | 1], [V | 1]ᵀ from one call to the next (no
    page faults per call); calls of several shapes and dtypes, from several threads at once,
    still get their own results."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(3)
    cases = []
    for n, d, dtype in [(300, 8, np.float64), (257, 16, np.float32), (300, 8, np.float32)]:
        q, k, v = (rng.standard_normal((n, d)).astype(dtype) for _ in range(3))
        cases.append((q, k, v, tiled.tiled_attention(q, k, v, block_size=(64, 128))))
    first = tiled._buffers(64, 128, 8, 8, np.dtype(np.float32))
    assert tiled._buffers(64, 128, 8, 8, np.dtype(np.float32)) is first  # kept
    assert tiled._buffers(64, 256, 8, 8, np.dtype(np.float32)) is not first  # resized

    def again(i: int) -> bool:
        q, k, v, want = cases[i % len(cases)]
        got = tiled.tiled_attention(q, k, v, block_size=(64, 128), workers=1 + i % 2)
        return bool(np.array_equal(got, want))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(again, range(24)))
