"""The task: random tokens in which a segment repeats, at a place and length that vary.

Each training sequence is uniform random tokens; a segment of ``m`` tokens (``m`` drawn per
sequence) is copied from position ``s₁`` to a later position ``s₂ ≥ s₁ + m`` (both drawn
per sequence). Inside the copy, the next token is the one that followed the current token
last time: only an *induction* mechanism (find the earlier occurrence, read what came
next) predicts it, since the distance ``s₂ − s₁`` changes from sequence to sequence. Every
other token is a fresh draw, unpredictable: its loss stays near ``log vocab``. This is the
task on which Olsson et al. (2022) watch induction heads form.

Held-out evaluation uses the cleanest case, ``repeated_tokens``: ``n`` distinct random
tokens, then the same ``n`` again.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["induction_batch", "repeated_tokens"]


def induction_batch(
    rng: np.random.Generator,
    batch: int,
    length: int,
    vocab: int,
    min_repeat: int = 4,
    max_repeat: int | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """``(tokens, repeat)``: ``(batch, length)`` token ids and a mask of the predictions
    inside a repeat.

    ``repeat[b, i]`` (``(batch, length − 1)``) is True when position ``i``'s next token
    ``tokens[b, i + 1]`` is a copied one that induction predicts (the current token is
    itself in the copy, so its earlier occurrence says what comes next).

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.data import induction_batch
        >>> tokens, repeat = induction_batch(np.random.default_rng(0), 3, 32, 16)
        >>> tokens.shape, repeat.shape, bool(repeat.any(axis=1).all())
        ((3, 32), (3, 31), True)
    """
    top = length // 2 if max_repeat is None else max_repeat
    if not 2 <= min_repeat <= top <= length // 2:
        raise ValueError(
            f"need 2 ≤ min_repeat ≤ max_repeat ≤ length/2, got min_repeat = {min_repeat}, "
            f"max_repeat = {top}, length = {length}"
        )
    tokens = rng.integers(0, vocab, size=(batch, length))  # (batch, L)
    repeat = np.zeros((batch, length - 1), dtype=np.bool_)  # (batch, L−1)
    for b in range(batch):  # one draw after another: a fixed order, so the same seed repeats
        m = int(rng.integers(min_repeat, top + 1))
        s1 = int(rng.integers(0, length - 2 * m + 1))
        s2 = int(rng.integers(s1 + m, length - m + 1))
        tokens[b, s2 : s2 + m] = tokens[b, s1 : s1 + m]
        repeat[b, s2 : s2 + m - 1] = True  # predictions of tokens s2+1 … s2+m−1
    return tokens.astype(np.int64), repeat


def repeated_tokens(rng: np.random.Generator, batch: int, n: int, vocab: int) -> NDArray[np.int64]:
    """``(batch, 2n)``: ``n`` distinct random tokens, then the same ``n`` again.

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.data import repeated_tokens
        >>> t = repeated_tokens(np.random.default_rng(0), 2, 5, 16)
        >>> t.shape, bool((t[:, :5] == t[:, 5:]).all())
        ((2, 10), True)
    """
    if not 1 <= n <= vocab:
        raise ValueError(f"n must be in 1 … vocab = {vocab} (distinct tokens), got {n}")
    half = np.stack([rng.permutation(vocab)[:n] for _ in range(batch)])  # (batch, n)
    return np.concatenate([half, half], axis=1).astype(np.int64)  # (batch, 2n)
