"""What an exercise is, what a slip looks like, and what the checker answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy as sp

if TYPE_CHECKING:  # the NumPy reference is only called at build time
    import numpy as np

__all__ = [
    "CHAPTERS",
    "DIAGNOSES",
    "GREEK",
    "TASKS",
    "Exercise",
    "Mistake",
    "Result",
    "input_tex",
    "shape_words",
]

CHAPTERS: dict[str, str] = {
    "forward": "The forward pass",
    "examples": "Worked examples",
    "scaling": "Scaling",
    "softmax": "Softmax",
    "masks": "Masks",
    "multihead": "Multi-head attention",
    "positions": "Positions and decoding",
    "modern": "Long contexts and the modern block",
    "gradients": "Gradients",
    "views": "Other views of attention",
    "systems": "Heads, IO and decoding",
    "latent": "Latent attention (MLA)",
    "gates": "Sinks and gates",
    "sparse": "Sparse selection",
    "ssd": "State-space duality",
    "precision": "Low precision",
}
"""Chapter id -> title, in reading order (the site's navigation): the one list of chapters.

Chapter ``c``'s exercises are ``exercises()`` of the module
``attention_math.exercises.chapters.c``; its page on the site is ``exercises/c.md``, titled
from here."""

DIAGNOSES: dict[str, str] = {
    "transposed": "your answer is the transpose of the right one (rows and columns swapped)",
    "missing_transpose": "dS must be transposed: key j collects column j of dS",
    "softmax_axis": "the softmax was taken over the wrong axis: each row (one query) must sum to 1",
    "whole_matrix": (
        "the softmax ran over the whole matrix (as SciPy's does without an axis): each row "
        "(one query) must sum to 1 on its own"
    ),
    "exp0_zero": "e⁰ was taken as 0: it is 1, and only a score of −∞ gives weight 0",
    "rounded_early": (
        "the weights were rounded before multiplying: their rounding error, times the values, "
        "reaches the output; round only the result"
    ),
    "missing_scale": "the scale factor is missing: the scores must be multiplied by 1/√d_k",
    "wrong_limit": "that is the limit c → 0 (uniform weights), not c → ∞",
    "wrong_scale": "the scale factor is wrong: the scores must be multiplied by 1/√d_k",
    "mask_after_softmax": (
        "the mask was applied after the softmax: blocked scores must be set to -∞ before it, "
        "so that the remaining weights of each row still sum to 1"
    ),
    "rounding": "right up to rounding only: this exercise wants the exact value",
    "shape": "the answer has the wrong shape",
    "unnormalized": "the exponentials were not divided by their sum",
    "missing_term": "a term is missing: the softmax's Jacobian is diag(p) − p pᵀ, not diag(p)",
    "std_vs_variance": "that is the standard deviation; the question asks for the variance",
    "rope_layout": (
        "you paired the coordinates as (x[2i], x[2i+1]) (the interleaved layout); this exercise "
        "uses the rotate_half layout, which pairs x[i] with x[i + d/2]"
    ),
    "rotation_direction": (
        "the rotation goes the wrong way: RoPE turns pair i of position j by +j·θ_i"
    ),
    "absolute_position": (
        "the rotated score depends on the offset j − i of the positions, not on i + j"
    ),
    "bias_direction": (
        "the weights run the wrong way: ALiBi's bias −m·(i − j) is largest for the nearest key"
    ),
    "kv_factor": "a cache holds a key AND a value: two vectors per token, layer and kv head",
    "receptive_overlap": (
        "consecutive windows share a token: each layer reaches w − 1 tokens further, not w"
    ),
    "softmax_one": "softmax₁ adds 1 (e⁰, the extra zero logit) to the denominator",
    "sink_missing": (
        "the sink is missing: its e^s stays in the denominator, so the keys' weights sum to less "
        "than 1"
    ),
    "gate_sign": "the gate is σ(g) = 1/(1 + e^(−g)), not σ(−g): a large g lets the output through",
    "chunk_whole": (
        "Qwen3-Next splits each head's 2·d numbers into query then gate, not the whole "
        "projection in two halves"
    ),
    "gain_offset": "Qwen3-Next's RMSNorm multiplies by 1 + w (its weight starts at 0), not by w",
    "missing_mask": "the mask is missing: a blocked key must get weight 0",
    "wrong_factor": "off by a constant factor: check the ½ in the formula",
    "pi_direction": (
        "position interpolation divides every frequency by the factor (positions are squeezed "
        "into the trained range), it does not multiply them"
    ),
    "ramp_complement": (
        "that is 1 − γ, the share kept as is; the ramp γ is the share interpolated (0 for the "
        "fast pairs, 1 for the slow ones)"
    ),
    "ntk_exponent": (
        "multiplying the base by f divides the slowest pair by only f^((d−2)/d): the base "
        "must be multiplied by f^(d/(d−2))"
    ),
    "inverse_permutation": (
        "that is the inverse permutation: it says where each old column goes, not which old "
        "column each new one takes"
    ),
    "layernorm_not_rms": "that is LayerNorm: RMSNorm does not subtract the mean",
    "rms_vs_norm": (
        "you divided by the Euclidean norm; RMSNorm divides by the root MEAN square, √(Σ x_i² / d)"
    ),
    "rms_projection": (
        "the term −y yᵀ/d is missing: scaling x does not change y, so the gradient has no "
        "component along y"
    ),
    "gate_activation": "the gate is SiLU(z) = z·σ(z), not z itself",
    "bound_scale": "the score is divided by √d: the bound is √d·g², not d·g²",
    "bucket_direction": (
        "keys after the query use the upper half of the buckets; this key is before the query"
    ),
    "max_distance_bucket": (
        "max_distance is where the logarithmic bins would reach the next bucket, not where the "
        "last bucket starts: the last one begins earlier"
    ),
    "dropout_scaling": (
        "the kept weights are divided by 1 − p (inverted dropout), which is what keeps the "
        "expectation unchanged"
    ),
    "missing_sinks": (
        "a plain sliding window: StreamingLLM also keeps the first s tokens, the attention sinks"
    ),
    "gqa_interleaved": (
        "query head i reads kv head ⌊i / (h/h_kv)⌋: consecutive query heads share a kv head, "
        "not every h_kv-th one"
    ),
    "kv_heads": "the cache holds h_kv key/value heads per layer, not one per query head (h)",
    "merge_weights": (
        "each chunk's output must be weighted by its share of the softmax's denominator, "
        "e^(lse_c − lse), not equally"
    ),
    "missing_rescale": (
        "the state with the smaller maximum must be rescaled by e^(m_old − m_new) before the "
        "sums are added"
    ),
    "no_recompute": (
        "that is the backward that stores P; FlashAttention's backward computes S = QKᵀ again"
    ),
    "offset_sum": (
        "a shared bias b_(i−j) collects dS from every (i, j) with that offset: sum each diagonal"
    ),
    "sum_axis": (
        "the sum runs over the wrong axis: in dS = P ∘ (dP − rowsum(P ∘ dP)) it runs over the "
        "keys of each query (a row), not over a column"
    ),
    "missing_relu": (
        "the ReLU is missing: each head's score q·k is set to 0 when negative, before the "
        "weights w sum the heads"
    ),
    "overlap_weight": (
        "eq. (9) counts a compression block once per stride d it shares with the selection "
        "block: a block wholly inside counts l/d times"
    ),
    # state-space duality (Mamba-2)
    "decay_off_by_one": (
        "the weight of x_j at step i decays by a_(j+1) ⋯ a_i: a_j is not in it (the state "
        "decayed by a_j before x_j entered)"
    ),
    "decay_missing": "the state decays at every step: h_t = a_t h_(t−1) + b_t x_t, not h_(t−1) + …",
    "mean_terms": (
        "the means add terms: Var(xy) = E[x²]E[y²] − (E[x]E[y])² for independent x, y, which "
        "is not Var(x)·Var(y) unless both means are zero"
    ),
    "lse_shift": (
        "the maximum m subtracted inside the logarithm must be added back outside it: "
        "log Σ e^(s_i) = m + log Σ e^(s_i − m)"
    ),
    "fp16_saturates": (
        "float16 does not saturate: a number beyond its largest finite value, 65504, rounds to ±∞"
    ),
    "fill_absorbs": (
        "in exact arithmetic a fill shared by the whole row cancels, but the float rounds "
        "s_j − 10⁹ to −10⁹ itself: the scores are gone before the softmax"
    ),
    "head_block": (
        "head i meets its own block of rows of W_O (rows (i − 1)·d_v + 1 to i·d_v), not "
        "another head's"
    ),
    "mean_side": (
        "query and key swapped: a key mean adds q_i·μ to row i (one number per row, which the "
        "softmax ignores); a query mean adds μ·k_j (one number per key, which moves the weights)"
    ),
    "no_implicit_bit": (
        "a normal number has an implicit leading 1: p = fraction bits + 1, so u = 2^-(m+1)"
    ),
    "ieee_max": (
        "that is the IEEE layout; E4M3fn has no infinities, so the top exponent holds numbers "
        "and only its all-ones fraction is NaN"
    ),
    "truncated": "that is the value below (rounding toward zero); round to the nearest",
    "min_normal": "that is the smallest normal value; the subnormals go further down",
    "u_not_attained": (
        "u is the bound; the error is largest at the midpoint 1 + u, relative to it: u/(1+u)"
    ),
    "tie_not_even": "a tie goes to the even code (round half to even), not always up",
    "first_order": "that drops the u² term: (1 + u)² − 1 = 2u + u²",
}
"""Diagnosis code -> what it means, shown to the learner."""

TASKS: dict[str, str] = {"compute": "", "prove": "Proof", "explain": "Explain"}
"""What an exercise asks -> the label its page shows: ``"compute"`` a value (no label);
``"prove"`` and ``"explain"`` an argument, whose worked solution is checked step by step and
whose checkable answer is the value the argument arrives at."""


GREEK = frozenset(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
    "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split()
)
r"""Names of Greek letters, which an input's name writes as the letter (``mu`` → ``\mu``)."""


def input_tex(name: str) -> str:
    """An input's name (a Python identifier, as solutions index it) in LaTeX: a Greek
    letter's name is the letter (``mu`` is μ, ``Pi`` is Π), and a subscript of more than one
    letter is a word, not a product (``S_raw`` is the raw scores, not ``S_r`` then ``aw``).

    Examples:
        >>> from attention_math.exercises.model import input_tex
        >>> input_tex("S_raw"), input_tex("x_1"), input_tex("V")
        ('S_{\\\\text{raw}}', 'x_1', 'V')
        >>> input_tex("Pi"), input_tex("mu_q")
        ('\\\\Pi', '\\\\mu_q')
    """
    base, _, sub = name.partition("_")
    if base in GREEK:
        base = "\\" + base
    if not sub:
        return base
    return f"{base}_{sub}" if len(sub) == 1 else f"{base}_{{\\text{{{sub}}}}}"


def shape_words(shape: tuple[int, ...]) -> str:
    """The form of an answer of ``shape`` in words, as the pages and the command line say it.

    Examples:
        >>> from attention_math.exercises.model import shape_words
        >>> shape_words(()), shape_words((3, 1))
        ('a single value', 'a 3×1 matrix')
    """
    return "a single value" if shape == () else f"a {shape[0]}×{shape[1]} matrix"


@dataclass(frozen=True)
class Mistake:
    """A known slip: the answer it produces and the diagnosis that names it."""

    diagnosis: str
    answer: sp.Basic
    detail: str = ""

    def __post_init__(self) -> None:
        if self.diagnosis not in DIAGNOSES:
            raise ValueError(f"unknown diagnosis {self.diagnosis!r}; known: {sorted(DIAGNOSES)}")


@dataclass(frozen=True)
class Exercise:
    """One exercise: statement, inputs, exact reference answer, and the slips it recognises.

    ``tolerance`` is ``None`` for an exact answer; otherwise the answer may be decimal and is
    right when every entry is within ``tolerance`` of the reference. ``subs`` is applied to
    both sides before comparing (e.g. ``σ → σ(1/√2)`` or ``p₂ → 1 − p₁``), and ``numeric`` is
    the NumPy reference that the exact answer is cross-checked against (to ``bound_eps``
    machine epsilons).

    The solution, as its chapter's page shows it: ``explanation`` says how to get there
    (Markdown with LaTeX), and ``solution`` computes the answer from the exercise as a learner
    would (the page prints its source and its result, which must pass this checker);
    ``remark``, when there is more to say, returns Markdown shown after the result.
    ``task`` (a key of `TASKS`) says whether the exercise asks for a value or for an argument
    (a proof, an explanation) that ends in one.
    """

    id: str
    chapter: str
    title: str
    statement: str
    answer: sp.Basic
    inputs: Mapping[str, sp.Basic] = field(default_factory=dict)
    mistakes: tuple[Mistake, ...] = ()
    symbols: Mapping[str, sp.Symbol] = field(default_factory=dict)
    subs: Mapping[sp.Basic, sp.Basic] = field(default_factory=dict)
    tolerance: float | None = None
    numeric: Callable[[], np.ndarray | np.floating] | None = None
    bound_eps: float = 16.0
    kind: str = "matrix"
    explanation: str = ""
    solution: Callable[[Exercise], object] | None = None
    remark: Callable[[Exercise], str] | None = None
    task: str = "compute"

    def __post_init__(self) -> None:
        if self.chapter not in CHAPTERS:
            raise ValueError(f"{self.id}: unknown chapter {self.chapter!r}")
        if self.task not in TASKS:
            raise ValueError(f"{self.id}: unknown task {self.task!r}; known: {', '.join(TASKS)}")
        if self.tolerance is not None and not self.tolerance > 0:
            raise ValueError(f"{self.id}: tolerance must be positive, got {self.tolerance!r}")

    @property
    def shape(self) -> tuple[int, ...]:
        """``(rows, cols)`` for a matrix answer, ``()`` for a single value."""
        return tuple(self.answer.shape) if isinstance(self.answer, sp.MatrixBase) else ()


@dataclass(frozen=True)
class Result:
    """The checker's verdict. ``bool(result)`` is ``result.correct``; ``str`` is the message."""

    exercise_id: str
    correct: bool
    message: str
    diagnosis: str | None = None

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        return self.message
