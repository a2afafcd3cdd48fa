"""The worked examples of the five source documents, as data.

Each `Example` holds the inputs as published (ints, or decimal strings read as exact
rationals, so the symbolic side is exact), the source document it comes from and every
number that document prints about it, each a `Claim`. A claim carries where it appears, the
precision it was printed with, and the verdict and diagnosis registered for it; the
module [`attention_math.audit`][attention_math.audit] recomputes both and fails when they change.

Published numbers are quoted here as data (strings, exactly as printed): that is the one
place in the project where numbers are typed by hand, because they are what is audited.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from attention_math._lazy import np

__all__ = [
    "CAT_SLEEPS",
    "EXAMPLES",
    "FIVE_WORDS",
    "IDENTITY_2X2",
    "LETS_GO",
    "LETS_GO_RECOVERY",
    "NOTEBOOK_768",
    "SOURCES",
    "Claim",
    "Example",
    "Recovery",
    "Source",
    "exact_entry",
    "recover_weights",
]

Rows = tuple[tuple[object, ...], ...]

AGREES, SLIP, WRONG = "agrees", "rounding slip", "wrong"


def exact_entry(e: object) -> sp.Expr:
    """One published entry as an exact SymPy number: ``"0.71"`` → ``71/100``, ``"-inf"`` → ``-oo``.

    Examples:
        >>> from attention_math.examples import exact_entry
        >>> exact_entry("0.71"), exact_entry(2), exact_entry("-inf")
        (71/100, 2, -oo)
    """
    if isinstance(e, str):
        if e.strip() in ("-inf", "−inf", "-∞"):
            return -sp.oo
        return sp.Rational(e.strip())
    if isinstance(e, float):
        raise TypeError(f"write published decimals as strings, not floats: got {e!r}")
    return sp.sympify(e)


@dataclass(frozen=True)
class Claim:
    """One number (or one printed row of numbers) that a source publishes about its example.

    ``quantity`` names what the number is: ``"q"``, ``"k"``, ``"v"``, ``"scores"``
    (``QKᵀ``), ``"scaled"``, ``"weights"``, ``"output"``, ``"product"`` (one term
    ``P[i,k]·V[k,j]`` of the weighted sum, index ``(i, k, j)``), ``"mask"``, or
    ``"shape:NAME"`` for a shape statement about input or step ``NAME``. ``index`` is the
    entry (0-based); a claim on a whole printed row has ``index = (i,)`` and one published
    string per printed column. For a ``shape:`` claim, ``index`` ``()`` is the whole shape and
    ``(a,)`` its axis ``a``.
    """

    id: str
    where: str
    quantity: str
    index: tuple[int, ...]
    published: tuple[str, ...]
    verdict: str
    diagnosis: str
    decimals: int | None = None  # printed decimal places; None: read from the string

    def places(self, text: str) -> int:
        """Decimal places ``text`` was printed with (``decimals`` when the printer dropped zeros).

        Examples:
            >>> from attention_math.examples import Claim
            >>> c = Claim("x", "eq. 1", "output", (0, 0), ("1.20",), "agrees", "")
            >>> c.places("1.20"), c.places("-11.0"), c.places("2")
            (2, 1, 0)
        """
        if self.decimals is not None:
            return self.decimals
        return len(text.split(".")[1]) if "." in text else 0


@dataclass(frozen=True)
class Source:
    """A published document whose worked example the site audits.

    ``file`` names the copy its numbers were transcribed from; it is package data only, and
    pages refer to the document by `cite`.
    """

    file: str
    title: str
    author: str = ""  # when the document names one
    kind: str = ""  # what it is: a slide deck, a notebook, …

    def cite(self) -> str:
        """The title in quotation marks, with the author when the document names one.

        Examples:
            >>> from attention_math.examples import FIVE_WORDS
            >>> FIVE_WORDS.source.cite()
            '“Understanding the math behind self attention mechanism” by Dinesh Lal'
        """
        return f"“{self.title}”" + (f" by {self.author}" if self.author else "")


SOURCES: dict[str, Source] = {
    s.file: s
    for s in (
        Source(
            "000_39ab2f0727ddffcb.txt",
            "Detailed Explanation of Self-Attention Mechanism",
            kind="a walkthrough of a compute_qkv / self_attention listing",
        ),
        Source(
            "001_6252953421927e15.txt",
            "Understanding the math behind self attention mechanism",
            author="Dinesh Lal",
            kind="a slide deck, part 4 of “Generative AI Deep Dives”",
        ),
        Source(
            "002_d3eb890a75bf915a.txt",
            "Self-Attention Mechanism for One Head",
            kind="a Jupyter notebook",
        ),
        Source(
            "003_c9caecb3e102e3f3.txt",
            "Attention Mechanisms of a Transformer",
            kind="an illustrated walkthrough of self-attention and masked self-attention",
        ),
        Source(
            "004_5e5615d3892a1c49.txt",
            "The cat sleeps",
            # the document has no title; its one heading reads "Tranformer" [sic]
            kind="a short tutorial without a title, named here by its example sentence",
        ),
    )
}
"""The five source documents, by the file name of the copy the claims come from."""


@dataclass(frozen=True)
class Example:
    """One published worked example: ``x`` projected by ``w_q``, ``w_k``, ``w_v``.

    When a source gives no embeddings but prints its scaled scores and values directly (the
    768-dimensional notebook), ``scaled`` and ``v`` hold them and ``columns`` says which
    columns of ``v`` (and of the output) were printed.
    """

    id: str
    title: str
    seed: str  # file name of the source document (package data; see `SOURCES`)
    x: Rows = ()
    w_q: Rows = ()
    w_k: Rows = ()
    w_v: Rows = ()
    tokens: tuple[str, ...] = ()
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    claims: tuple[Claim, ...] = ()
    v: Rows = ()
    scaled: Rows = ()
    columns: tuple[int, ...] = ()
    is_causal: bool = False
    dims: dict[str, int] = field(default_factory=dict)  # names used in shape statements
    input_tolerance: str = "0"  # half a unit of the inputs' printed last place, when rounded

    @property
    def source(self) -> Source:
        """The source document of the example.

        Examples:
            >>> from attention_math.examples import CAT_SLEEPS
            >>> CAT_SLEEPS.source.title
            'The cat sleeps'
        """
        return SOURCES[self.seed]

    def exact(self, name: str) -> sp.Matrix:
        """Input ``name`` (``"x"``, ``"w_q"``, …) as an exact SymPy matrix.

        Examples:
            >>> from attention_math.examples import FIVE_WORDS
            >>> FIVE_WORDS.exact("x")[2, :]
            Matrix([[1, 1]])
        """
        rows = getattr(self, name)
        if not rows:
            raise ValueError(f"example {self.id!r} publishes no {name!r}")
        return sp.Matrix([[exact_entry(e) for e in row] for row in rows])

    def numeric(self, name: str, dtype: type | None = None) -> np.ndarray:
        """Input ``name`` as a NumPy array of ``dtype`` (float64 unless given).

        Examples:
            >>> from attention_math.examples import CAT_SLEEPS
            >>> CAT_SLEEPS.numeric("w_q")[0]
            array([0.2, 0.4, 0.6, 0.8])
        """
        return np.array(self.exact(name).evalf(30).tolist(), dtype=dtype or np.float64)

    @property
    def sizes(self) -> dict[str, int]:
        """The example's sizes read from its inputs: ``L`` (tokens), ``d_model``, ``d_k``,
        ``d_v``, for the prose that describes it (an example published as ``x`` and weights).

        Examples:
            >>> from attention_math.running import RUNNING
            >>> RUNNING.sizes
            {'L': 3, 'd_model': 4, 'd_k': 4, 'd_v': 2}
        """
        if not (self.x and self.w_q and self.w_v):
            raise ValueError(f"example {self.id!r} publishes no x, w_q and w_v to size it by")
        return {
            "L": len(self.x),
            "d_model": len(self.x[0]),
            "d_k": len(self.w_q[0]),
            "d_v": len(self.w_v[0]),
        }

    def has(self, name: str) -> bool:
        """Whether the source document publishes input ``name``.

        Examples:
            >>> from attention_math.examples import LETS_GO
            >>> LETS_GO.has("w_k"), LETS_GO.has("w_v")
            (True, False)
        """
        return bool(getattr(self, name))


def _c(
    cid: str,
    where: str,
    quantity: str,
    index: Sequence[int],
    published: str | Sequence[object],
    verdict: str,
    diagnosis: str = "",
    decimals: int | None = None,
) -> Claim:
    texts = (published,) if isinstance(published, str) else tuple(str(p) for p in published)
    return Claim(cid, where, quantity, tuple(index), texts, verdict, diagnosis, decimals)


# --- source 000: the 2×2 identity example -------------------------------------------------

_ROUNDED_W = "from the published (rounded) weights"
_ONE_MINUS = "one minus the other published weight(s) of the row"

IDENTITY_2X2 = Example(
    id="identity-2x2",
    title="The 2×2 identity example",
    seed="000_39ab2f0727ddffcb.txt",
    x=((1, 0), (0, 1)),
    w_q=((1, 0), (0, 1)),
    w_k=((1, 0), (0, 1)),
    w_v=((1, 2), (3, 4)),
    notes=(
        "Listing 3 and section 5.1 of the document: identity input, W_Q = W_K = I, "
        "W_V = [[1, 2], [3, 4]], d_k = 2. The OCR'd text repeats eqs. 30–32; only the second "
        "copy numbers all three."
    ),
    dims={"seq_len": 2, "d_k": 2, "d_v": 2},
    claims=(
        _c("1/√2", "§5.1 eqs. 20, 21, 25 (e^0.7071)", "scaled", (0, 0), "0.7071", AGREES),
        _c(
            "P[1,1]", "§5.1 eqs. 22, 27", "weights", (0, 0), "0.6699", SLIP, "last digit off by one"
        ),
        _c("P[1,2]", "§5.1 eqs. 22, 27", "weights", (0, 1), "0.3301", SLIP, _ONE_MINUS),
        _c(
            "P[2,1]", "§5.1 eqs. 26, 27", "weights", (1, 0), "0.3301", SLIP, "last digit off by one"
        ),
        _c("P[2,2]", "§5.1 eqs. 26, 27", "weights", (1, 1), "0.6699", SLIP, _ONE_MINUS),
        _c("P₁₁·V₁₁", "§5.1 eq. 31", "product", (0, 0, 0), "0.6699", SLIP, _ROUNDED_W),
        _c("P₁₂·V₂₁", "§5.1 eq. 31", "product", (0, 1, 0), "0.9903", SLIP, _ROUNDED_W),
        _c("P₁₁·V₁₂", "§5.1 eq. 31", "product", (0, 0, 1), "1.3398", SLIP, _ROUNDED_W),
        _c("P₁₂·V₂₂", "§5.1 eq. 31", "product", (0, 1, 1), "1.3204", SLIP, _ROUNDED_W),
        _c("P₂₁·V₁₁", "§5.1 eq. 31", "product", (1, 0, 0), "0.3301", SLIP, _ROUNDED_W),
        _c("P₂₂·V₂₁", "§5.1 eq. 31", "product", (1, 1, 0), "2.0097", SLIP, _ROUNDED_W),
        _c("P₂₁·V₁₂", "§5.1 eq. 31", "product", (1, 0, 1), "0.6602", SLIP, _ROUNDED_W),
        _c("P₂₂·V₂₂", "§5.1 eq. 31", "product", (1, 1, 1), "2.6796", SLIP, _ROUNDED_W),
        _c("O[1,1]", "§5.1 eq. 32", "output", (0, 0), "1.6602", SLIP, _ROUNDED_W),
        _c("O[1,2]", "§5.1 eq. 32", "output", (0, 1), "2.6602", SLIP, _ROUNDED_W),
        _c("O[2,1]", "§5.1 eq. 32", "output", (1, 0), "2.3398", SLIP, _ROUNDED_W),
        _c("O[2,2]", "§5.1 eq. 32", "output", (1, 1), "3.3398", SLIP, _ROUNDED_W),
        _c("shape Q", "Listing 1 comment", "shape:q", (), "(seq_len, d_k)", AGREES),
        _c("shape K", "Listing 1 comment", "shape:k", (), "(seq_len, d_k)", AGREES),
        _c("shape V", "Listing 1 comment", "shape:v", (), "(seq_len, d_v)", AGREES),
        _c("shape scores", "Listing 2 comment", "shape:scores", (), "(seq_len, seq_len)", AGREES),
        _c("shape P", "Listing 2 comment", "shape:weights", (), "(seq_len, seq_len)", AGREES),
        _c("shape output", "Listing 2 comment", "shape:output", (), "(seq_len, d_v)", AGREES),
    ),
)
"""Source 000: identity input, ``W_Q = W_K = I``, ``W_V = [[1, 2], [3, 4]]``, ``d_k = 2``, with
its published claims."""

# --- source 001: "Smart robots perform complex tasks" -------------------------------------

_EXP0 = "exp(0) treated as 0"
_UNEXPLAINED = "no candidate slip we tried reproduces it"
_TRUNC = "truncated instead of rounded"

FIVE_WORDS = Example(
    id="five-words",
    title="Five words, identity projections",
    seed="001_6252953421927e15.txt",
    x=((1, 0), (0, 1), (1, 1), (2, 0), (0, 2)),
    w_q=((1, 0), (0, 1)),
    w_k=((1, 0), (0, 1)),
    w_v=((1, 0), (0, 1)),
    tokens=("Smart", "robots", "perform", "complex", "tasks"),
    notes="Two-dimensional word vectors; Q, K and V matrices 'assumed to be the identity'.",
    dims={"d_k": 2},
    claims=(
        *(
            _c(f"robots·{w} score", "Dot Product Scores list", "scores", (1, j), s, AGREES)
            for j, (w, s) in enumerate(
                zip(("Smart", "robots", "perform", "complex", "tasks"), "01102", strict=True)
            )
        ),
        *(
            _c(f"robots·{w} scaled", "Scaling list; Softmax argument", "scaled", (1, j), s, AGREES)
            for j, (w, s) in enumerate(
                zip(
                    ("Smart", "robots", "perform", "complex", "tasks"),
                    ("0", "0.71", "0.71", "0", "1.41"),
                    strict=True,
                )
            )
        ),
        _c("embedding size", "'two-dimensional vectors'", "shape:x", (1,), "2", AGREES),
        _c("d_k", "Scaling: 'the dimension of the key vectors … √2'", "shape:k", (1,), "2", AGREES),
        _c("w(robots→Smart)", "Softmax line", "weights", (1, 0), "0", WRONG, _EXP0, 2),
        _c("w(robots→robots)", "Softmax line", "weights", (1, 1), "0.19", SLIP, _TRUNC),
        _c("w(robots→perform)", "Softmax line", "weights", (1, 2), "0.19", SLIP, _TRUNC),
        _c("w(robots→complex)", "Softmax line", "weights", (1, 3), "0", WRONG, _EXP0, 2),
        _c("w(robots→tasks)", "Softmax line", "weights", (1, 4), "0.62", WRONG, _ONE_MINUS),
        _c("out(robots)₁", "Weighted sum; Output", "output", (1, 0), "0.19", WRONG, _ROUNDED_W),
        _c(
            "out(robots)₂",
            "Weighted sum; Output",
            "output",
            (1, 1),
            "1.43",
            WRONG,
            "from the published weights, term 'robots' left out",
        ),
        _c("out(Smart)₁", "'Similarly' list", "output", (0, 0), "1.28", WRONG, _UNEXPLAINED),
        _c(
            "out(Smart)₂", "'Similarly' list", "output", (0, 1), "0.24", WRONG, f"{_EXP0}; {_TRUNC}"
        ),
        _c("out(perform)₁", "'Similarly' list", "output", (2, 0), "0.87", SLIP, _TRUNC),
        _c("out(perform)₂", "'Similarly' list", "output", (2, 1), "0.87", SLIP, _TRUNC),
        _c("out(complex)₁", "'Similarly' list", "output", (3, 0), "1.64", WRONG, _UNEXPLAINED),
        _c("out(complex)₂", "'Similarly' list", "output", (3, 1), "0.12", WRONG, _UNEXPLAINED),
        _c("out(tasks)₁", "'Similarly' list", "output", (4, 0), "0.12", WRONG, _UNEXPLAINED),
        _c("out(tasks)₂", "'Similarly' list", "output", (4, 1), "1.64", WRONG, _UNEXPLAINED),
    ),
)
"""Source 001: five two-dimensional words, identity projections, with its published claims."""

# --- source 002: the 768-dimensional causal notebook --------------------------------------

_WHOLE = "softmax normalised over the whole matrix"
_PRINTED_COLUMNS = (*range(10), *range(758, 768))  # pandas elides the middle columns


def _table(text: str) -> Rows:
    """Rows of printed numbers, one row a line, as the strings printed."""
    return tuple(tuple(line.split()) for line in text.strip().splitlines())


# In [21]: the 20 printed columns of V; In [31]: the same columns of new_V.
_NB_V = _table("""
0.300657 0.174889 0.55084 0.542541 0.71307 0.654922 0.014812 0.846204 0.020754 0.318203 \
0.802917 0.550429 0.412732 0.671187 0.546453 0.680948 0.906085 0.21011 0.048897 0.968737
0.641522 0.353871 0.485978 0.025493 0.029522 0.296605 0.304838 0.853458 0.016998 0.996952 \
0.704518 0.606242 0.363611 0.330029 0.762868 0.375294 0.550619 0.049723 0.170887 0.129178
0.422075 0.71845 0.209494 0.852302 0.493842 0.602548 0.88043 0.345424 0.43035 0.797527 \
0.9461 0.317563 0.387658 0.094867 0.76017 0.209812 0.134985 0.082697 0.142534 0.241684
""")
_NB_OUT = _table("""
0.052224 0.030378 0.095681 0.094239 0.12386 0.11376 0.002573 0.146985 0.003605 0.055272 \
0.139466 0.095609 0.071691 0.116585 0.094919 0.11828 0.157386 0.036496 0.008493 0.168269
0.151522 0.085242 0.174118 0.103466 0.135389 0.164804 0.048483 0.283529 0.006363 0.208102 \
0.25322 0.192097 0.130385 0.172809 0.21488 0.181397 0.249064 0.046052 0.034634 0.197303
0.214962 0.187481 0.214652 0.233944 0.220438 0.262651 0.169419 0.348725 0.066204 0.322687 \
0.400753 0.247167 0.192598 0.200867 0.330464 0.225413 0.287572 0.062315 0.054945 0.253328
""")
_NB_M = _table("""
0.0 -inf -inf
0.0 0.0 -inf
0.0 0.0 0.0
""")

NOTEBOOK_768 = Example(
    id="causal-768",
    title="The 768-dimensional causal notebook",
    seed="002_d3eb890a75bf915a.txt",
    notes=(
        "Jupyter notebook: L = 3, d_k = d_v = 768, Q, K, V from np.random.rand (unseeded), "
        "causal mask M, attention = scipy.special.softmax(scaled + M), new_V = attention @ V. "
        "pandas prints 6 decimal places (dropping trailing zeros) and 20 of the 768 columns."
    ),
    # In [23]: the scaled scores, printed; Q and K are random and printed only in part.
    scaled=_table("""
6.714893 6.46585 6.558512
6.770609 6.569006 6.534449
6.892509 6.548279 6.485003
"""),
    v=_NB_V,
    columns=_PRINTED_COLUMNS,
    is_causal=True,
    dims={"L": 3, "d_k": 768, "d_v": 768},
    input_tolerance="0.0000005",  # inputs printed to 6 places: each is ± half a unit
    extra={
        # shapes of the printed DataFrames: rows, and the last column label + 1
        "printed_shapes": {"q": (3, 768), "k": (3, 768), "v": (3, 768), "mask": (3, 3)},
    },
    claims=(
        *(
            _c(f"M row {i + 1}", "In [28] pd.DataFrame(M)", "mask", (i,), row, AGREES)
            for i, row in enumerate(_NB_M)
        ),
        *(
            _c(
                f"new_V row {i + 1}",
                "In [31] pd.DataFrame(new_V)",
                "output",
                (i,),
                row,
                WRONG,
                _WHOLE,
                decimals=6,
            )
            for i, row in enumerate(_NB_OUT)
        ),
        _c("shape Q", "In [None]: np.random.rand(L, d_k)", "shape:q", (), "(L, d_k)", AGREES),
        _c("shape K", "In [None]: np.random.rand(L, d_k)", "shape:k", (), "(L, d_k)", AGREES),
        _c("shape V", "In [None]: np.random.rand(L, d_v)", "shape:v", (), "(L, d_v)", AGREES),
        _c("shape M", "In [27]: np.tril(np.ones((L,L)))", "shape:mask", (), "(L, L)", AGREES),
        _c("d_k", "step 3: 'square root of the dimension (768)'", "shape:k", (1,), "768", AGREES),
    ),
)
"""Source 002: the causal notebook, ``L = 3``, ``d_k = d_v = 768``, with its printed tables."""


# --- source 003: "<SOS> let's go", with OCR-damaged query weights -------------------------


@dataclass(frozen=True)
class Recovery:
    """Weights recovered from ``x`` and the printed product ``x · w`` (least squares)."""

    printed: sp.Matrix  # the weights as the OCR gave them
    least_squares: sp.Matrix  # exact least-squares solution of x · w = product
    rounded: sp.Matrix  # rounded to the printed decimals: the recovered weights
    residual_least_squares: sp.Matrix  # x · least_squares − product
    residual_rounded: sp.Matrix  # x · rounded − product
    damaged: tuple[tuple[int, int], ...]  # entries where printed ≠ rounded


def recover_weights(x: Rows, product: Rows, printed: Rows, decimals: int = 2) -> Recovery:
    """Solve ``x · w = product`` for ``w`` exactly (least squares) and round to ``decimals``.

    ``x`` is ``(L, d_model)`` with ``L ≥ d_model``, so the printed product over-determines
    ``w``; the residuals show how well the recovered weights explain what was printed.

    Examples:
        >>> from attention_math.examples import recover_weights
        >>> r = recover_weights(((1, 0), (0, 1), (1, 1)), (("2", "0"), ("0", "1"), ("2", "1")),
        ...                     printed=(("0.2", "0"), ("0", "1")), decimals=1)
        >>> r.rounded, r.damaged
        (Matrix([
        [2, 0],
        [0, 1]]), ((0, 0),))
    """
    X = sp.Matrix([[exact_entry(e) for e in row] for row in x])
    P = sp.Matrix([[exact_entry(e) for e in row] for row in product])
    W0 = sp.Matrix([[exact_entry(e) for e in row] for row in printed])
    if X.rows != P.rows or X.rows < X.cols:
        raise ValueError(f"x {X.shape} and product {P.shape} do not over-determine w")
    w = (X.T * X).inv() * X.T * P  # (d_model, d): the normal equations, solved exactly
    unit = sp.Rational(1, 10**decimals)
    rounded = w.applyfunc(lambda e: sp.floor(e / unit + sp.Rational(1, 2)) * unit)
    damaged = tuple(
        (i, j) for i in range(w.rows) for j in range(w.cols) if rounded[i, j] != W0[i, j]
    )
    return Recovery(W0, w, rounded, X * w - P, X * rounded - P, damaged)


_LETS_GO_X = (("1.16", "0.23"), ("0.57", "1.36"), ("4.41", "-2.16"))
_LETS_GO_Q = (("2.61", "0.36"), ("1.50", "-0.46"), ("9.42", "2.91"))
_LETS_GO_K = (("-1.80", "0.57"), ("0.81", "-0.19"), ("-11.0", "3.33"))
_LETS_GO_WQ_PRINTED = (("0.22", "0.41"), ("0.17", "-0.51"))
LETS_GO_RECOVERY = recover_weights(_LETS_GO_X, _LETS_GO_Q, _LETS_GO_WQ_PRINTED)
"""The damaged ``W_Q`` of source 003 recovered from its printed ``X`` and ``Q`` (least squares,
exact)."""

LETS_GO = Example(
    id="lets-go",
    title="“⟨SOS⟩ let's go”: what a causal mask changes",
    seed="003_c9caecb3e102e3f3.txt",
    x=_LETS_GO_X,
    w_q=tuple(tuple(str(e) for e in LETS_GO_RECOVERY.rounded.row(i)) for i in range(2)),
    w_k=(("-1.82", "0.57"), ("1.36", "-0.38")),
    tokens=("⟨SOS⟩", "let's", "go"),
    notes=(
        "Two tables print Encoded Values × Weightsᵀ = Q and = K. The OCR lost a digit of the "
        "query weights; the value weights, scores and percentages were figures the OCR "
        "dropped, so the example stops at the attention weights."
    ),
    dims={"d_k": 2},
    extra={"w_q_printed": _LETS_GO_WQ_PRINTED, "recovery": LETS_GO_RECOVERY},
    claims=(
        *(
            _c(f"Q[{i + 1},{j + 1}]", "Query table, column Q", "q", (i, j), s, AGREES)
            for i, row in enumerate(_LETS_GO_Q)
            for j, s in enumerate(row)
        ),
        *(
            _c(f"K[{i + 1},{j + 1}]", "Key table, column K", "k", (i, j), s, AGREES)
            for i, row in enumerate(_LETS_GO_K)
            for j, s in enumerate(row)
        ),
        _c("d_k", "'we scale by the square root of 2'", "shape:k", (1,), "2", AGREES),
    ),
)
"""Source 003: "⟨SOS⟩ let's go", with ``W_Q`` recovered, and its published claims."""

# --- source 004: "The cat sleeps" ----------------------------------------------------------

_CAT_W = ("0.324", "0.467", "0.209"), ("0.305", "0.515", "0.180"), ("0.346", "0.432", "0.222")
_CAT_O = (
    ("1.536", "1.519", "1.265", "1.157"),
    ("1.566", "1.536", "1.261", "1.137"),
    ("1.512", "1.507", "1.269", "1.174"),
)

CAT_SLEEPS = Example(
    id="the-cat-sleeps",
    title="“The cat sleeps”: 4-dimensional embeddings",
    seed="004_5e5615d3892a1c49.txt",
    x=((1, 0, 1, 0), (0, 1, 1, 1), (1, 1, 0, 1)),
    w_q=(
        ("0.2", "0.4", "0.6", "0.8"),
        ("0.1", "0.3", "0.5", "0.7"),
        ("0.9", "0.8", "0.7", "0.6"),
        ("0.5", "0.4", "0.3", "0.2"),
    ),
    w_k=(
        ("0.1", "0.3", "0.5", "0.7"),
        ("0.6", "0.4", "0.2", "0.1"),
        ("0.8", "0.9", "0.7", "0.6"),
        ("0.2", "0.1", "0.3", "0.4"),
    ),
    w_v=(
        ("0.3", "0.5", "0.7", "0.9"),
        ("0.6", "0.4", "0.2", "0.1"),
        ("0.8", "0.9", "0.7", "0.6"),
        ("0.5", "0.4", "0.3", "0.2"),
    ),
    tokens=("The", "cat", "sleeps"),
    notes="Embeddings S (3 × 4) and 4 × 4 weights; scores scaled by √d with d = Q.shape[1].",
    dims={},
    claims=(
        *(
            _c(
                f"P[{i + 1},{j + 1}]",
                "'The attention weight would be'",
                "weights",
                (i, j),
                s,
                AGREES,
            )
            for i, row in enumerate(_CAT_W)
            for j, s in enumerate(row)
        ),
        *(
            _c(f"O[{i + 1},{j + 1}]", "'The final output is'", "output", (i, j), s, AGREES)
            for i, row in enumerate(_CAT_O)
            for j, s in enumerate(row)
        ),
        _c("embedding size", "'4-dimensional embeddings'", "shape:x", (1,), "4", AGREES),
        _c(
            "shape X (the embeddings, S in the source)",
            "comment '3 tokens, each with 3 features'",
            "shape:x",
            (),
            "(3, 3)",
            WRONG,
            "x has shape (3, 4)",
        ),
        *(
            _c(
                f"shape {n}",
                "comment '(4x3 matrices)'",
                f"shape:{w}",
                (),
                "(4, 3)",
                WRONG,
                f"{w} has shape (4, 4)",
            )
            for n, w in (("W_q", "w_q"), ("W_k", "w_k"), ("W_v", "w_v"))
        ),
        _c("d", "d = Q.shape[1]; softmax(QKᵀ/√4)", "shape:q", (1,), "4", AGREES),
    ),
)
"""Source 004: "The cat sleeps", 4-dimensional embeddings, with its published claims."""

EXAMPLES: dict[str, Example] = {
    e.id: e for e in (IDENTITY_2X2, FIVE_WORDS, NOTEBOOK_768, LETS_GO, CAT_SLEEPS)
}
"""The five audited worked examples, by id."""
