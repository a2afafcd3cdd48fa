"""Published figures of a real GPU, kept as data with their source, and the roofline.

The roofline model ([Williams, Waterman and Patterson, 2009](https://doi.org/10.1145/1498765.1498785))
bounds the time of a kernel that does ``F`` FLOPs and moves ``B`` bytes to and from memory by
``max(F / peak, B / bandwidth)``: below the *ridge* intensity ``peak / bandwidth`` (FLOPs per
byte) the memory is the limit, above it the arithmetic units are.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["A100_SXM_80GB", "GPU", "bound", "ridge", "roofline_time"]


@dataclass(frozen=True)
class GPU:
    """A GPU's published peak figures.

    ``hbm_bytes_per_s`` is the memory bandwidth, ``peak_flops`` the dense FP16/BF16 tensor-core
    peak (no sparsity), ``sram_bytes_per_sm`` the on-chip memory (L1 and shared) of one
    streaming multiprocessor, ``n_sm`` their number.
    """

    name: str
    hbm_bytes_per_s: float
    peak_flops: float
    sram_bytes_per_sm: int
    n_sm: int
    source: str


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
)
"""The A100 SXM 80GB from NVIDIA's data sheet (bandwidth and FP16 tensor peak) and the
Ampere architecture whitepaper (SMs and on-chip memory); FlashAttention's paper quotes the
same 108 SMs with 192 KB each."""


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
