"""Published figures of a real GPU, kept as data with their source, and the roofline.

The roofline model ([Williams, Waterman and Patterson, 2009](https://doi.org/10.1145/1498765.1498785))
bounds the time of a kernel that does ``F`` FLOPs and moves ``B`` bytes to and from memory by
``max(F / peak, B / bandwidth)``: below the *ridge* intensity ``peak / bandwidth`` (FLOPs per
byte) the memory is the limit, above it the arithmetic units are.

Not all of a kernel's arithmetic runs on the tensor cores that ``peak_flops`` counts. The
softmax's exponentials run on the special-function units (SFUs), far slower, and its other
elementwise work (the maximum, subtraction, sum, division) on the FP32 cores;
[`kernel_time`][attention_math.hardware.kernel_time] prices each at its own rate. On an A100 an
exponential costs as long as about 128 FLOPs of matrix product: a head of width 64 spends as
much time on the exponential of a score as on the product that made it, which is why
FlashAttention-2 cut the non-matmul work and FlashAttention-3
([Shah et al., 2024](https://arxiv.org/abs/2407.08608)) overlaps the exponentials with the
products.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "A100_SXM_80GB",
    "FA3_REPORTED",
    "GPU",
    "GPUS",
    "H100_SXM_80GB",
    "H200_SXM_141GB",
    "bound",
    "exp_per_s",
    "kernel_bound",
    "kernel_time",
    "ridge",
    "roofline_time",
]


@dataclass(frozen=True)
class GPU:
    """A GPU's published peak figures.

    ``hbm_bytes_per_s`` is the memory bandwidth, ``peak_flops`` the dense FP16/BF16 tensor-core
    peak (no sparsity), ``sram_bytes_per_sm`` the on-chip memory of one streaming
    multiprocessor as its whitepaper gives it, and ``sram_counts`` what that figure counts (the
    whitepapers do not count alike: L1 and shared memory together, or shared memory alone);
    ``n_sm`` the number of SMs. ``fp32_flops`` is the peak of the FP32
    (CUDA) cores, where elementwise work runs (a fused multiply-add counted as 2 FLOPs);
    ``sfu_per_clock_per_sm`` the special-function results (``exp2``, ``log2``, reciprocal, …)
    one SM gives per clock, and ``boost_clock_hz`` the clock: together the exponentials per
    second, `exp_per_s`. ``fp8_flops`` is the dense FP8 tensor-core peak, where the GPU has
    one. ``None`` where not given.
    """

    name: str
    hbm_bytes_per_s: float
    peak_flops: float
    sram_bytes_per_sm: int
    n_sm: int
    source: str
    fp32_flops: float | None = None
    sfu_per_clock_per_sm: int | None = None
    boost_clock_hz: float | None = None
    fp8_flops: float | None = None
    sram_counts: str = ""


A100_SXM_80GB = GPU(
    name="NVIDIA A100 SXM 80GB",
    hbm_bytes_per_s=2039e9,  # data sheet: GPU memory bandwidth 2,039 GB/s (SXM, 80GB HBM2e)
    peak_flops=312e12,  # data sheet: FP16 Tensor Core 312 TFLOPS (624 with sparsity)
    sram_bytes_per_sm=192 * 1024,  # Ampere whitepaper: 192 KB of L1/shared memory per SM
    n_sm=108,  # Ampere whitepaper: 108 SMs on A100
    source=(
        "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
    ),
    fp32_flops=19.5e12,  # data sheet: FP32 19.5 TFLOPS
    # CUDA C++ Programming Guide, throughput of arithmetic instructions, compute capability
    # 8.0: 16 results per clock per SM for exp2f, __log2f, reciprocal, __sinf, …
    sfu_per_clock_per_sm=16,
    boost_clock_hz=1.41e9,  # Ampere whitepaper: A100 boost clock 1410 MHz
    sram_counts="L1 and shared memory together (shared memory at most 164 KiB of it)",
)
"""The A100 SXM 80GB from NVIDIA's data sheet (bandwidth, FP16 tensor and FP32 peaks), the
Ampere architecture whitepaper (SMs, on-chip memory, clock) and the
[CUDA C++ Programming Guide](https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions)
(special-function throughput); FlashAttention's paper quotes the same 108 SMs with 192 KB
each."""

_HOPPER_WHITEPAPER = "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"

H100_SXM_80GB = GPU(
    name="NVIDIA H100 SXM 80GB",
    hbm_bytes_per_s=3.35e12,  # data sheet: GPU memory bandwidth 3.35 TB/s (SXM, HBM3)
    peak_flops=989.4e12,  # whitepaper: FP16 tensor 989.4 TFLOPS dense (1,979 with sparsity)
    sram_bytes_per_sm=228 * 1024,  # whitepaper: shared memory configurable up to 228 KB per SM
    n_sm=132,  # whitepaper: 132 SMs on H100 SXM5
    source="https://www.nvidia.com/en-us/data-center/h100/",
    fp32_flops=66.9e12,  # whitepaper: FP32 66.9 TFLOPS
    # CUDA C++ Programming Guide, compute capability 9.0: 16 results per clock per SM for
    # exp2f, __log2f, reciprocal, … (as on 8.0)
    sfu_per_clock_per_sm=16,
    boost_clock_hz=1.98e9,  # whitepaper: H100 SXM5 boost clock 1.98 GHz (non-tensor work)
    fp8_flops=1978.9e12,  # whitepaper: FP8 tensor 1,978.9 TFLOPS dense
    sram_counts="shared memory at most (L1 and shared memory together: 256 KiB)",
)
"""The H100 SXM 80GB (Hopper) from NVIDIA's data sheet and the
[Hopper architecture whitepaper](https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper):
the GPU FlashAttention-3 ([Shah et al., 2024](https://arxiv.org/abs/2407.08608)) was built for."""

H200_SXM_141GB = GPU(
    name="NVIDIA H200 SXM 141GB",
    hbm_bytes_per_s=4.8e12,  # data sheet: GPU memory bandwidth 4.8 TB/s (HBM3e)
    peak_flops=989.4e12,  # data sheet: FP16 tensor 1,979 TFLOPS with sparsity, half dense
    sram_bytes_per_sm=228 * 1024,  # the same GH100 chip as the H100 SXM
    n_sm=132,
    source="https://www.nvidia.com/en-us/data-center/h200/",
    fp32_flops=66.9e12,  # data sheet: FP32 67 TFLOPS
    sfu_per_clock_per_sm=16,
    boost_clock_hz=1.98e9,
    fp8_flops=1978.9e12,  # data sheet: FP8 tensor 3,958 TFLOPS with sparsity, half dense
    sram_counts="shared memory at most (L1 and shared memory together: 256 KiB)",
)
"""The H200 SXM 141GB from NVIDIA's data sheet: the H100's chip with faster, larger memory
(HBM3e), so the same peaks with 1.4 times the bandwidth."""

FA3_REPORTED: dict[str, float | str] = {
    "fp16_flops_per_s": 740e12,  # abstract: "FP16 reaching up to 740 TFLOPs/s"
    "fp8_flops_per_s": 1.2e15,  # abstract: "FP8 reaching close to 1.2 PFLOPs/s"
    # §3.2: the H100 SXM5 has "989 TFLOPS of FP16 matmul but only 3.9 TFLOPS of special
    # functions"
    "exp_per_s": 3.9e12,
    "source": "https://arxiv.org/abs/2407.08608",
}
"""FlashAttention-3's throughput on the H100 as its paper reports it (a published claim, kept
as data: the page sets it beside the peaks above)."""

GPUS = (A100_SXM_80GB, H100_SXM_80GB, H200_SXM_141GB)
"""The GPUs whose figures the pages set side by side: Ampere, then Hopper twice."""


def ridge(gpu: GPU = A100_SXM_80GB) -> float:
    """The ridge intensity ``peak / bandwidth`` in FLOPs per byte.

    Examples:
        >>> from attention_math.hardware import ridge
        >>> round(ridge(), 1)  # an A100 must do ~153 FLOPs per byte it reads to be busy
        153.0
    """
    return gpu.peak_flops / gpu.hbm_bytes_per_s


def _check(flops: float, n_bytes: float) -> None:
    for name, x in (("flops", flops), ("n_bytes", n_bytes)):
        if isinstance(x, bool) or not isinstance(x, int | float) or not x >= 0:
            raise ValueError(f"{name} must be a non-negative number, got {x!r}")


def roofline_time(flops: float, n_bytes: float, gpu: GPU = A100_SXM_80GB) -> float:
    """The roofline's lower bound on the time in seconds: ``max(flops/peak, n_bytes/bandwidth)``.

    Raises:
        ValueError: a negative or non-numeric count.

    Examples:
        >>> from attention_math.hardware import roofline_time
        >>> roofline_time(312e12, 0)  # one second of peak arithmetic
        1.0
    """
    _check(flops, n_bytes)
    return max(flops / gpu.peak_flops, n_bytes / gpu.hbm_bytes_per_s)


def bound(flops: float, n_bytes: float, gpu: GPU = A100_SXM_80GB) -> str:
    """``"memory"`` when the bytes take longer than the FLOPs at peak, else ``"compute"``.

    Raises:
        ValueError: a negative or non-numeric count.

    Examples:
        >>> from attention_math.hardware import bound
        >>> bound(2e9, 2e9), bound(2e12, 2e9)  # 1 and 1000 FLOPs per byte
        ('memory', 'compute')
    """
    _check(flops, n_bytes)
    return "memory" if n_bytes / gpu.hbm_bytes_per_s > flops / gpu.peak_flops else "compute"


def exp_per_s(gpu: GPU = A100_SXM_80GB) -> float:
    """Exponentials per second on the special-function units: per SM per clock, times SMs,
    times the clock.

    Raises:
        ValueError: the GPU's special-function figures are not given.

    Examples:
        >>> from attention_math.hardware import exp_per_s
        >>> round(exp_per_s() / 1e12, 2)  # A100: 16 × 108 SMs × 1.41 GHz, ~1/128 of the matmul peak
        2.44
    """
    if gpu.sfu_per_clock_per_sm is None or gpu.boost_clock_hz is None:
        raise ValueError(f"{gpu.name}: no special-function throughput given")
    return gpu.sfu_per_clock_per_sm * gpu.n_sm * gpu.boost_clock_hz


def _unit_times(
    matmul_flops: float, n_bytes: float, gpu: GPU, elementwise_flops: float, n_exp: float
) -> dict[str, float]:
    _check(matmul_flops, n_bytes)
    _check(elementwise_flops, n_exp)
    times = {"tensor cores": matmul_flops / gpu.peak_flops}
    if elementwise_flops:
        if gpu.fp32_flops is None:
            raise ValueError(f"{gpu.name}: no FP32 peak given for the elementwise FLOPs")
        times["FP32 cores"] = elementwise_flops / gpu.fp32_flops
    if n_exp:
        times["special-function units"] = n_exp / exp_per_s(gpu)
    times["memory"] = n_bytes / gpu.hbm_bytes_per_s
    return times


def kernel_time(
    matmul_flops: float,
    n_bytes: float,
    gpu: GPU = A100_SXM_80GB,
    *,
    elementwise_flops: float = 0,
    n_exp: float = 0,
    overlap: bool = False,
) -> float:
    """A lower bound on a kernel's time in seconds with each kind of work at its own unit's
    peak: matrix products on the tensor cores, elementwise FLOPs on the FP32 cores,
    exponentials on the special-function units, bytes at the memory bandwidth.

    With ``overlap=False`` the arithmetic units take turns (their times add) while the memory
    traffic overlaps them: ``max(Σ compute times, bytes / bandwidth)``. With ``overlap=True``
    every unit runs at once, the best a schedule can do: the largest of the four times.
    Without elementwise work and exponentials both are `roofline_time`.

    Raises:
        ValueError: a negative or non-numeric count, or a rate the GPU does not give.

    Examples:
        >>> from attention_math.hardware import kernel_time, roofline_time
        >>> kernel_time(312e12, 0) == roofline_time(312e12, 0)
        True
        >>> round(kernel_time(312e12, 0, n_exp=2.4e12), 2)  # one second of products, then exps
        1.99
        >>> round(kernel_time(312e12, 0, n_exp=2.4e12, overlap=True), 2)  # at the same time
        1.0
    """
    times = _unit_times(matmul_flops, n_bytes, gpu, elementwise_flops, n_exp)
    if overlap:
        return max(times.values())
    return max(sum(t for unit, t in times.items() if unit != "memory"), times["memory"])


def kernel_bound(
    matmul_flops: float,
    n_bytes: float,
    gpu: GPU = A100_SXM_80GB,
    *,
    elementwise_flops: float = 0,
    n_exp: float = 0,
    overlap: bool = False,
) -> str:
    """``"memory"`` when the bytes take longer than the arithmetic (the units taking turns, as
    in `kernel_time`), else the unit whose work takes longest: ``"tensor cores"``,
    ``"FP32 cores"`` or ``"special-function units"``. With ``overlap=True`` every unit runs
    at once, and the bound is the one unit, memory included, that takes longest.

    Raises:
        ValueError: as `kernel_time`.

    Examples:
        >>> from attention_math.hardware import kernel_bound
        >>> kernel_bound(2e9, 2e9), kernel_bound(2e12, 2e9), kernel_bound(1e9, 1e6, n_exp=1e9)
        ('memory', 'tensor cores', 'special-function units')
        >>> kernel_bound(2e9, 1.6e7, n_exp=1e7)  # products and exps in turn outlast the bytes
        'tensor cores'
        >>> kernel_bound(2e9, 1.6e7, n_exp=1e7, overlap=True)  # overlapped, each one does not
        'memory'
    """
    times = _unit_times(matmul_flops, n_bytes, gpu, elementwise_flops, n_exp)
    if overlap:
        return max(times, key=lambda unit: times[unit])
    memory = times.pop("memory")
    if memory > sum(times.values()):
        return "memory"
    return max(times, key=lambda unit: times[unit])
