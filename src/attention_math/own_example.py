""" "Your own example": the reader's small matrices through the forward pass, every step exact.

The reader types Q, K and V (or X with W_Q, W_K and W_V) as rows of entries such as ``1``,
``1/2`` or ``sqrt(2)``; `own_example` reads them with the exercise checker's safe parser
(nothing is evaluated as code), runs `attention_math.symbolic` on them and returns each step
exact (LaTeX, and MathML for the page) beside its decimals. The decimals are cross-checked
against a forward pass in plain floats, written separately here; a disagreement raises.

It runs in the reader's browser (Pyodide, with SymPy and mpmath only), so it imports no NumPy.
Bad input never raises: the result holds an ``error`` naming the matrix, row and entry at fault.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import sympy as sp

from attention_math import symbolic
from attention_math.exercises.parse import parse_answer
from attention_math.mathml import decimals, mathml
from attention_math.symbolic import latex

__all__ = ["MAX_CHARS", "MAX_ENTRY", "MAX_SIZE", "MODES", "own_example", "read_matrix"]

MAX_SIZE = 4
"""Most rows and columns of any matrix: exact softmax grows fast with the size."""
MAX_ENTRY = 1000
"""Largest |entry| accepted: the decimals stay readable, the float check stays in range."""
MAX_CHARS = 2000
"""Most characters typed for one matrix."""
MODES: dict[str, tuple[str, ...]] = {"qkv": ("Q", "K", "V"), "x": ("X", "W_Q", "W_K", "W_V")}
"""The matrices each way of giving the example needs, in the order the page shows them."""
MASKS = ("none", "causal")

# each step: its name as LaTeX and as MathML
_MI = {"Q": "<mi>Q</mi>", "K": "<mi>K</mi>", "V": "<mi>V</mi>", "X": "<mi>X</mi>"}
_W = "<msub><mi>W</mi><mi>{}</mi></msub>"
_STEPS: dict[str, tuple[str, str]] = {
    "q": ("Q = XW_Q", "<mi>Q</mi><mo>=</mo><mi>X</mi>" + _W.format("Q")),
    "k": ("K = XW_K", "<mi>K</mi><mo>=</mo><mi>X</mi>" + _W.format("K")),
    "v": ("V = XW_V", "<mi>V</mi><mo>=</mo><mi>X</mi>" + _W.format("V")),
    "scores": ("QK^\\top", "<mi>Q</mi><msup><mi>K</mi><mo>⊤</mo></msup>"),
    "scaled": (
        "S = QK^\\top/\\sqrt{d_k}",
        "<mi>S</mi><mo>=</mo><mi>Q</mi><msup><mi>K</mi><mo>⊤</mo></msup><mo>/</mo>"
        "<msqrt><msub><mi>d</mi><mi>k</mi></msub></msqrt>",
    ),
    "masked": ("S + M", "<mi>S</mi><mo>+</mo><mi>M</mi>"),
    "weights": (
        "P = \\operatorname{softmax}(S + M)",
        "<mi>P</mi><mo>=</mo><mi>softmax</mi><mo>(</mo><mi>S</mi><mo>+</mo><mi>M</mi><mo>)</mo>",
    ),
    "output": ("O = PV", "<mi>O</mi><mo>=</mo><mi>P</mi><mi>V</mi>"),
}
_ROWS = re.compile(r"[\n;]")


class DisagreementError(AssertionError):
    """The exact step and the plain-float forward pass disagree: a bug, never the input."""


def _parse(text: str, where: str) -> sp.Expr | sp.Matrix:
    try:
        return parse_answer(text, exact_decimals=True)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where}: {str(exc).removeprefix('answer: ')}") from None


def _entry(text: str, where: str) -> sp.Expr:
    e = _parse(text, where)
    if isinstance(e, sp.MatrixBase):
        raise ValueError(f"{where}: {text!r} is a matrix, not a number")
    return _number(e, text, where)


def _number(e: sp.Expr, text: str, where: str) -> sp.Expr:
    # decimals arrive as the exact rationals they write (0.5 is 1/2), never guessed at:
    # 0.33333333333 stays 33333333333/10^11, not 1/3
    value = sp.N(e, 20)
    if not (value.is_real and value.is_finite):
        raise ValueError(f"{where}: {text!r} is not a finite real number")
    if abs(value) > MAX_ENTRY:
        raise ValueError(f"{where}: {text!r} is larger than {MAX_ENTRY} in size")
    return e


def _size(name: str, rows: int, cols: int) -> None:
    if rows > MAX_SIZE or cols > MAX_SIZE:
        raise ValueError(
            f"{name}: {rows}×{cols} is larger than the limit of "
            f"{MAX_SIZE}×{MAX_SIZE} (exact results grow fast with the size)"
        )


def read_matrix(text: str, name: str) -> sp.Matrix:
    """The matrix typed in ``text``: one row a line (or rows split by ``;``), entries split by
    commas or spaces; ``[[1, 2], [3, 4]]`` is read too. ``ValueError`` names what is wrong.

    Examples:
        >>> from attention_math.own_example import read_matrix
        >>> read_matrix("1 1/2\\n0 sqrt(2)", "Q")
        Matrix([
        [1,     1/2],
        [0, sqrt(2)]])
        >>> read_matrix("[[1, 0.5]]", "K")
        Matrix([[1, 1/2]])
        >>> read_matrix("1 2\\n3", "V")
        Traceback (most recent call last):
        ...
        ValueError: V: the rows have 2, 1 entries; every row needs the same number
    """
    if not isinstance(text, str):
        raise TypeError(f"{name}: expected text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise ValueError(f"{name}: {len(text)} characters is more than {MAX_CHARS}")
    text = text.strip()
    if text.startswith("["):  # a nested list, as the exercises take it
        m = _parse(text, name)
        m = m if isinstance(m, sp.MatrixBase) else sp.Matrix([[m]])
        _size(name, m.rows, m.cols)
        where = "{}, row {}, entry {}"
        return sp.Matrix(
            m.rows,
            m.cols,
            lambda i, j: _number(m[i, j], str(m[i, j]), where.format(name, i + 1, j + 1)),
        )
    lines = [r.strip() for r in _ROWS.split(text)]
    lines = [r for r in lines if r]
    if not lines:
        raise ValueError(f"{name}: it is empty; type one row a line, e.g. 1 0")
    rows = [r.split(",") if "," in r else r.split() for r in lines]
    widths = [len(r) for r in rows]
    if len(set(widths)) != 1:
        raise ValueError(
            f"{name}: the rows have {', '.join(map(str, widths))} entries; "
            "every row needs the same number"
        )
    _size(name, len(rows), widths[0])
    return sp.Matrix(
        [
            [_entry(e.strip(), f"{name}, row {i + 1}, entry {j + 1}") for j, e in enumerate(r)]
            for i, r in enumerate(rows)
        ]
    )


def _shapes(m: Mapping[str, sp.Matrix], mode: str, mask: str) -> None:
    def shape(n: str) -> str:
        return f"{n} is {m[n].rows}×{m[n].cols}"

    if mode == "x":
        for w in ("W_Q", "W_K", "W_V"):
            if m[w].rows != m["X"].cols:
                raise ValueError(f"{shape('X')} and {shape(w)}: {w} needs one row per column of X")
        if m["W_Q"].cols != m["W_K"].cols:
            raise ValueError(f"{shape('W_Q')} and {shape('W_K')}: they need as many columns (d_k)")
        return
    if m["Q"].cols != m["K"].cols:
        raise ValueError(f"{shape('Q')} and {shape('K')}: they need as many columns (d_k)")
    if m["K"].rows != m["V"].rows:
        raise ValueError(f"{shape('K')} and {shape('V')}: one row of V per row of K (key)")
    if mask == "causal" and m["Q"].rows != m["K"].rows:
        raise ValueError(f"{shape('Q')} and {shape('K')}: the causal mask needs one query per key")


def _floats(m: sp.Matrix) -> list[list[float]]:
    return [[float(sp.N(e, 17)) for e in m.row(i)] for i in range(m.rows)]


def _float_forward(q: list[list[float]], k: list[list[float]], causal: bool) -> list[list[float]]:
    """Softmax(QKᵀ/√d_k + M) in plain floats, written apart from the exact side: the check."""
    d_k = len(q[0])
    weights = []
    for i, qi in enumerate(q):
        s = [sum(a * b for a, b in zip(qi, kj, strict=True)) / math.sqrt(d_k) for kj in k]
        s = [x if not causal or j <= i else -math.inf for j, x in enumerate(s)]
        top = max(s)
        e = [math.exp(x - top) for x in s]
        weights.append([x / sum(e) for x in e])
    return weights


def _agree(label: str, exact: list[list[float]], approx: list[list[float]]) -> None:
    for i, row in enumerate(approx):
        for j, y in enumerate(row):
            x = exact[i][j]
            if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
                raise DisagreementError(f"{label}[{i + 1},{j + 1}]: exact {x!r}, floats {y!r}")


def _step(key: str, exact: sp.Matrix, values: list[list[float]] | None = None) -> dict[str, str]:
    tex, name = _STEPS[key]
    values = _floats(exact) if values is None else values
    return {
        "name": tex,
        "latex": f"{tex} = {latex(exact)}",
        "exact": mathml(exact, name),  # name = exact
        "decimal": decimals(values, name),  # name ≈ decimals
        "approx": decimals(values),  # ≈ decimals, to stand beside the exact form
    }


def own_example(matrices: Mapping[str, str], mask: str = "none") -> dict[str, Any]:
    """Every step of ``softmax(QKᵀ/√d_k + M) V`` on the reader's matrices, exact and decimal.

    ``matrices`` maps "Q", "K", "V" (or "X", "W_Q", "W_K", "W_V") to the typed text; ``mask``
    is "none" or "causal". The result has ``steps`` (``name``, ``latex``, and MathML
    ``exact`` and ``decimal``), or only ``error``, a message for the reader.

    Examples:
        >>> from attention_math.own_example import own_example
        >>> r = own_example({"Q": "1 0\\n0 1", "K": "1 0\\n0 1", "V": "1 2\\n3 4"}, "causal")
        >>> [s["name"] for s in r["steps"]][-2:]
        ['P = \\\\operatorname{softmax}(S + M)', 'O = PV']
        >>> r["steps"][-1]["latex"].startswith("O = PV = \\\\begin{bmatrix}1 & 2")
        True
        >>> own_example({"Q": "1 0", "K": "1", "V": "1"})["error"]
        'Q is 1×2 and K is 1×1: they need as many columns (d_k)'
        >>> own_example({"Q": "__import__('os')", "K": "1", "V": "1"})["error"][:40]
        "Q, row 1, entry 1: a call to '__import__"
    """
    try:
        return _own_example(matrices, mask)
    except (ValueError, TypeError) as exc:
        return {"error": str(exc)}


def _own_example(matrices: Mapping[str, str], mask: str) -> dict[str, Any]:
    if mask not in MASKS:
        raise ValueError(f"mask must be one of {', '.join(MASKS)}, got {mask!r}")
    mode = "x" if "X" in matrices else "qkv"
    missing = [n for n in MODES[mode] if not str(matrices.get(n, "")).strip()]
    if missing:
        raise ValueError(f"{', '.join(missing)}: empty; type one row a line, e.g. 1 0")
    m = {n: read_matrix(matrices[n], n) for n in MODES[mode]}
    _shapes(m, mode, mask)
    steps = []
    if mode == "x":
        for key, w in (("q", "W_Q"), ("k", "W_K"), ("v", "W_V")):
            m[key.upper()] = m["X"] * m[w]
            steps.append(_step(key, m[key.upper()]))
    q, k, v = m["Q"], m["K"], m["V"]
    scaled = symbolic.scores(q, k)  # the site's own exact steps, as on every other page
    steps += [_step("scores", q * k.T), _step("scaled", scaled)]
    allowed = [[j <= i for j in range(k.rows)] for i in range(q.rows)] if mask == "causal" else None
    if allowed is not None:
        masked = sp.Matrix(*scaled.shape, lambda i, j: scaled[i, j] if j <= i else -sp.oo)
        steps.append(_step("masked", masked))
    output = symbolic.attention(q, k, v, mask=allowed)
    weights = symbolic.attention_weights(q, k, v, mask=allowed)
    # e^{-1}/(e^{-1} + 1 + e) → 1/(1 + e + e²): no negative powers, as the chapter prints them
    weights = weights.applyfunc(sp.cancel)
    vt = list(zip(*_floats(v), strict=True))  # columns of V
    floats = _float_forward(_floats(q), _floats(k), mask == "causal")
    p, o = _floats(weights), _floats(output)
    _agree("P", p, floats)
    _agree(
        "O",
        o,
        [[math.fsum(p * x for p, x in zip(r, c, strict=True)) for c in vt] for r in floats],
    )
    steps += [_step("weights", weights, p), _step("output", output, o)]
    return {"steps": steps}
