r"""Nothing used before it is defined, and one meaning per symbol.

Order: following the nav, a page may use a glossary symbol only if the page that introduces it
(its ``page=`` in ``attention_site.notation.SYMBOLS``) comes no later. The symbols of a page are
those of its built maths (``tests/test_notation.page_math``), read by ``symbols_in_tex``.

One meaning: no symbol name is defined by two entries; a letter that several entries share
(``d``, ``d_k``, ``d_model``) is a declared family of one meaning (``FAMILIES``); and the symbols
issue 37 found with several meanings keep the one the site chose, on every built page, the
exercise pages included (``SENSES``): m the running maximum, as FlashAttention writes it; W_Q,
W_K, W_V for the projections; R RoPE's rotation by position, rot a rotation by an angle; σ a
standard deviation (the sigmoid written out, ``\operatorname{sigmoid}``); s a row of scores,
logits included (z only linear attention's normaliser z_t); w the sliding window (Performer's
random direction ω, as its paper writes it); p the weights (a position is i or j, a dropout
probability p_drop); the sizes of a matrix product n_1, n_2, n_3.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attention_site.notation import (
    SYMBOLS,
    introduced_late,
    meanings,
    symbol_for,
    symbols_in_tex,
)
from tests.conftest import mkdocs_config, nav_pages
from tests.site.test_notation import page_math, source_of

#: Pages that show symbols of a whole chapter by design, each linked to the page that explains
#: it: the home page's one-line formula, the chapter overviews (the forward pass previews its
#: formula with the running example), the forward chapter's table of notation and the glossary.
#: Their symbols are not checked; a symbol they introduce still counts from where they stand.
#: The exercise pages are checked: each follows its chapter in the nav.
#: an entry of a generic SymPy matrix (``generic_matrix("w", 2, 2)`` prints w_11 … w_22): a
#: placeholder of one derivation, named on its page, not a symbol of the glossary
GENERIC_ENTRY = re.compile(r"^[a-z]_[1-9][0-9]$")

EXEMPT = {
    "index.md",
    "forward/index.md",
    "forward/notation.md",
    "why/index.md",
    "positions/index.md",
    "glossary.md",
}

#: Letters that several glossary entries share, each a family with one meaning: the bare letter
#: and names made by a descriptive subscript or label. A letter shared by two entries that is not
#: here fails (the sigmoid σ beside the standard deviations σ_q, σ_k was such a pair).
FAMILIES = {
    "L": "a length: L, L_q, L_k; L_train, L_test of context extension",
    "d": "a width: d, d_k, d_v, d_model, d_head, d_out; d_h, d_R of MLA (DeepSeek-V2's names)",
    "X": "an input sequence: X; X_q, X_kv of cross-attention",
    "x": "one input; x_{i+d/2}, the coordinate RoPE pairs with x_i",
    "W": "a learned weight matrix: W_Q, W_K, W_V, W_O, W_QK, W_OV, W_E, W_U, W_1, W_2, W_a, "
    "W of a bilinear score; W_read, the weights a decoder reads; W_θ, Qwen3-Next's output gate",
    "S": "scores: S, S_raw; S_j(Δ), RoFormer's partial sums of phases",
    "M": "the mask M; M_SRAM, FlashAttention's fast memory (a capacity, labelled)",
    "softmax": "softmax; softmax_1, with an extra zero logit",
    "p": "the weights p; p_drop, the dropout probability (a label, never a bare p); p_S̄, the "
    "weight top-k attention drops",
    "e": "Euler's e; e_max, the largest exponent of a float format",
    "n": "a count: n; n_layers, n_bytes, n_block; n_h, n_g of MLA (DeepSeek-V2's names)",
    "r": "the number of random features r; r_max, r_min, the largest and smallest floats",
    "h": "the number of heads h; h_kv, of key/value heads",
    "B": "the batch size B; B_r, B_c, FlashAttention's block sizes",
    r"\mathbb{E}": "expectation; E_q, E_ω over a named variable",
    r"\beta": "the ALiBi slope β_k; β_fast, β_slow of YaRN (labelled)",
    "w": "the window w; w_a, Bahdanau's score vector (the paper's name)",
    r"\gamma": "a learned gain: γ (LayerNorm), γ_q, γ_k (QK-norm); γ_i, YaRN's ramp",
    "b": "a shift b; b_1, b_2, the feed-forward biases",
    "U": "U_a, Bahdanau's key weights; U, causal linear attention's state",
    "s": "scores: a row s; s_sink, gpt-oss's learned sink logit, one more column of the row",
    "I": "the identity I; I_{t,s}, DeepSeek Sparse Attention's index score (the paper's name)",
    "k": "a key k; k_s, the indexer's key at position s (DeepSeek Sparse Attention)",
}


def _base(name: str) -> str:
    """A name without its subscript: ``\\sigma_q`` is ``\\sigma``."""
    return name.partition("_")[0]


def _sub(name: str) -> str:
    return name.partition("_")[2]


#: The positions chapter: no bare p there (a position is i or j, a dropout probability p_drop)
POSITION_PAGES = ("docs/positions/", "docs/exercises/positions.md", "docs/exercises/modern.md")
#: Pages whose maths may use the window w: the sliding-window page, the chapter overview that
#: previews it, its exercise, and the glossary
WINDOW_PAGES = (
    "docs/positions/sliding-window.md",
    "docs/positions/index.md",
    "docs/positions/decoding-cost.md",  # Mistral's window caps the keys read
    "docs/recent/sparse.md",  # NSA's sliding branch: the last w tokens
    "docs/exercises/positions.md",
    "docs/glossary.md",
)
#: Pages whose maths may use a bare σ, always a standard deviation: the statistics of Why it
#: works (Scaling) and the glossary
SIGMA_PAGES = ("docs/why/", "docs/glossary.md")


def _applied(letter: str) -> re.Pattern[str]:
    """``letter`` applied to an argument: ``\\sigma(a)``, ``\\sigma\\left(a``."""
    return re.compile(letter + r"(?![A-Za-z])\s*(?:\\left\s*|\\!\s*)?\(")


def _sigma(src: str, tex: str, names: list[str]) -> str | None:
    if _applied(r"\\sigma").search(tex):
        return "σ applied to an argument is the sigmoid: write \\operatorname{sigmoid}(a)"
    if r"\sigma" in names and not src.startswith(SIGMA_PAGES):
        return "a bare σ outside the statistics pages: σ is only a standard deviation"
    return None


#: the subscripts of linear attention's running normaliser z_t
ZT = {"t", "t-1", "0"}


def _z(src: str, tex: str, names: list[str]) -> str | None:
    bad = [n for n in names if _base(n) == "Z" or (_base(n) == "z" and _sub(n) not in ZT)]
    if bad:
        return f"{bad}: a row of scores is s (logits too); z is only linear attention's z_t"
    return None


def _w(src: str, tex: str, names: list[str]) -> str | None:
    vector = [n for n in names if n in (r"\varphi_w", r"\varphi_W", r"\mathbb{E}_w")]
    if vector or re.search(r"(?<![\\\w])w\s*(?:\\cdot|\\sim|\^\s*\\top)|e\^\{\s*w\b", tex):
        return "w as a vector: Performer's random direction is ω (Ω for r of them)"
    if "w" in names and not src.startswith(WINDOW_PAGES):
        return "a bare w away from the sliding-window pages: w is only the window"
    return None


_P_POSITION = re.compile(
    r"PE\s*\(\s*p\b"  # PE(p)
    r"|R(?:_\{[^{}]*\})?\s*\(\s*p\s*\)"  # R(p), R_{interleaved}(p)
    r"|(?<![\\\w])p\s*(?:\\[,;!]\s*)*\\(?:theta|varepsilon)"  # p θ_i, p ε
    r"|(?<![\\\w])p\s*/\s*f\b|\\Delta\s*\+\s*p\b|\bp\s*\+\s*\\Delta"  # p/f, p + Δ
    r"|\\mathrm\{i\}\s*(?:\\,\s*)?p\b"  # e^{i p θ}
)


def _p(src: str, tex: str, names: list[str]) -> str | None:
    if _P_POSITION.search(tex):
        return "p as a position: positions are i and j (p is the weights)"
    if re.search(r"(?<![\\\w])p\s*/\s*\(\s*1\s*-\s*p\b|(?<![\\\w])1\s*-\s*p(?![_\w])", tex):
        return "p as a dropout probability: write p_{\\text{drop}}"
    if "p" in names and src.startswith(POSITION_PAGES):
        return "a bare p in the positions chapter: a position is i or j, a probability p_drop"
    return None


def _sizes(src: str, tex: str, names: list[str]) -> str | None:
    if re.search(r"2\s*mnp|\bm\s*\\times\s*n\b|\bn\s*\\times\s*p\b|L\^\*_m", tex):
        return "m, n, p as sizes: a product is n_1 × n_2 by n_2 × n_3 (m is a maximum)"
    if "m" in names and src == "docs/long/linear-attention.md":
        return "m on linear attention: the number of random features is r (m is a maximum)"
    if re.search(r"-\s*m_\{?k\b|e\^\{\s*-\s*m\s*r\b", tex):
        return "m as ALiBi's slope: the slope of head k is β_k (m is a maximum)"
    return None


#: One check per symbol of issue 37: (symbol, the check), each returning why a formula uses the
#: symbol in another sense, or None
SENSES = [
    ("σ", _sigma),
    ("z", _z),
    ("w", _w),
    ("p", _p),
    ("m, n, p", _sizes),
]


def wrong_senses(math: dict[str, list[str]]) -> list[str]:
    """``"page: symbol: why, in: TeX"`` for each formula of ``math`` (``page_math``'s form) that
    uses a symbol of ``SENSES`` in a meaning other than the site's."""
    out = []
    for page, texs in math.items():
        src = source_of(page)
        for tex in texs:
            names = [n for n in symbols_in_tex(tex) if not GENERIC_ENTRY.match(n)]
            for symbol, check in SENSES:
                why = check(src, tex, names)
                if why:
                    out.append(f"{src}: {symbol}: {why}, in: {' '.join(tex.split())[:90]}")
    return out


def test_no_symbol_name_has_two_entries():
    twice = {
        name: [s.tex for s in entries] for name, entries in meanings().items() if len(entries) > 1
    }
    assert not twice, f"one meaning per symbol: {twice}"


def test_a_letter_shared_by_entries_is_a_declared_family():
    entries: dict[str, set[int]] = {}
    for i, s in enumerate(SYMBOLS):
        for n in s.names:
            entries.setdefault(_base(n), set()).add(i)
    shared = {letter for letter, found in entries.items() if len(found) > 1}
    assert shared - FAMILIES.keys() == set(), (
        "letters with two glossary entries: one meaning each, or declare the family in FAMILIES"
    )
    assert FAMILIES.keys() - shared == set(), "FAMILIES lists a letter no longer shared"
    for letter in (r"\sigma", "z", "m"):  # issue 37: one entry each
        assert len(entries[letter]) == 1, letter


def test_the_chosen_meanings_hold():
    assert "maximum" in symbol_for("m").meaning and "Cost" not in symbol_for("m").meaning
    assert symbol_for("m_k") is symbol_for("m")  # no ALiBi slope m_k any more: it is β_k
    assert "ALiBi" in symbol_for(r"\beta_k").meaning
    assert "position" in symbol_for("R").meaning and "alpha" not in symbol_for("R").meaning
    assert "angle" in symbol_for("rot").meaning
    assert symbol_for("W_q") is None and symbol_for("W_v") is None  # W_Q, W_V only
    assert symbol_for(r"\sigma") is symbol_for(r"\sigma_q")  # σ: standard deviations only
    assert "standard deviation" in symbol_for(r"\sigma").meaning
    assert "sigmoid" in symbol_for("sigmoid").meaning
    assert "random features" in symbol_for("r").meaning
    assert symbol_for("z_t") is symbol_for("z") and symbol_for("Z") is None
    assert "normaliser" in symbol_for("z").meaning and "scores" not in symbol_for("z").tex
    assert "window" in symbol_for("w").meaning and "Performer" in symbol_for(r"\omega").meaning
    assert "position" in symbol_for("PE").meaning and "$j$" in symbol_for("PE").meaning


#: What main's pages printed before the renames (issue 37), one formula per sense rule: each
#: must be reported, and its rewrite must not
OLD_AND_NEW = [
    ("gradients/index.html", r"\sigma = \sigma(a)", r"p_1 = \operatorname{sigmoid}(a)"),
    ("examples/identity-2x2/index.html", r"1 - \sigma", r"1 - p_1"),
    ("forward/softmax/index.html", r"\sigma(1) = 0.7310", r"\operatorname{sigmoid}(1) = 0.7310"),
    ("gradients/index.html", r"p = \operatorname{softmax}(z)", r"p = \operatorname{softmax}(s)"),
    ("exercises/softmax/index.html", r"Z = \begin{bmatrix}0\end{bmatrix}", r"S = I"),
    ("positions/sinks/index.html", r"[z, 0]", r"[s, 0]"),
    (
        "long/linear-attention/index.html",
        r"w \sim \mathcal N(0, I)",
        r"\omega \sim \mathcal N(0, I)",
    ),
    (
        "exercises/views/index.html",
        r"\varphi_w(x) = e^{w\cdot x}",
        r"\varphi_\omega(x) = e^{\omega\cdot x}",
    ),
    (
        "long/linear-attention/index.html",
        r"\varphi_W(x) = e^{Wx}",
        r"\varphi_\Omega(x) = e^{\Omega x}",
    ),
    ("long/io/index.html", r"i - w + 1", r"i - j + 1"),
    (
        "positions/sinusoidal/index.html",
        r"PE(p)_{2i} = \sin(p\,\theta_i)",
        r"PE(j)_{2i} = \sin(j\,\theta_i)",
    ),
    ("positions/rope/index.html", r"R_{\text{halves}}(p) = \Pi", r"R_{\text{halves}}(j) = \Pi"),
    ("positions/rope/index.html", r"e^{\mathrm{i}\, p \theta_l}", r"e^{\mathrm{i}\, j \theta_l}"),
    ("positions/long-context/index.html", r"p/f", r"j/f"),
    (
        "positions/sinusoidal/index.html",
        r"\theta_{0} \left(\Delta + p\right)",
        r"\theta_{0} \left(\Delta + j\right)",
    ),
    (
        "exercises/modern/index.html",
        r"p/(1 - p) \sum_j P_j^2",
        r"p_{\text{drop}}/(1 - p_{\text{drop}})",
    ),
    ("exercises/positions/index.html", r"p = 2", r"j = 2"),
    ("exercises/systems/index.html", r"2mnp", r"2 n_1 n_2 n_3"),
    ("exercises/systems/index.html", r"m \times n", r"n_1 \times n_2"),
    ("long/linear-attention/index.html", r"L^*_m = 1", r"L^*_{\text{Performer}} = 1"),
    ("long/linear-attention/index.html", r"2m", r"2r"),
    ("positions/compared/index.html", r"-m_k \lvert i - j \rvert", r"-\beta_k \lvert i - j \rvert"),
    ("exercises/modern/index.html", r"\propto e^{-m r}", r"\propto e^{-\beta \Delta}"),
]


def test_each_sense_rule_reports_the_old_text_and_passes_its_rewrite():
    for page, old, new in OLD_AND_NEW:
        assert wrong_senses({page: [old]}), f"not reported: {old} on {page}"
        assert not wrong_senses({page: [new]}), f"reported: {new} on {page}"
    # each rule is needed: every one of them reports some old formula
    for symbol, check in SENSES:
        assert any(
            check(source_of(page), old, symbols_in_tex(old)) for page, old, _ in OLD_AND_NEW
        ), symbol
    # the senses that stay are not reported
    fine = {
        "why/scaling/index.html": [r"d_k \sigma_q^2 \sigma_k^2", r"\sigma_q = \sigma_k = 1"],
        "long/linear-attention/index.html": [r"z_t = z_{t-1} + \varphi(k_t)", r"z_0 = 0"],
        "positions/sliding-window/index.html": [r"n_{\text{layers}}(w - 1) + 1"],
        "forward/scores/index.html": [r"w_a^\top \tanh(W_a q + U_a k)"],
        "forward/qkv/index.html": [r"\begin{bmatrix}w_{11} & w_{12}\end{bmatrix}"],
        "gradients/index.html": [
            r"J = \operatorname{diag}(p) - p\,p^\top",
            r"p_i(\delta_{ij} - p_j)",
        ],
        "forward/dropout/index.html": [r"1 - p_{\text{drop}}"],
        "why/softmax/index.html": [r"e^{s_j - m}"],
    }
    assert wrong_senses(fine) == []


def test_a_symbol_used_before_its_page_is_reported():
    pages = [("forward/notation.md", symbols_in_tex(r"O = PV")), ("forward/index.md", [])]
    assert introduced_late(pages) == [
        "forward/notation.md: O (introduced on forward/weighted-sum.md)",
    ] or "forward/notation.md: P (introduced on forward/index.md)" in introduced_late(pages)


def _by_nav(site) -> list[tuple[str, list[str]]]:
    math = page_math(site)
    by_source: dict[str, list[str]] = {}
    for page, texs in math.items():
        src = source_of(page).removeprefix("docs/")
        by_source.setdefault(src, []).extend(
            n for tex in texs for n in symbols_in_tex(tex) if not GENERIC_ENTRY.match(n)
        )
    return [
        (p, [] if p in EXEMPT else by_source.get(p, [])) for p in nav_pages(mkdocs_config()["nav"])
    ]


#: What the order check found on the exercise pages when it first read them (issue 37): a
#: symbol of a later chapter in an exercise of an earlier one, and one symbol an exercise uses in
#: another sense (b, RoPE's base, not the online softmax's shift). Listed so that the check runs
#: over the exercise pages now: a new finding fails, and so does an entry here that no longer
#: occurs, so the list only shrinks. Each is the lead's to decide: reword the exercise, or
#: introduce the symbol earlier.
EXERCISE_ORDER_KNOWN = {
    "exercises/softmax.md: J (introduced on gradients/index.md)",
    "exercises/softmax.md: J_ij (introduced on gradients/index.md)",
    "exercises/softmax.md: \\delta (introduced on gradients/index.md)",
    "exercises/softmax.md: \\delta_2 (introduced on gradients/index.md)",
    "exercises/softmax.md: \\delta_ij (introduced on gradients/index.md)",
    "exercises/modern.md: b (introduced on long/online-softmax.md)",
    "exercises/modern.md: \\ell (introduced on gradients/index.md)",
    # found when the proof exercises arrived (branch proofs): the lead's to decide likewise
    "exercises/forward.md: A (introduced on positions/sliding-window.md)",
    "exercises/forward.md: \\Pi (introduced on why/equivariance.md)",
    "exercises/forward.md: R (introduced on positions/rope.md)",
    "exercises/forward.md: b (introduced on long/online-softmax.md)",
    "exercises/scaling.md: \\mathbf{1} (introduced on positions/modern-block.md)",
    "exercises/softmax.md: \\mathbf{1} (introduced on positions/modern-block.md)",
    "exercises/softmax.md: dS (introduced on gradients/index.md)",
    "exercises/masks.md: \\mathbf{1} (introduced on positions/modern-block.md)",
    "exercises/multihead.md: C (introduced on gradients/gradient-checking.md)",
    "exercises/multihead.md: C_tc (introduced on gradients/gradient-checking.md)",
}


def test_every_symbol_is_introduced_no_later_than_its_first_use(built_site):
    late = introduced_late(_by_nav(built_site))
    new = [msg for msg in late if msg not in EXERCISE_ORDER_KNOWN]
    assert not new, "symbols used before the page that introduces them:\n" + "\n".join(new)
    gone = EXERCISE_ORDER_KNOWN - set(late)
    assert not gone, f"fixed, so remove from EXERCISE_ORDER_KNOWN: {sorted(gone)}"


def test_no_lower_case_projection_names_in_the_maths(built_site):
    """W_q, W_k, W_v (or w_q …) beside W_Q: one spelling, the capital one."""
    bad = [
        f"{source_of(page)}: {tex[:60]}"
        for page, texs in page_math(built_site).items()
        for tex in texs
        if re.search(r"\b[Ww]_\{?[qkv]\b", tex)
    ]
    assert not bad, bad


def test_a_row_of_scores_is_s_on_the_forward_and_why_pages(built_site):
    """z and s both named a row of scores; the lessons of the forward pass, Why it works, the
    worked examples and "Attention as …" write s (z remains the logits of the gradients
    chapter and the exercises, and z_t linear attention's normaliser)."""
    lessons = ("docs/forward/", "docs/why/", "docs/examples/", "docs/attention-as.md")
    bad = [
        f"{source_of(page)}: {tex[:60]}"
        for page, texs in page_math(built_site).items()
        if source_of(page).startswith(lessons)
        for tex in texs
        if any(n.partition("_")[0] in ("z", "Z") for n in symbols_in_tex(tex))
    ]
    assert not bad, bad


@pytest.mark.docs
def test_equations_are_numbered_in_reading_order(built_site: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    first_seen: list[int] = []
    for md in nav_pages(mkdocs_config()["nav"]):
        text = (root / "docs" / md).read_text(encoding="utf-8")
        for tag in re.findall(r"\\tag\{(\d+)\}", text):
            if int(tag) not in first_seen:
                first_seen.append(int(tag))
    assert first_seen and first_seen == sorted(first_seen), first_seen


def test_each_symbol_keeps_its_one_meaning_on_every_page(built_site):
    """σ, z, w, p and m in the sense the glossary gives them, the exercise pages included."""
    wrong = wrong_senses(page_math(built_site))
    assert not wrong, "symbols in another meaning than the glossary's:\n" + "\n".join(wrong)
