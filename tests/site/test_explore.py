"""The explorables' data (attention_site.explore): each frame is what the package computes
at that stop, and bad input is refused with a message naming the argument."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from attention_math.derivations.decoding import MODELS
from attention_math.numeric import causal_mask, softmax
from attention_math.positional import alibi_bias, alibi_slopes, rope
from attention_math.running import numeric_forward
from attention_site import explore


@pytest.mark.slow  # a second or more of CPU: left out of the quick loop
def test_the_eight_names_of_the_issue():
    assert set(explore.EXPLORABLES) == {
        *("temperature", "scaling", "mask", "window"),
        *("kv-heads", "rope", "alibi", "online-softmax"),
    }
    for name, make in explore.EXPLORABLES.items():
        ex = make()
        assert ex.name == name
        # the starting stop of every slider has a frame
        assert tuple(s.start for s in ex.sliders) in ex.frames


def test_temperature_is_softmax_of_the_running_row_divided_by_t():
    ex = explore.temperature()
    row = numeric_forward()["S"][0]
    previous_max, previous_h = math.inf, -math.inf
    for t in explore.TEMPERATURES:
        f = ex.frame(T=t)
        p = softmax(row / t)
        np.testing.assert_array_equal(f["weights"], p)
        assert f["max-weight"] == p.max()
        assert f["entropy"] == pytest.approx(-(p * np.log(p)).sum(), rel=1e-14)
        # hotter: flatter weights, more entropy, never beyond the uniform log n
        assert f["max-weight"] < previous_max and f["entropy"] > previous_h
        assert f["entropy"] <= math.log(3)
        previous_max, previous_h = f["max-weight"], f["entropy"]


def test_scaling_keeps_unit_variance_only_when_divided():
    ex = explore.scaling([1, 64, 1024], n_samples=4000, n_queries=100)
    for d in (1, 64, 1024):
        f = ex.frame(d_k=d)
        # the sample std of 4000 draws is within 5 standard errors (≈ σ/√(2n)·√2 here)
        assert abs(f["std-scaled"] - 1) < 5 * math.sqrt(2 / 4000) * 1.5
        assert abs(f["std-unscaled"] / math.sqrt(d) - 1) < 5 * math.sqrt(2 / 4000) * 1.5
        for tag in ("scaled", "unscaled"):
            assert sum(f[f"hist-{tag}"]) + f[f"outside-{tag}"] == pytest.approx(1, abs=1e-12)
    big = ex.frame(d_k=1024)
    assert big["max-weight-unscaled"] > 0.9 > big["max-weight-scaled"]
    assert big["outside-unscaled"] > 0.5 > big["outside-scaled"]


def test_scaling_stop_does_not_depend_on_the_other_stops():
    one = explore.scaling([64], n_samples=500, n_queries=20).frame(d_k=64)
    two = explore.scaling([1, 64], n_samples=500, n_queries=20).frame(d_k=64)
    assert one == two


def test_mask_frames_are_the_causal_mask_and_its_weights():
    ex = explore.mask(5)
    assert len(ex.frames) == 2 * 5 * 5
    for (a, i, j), f in ex.frames.items():
        alignment = ("top-left", "bottom-right")[a]
        m = causal_mask(i + 1, j + 1, causal_alignment=alignment)
        np.testing.assert_array_equal(f["mask"], m.astype(int))
        p = np.array(f["weights"])
        assert (p[~m] == 0).all()
        sums = p.sum(axis=1)
        np.testing.assert_allclose(sums[m.any(axis=1)], 1, rtol=1e-14)
        assert f["empty-rows"] == int((sums == 0).sum())
        assert f["offset"] == (0 if a == 0 else (j + 1) - (i + 1))


def test_window_receptive_field_is_the_derived_one_at_every_stop():
    ex = explore.window(10, [1, 2, 3, 5], [1, 2, 3])
    for f in ex.frames.values():
        assert f["receptive-field"] == f["formula"] == min(10, f["n_layers"] * (f["w"] - 1) + 1)
        assert len(f["reach"]) == f["n_layers"]
        # each layer reaches at least as far back as the one before
        for a, b in zip(f["reach"], f["reach"][1:], strict=False):
            assert all(y >= x for x, y in zip(a, b, strict=True))


def test_kv_heads_bytes_from_the_model_table():
    model = next(m for m in MODELS if m.name == "Llama 2 70B")
    ex = explore.kv_heads("Llama 2 70B")
    assert ex.sliders[0].stops == (1, 2, 4, 8, 16, 32, 64)
    for f in ex.frames.values():
        per_token = 2 * model.n_layers * f["h_kv"] * model.d_head * 2  # keys and values, fp16
        assert f["bytes-per-token"] == per_token
        assert f["context-bytes"] == per_token * model.context
        assert f["saving"] == 1 - f["h_kv"] / 64
        assert f["published"] == (f["h_kv"] == model.n_kv_heads)
    assert ex.frame(h_kv=64)["saving"] == 0


def test_rope_score_depends_on_the_offset_only():
    q, k = numeric_forward()["Q"][0], numeric_forward()["K"][2]
    ex = explore.rope([0, 3, 7], [100, 10000], max_offset=10)
    for base in (100, 10000):
        for p in (0, 3, 7):
            f = ex.frame(p=p, base=base)
            assert f["score"] == pytest.approx(f["curve"][p], rel=1e-13)
            # the same offset elsewhere on the line gives the same score (the lesson)
            qa = rope(q[None], [p + 5], base=base)[0]
            ka = rope(k[None], [5], base=base)[0]
            assert qa @ ka / 2 == pytest.approx(f["score"], rel=1e-12)
            # a rotation keeps each pair's length
            for before, after in zip(f["pairs"], f["rotated"], strict=True):
                assert math.hypot(*after) == pytest.approx(math.hypot(*before), rel=1e-14)
    # at offset 0 the score is the running example's unrotated score S[0, 2]
    assert ex.frame(p=0, base=100)["score"] == numeric_forward()["S"][0, 2]


def test_alibi_slopes_and_bias_rows():
    ex = explore.alibi(12, 6)
    assert all(h <= n for n, h in ex.frames)  # the head never beyond the head count
    assert len(ex.frames) == 12 * 13 // 2
    for f in ex.frames.values():
        n, head = f["n_heads"], f["head"]
        assert f["slope"] == alibi_slopes(n)[head - 1] == 2.0 ** -float(Fraction(f["exponent"]))
        np.testing.assert_array_equal(f["bias"], alibi_bias(n, 6)[head - 1, -1])
        assert f["bias"][-1] == 0 and f["bias"][0] == -5 * f["slope"]
    with pytest.raises(ValueError, match="beyond a slider's limit"):
        ex.frame(n_heads=2, head=3)


def test_online_softmax_ends_at_the_softmax_at_every_tile_size():
    ex = explore.online_softmax(12)
    for f in ex.frames.values():
        assert f["tiles"] == math.ceil(12 / f["block_size"]) == len(f["m"]) == len(f["ell"])
        assert f["output"] == pytest.approx(f["reference"], rel=1e-14)
        # the running maximum never decreases, and ends at the row's maximum
        assert all(a <= b for a, b in zip(f["m"], f["m"][1:], strict=False))
        assert f["m"][-1] == max(f["scores"])
        s = np.array(f["scores"])
        assert f["ell"][-1] == pytest.approx(np.exp(s - s.max()).sum(), rel=1e-14)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: explore.temperature([[0.0, 1.0]]), "scores must be a non-empty finite array"),
        (lambda: explore.temperature([0.0, math.inf]), "scores must be a non-empty finite"),
        (lambda: explore.temperature([0.0], [1, -2]), "temperatures must be increasing positive"),
        (lambda: explore.temperature(["a"]), "scores must be real numbers"),
        (lambda: explore.scaling([0, 4]), "dims must be increasing positive integers"),
        (lambda: explore.scaling([4], span=-1), "span must be a positive number"),
        (lambda: explore.scaling([4], n_samples=0), "n_samples must be a positive integer"),
        (lambda: explore.mask(0), "max_len must be increasing positive integers"),
        (lambda: explore.window(8, [2, 2]), "windows must be increasing positive integers"),
        (lambda: explore.kv_heads("GPT-5"), "model must be one of"),
        (lambda: explore.rope([-1, 0]), "positions must be non-negative"),
        (lambda: explore.rope(bases=[1]), "bases must be above 1"),
        (lambda: explore.alibi(2.5), "max_heads must be increasing positive integers"),  # type: ignore[arg-type]
        (lambda: explore.online_softmax(True), "length must be increasing positive integers"),
        (lambda: explore.temperature().frame(T=0.33), r"T = 0.33 is not one of its stops"),
        (lambda: explore.temperature().frame(t=1), r"give a value for each slider \['T'\]"),
    ],
)
def test_bad_input_is_refused_by_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()
