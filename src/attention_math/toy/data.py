"""The task: random tokens in which segments repeat, at lengths and places that vary.

Each training sequence is uniform random tokens in which pairs are laid down from left to
right: a segment of ``m`` tokens (``m`` drawn per pair, short ones more often), then its copy
right after it, then
0 … ``GAP`` fresh tokens before the next pair, as long as one fits. Inside a copy, the next
token is the one that followed the current token last time: only an *induction* mechanism
(find the earlier occurrence, read what came next) predicts it, since the distance ``m``
changes from pair to pair. Every other token is a fresh draw, unpredictable: its loss stays
near ``log vocab``. This is the task on which Olsson et al. (2022) watch induction heads
form.

Why pairs laid down from the left: in random tokens a token often matches an earlier one
by chance, and the model learns how far back a match is worth copying from. With one copy
per sequence, at a distance drawn anywhere up to the sequence's length, most matches a few
places back were chance, and the trained model copied little from them: repeats of 4 to 8
tokens went unpredicted. Pairs make real copies common at every distance from
``min_repeat`` to ``length / 2``; drawing ``m`` with probability ∝ ``m^(−power)`` (``power =
1/2`` by default) makes short ones commoner still, since a short pair holds few copied tokens
and a chance match a few places back is as likely as a far one.

Held-out evaluation uses the cleanest case, ``repeated_tokens``: ``n`` distinct random
tokens (after an optional prefix of other random tokens), then the same ``n`` again.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["GAP", "induction_batch", "repeated_tokens"]

GAP = 4
"""At most this many fresh tokens before each segment–copy pair."""


def induction_batch(
    rng: np.random.Generator,
    batch: int,
    length: int,
    vocab: int,
    min_repeat: int = 2,
    max_repeat: int | None = None,
    power: float = 0.5,
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """``(tokens, repeat)``: ``(batch, length)`` token ids and a mask of the predictions
    inside a copy.

    ``repeat[b, i]`` (``(batch, length − 1)``) is True when position ``i``'s next token
    ``tokens[b, i + 1]`` is a copied one that induction predicts (the current token is
    itself in the copy, so its earlier occurrence says what comes next). Each sequence
    holds at least one pair (segment, copy); ``m`` is drawn from ``min_repeat …
    max_repeat`` (default ``length // 2``) with probability ∝ ``m^(−power)`` (``power = 0``:
    uniform).

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
    if not (np.isfinite(power) and power >= 0):
        raise ValueError(f"power must be a finite number ≥ 0, got {power!r}")
    ms = np.arange(min_repeat, top + 1)  # the segment lengths
    weight = ms.astype(np.float64) ** -power
    weight /= weight.sum()
    tokens = rng.integers(0, vocab, size=(batch, length))  # (batch, L)
    repeat = np.zeros((batch, length - 1), dtype=np.bool_)  # (batch, L−1)
    for b in range(batch):  # one draw after another: a fixed order, so the same seed repeats
        at = int(rng.integers(0, GAP + 1))  # where the next pair starts
        placed = False
        while True:
            m = int(rng.choice(ms, p=weight))
            if at + 2 * m > length:
                if placed:
                    break
                at = length - 2 * m  # the first pair always fits: move it left
            s2 = at + m  # the copy's start
            tokens[b, s2 : s2 + m] = tokens[b, at:s2]
            repeat[b, s2 : s2 + m - 1] = True  # predictions of tokens s2+1 … s2+m−1
            placed = True
            at = s2 + m + int(rng.integers(0, GAP + 1))
    return tokens.astype(np.int64), repeat


def repeated_tokens(
    rng: np.random.Generator, batch: int, n: int, vocab: int, prefix: int = 0
) -> NDArray[np.int64]:
    """``(batch, prefix + 2n)``: ``prefix`` random tokens, then ``n`` more, then those ``n``
    again; all of the first ``prefix + n`` distinct, so the repeat is the only recurrence.

    Args:
        rng: the generator every draw comes from (one permutation of the vocab a sequence).
        batch: sequences.
        n: the repeated segment's length.
        vocab: number of distinct tokens.
        prefix: random tokens before the segment (none by default).

    Raises:
        ValueError: ``n < 1``, ``prefix < 0`` or ``prefix + n > vocab`` (not enough distinct
            tokens).

    Examples:
        >>> import numpy as np
        >>> from attention_math.toy.data import repeated_tokens
        >>> t = repeated_tokens(np.random.default_rng(0), 2, 5, 16)
        >>> t.shape, bool((t[:, :5] == t[:, 5:]).all())
        ((2, 10), True)
        >>> t = repeated_tokens(np.random.default_rng(0), 2, 5, 16, prefix=3)
        >>> t.shape, bool((t[:, 3:8] == t[:, 8:]).all())
        ((2, 13), True)
    """
    if not 1 <= n <= vocab - max(prefix, 0) or prefix < 0:
        raise ValueError(
            f"need n ≥ 1, prefix ≥ 0 and prefix + n ≤ vocab = {vocab} (distinct tokens), "
            f"got n = {n}, prefix = {prefix}"
        )
    first = np.stack([rng.permutation(vocab)[: prefix + n] for _ in range(batch)])  # (batch, p+n)
    return np.concatenate([first, first[:, prefix:]], axis=1).astype(np.int64)  # (batch, p+2n)
