"""The audit: every published number of every source example, recomputed and judged.

Each example is computed exactly (SymPy) and in float64 (NumPy), and
[`audit`][attention_math.audit.audit] cross-checks every step of the two through
[`steps`][attention_math.audit.steps] (a disagreement raises). Each
[`Claim`][attention_math.examples.Claim] then gets a verdict from the exact values, with ``u``
the error in units of the claim's last printed place:

* **agrees**: ``u ≤ ½`` (the published value is the exact one, correctly rounded);
* **rounding slip**: ``u ≤ 1½`` (the last digit is off by one), or ``u < 10`` (an error under
  one unit of the second-to-last place) *and* a rounding hypothesis reproduces it
  (truncation, arithmetic on rounded intermediates);
* **wrong**: anything else.

When the inputs themselves were printed rounded (the 768-dimensional notebook), their
half-unit uncertainty is propagated and added to the ½.

A diagnosis is computed, not asserted: the computation is rerun under each hypothesis in
[`HYPOTHESES`][attention_math.audit.HYPOTHESES] (in that order) and the first that reproduces the
published value to its printed precision is named. ``python -m attention_math audit`` prints the
table and fails when any verdict or diagnosis differs from the one registered in
[`attention_math.examples`][attention_math.examples].
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import mpmath
import numpy as np
import sympy as sp

from attention_math import numeric, symbolic
from attention_math.crosscheck import crosscheck
from attention_math.examples import AGREES, EXAMPLES, SLIP, WRONG, Claim, Example, exact_entry
from attention_math.terminal import WIDTH, UsageError, did_you_mean, plain, table, wrap

__all__ = [
    "HYPOTHESES",
    "ONE_MINUS",
    "ROUNDED_WEIGHTS",
    "TRUNCATED",
    "Finding",
    "audit",
    "audit_claim",
    "exact_steps",
    "findings_table",
    "format_computed",
    "numeric_steps",
    "report",
    "run_audit",
    "steps",
]

_DPS = 40
TRUNCATED = "truncated instead of rounded"
"""A diagnosis: the published digits are the exact value cut off, not rounded."""
ROUNDED_WEIGHTS = "from the published (rounded) weights"
"""A diagnosis: an output (or a product) was computed from the published, rounded weights."""
ONE_MINUS = "one minus the other published weight(s) of the row"
"""A diagnosis: a row's last weight was printed as one minus its other published weights."""
OFF_BY_ONE = "last digit off by one"
UNEXPLAINED = "no candidate slip we tried reproduces it"
_ROUNDING_KINDS = (TRUNCATED, ROUNDED_WEIGHTS, ONE_MINUS)


# --- the computation, exact and numeric -----------------------------------------------


def _mask_exact(n: int) -> sp.Matrix:
    return sp.Matrix(n, n, lambda i, j: 0 if j <= i else -sp.oo)


@cache
def exact_steps(example_id: str) -> dict[str, sp.Matrix]:
    """Every step of example ``example_id`` as exact SymPy matrices.

    Keys: ``q``, ``k``, ``v`` (when published), ``scores`` (``QKᵀ``), ``scaled``, ``mask``
    (additive, causal examples), ``weights`` and ``output`` (when ``V`` is known).

    Examples:
        >>> from attention_math.audit import exact_steps
        >>> exact_steps("identity-2x2")["scaled"]
        Matrix([
        [sqrt(2)/2,         0],
        [        0, sqrt(2)/2]])
    """
    ex = EXAMPLES[example_id]
    out: dict[str, sp.Matrix] = {}
    if ex.has("x"):
        X = ex.exact("x")
        out["q"], out["k"] = X * ex.exact("w_q"), X * ex.exact("w_k")
        if ex.has("w_v"):
            out["v"] = X * ex.exact("w_v")
        out["scores"] = out["q"] * out["k"].T
        out["scaled"] = out["scores"] / sp.sqrt(out["q"].cols)
    else:
        out["scaled"] = ex.exact("scaled")
        out["scores"] = out["scaled"] * sp.sqrt(ex.dims["d_k"])
        out["v"] = ex.exact("v")
    z = out["scaled"]
    if ex.is_causal:
        out["mask"] = _mask_exact(z.rows)
        z = z + out["mask"]
    out["weights"] = symbolic.softmax(z)
    if "v" in out:
        out["output"] = out["weights"] * out["v"]
    return out


def _forward(
    ex: Example,
    *,
    scale: str = "sqrt",
    transpose: bool = False,
    exp0_zero: bool = False,
    normalise: str = "row",
) -> dict[str, np.ndarray]:
    """The float64 computation, optionally with one of the mistakes the diagnoses test."""
    out: dict[str, np.ndarray] = {}
    if ex.has("x"):
        ws = [ex.numeric(w) for w in ("w_q", "w_k", "w_v") if ex.has(w)]
        if transpose:
            ws = [w.T for w in ws]
        x = ex.numeric("x")
        out["q"], out["k"] = x @ ws[0], x @ ws[1]  # (L, d_k)
        if len(ws) == 3:
            out["v"] = x @ ws[2]  # (L, d_v)
        out["scores"] = out["q"] @ out["k"].T  # (L, L)
        d_k = out["q"].shape[1]
    else:
        d_k = ex.dims["d_k"]
        out["scores"] = ex.numeric("scaled") * math.sqrt(d_k)  # (L, L)
        out["v"] = ex.numeric("v")  # (L, printed columns)
    factor = {"sqrt": 1 / math.sqrt(d_k), "none": 1.0, "d_k": 1 / d_k}[scale]
    out["scaled"] = out["scores"] * factor
    z = out["scaled"].copy()
    if ex.is_causal:
        out["mask"] = np.where(numeric.causal_mask(len(z)), 0.0, -np.inf)
        z += out["mask"]
    e = np.exp(z - np.max(z[np.isfinite(z)]))  # one shift for all three normalisations
    if exp0_zero:
        e[out["scaled"] == 0] = 0.0
    axis = {"row": 1, "column": 0, "all": None}[normalise]
    with np.errstate(invalid="ignore", divide="ignore"):  # a hypothesis may divide 0 by 0:
        out["weights"] = e / e.sum(axis=axis, keepdims=axis is not None)  # (L, L); NaN ≠ claim
    if "v" in out:
        out["output"] = out["weights"] @ out["v"]  # (L, d_v)
    return out


@cache
def numeric_steps(example_id: str) -> dict[str, np.ndarray]:
    """Every step of example ``example_id`` in float64, with NumPy's reference functions.

    Examples:
        >>> from attention_math.audit import numeric_steps
        >>> numeric_steps("identity-2x2")["weights"].round(4)
        array([[0.6698, 0.3302],
               [0.3302, 0.6698]])
    """
    ex = EXAMPLES[example_id]
    out = _forward(ex)  # q, k, v, scores, scaled, mask from the plain computation
    mask = numeric.causal_mask(len(out["scaled"])) if ex.is_causal else None
    z = np.where(mask, out["scaled"], -np.inf) if mask is not None else out["scaled"]
    out["weights"] = numeric.softmax(z)  # the reference softmax, not _forward's
    if "v" in out and "q" in out:
        out["output"] = numeric.attention(out["q"], out["k"], out["v"], mask=mask)
    elif "v" in out:  # only the scaled scores are printed: attention with q = scaled, k = I
        out["output"] = numeric.attention(
            out["scaled"], np.eye(len(out["scaled"])), out["v"], mask=mask, scale=1.0
        )
    return out


@cache
def steps(example_id: str) -> dict[str, tuple[sp.Matrix, np.ndarray]]:
    """Exact and float64 side by side, every pair cross-checked (raises on disagreement).

    Examples:
        >>> from attention_math.audit import steps
        >>> sorted(steps("lets-go"))
        ['k', 'q', 'scaled', 'scores', 'weights']
    """
    exact, num = exact_steps(example_id), numeric_steps(example_id)
    pairs = {}
    for name, e in exact.items():
        if name != "mask":
            crosscheck(e, num[name], label=f"{example_id}: {name}")
        pairs[name] = (e, num[name])
    return pairs


# --- hypotheses -----------------------------------------------------------------------


def _published_weights(ex: Example) -> np.ndarray | None:
    """The correct weights with every published weight substituted, or None."""
    claims = [c for c in ex.claims if c.quantity == "weights"]
    if not claims:
        return None
    w = numeric_steps(ex.id)["weights"].copy()
    for c in claims:
        w[c.index] = float(exact_entry(c.published[0]))
    return w


def _entry(values: dict[str, np.ndarray], claim: Claim) -> np.ndarray | None:
    """The entries of ``values`` that ``claim`` is about."""
    if claim.quantity == "product":
        if "weights" not in values or "v" not in values:
            return None
        i, k, j = claim.index
        return np.array([values["weights"][i, k] * values["v"][k, j]])
    a = values.get(claim.quantity)
    if a is None:
        return None
    return np.atleast_1d(np.asarray(a[claim.index], dtype=float))


def _variant(
    *,
    scale: str = "sqrt",
    transpose: bool = False,
    exp0_zero: bool = False,
    normalise: str = "row",
) -> Callable[[Example, Claim], np.ndarray | None]:
    def run(ex: Example, claim: Claim) -> np.ndarray | None:
        values = _forward(
            ex, scale=scale, transpose=transpose, exp0_zero=exp0_zero, normalise=normalise
        )
        return _entry(values, claim)

    return run


def _truncated(ex: Example, claim: Claim) -> np.ndarray | None:
    return _entry(numeric_steps(ex.id), claim)  # compared by truncation, see _reproduces


def _one_minus(ex: Example, claim: Claim) -> np.ndarray | None:
    if claim.quantity != "weights":
        return None
    i, j = claim.index
    others = [c for c in ex.claims if c.quantity == "weights" and c.index[0] == i and c != claim]
    if len(others) != len(numeric_steps(ex.id)["weights"][i]) - 1:
        return None  # the rest of the row is not all published
    if any(c.index[1] > j for c in others):
        return None  # only the last weight of a row can be the remainder of the others
    return np.array([1.0 - sum(float(exact_entry(c.published[0])) for c in others)])


def _from_published_weights(
    ex: Example, claim: Claim, left_out: int | None = None
) -> np.ndarray | None:
    w = _published_weights(ex)
    if claim.quantity not in ("output", "product") or w is None:
        return None
    values = dict(numeric_steps(ex.id))
    if left_out is not None:
        if claim.quantity != "output":
            return None
        w = w.copy()
        w[:, left_out] = 0.0
    values["weights"] = w
    values["output"] = w @ values["v"]
    return _entry(values, claim)


def _left_out(t: int) -> Callable[[Example, Claim], np.ndarray | None]:
    return lambda ex, claim: _from_published_weights(ex, claim, left_out=t)


def _hypotheses(ex: Example) -> list[tuple[str, Callable[[Example, Claim], np.ndarray | None]]]:
    names = ex.tokens or tuple(str(i + 1) for i in range(len(numeric_steps(ex.id)["scaled"])))
    return [
        (TRUNCATED, _truncated),
        ("exp(0) treated as 0", _variant(exp0_zero=True)),
        ("softmax normalised over the whole matrix", _variant(normalise="all")),
        ("softmax normalised over columns", _variant(normalise="column")),
        ("no scaling by 1/√d_k", _variant(scale="none")),
        ("scaled by 1/d_k instead of 1/√d_k", _variant(scale="d_k")),
        ("transposed weight matrices", _variant(transpose=True)),
        (ONE_MINUS, _one_minus),
        (ROUNDED_WEIGHTS, _from_published_weights),
        *(
            (f"from the published weights, term '{n}' left out", _left_out(t))
            for t, n in enumerate(names)
        ),
    ]


HYPOTHESES: tuple[str, ...] = (
    TRUNCATED,
    "exp(0) treated as 0",
    "softmax normalised over the whole matrix",
    "softmax normalised over columns",
    "no scaling by 1/√d_k",
    "scaled by 1/d_k instead of 1/√d_k",
    "transposed weight matrices",
    ONE_MINUS,
    ROUNDED_WEIGHTS,
    "from the published weights, term '…' left out",
)
"""The hypotheses a diagnosis tries, in order (the last one once per token)."""


# --- verdicts -------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """The audit of one claim."""

    example: str
    claim: Claim
    computed: tuple[mpmath.mpf, ...]  # exact values, evaluated to 40 digits
    units: float  # largest error, in units of the last printed place
    verdict: str
    diagnosis: str
    hypothesis_values: tuple[float, ...] = ()  # what the diagnosing hypothesis computes

    @property
    def as_registered(self) -> bool:
        """Whether verdict and diagnosis are the ones registered in the package."""
        return (self.verdict, self.diagnosis) == (self.claim.verdict, self.claim.diagnosis)


def _tolerance(ex: Example, claim: Claim) -> mpmath.mpf:
    """Uncertainty of the computed value due to inputs printed rounded (0 if exact)."""
    delta = mpmath.mpf(ex.input_tolerance)
    if delta == 0 or claim.quantity not in ("output", "weights"):
        return delta * 0
    # softmax: |Δw_k| ≤ 2δ·w_k for scores off by ≤ δ; output: plus δ·Σw for V off by δ.
    if claim.quantity == "weights":
        return 2 * delta
    vmax = max(abs(float(x)) for x in ex.exact("v"))
    return 2 * delta * mpmath.mpf(vmax) + delta


def _reproduces(values: Iterable[float], claim: Claim, tol: mpmath.mpf) -> str | None:
    """``"rounded"``/``"truncated"`` if ``values`` print as ``claim.published``, else None."""
    rounded = truncated = True
    for v, p in zip(values, claim.published, strict=True):
        ulp = mpmath.mpf(10) ** -claim.places(p)
        pv, v = mpmath.mpf(exact_entry(p)) if p != "-inf" else -mpmath.inf, mpmath.mpf(v)
        if mpmath.isinf(pv) or mpmath.isinf(v):
            rounded = truncated = rounded and truncated and pv == v
            continue
        rounded = rounded and abs(pv - v) <= ulp / 2 + tol + mpmath.mpf(10) ** -12
        truncated = truncated and abs(pv) <= abs(v) < abs(pv) + ulp and (pv == 0 or pv * v > 0)
    return "rounded" if rounded else "truncated" if truncated else None


def _diagnose(ex: Example, claim: Claim, tol: mpmath.mpf) -> tuple[str, tuple[float, ...]] | None:
    """The first hypothesis that reproduces ``claim``, and the values it gives."""
    for name, run in _hypotheses(ex):
        values = run(ex, claim)
        if values is None:
            continue
        how = _reproduces(values, claim, tol)
        shown = tuple(float(v) for v in values)
        if name == TRUNCATED:
            if how == "truncated":
                return TRUNCATED, shown
        elif how == "rounded":
            return name, shown
        elif how == "truncated":
            return f"{name}; {TRUNCATED}", shown
    return None


def _parse_shape(text: str, dims: dict[str, int]) -> tuple[int, ...]:
    names = [t for t in re.split(r"[\s(),x×]+", text) if t]
    return tuple(dims[n] if n in dims else int(n) for n in names)


def _audit_shape(ex: Example, claim: Claim) -> Finding:
    name = claim.quantity.split(":", 1)[1]
    printed = ex.extra.get("printed_shapes", {})
    if name in printed:
        shape = tuple(printed[name])
    elif name.startswith("w_") or name == "x":
        shape = ex.numeric(name).shape
    else:
        shape = numeric_steps(ex.id)[name].shape
    stated = _parse_shape(claim.published[0], ex.dims)
    actual = shape[claim.index[0]] if claim.index else shape
    stated_v = stated[0] if claim.index else stated
    ok = stated_v == actual
    diagnosis = "" if ok else f"{name} has shape {shape}"
    computed = tuple(mpmath.mpf(int(n)) for n in np.atleast_1d(actual))
    return Finding(
        ex.id, claim, computed, 0.0 if ok else math.inf, AGREES if ok else WRONG, diagnosis
    )


def audit_claim(ex: Example, claim: Claim) -> Finding:
    """Verdict and diagnosis for one claim of example ``ex``.

    Examples:
        >>> from attention_math.audit import audit_claim
        >>> from attention_math.examples import IDENTITY_2X2 as ex
        >>> f = audit_claim(ex, ex.claims[1])
        >>> f.claim.published, f.verdict, f.diagnosis
        (('0.6699',), 'rounding slip', 'last digit off by one')
    """
    if claim.quantity.startswith("shape:"):
        return _audit_shape(ex, claim)
    exact = exact_steps(ex.id)
    if claim.quantity == "product":
        i, k, j = claim.index
        entries = [exact["weights"][i, k] * exact["v"][k, j]]
    elif len(claim.index) == 1:
        entries = list(exact[claim.quantity].row(claim.index[0]))
    else:
        entries = [exact[claim.quantity][claim.index]]
    with mpmath.workdps(_DPS):
        computed = tuple(-mpmath.inf if e == -sp.oo else mpmath.mpf(sp.N(e, _DPS)) for e in entries)
    if len(computed) != len(claim.published):
        raise ValueError(
            f"{ex.id} {claim.id}: {len(claim.published)} published, {len(computed)} computed"
        )
    tol = _tolerance(ex, claim)
    units = mpmath.mpf(0)
    for v, p in zip(computed, claim.published, strict=True):
        pv = -mpmath.inf if p == "-inf" else mpmath.mpf(exact_entry(p))
        if mpmath.isinf(pv) or mpmath.isinf(v):
            units = max(units, mpmath.mpf(0) if pv == v else mpmath.inf)
        else:
            units = max(units, abs(pv - v) * mpmath.mpf(10) ** claim.places(p))
    tol_units = tol * mpmath.mpf(10) ** claim.places(claim.published[0])
    if units <= mpmath.mpf(1) / 2 + tol_units + mpmath.mpf(10) ** -9:
        return Finding(ex.id, claim, computed, float(units), AGREES, "")
    found = _diagnose(ex, claim, tol)
    diagnosis, values = found if found is not None else (None, ())
    rounding = diagnosis is not None and any(k in diagnosis for k in _ROUNDING_KINDS)
    if units <= mpmath.mpf(3) / 2 + tol_units or (units < 10 and rounding):
        verdict = SLIP
    else:
        verdict = WRONG
    if diagnosis is None:
        diagnosis = OFF_BY_ONE if verdict == SLIP else UNEXPLAINED
    return Finding(ex.id, claim, computed, float(units), verdict, diagnosis, values)


def audit(example_ids: Iterable[str] | None = None) -> list[Finding]:
    """Audit every claim of the given examples (default: all of them).

    Each example's steps are first cross-checked, exact against float64
    ([`steps`][attention_math.audit.steps]): a disagreement raises
    [`CrossCheckError`][attention_math.crosscheck.CrossCheckError].

    Examples:
        >>> from attention_math.audit import audit
        >>> findings = audit(["the-cat-sleeps"])
        >>> sorted({f.verdict for f in findings})
        ['agrees', 'wrong']
        >>> all(f.as_registered for f in findings)
        True
    """
    ids = list(EXAMPLES) if example_ids is None else list(example_ids)
    for i in ids:
        if i not in EXAMPLES:
            raise ValueError(f"unknown example {i!r}; known: {', '.join(EXAMPLES)}")
    for i in ids:
        steps(i)  # exact against float64, every step (cached: once per example and process)
    return [finding for i in ids for finding in _audit_example(EXAMPLES[i])]


# the findings of each example, keyed by the example's whole value (its repr: it holds
# dicts, so it has no hash): several pages audit the same example, and a changed example
# (its data or its registered claims) is a new key, never an old answer
_AUDITED: dict[str, tuple[Finding, ...]] = {}


def _audit_example(ex: Example) -> tuple[Finding, ...]:
    """Every claim of ``ex`` audited (findings are frozen: they can be shared)."""
    key = repr(ex)
    if key not in _AUDITED:
        _AUDITED[key] = tuple(audit_claim(ex, c) for c in ex.claims)
    return _AUDITED[key]


# --- presentation ---------------------------------------------------------------------


def format_computed(values: tuple[mpmath.mpf, ...], claim: Claim) -> str:
    """The computed values at two more decimals than printed (integers as integers).

    A value that would then read as a tie at the printed decimals (``1.53650`` for
    1.536496…, which rounds down to 1.536) gets more decimals until it does not, so the
    exact column never suggests the wrong rounding; a value that is exactly a tie stays one.

    Examples:
        >>> import mpmath
        >>> from attention_math.audit import format_computed
        >>> from attention_math.examples import IDENTITY_2X2 as ex
        >>> format_computed((mpmath.mpf(2) / 3,), ex.claims[1])   # printed with 4 decimals
        '0.666667'
        >>> format_computed((mpmath.mpf("0.12344996"),), ex.claims[1])
        '0.12344996'
        >>> format_computed((mpmath.mpf("0.12345"),), ex.claims[1])   # a true tie
        '0.123450'
    """
    if claim.quantity.startswith("shape:"):
        shown = [str(int(v)) for v in values]
        return shown[0] if claim.index else "(" + ", ".join(shown) + ")"

    def one(v: mpmath.mpf, p: str) -> str:
        if mpmath.isinf(v):
            return "-inf" if v < 0 else "inf"
        if v == mpmath.floor(v):
            return str(int(v))
        return _decimals(float(v), claim.places(p))

    return _abbrev([one(v, p) for v, p in zip(values, claim.published, strict=True)])


def _decimals(v: float, places: int) -> str:
    """``v`` at ``places + 2`` decimals, or more while the extra digits read as a tie."""
    for extra in range(2, 10):
        shown = f"{v:.{places + extra}f}"
        if shown[-extra:].rstrip("0") != "5":
            return shown
    return f"{v:.{places + 2}f}"  # a tie to float precision: it is one


def _abbrev(items: list[str]) -> str:
    return ", ".join(items) if len(items) <= 4 else ", ".join(items[:3]) + f", … ({len(items)})"


def findings_table(
    findings: Iterable[Finding], *, markdown: bool = True, link: str = "", where: bool = True
) -> str:
    """The findings as a Markdown table (or plain text with ``markdown=False``).

    ``link`` is the URL of the example pages' folder (the site gives its absolute path, which
    both of its generators leave as printed): the example column links to ``{link}{id}/``;
    ``where=False`` drops the column saying where in its source the claim appears.

    Examples:
        >>> from attention_math.audit import audit, findings_table
        >>> print(findings_table(audit(["identity-2x2"])[:1]))
        | example | claim | where | published | exact | verdict | diagnosis |
        |---|---|---|---|---|---|---|
        | identity-2x2 | 1/√2 | §5.1 eqs. 20, 21, 25 (e^0.7071) | 0.7071 | 0.707107 | agrees | — |
    """
    head = ["example", "claim", "where", "published", "exact", "verdict", "diagnosis"]
    rows = []
    for f in findings:
        ex = f"[{f.example}]({link}{f.example}/)" if link else f.example
        verdict = f.verdict if f.as_registered else f"{f.verdict} (registered: {f.claim.verdict})"
        rows.append(
            [
                ex,
                f.claim.id,
                f.claim.where,
                _abbrev(list(f.claim.published)),
                format_computed(f.computed, f.claim),
                verdict,
                f.diagnosis or "—",
            ]
        )
    if not where:
        head = [h for h in head if h != "where"]
        rows = [r[:2] + r[3:] for r in rows]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in [head, *rows]
    )


def report(findings: Sequence[Finding], *, where: bool = False) -> str:
    """The findings as plain text for a terminal: one table per example, at most 100 columns
    wide (long cells wrap), then the counts.

    Examples:
        >>> from attention_math.audit import audit, report
        >>> print(report(audit(["identity-2x2"])[:2]))
        identity-2x2: The 2×2 identity example
          claim   published  exact     verdict        diagnosis
          1/√2    0.7071     0.707107  agrees         —
          P[1,1]  0.6699     0.669762  rounding slip  last digit off by one
        <BLANKLINE>
        2 claims: 1 agrees, 1 rounding slip, 0 wrong
    """
    head = ["claim", *(["where"] if where else []), "published", "exact", "verdict", "diagnosis"]
    blocks = []
    for example_id in dict.fromkeys(f.example for f in findings):
        rows = []
        for f in (f for f in findings if f.example == example_id):
            verdict = (
                f.verdict if f.as_registered else f"{f.verdict} (registered: {f.claim.verdict})"
            )
            rows.append(
                [
                    f.claim.id,
                    *([f.claim.where] if where else []),
                    _abbrev(list(f.claim.published)),
                    format_computed(f.computed, f.claim),
                    verdict,
                    f.diagnosis or "—",
                ]
            )
        body = table(head, rows, width=WIDTH - 2)
        title = plain(EXAMPLES[example_id].title)
        blocks.append(f"{example_id}: {title}\n" + "\n".join("  " + ln for ln in body.splitlines()))
    counts = {v: sum(f.verdict == v for f in findings) for v in (AGREES, SLIP, WRONG)}
    total = f"{len(findings)} claims: " + ", ".join(f"{n} {v}" for v, n in counts.items())
    return "\n\n".join([*blocks, total])


def run_audit(examples: Sequence[str] = (), *, where: bool = False) -> int:
    """``python -m attention_math audit [EXAMPLE …]``: print the report; return 0 when every
    verdict and diagnosis is the one registered in `attention_math.examples`, 1 when one
    changed (each change is named on stderr).

    Raises:
        UsageError: an unknown example id.

    Examples:
        >>> from attention_math.audit import run_audit
        >>> run_audit(["identity-2x2"])
        identity-2x2: The 2×2 identity example
        ...
        23 claims: 7 agrees, 16 rounding slip, 0 wrong
        Every verdict is the one registered in attention_math.examples (exit status 0).
        0
    """
    unknown = [e for e in examples if e not in EXAMPLES]
    if unknown:
        hint = did_you_mean(unknown[0], list(EXAMPLES))
        raise UsageError(f"unknown example {unknown[0]!r}{hint} (known: {', '.join(EXAMPLES)})")
    findings = audit(list(examples) or None)
    print(report(findings, where=where))
    bad = [f for f in findings if not f.as_registered]
    if not bad:
        wrong = sum(f.verdict == WRONG for f in findings)
        print(
            wrap(
                "Every verdict is the one registered in attention_math.examples"
                + (
                    f": the {wrong} wrong are errors in the published examples, not in this "
                    "package (exit status 0)."
                    if wrong
                    else " (exit status 0)."
                )
            )
        )
    for f in bad:
        print(
            f"CHANGED {f.example} {f.claim.id}: computed {f.verdict!r} / {f.diagnosis!r}, "
            f"registered {f.claim.verdict!r} / {f.claim.diagnosis!r}",
            file=sys.stderr,
        )
    return 1 if bad else 0
