"""FlashAttention's IO model: counted runs against the formulas, the orders, the backward."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math import io_model
from attention_math.derivations import io
from attention_math.numeric import attention


@settings(max_examples=25, deadline=None)
@given(L=st.integers(1, 70), d=st.integers(1, 12), M=st.integers(4, 400), seed=st.integers(0, 999))
def test_counted_runs_equal_the_counts_and_compute_attention(L, d, M, seed):
    q, k, v = np.random.default_rng(seed).normal(size=(3, L, d))
    o, c = io_model.flash_forward_counted(q, k, v, M)
    np.testing.assert_allclose(o, attention(q, k, v), rtol=1e-12, atol=1e-13)
    assert c.total == io_model.flash_accesses(L, d, M)
    o2, c2 = io_model.standard_forward_counted(q, k, v)
    np.testing.assert_allclose(o2, attention(q, k, v), rtol=1e-12, atol=1e-13)
    assert c2.total == io_model.standard_accesses(L, d)


@pytest.mark.parametrize(
    ("L", "d", "M"), [(64, 8, 128), (96, 16, 512), (48, 4, 64), (256, 32, 2048)]
)
def test_symbolic_counts_equal_counted_runs(L, d, M):
    assert io.check_against_counts(L, d, M)


def test_check_refuses_sizes_that_do_not_divide():
    with pytest.raises(ValueError, match="need"):
        io.check_against_counts(65, 8, 128)


def test_orders():
    const, ratio = io.flash_order()
    assert const == 12 + 16 / io.d
    assert sp.simplify(ratio - io.M / (io.d * (3 * io.d + 4))) == 0
    # standard: Θ(L²) with coefficient 4; flash: Θ(L² d² / M)
    assert sp.limit(io.standard() / io.L**2, io.L, sp.oo) == 4
    assert sp.simplify(sp.limit(io.flash() / (io.L**2 * io.d**2 / io.M), io.L, sp.oo) - const) == 0


def test_flash_makes_fewer_accesses_when_d_squared_is_small_against_M():
    for d, L in ((64, 4096), (64, 16384), (32, 8192)):
        assert io_model.flash_accesses(L, d, 98304) * 4 < io_model.standard_accesses(L, d)


def test_memory_bound_steps_and_compute_bound_fused_kernel():
    from attention_math.hardware import bound

    point = {io.L: 4096, io.d: 64, io.n_bytes: 2, io.M: 98304}
    kinds = {
        s: bound(float(f.subs(point)), float(b.subs(point)))
        for s, (f, b) in io.intensity_steps().items()
    }
    assert kinds == {
        "S = QKᵀ": "memory",
        "P = softmax(S)": "memory",
        "O = PV": "memory",
        "fused (Algorithm 1)": "compute",
    }


def test_each_kind_of_work_is_priced_at_its_own_unit():
    from attention_math import hardware

    gpu = hardware.A100_SXM_80GB
    assert hardware.exp_per_s(gpu) == 16 * 108 * 1.41e9
    point = {io.L: 4096, io.d: 64, io.n_bytes: 2, io.M: 98304}
    work = {s: [float(x.subs(point)) for x in w] for s, w in io.step_work().items()}
    # the totals of step_work are the FLOPs of intensity_steps
    for s, (f, b) in io.intensity_steps().items():
        assert sum(work[s][:3]) == float(f.subs(point)) and work[s][3] == float(b.subs(point))
    mm, ew, ex, n = work["fused (Algorithm 1)"]
    in_turn = hardware.kernel_time(mm, n, elementwise_flops=ew, n_exp=ex)
    overlapped = hardware.kernel_time(mm, n, elementwise_flops=ew, n_exp=ex, overlap=True)
    tensor_only = hardware.roofline_time(mm + ew + ex, n)
    assert in_turn == mm / gpu.peak_flops + ew / gpu.fp32_flops + ex / hardware.exp_per_s(gpu)
    assert overlapped == mm / gpu.peak_flops  # the products are the slowest unit at d = 64
    assert in_turn > 1.7 * tensor_only  # the softmax is not free: the exps alone take half
    assert hardware.kernel_bound(mm, n, elementwise_flops=ew, n_exp=ex) == "tensor cores"
    # a kernel of exponentials only is bound by the special-function units
    assert hardware.kernel_bound(0, 1, n_exp=1e9) == "special-function units"


def test_recomputing_p_is_about_as_fast_as_reading_it_when_the_exp_is_counted():
    from attention_math import hardware

    gpu = hardware.A100_SXM_80GB
    read = 2 / gpu.hbm_bytes_per_s
    product = 2 * 64 / gpu.peak_flops
    exp = 1 / hardware.exp_per_s(gpu)
    fma = 2 / gpu.fp32_flops
    assert io_model.recompute_against_read(64) == pytest.approx(read / (product + fma + exp))
    assert 1 < io_model.recompute_against_read(64) < 1.2  # not the 2.39 of the product alone
    assert io_model.recompute_against_read(64, overlap=True) == pytest.approx(
        read / max(product, exp, fma)
    )
    # wider heads: the product dominates and recomputing loses
    assert io_model.recompute_against_read(256) < 1


def test_a_gpu_without_the_rates_is_refused_for_elementwise_work():
    import dataclasses

    from attention_math import hardware

    bare = dataclasses.replace(
        hardware.A100_SXM_80GB, fp32_flops=None, sfu_per_clock_per_sm=None, boost_clock_hz=None
    )
    assert hardware.kernel_time(1e9, 1e9, bare) == hardware.roofline_time(1e9, 1e9, bare)
    with pytest.raises(ValueError, match="special-function"):
        hardware.kernel_time(1e9, 1e9, bare, n_exp=1)
    with pytest.raises(ValueError, match="FP32"):
        hardware.kernel_time(1e9, 1e9, bare, elementwise_flops=1)


def test_backward_counts():
    assert io.backward_ratio() == sp.Rational(5, 2)
    assert (
        io_model.backward_matmul_flops(8, 4, recompute=True) * 4
        == io_model.backward_matmul_flops(8, 4, recompute=False) * 5
    )
    assert io_model.backward_bytes(1000, 3, recompute=False, n_bytes=4) == 3 * 1000 * 1000 * 4
    assert io_model.backward_bytes(1000, 3, recompute=True) == 4 * 3 * 1000


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_sizes_are_refused(bad):
    with pytest.raises(ValueError):
        io_model.standard_accesses(bad, 4)
    with pytest.raises(ValueError):
        io_model.flash_blocks(4, bad)


def test_counted_runs_refuse_batches_and_unequal_widths():
    with pytest.raises(ValueError, match="one head"):
        io_model.flash_forward_counted(
            np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 4)), 64
        )
    with pytest.raises(ValueError, match="one head"):
        io_model.flash_forward_counted(np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 5)), 64)


@pytest.mark.oracle
def test_flash_counted_matches_pytorch_sdpa(torch):
    q, k, v = np.random.default_rng(5).normal(size=(3, 200, 16))
    o, _ = io_model.flash_forward_counted(q, k, v, M=512)
    ref = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(x) for x in (q, k, v)))
    np.testing.assert_allclose(o, ref.numpy(), rtol=1e-12, atol=1e-13)


@settings(max_examples=25, deadline=None)
@given(L=st.integers(1, 70), d=st.integers(1, 12), M=st.integers(4, 400), seed=st.integers(0, 999))
def test_flash2_counted_run_equals_its_count_and_computes_attention(L, d, M, seed):
    q, k, v = np.random.default_rng(seed).normal(size=(3, L, d))
    o, c = io_model.flash2_forward_counted(q, k, v, M)
    np.testing.assert_allclose(o, attention(q, k, v), rtol=1e-12, atol=1e-13)
    assert c.total == io_model.flash2_accesses(L, d, M)
    # the swapped loops never move more than Algorithm 1 once a block holds more than a row
    if io_model.flash_blocks(d, M)[1] >= 2 and L >= io_model.flash_blocks(d, M)[1]:
        assert c.total <= io_model.flash_accesses(L, d, M)


def test_flash2_against_flash_tends_to_three_halves_for_wide_heads():
    ratio = io.flash2_against_flash()
    dd = io.symbols()["d"]
    assert sp.limit(ratio, dd, sp.oo) == sp.Rational(3, 2)
    assert ratio.subs(dd, 64) == sp.Rational(3, 2) + sp.Rational(1, 32)
    M = 98304  # 192 KiB of 16-bit numbers
    big = io_model.flash_accesses(2**20, 64, M) / io_model.flash2_accesses(2**20, 64, M)
    assert abs(big - float(ratio.subs(dd, 64))) < 2e-3


def test_hopper_gpus_have_a_higher_ridge_and_a_dearer_exponential():
    from attention_math.hardware import (
        A100_SXM_80GB,
        GPUS,
        H100_SXM_80GB,
        H200_SXM_141GB,
        exp_per_s,
        ridge,
    )

    assert GPUS == (A100_SXM_80GB, H100_SXM_80GB, H200_SXM_141GB)
    assert ridge(H100_SXM_80GB) > ridge(H200_SXM_141GB) > ridge(A100_SXM_80GB)
    per_exp = [g.peak_flops / exp_per_s(g) for g in GPUS]
    assert per_exp[1] == per_exp[2] > per_exp[0]
    assert all(
        g.fp8_flops is not None and abs(g.fp8_flops / g.peak_flops - 2) < 1e-3 for g in GPUS[1:]
    )


@pytest.mark.parametrize("d", [16, 32, 64, 96, 128, 256])
def test_the_cap_at_d_bounds_the_score_tile(d):
    M = 98304  # 192 KiB of 16-bit numbers
    b_r, b_c = io_model.flash_blocks(d, M)
    assert b_r * b_c <= M // 4 + b_r  # ⌈M/4d⌉·d: the score tile is about a quarter of SRAM
    assert 2 * b_c * d <= M // 2 + 2 * d  # K_j, V_j: about half
    # the whole tile fits exactly when Q_i, O_i (2 B_r d) leave room: 2d² up to about M/4
    fits = io_model.tile_sram(b_r, b_c, d) <= M
    assert fits == (2 * b_r * d + 2 * b_r <= M - 2 * b_c * d - b_r * b_c)
    assert fits if d <= 64 else True
    # a square tile of B_c rows never fits: its score tile alone is B_c² ≥ (M/4d)² > M here
    assert io_model.tile_sram(b_c, b_c, d) > M or b_c <= d


def test_flash2_tiles_are_algorithm_1s_transposed_and_use_the_same_sram():
    for d, M in ((64, 98304), (128, 98304), (8, 128), (5, 77)):
        b_r, b_c = io_model.flash2_blocks(d, M)
        assert (b_c, b_r) == io_model.flash_blocks(d, M)
        assert b_c <= d
        # the same blocks and score tile; only the running m, λ follow the query rows
        assert (
            io_model.tile_sram(b_r, b_c, d) - 2 * b_r == io_model.tile_sram(b_c, b_r, d) - 2 * b_c
        )
    assert io_model.tile_sram(384, 384, 64) > 98304  # the square tile the model once used


def test_tile_sram_counts_each_block_and_refuses_bad_sizes():
    assert io_model.tile_sram(1, 1, 1) == 2 + 2 + 1 + 2
    assert io_model.tile_sram(2, 3, 4) == 2 * 2 * 4 + 2 * 3 * 4 + 2 * 3 + 2 * 2
    with pytest.raises(ValueError, match="B_c"):
        io_model.tile_sram(2, 0, 4)


def test_every_gpu_says_what_its_sram_figure_counts():
    from attention_math.hardware import GPUS

    for g in GPUS:
        assert "shared memory" in g.sram_counts, g.name
    # the A100's figure counts L1 with shared memory, the Hopper figures shared memory alone
    assert GPUS[0].sram_counts.startswith("L1") and GPUS[1].sram_counts.startswith("shared")


def test_overlapped_the_bound_is_the_slowest_unit_memory_included():
    from attention_math import hardware

    point = {io.L: 4096, io.d: 64, io.n_bytes: 2}
    bounds = {}
    for gpu in hardware.GPUS:
        mm, ew, ex, _ = (
            float(x.subs(point | {io.M: gpu.sram_bytes_per_sm // 2}))
            for x in io.step_work()["fused (Algorithm 1)"]
        )
        nb = 2 * io_model.flash_accesses(4096, 64, gpu.sram_bytes_per_sm // 2)
        work = {"elementwise_flops": ew, "n_exp": ex, "gpu": gpu}
        assert hardware.kernel_bound(mm, nb, **work) == "tensor cores"  # in turn
        memory = nb / gpu.hbm_bytes_per_s
        over = hardware.kernel_time(mm, nb, **work, overlap=True)
        bounds[gpu.name] = hardware.kernel_bound(mm, nb, **work, overlap=True)
        assert (bounds[gpu.name] == "memory") == (over == memory)
    # the H100's tensor cores outrun its HBM at d = 64; the H200's faster HBM does not
    assert bounds[hardware.H100_SXM_80GB.name] == "memory"
    assert bounds[hardware.H200_SXM_141GB.name] == "tensor cores"


def test_the_fa3_papers_exponential_rate_is_the_h100s_at_a_lower_clock():
    from attention_math import hardware

    gpu = hardware.H100_SXM_80GB
    paper = float(hardware.FA3_REPORTED["exp_per_s"])
    clock = paper / (gpu.sfu_per_clock_per_sm * gpu.n_sm)
    assert 0.9 * gpu.boost_clock_hz < clock < gpu.boost_clock_hz  # same rate per clock, slower
    assert gpu.peak_flops / paper > gpu.peak_flops / hardware.exp_per_s(gpu)
