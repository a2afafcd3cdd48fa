"""The trained model, kept on disk under a hash of everything that made it.

Training is deterministic (see ``attention_math.toy.train``), so its result is a function
of the code that trains, its random seed and hyper-parameters, the model's shapes and the NumPy
that computes. Their SHA-256 names a file in the user cache
(``attention_math._cache.user_cache() / "toy"``): a second ``load()`` with the same inputs
reads it back instead of training; a change to any of them trains afresh.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from attention_math._cache import user_cache, write_atomic
from attention_math.toy.model import Config, Params, ToyModel, weight_names
from attention_math.toy.train import Hyper, train

__all__ = ["cache_key", "cache_path", "load"]

_SRC = Path(__file__).resolve().parents[1]  # src/attention_math
# the code whose every line can change the trained weights
_CODE = [
    "toy/model.py",
    "toy/grad.py",
    "toy/data.py",
    "toy/train.py",
    "backward.py",
    "multihead.py",
    "numeric.py",
    "positional.py",
    "_checks.py",
]


def cache_key(config: Config, hyper: Hyper) -> str:
    """SHA-256 (hex) of the training code, the NumPy version, ``config`` and ``hyper``.

    Examples:
        >>> from attention_math.toy.cache import cache_key
        >>> from attention_math.toy.model import Config
        >>> from attention_math.toy.train import Hyper
        >>> cache_key(Config(), Hyper()) == cache_key(Config(), Hyper(seed=1))
        False
    """
    h = hashlib.sha256()
    for name in _CODE:
        h.update(name.encode())
        h.update((_SRC / name).read_bytes())
    meta = {"numpy": np.__version__, "config": asdict(config), "hyper": hyper.as_dict()}
    h.update(json.dumps(meta, sort_keys=True).encode())
    return h.hexdigest()


def cache_path(config: Config, hyper: Hyper) -> Path:
    """Where the model trained with ``config`` and ``hyper`` is kept.

    Examples:
        >>> from attention_math.toy.cache import cache_path
        >>> from attention_math.toy.model import Config
        >>> from attention_math.toy.train import Hyper
        >>> cache_path(Config(), Hyper()).suffix
        '.npz'
    """
    return user_cache() / "toy" / f"{cache_key(config, hyper)[:32]}.npz"


def _save(model: ToyModel, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"param:{n}": a for n, a in model.params.as_dict().items()}
    arrays |= {f"history:{n}": a for n, a in model.history.items()}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    write_atomic(path, buffer.getvalue())  # a reader never sees half a file


def _read(path: Path, config: Config, hyper: Hyper) -> ToyModel | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            params = Params.from_dict({n: z[f"param:{n}"] for n in weight_names(config)})
            history = {k.split(":", 1)[1]: z[k] for k in z.files if k.startswith("history:")}
    except (OSError, KeyError, ValueError):  # missing, or damaged: train again
        return None
    return ToyModel(config, params, history, hyper.as_dict())


def load(
    config: Config | None = None, hyper: Hyper | None = None, *, use_cache: bool = True
) -> ToyModel:
    """The trained model: read from the cache, or trained (≈ 30 s of CPU) and cached.

    Args:
        config: the model's shapes (default ``Config()``).
        hyper: the training hyper-parameters, seed included (default ``Hyper()``).
        use_cache: ``False`` trains without reading or writing the cache.

    Examples:
        A tiny model trained for two steps (``load()`` alone gives the page's model):

        >>> from attention_math.toy import Config, Hyper, load
        >>> small, short = Config(vocab=8, d_model=8, n_ctx=12), Hyper(steps=2, batch=2, length=12)
        >>> model = load(small, short, use_cache=False)
        >>> model.attention_patterns([1, 2, 3, 1, 2, 3]).shape  # (layers, heads, L, L)
        (2, 2, 6, 6)
    """
    config = Config() if config is None else config
    hyper = Hyper() if hyper is None else hyper
    if not use_cache:
        return train(config, hyper)
    path = cache_path(config, hyper)
    model = _read(path, config, hyper) if path.exists() else None
    if model is None:
        model = train(config, hyper)
        _save(model, path)
    return model
