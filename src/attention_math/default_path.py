"""The default path: which of the two paths ``attention(q, k, v)`` takes, and with what tile.

With ``block_size=None`` (the default), [`attention`][attention_math.numeric.attention]
asks [`tiles_pay`][attention_math.default_path.tiles_pay] whether to compute tile by tile
([`attention_math.tiled`][]) or with one score buffer, and takes its tile from
[`default_block`][attention_math.default_path.default_block]. The answer depends on the
machine: the per-core cache size sets the tile, and a one-off timing of both paths (kept per
machine in [`calibration_dir`][attention_math.default_path.calibration_dir]) sets the size
from which tiles run. The constants below are what those decisions read.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_math import tiled
from attention_math._cache import user_cache, write_atomic

__all__ = [
    "BLOCK_Q",
    "CACHE_DIR_ENV",
    "CALIBRATE_ENV",
    "CALIBRATION_FILE",
    "CALIBRATION_LENGTHS",
    "SCORES_BUDGET_BYTES",
    "UNCALIBRATED_CROSSOVER",
    "cache_bytes",
    "calibration_dir",
    "crossover",
    "default_block",
    "machine_key",
    "tiles_pay",
]

_F = NDArray[np.floating]  # a float array (float32 or float64, the working dtype)

SCORES_BUDGET_BYTES = 256 * 2**20
"""When ``attention(block_size=None)`` would allocate more than this many bytes for the
L_q × L_k scores (all batch entries together), it always takes the tiled path; below it,
``tiles_pay`` decides by speed."""

BLOCK_Q = 256
"""Query rows per default tile: enough rows that each GEMM reuses a key tile many times."""

CALIBRATION_LENGTHS = (1024, 2048)
"""The lengths at which the first call with default arguments times the untiled path
against the tiled one (once per dtype and process): the smallest at which tiles win
sets the threshold. Below the first, the untiled path always runs (one small GEMM pair
beats any loop); above the last, tiles always run (they win on time and memory alike)."""

_CALIBRATION_WARMUP = 2
"""Untimed calls of each path per length in that calibration, then timed ones (the best
counts)."""
_CALIBRATION_CALLS = 5

_BLAS_SPIN_SECONDS = 0.15
"""How long OpenBLAS's threads keep spinning after a multi-threaded product (measured on
the benchmark machine: about 0.1 s); the calibration waits this long before timing tiles."""


@functools.cache
def cache_bytes(level: int = 2) -> int | None:
    """The size in bytes of this machine's data (or unified) cache of ``level`` for one core,
    read from Linux's sysfs once per process; ``None`` where it cannot be read.

    Examples:
        >>> from attention_math.default_path import cache_bytes
        >>> size = cache_bytes(2)
        >>> size is None or size >= 64 * 1024
        True
    """
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for index in sorted(root.glob("index*")):
            kind = (index / "type").read_text().strip()
            if int((index / "level").read_text()) == level and kind in ("Data", "Unified"):
                text = (index / "size").read_text().strip().upper()
                unit = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
                return int(text.rstrip("KMG")) * unit
    except (OSError, ValueError):
        return None
    return None


def default_block(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The tile of the default path: 256 query rows × as many keys as make the
    score tile twice the per-core L2 cache (a power of two, 256 to 4096).

    Why twice: the tile is written by one GEMM and read once by ``exp`` and once by the
    next GEMM while the ``(d + 1)``-row operands stay in L1; the benchmark's block sweep
    (``benchmarks/attention_bench.py``) finds the best tile at this size on the machine it
    runs on. Without a readable cache size, ``DEFAULT_BLOCK`` (256, 1024).

    Examples:
        >>> import numpy as np
        >>> from attention_math.default_path import default_block
        >>> bq, bk = default_block(np.dtype(np.float32))
        >>> bq, 256 <= bk <= 4096, bk & (bk - 1) == 0
        (256, True, True)
    """
    l2 = cache_bytes(2)
    if l2 is None:
        return tiled.DEFAULT_BLOCK
    keys = 2 * l2 // (BLOCK_Q * np.dtype(dtype).itemsize)
    return BLOCK_Q, int(min(4096, max(256, 2 ** int(np.log2(max(keys, 1))))))


CACHE_DIR_ENV = "ATTENTION_MATH_CACHE_DIR"
"""Environment variable: where the default path keeps its calibration (empty: in this
process only). Read at each decision, not at import."""
CALIBRATE_ENV = "ATTENTION_MATH_CALIBRATE"
"""Environment variable: ``0`` skips the default path's one-off timing. Read at each decision."""

CALIBRATION_FILE = "default-path.json"
"""The calibration file in ``calibration_dir()``: per machine, per dtype, the per-head score
count from which tiles run."""

UNCALIBRATED_CROSSOVER = 2048**2
"""Per-head score count from which tiles run when the timing is switched off
(``ATTENTION_MATH_CALIBRATE=0``): where they won on the machines measured so far."""

_crossover: dict[str, int] = {}


def tiles_pay(
    scores_shape: tuple[int, ...],
    dtype: np.dtype[Any],
    untiled: Callable[[NDArray[Any], NDArray[Any], NDArray[Any]], object],
) -> bool:
    """Whether the default path should tile scores of ``scores_shape``: always when all the
    scores together exceed ``SCORES_BUDGET_BYTES`` (256 MiB; many small heads too);
    otherwise never below 1024² scores per head, and above that from the per-head score
    count at which tiles were faster on this machine.

    That count is measured once per machine and dtype: the first call that needs it times
    ``untiled(q, k, v)`` against [`tiled_attention`][attention_math.tiled.tiled_attention] at the
    lengths 1024 and 2048 (d = 64, 2 untimed calls of each, then the best of 5; the tiled
    path first; under a second) and
    writes the answer to ``CALIBRATION_FILE`` (``default-path.json``) in
    [`calibration_dir`][attention_math.default_path.calibration_dir], keyed by
    [`machine_key`][attention_math.default_path.machine_key]. Later calls and later processes
    read it back, so on a given machine the path, and with it every bit of the result, no
    longer depends on a timing (the two paths agree within a few ε, not bit for bit). Nothing
    is written anywhere else; if the directory cannot be written, the answer is kept for the
    process only.
    ``ATTENTION_MATH_CALIBRATE=0`` skips the timing (tiles from
    ``UNCALIBRATED_CROSSOVER`` = 2048² scores per head): the
    choice is then a function of the shape alone.

    Examples:
        >>> import numpy as np
        >>> from attention_math.default_path import tiles_pay
        >>> tiles_pay((8, 512, 512), np.dtype(np.float32), lambda q, k, v: None)  # small
        False
        >>> tiles_pay((64, 4096, 4096), np.dtype(np.float32), lambda q, k, v: None)  # 4 GiB
        True
    """
    n_scores = int(np.prod(scores_shape))
    if n_scores * np.dtype(dtype).itemsize > SCORES_BUDGET_BYTES:
        return True
    per_head = scores_shape[-2] * scores_shape[-1]
    if per_head < CALIBRATION_LENGTHS[0] ** 2:
        return False
    return per_head >= crossover(np.dtype(dtype), untiled)


def crossover(
    dtype: np.dtype[Any],
    untiled: Callable[[NDArray[Any], NDArray[Any], NDArray[Any]], object],
) -> int:
    """The per-head score count from which the default path tiles, for ``dtype`` on this
    machine: from this process's memo, else the calibration file, else a fresh timing
    (saved); ``UNCALIBRATED_CROSSOVER`` if ``ATTENTION_MATH_CALIBRATE=0``.

    Examples:
        >>> import os
        >>> import numpy as np
        >>> from unittest import mock
        >>> from attention_math.default_path import UNCALIBRATED_CROSSOVER, crossover
        >>> with mock.patch.dict(os.environ, {"ATTENTION_MATH_CALIBRATE": "0"}):  # no timing
        ...     crossover(np.dtype(np.float32), lambda q, k, v: None) == UNCALIBRATED_CROSSOVER
        True
    """
    if os.environ.get(CALIBRATE_ENV, "1").strip() == "0":
        return UNCALIBRATED_CROSSOVER
    key = np.dtype(dtype).name
    if key not in _crossover:
        saved = _load_calibration().get(key)
        if saved is None:
            saved = _calibrate(np.dtype(dtype), untiled)
            _save_calibration(key, saved)
        _crossover[key] = saved
    return _crossover[key]


def calibration_dir() -> Path | None:
    """Where the default path keeps its calibration: ``$ATTENTION_MATH_CACHE_DIR`` if set
    (``None``, i.e. nowhere, if it is set but empty), else ``attention-math`` under
    ``$XDG_CACHE_HOME`` or ``~/.cache``.

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> from attention_math.default_path import calibration_dir
        >>> with mock.patch.dict(os.environ, {"ATTENTION_MATH_CACHE_DIR": ""}):
        ...     print(calibration_dir())
        None
        >>> with mock.patch.dict(os.environ, {"ATTENTION_MATH_CACHE_DIR": "/tmp/am"}):
        ...     print(calibration_dir())
        /tmp/am
    """
    env = os.environ.get(CACHE_DIR_ENV)
    if env is not None:
        return Path(env) if env.strip() else None
    return user_cache()


@functools.cache
def machine_key() -> str:
    """What the calibration depends on: CPU model, core count, L2 size, NumPy and its BLAS.

    Examples:
        >>> from attention_math.default_path import machine_key
        >>> "numpy" in machine_key()
        True
    """
    cpu = "unknown cpu"
    with contextlib.suppress(OSError, StopIteration):
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    blas = "unknown blas"
    with contextlib.suppress(Exception):  # show_config's layout is not a stable API
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{cfg.get('name')} {cfg.get('version')}"
    return f"{cpu}; {os.cpu_count()} cores; L2 {cache_bytes(2)}; numpy {np.__version__}; {blas}"


def _load_calibration() -> dict[str, int]:
    """This machine's entry of the calibration file ({} if there is none or it is unreadable)."""
    folder = calibration_dir()
    if folder is None:
        return {}
    try:
        entry = json.loads((folder / CALIBRATION_FILE).read_text(encoding="utf-8"))[machine_key()]
        return {str(k): int(v) for k, v in entry.items() if int(v) > 0}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _save_calibration(dtype_name: str, value: int) -> None:
    """Add ``dtype_name: value`` to this machine's entry, atomically (write, then rename)."""
    folder = calibration_dir()
    if folder is None:
        return
    path = folder / CALIBRATION_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            doc = doc if isinstance(doc, dict) else {}
        except (OSError, ValueError):
            doc = {}
        entry = doc.get(machine_key())
        doc[machine_key()] = {**(entry if isinstance(entry, dict) else {}), dtype_name: value}
        write_atomic(path, json.dumps(doc, indent=1, sort_keys=True).encode())
    except OSError:
        return  # read-only or full: the answer stays in this process (_crossover)


def _calibrate(
    dtype: np.dtype[Any],
    untiled: Callable[[NDArray[Any], NDArray[Any], NDArray[Any]], object],
) -> int:
    """The smallest per-head score count of ``CALIBRATION_LENGTHS`` at which tiles win.

    The tiled path is timed first, at every length, after a pause: after a multi-threaded
    matrix product (the untiled path's, or the caller's just before) OpenBLAS's threads keep
    spinning for about 0.1 s and take a core from the tiled path's threads, which then run up
    to twice as slow. Each path gets untimed calls, then the best of several counts.
    """
    rng = np.random.default_rng(0)
    block = default_block(dtype)
    scale = dtype.type(0.125)
    problems: list[tuple[_F, _F, _F]] = []
    for n in CALIBRATION_LENGTHS:
        q, k, v = (rng.standard_normal((n, 64)).astype(dtype) for _ in range(3))  # (n, 64)
        problems.append((q, k, v))

    def best(run: Callable[[], object]) -> float:
        times = []
        for rep in range(_CALIBRATION_WARMUP + _CALIBRATION_CALLS):
            t0 = time.perf_counter()
            run()
            if rep >= _CALIBRATION_WARMUP:
                times.append(time.perf_counter() - t0)
        return min(times)

    time.sleep(_BLAS_SPIN_SECONDS)
    tiled_s = [
        best(functools.partial(tiled.tiled_attention, q, k, v, scale=scale, block_size=block))
        for q, k, v in problems
    ]
    untiled_s = [best(functools.partial(untiled, q, k, v)) for q, k, v in problems]
    for n, t, u in zip(CALIBRATION_LENGTHS, tiled_s, untiled_s, strict=True):
        if t <= u:
            return n * n
    return (2 * CALIBRATION_LENGTHS[-1]) ** 2
