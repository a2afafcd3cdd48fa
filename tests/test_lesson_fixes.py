"""The errors issue 37 found on the forward, why and "Attention as …" pages, each with a check
that fails if it returns. Most read the Markdown sources (no build needed); the docs tests
read the built pages."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import mpmath
import sympy as sp

from attention_math.derivations.softmax_stability import FORMATS
from attention_site.render import exact_digits
from tests.conftest import mkdocs_config, nav_pages
from tests.test_lesson_pages import main_line

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"^(?P<indent>[ \t]*)```python (?P<info>[^\n]*)$", re.M)

#: the pages of this part of issue 37
MINE = [
    "index.md",
    "attention-as.md",
    *(f"forward/{p.name}" for p in sorted((DOCS / "forward").glob("*.md"))),
    *(f"why/{p.name}" for p in sorted((DOCS / "why").glob("*.md"))),
    *(f"examples/{p.name}" for p in sorted((DOCS / "examples").glob("*.md"))),
    "audit.md",
    "glossary.md",
]


def src(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def _ln_r_max(p: int, e_max: int, digits: int) -> str:
    """ln r_max by mpmath at 60 digits, rounded half-even by Decimal: independent of SymPy."""
    mpmath.mp.dps = 60
    value = mpmath.log(2 - mpmath.mpf(2) ** (1 - p)) + e_max * mpmath.log(2)
    d = Decimal(mpmath.nstr(value, 50))
    return f"{d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), ROUND_HALF_EVEN):f}"


def test_ln_r_max_is_printed_correctly_rounded():
    """why/softmax printed bfloat16's ln r_max as 88.7189252123 (SymPy's N); it is …124."""
    for f in FORMATS:
        assert exact_digits(f.log_r_max, 12) == _ln_r_max(f.p, f.e_max, 12), f.name
    assert "exact_digits(f.log_r_max, 12)" in src("why/softmax.md")
    assert "sp.N(f.log_r_max, 12)" not in src("why/softmax.md")
    assert "sp.N(u.ln_tiny" not in src("why/masks.md") and "sp.N(u.exact" not in src("why/masks.md")


def test_exact_digits_rounds_where_sympy_truncates():
    x = sp.log(2 - sp.Integer(2) ** -7) + 127 * sp.log(2)
    assert exact_digits(x, 12) == _ln_r_max(8, 127, 12)
    assert exact_digits(sp.Rational(19995, 2000), 3) == "10.0"  # 9.9975: the carry drops a digit


def test_attention_as_says_which_normalisation_equalises_key_norms():
    text = src("attention-as.md")
    assert "layer normalisation, roughly" not in text
    assert "QK-norm" in text and "https://arxiv.org/abs/2302.05442" in text
    assert "not of its key $x W_K$" in text


def test_attention_as_comes_after_the_forward_pass():
    nav = nav_pages(mkdocs_config()["nav"])
    assert nav.index("attention-as.md") > nav.index("forward/formula.md")
    assert nav.index("attention-as.md") > nav.index("why/multi-head.md")  # it uses heads, W_O
    assert "Before the formula" not in src("attention-as.md")


def test_multi_head_sits_where_its_chapter_says():
    """The nav puts it in the forward pass, whose index lists it; Why it works does not list it
    among its own pages."""
    nav = mkdocs_config()["nav"]
    forward = next(
        e["The forward pass"] for e in nav if isinstance(e, dict) and "The forward pass" in e
    )
    assert "why/multi-head.md" in nav_pages(forward)
    assert "../why/multi-head.md" in src("forward/index.md")
    why_bullets = re.findall(r"^- \[[^\]]+\]\(([^)]+)\)", src("why/index.md"), re.M)
    assert "multi-head.md" not in why_bullets


def test_masks_credit_pytorch_with_the_zero_row_and_motivate_the_threshold():
    text = src("why/masks.md")
    assert "since version `2.5`" in text and "PyTorch's SDPA since 2.5" in text
    motive = text.index("A finite\nfill blocks a key only if")
    assert motive < text.index("from attention_math.derivations.masks import underflow")


def test_equivariance_cites_haviv():
    text = src("why/equivariance.md")
    assert "[Haviv et al., 2022](https://arxiv.org/abs/2203.16634)" in text
    assert "What the mask gives a decoder is only" not in text


def test_scaling_variance_first_cases_folded_and_the_caveat():
    text = src("why/scaling.md")
    derivation = text.index("## The derivation")
    folded = text.index('??? note "When the assumptions fail')
    assert derivation < text.index("## Only at initialisation") < folded
    assert "**Correlated entries.**" in text[folded:] and "**Non-zero means.**" in text[folded:]
    assert "https://arxiv.org/abs/2302.05442" in text and "QK-norm" in text
    assert "footnote 4" in text and "https://arxiv.org/abs/1706.03762" in text


def test_qkv_uses_nothing_from_later_pages_and_says_what_is_learned():
    text = src("forward/qkv.md")
    assert "only the product is learned" not in text
    assert "S_{\\text{raw}}" not in text and "$P" not in text and "P X" not in text
    assert "each\ngets its own gradient" in text or "each gets its own gradient" in text


def test_softmax_equation_one_has_the_mask():
    text = src("forward/softmax.md")
    eq = text[text.index("$$") : text.index("\\tag{1}")]
    assert "S + M" in eq and "M_{ij}" in eq


def test_cost_counts_n_minus_one_additions():
    text = src("why/cost.md")
    assert "$n_2 - 1$ additions" in text and "$n$ additions per entry" not in text


def _blocks(markdown: str) -> list[str]:
    return [m.group("info") for m in FENCE.finditer(markdown)]


def test_a_shown_source_never_depends_on_a_hidden_block():
    """why/multi-head's Source tab used names set by a hidden block of the same session:
    copying the Source failed. A session shared by a shown block holds no hidden one."""
    for page in MINE:
        infos = [i for i in _blocks(src(page)) if 'exec="on"' in i]
        sessions: dict[str, list[bool]] = {}
        for info in infos:
            m = re.search(r'session="([^"]+)"', info)
            if m:
                sessions.setdefault(m.group(1), []).append("source=" in info)
        for name, shown in sessions.items():
            assert all(shown) or not any(shown), f"{page}: session {name} mixes hidden and shown"


def test_the_glossary_and_notation_say_one_meaning(built_site):
    page = main_line((built_site / "glossary" / "index.html").read_text("utf-8"))
    assert "Only ever a maximum" in page
