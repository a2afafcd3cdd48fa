""" "Your own example"'s form: the HTML the page writes at build time.

The steps it shows are computed in the reader's browser by
[`own_example`][attention_math.own_example.own_example], library code that the page's Python
runtime loads from the library's wheel; only the markup lives here.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import sympy as sp

from attention_math import symbolic
from attention_math.own_example import MAX_SIZE, MODES, own_example, read_matrix
from attention_math.symbolic import latex
from attention_site.address import page_url

__all__ = [
    "EXPERIMENTS",
    "Experiment",
    "download_sentence",
    "experiments_markdown",
    "form_html",
    "runtime_download",
]

LIVE = Path(__file__).resolve().parents[3] / "docs" / "assets" / "live"  # prepare's output


def _typed(rows: tuple[tuple[object, ...], ...]) -> str:
    return "\n".join(" ".join(str(e) for e in row) for row in rows)


def _identity_example() -> dict[str, sp.Matrix]:
    """The 2×2 identity example's matrices: the form's default inputs, and the base the
    experiments change one thing of."""
    from attention_math.examples import EXAMPLES  # build time only: the page's default inputs

    ex = EXAMPLES["identity-2x2"]
    x = sp.Matrix(ex.x)
    return {
        "Q": x * sp.Matrix(ex.w_q),
        "K": x * sp.Matrix(ex.w_k),
        "V": x * sp.Matrix(ex.w_v),
        "X": x,
        "W_Q": sp.Matrix(ex.w_q),
        "W_K": sp.Matrix(ex.w_k),
        "W_V": sp.Matrix(ex.w_v),
    }


def form_html() -> str:
    """The page's form: the matrices (prefilled with the 2×2 identity example), the mask, and
    the button; the steps appear below it. One HTML block with no blank line.

    Examples:
        >>> from attention_site.pages.own_example import form_html
        >>> html = form_html()
        >>> 'class="own-example"' in html, 'name="W_V"' in html, "\\n\\n" in html
        (True, True, False)
    """
    given = _identity_example()
    labels = {"W_Q": "W<sub>Q</sub>", "W_K": "W<sub>K</sub>", "W_V": "W<sub>V</sub>"}

    def area(name: str) -> str:
        m = given[name]
        text = _typed(tuple(tuple(m.row(i)) for i in range(m.rows)))
        return (
            f'<label class="own-example__matrix"><span>{labels.get(name, name)}</span>'
            f'<textarea name="{name}" rows="{MAX_SIZE}" spellcheck="false" autocapitalize="off">'
            f"{text}</textarea></label>"
        )

    def radios(group: str, options: dict[str, str], legend: str) -> str:
        items = "".join(
            f'<label><input type="radio" name="{group}" value="{value}"'
            f"{' checked' if i == 0 else ''}> {text}</label>"
            for i, (value, text) in enumerate(options.items())
        )
        return f'<fieldset class="own-example__{group}"><legend>{legend}</legend>{items}</fieldset>'

    return (
        '<form class="own-example" autocomplete="off">\n'
        + radios(
            "mode",
            {"qkv": "Q, K and V", "x": "X with W<sub>Q</sub>, W<sub>K</sub>, W<sub>V</sub>"},
            "Give",
        )
        + "\n"
        + '<div class="own-example__matrices own-example__qkv">'
        + "".join(area(n) for n in MODES["qkv"])
        + "</div>\n"
        + '<div class="own-example__matrices own-example__x">'
        + "".join(area(n) for n in MODES["x"])
        + "</div>\n"
        + radios(
            "mask",
            {"none": "no mask", "causal": "causal (each token sees itself and earlier ones)"},
            "Mask",
        )
        + "\n"
        + '<button type="submit" class="md-button">Show every step</button>\n'
        + '<span class="exercise-check__progress" aria-live="polite"></span>\n'
        + '<span class="exercise-check__verdict" role="status" aria-live="polite"></span>\n'
        + '<div class="own-example__steps"></div>\n'
        + "</form>"
    )


def runtime_download(live: Path = LIVE) -> dict[str, int] | None:
    """Bytes the first press downloads, by piece: Pyodide's core, its standard library, and
    each wheel, read from the runtime ``prepare`` wrote (``None`` when it wrote none).

    Examples:
        >>> from pathlib import Path
        >>> from attention_site.pages.own_example import runtime_download
        >>> runtime_download(Path("/nonexistent")) is None
        True
    """
    manifest = live / "manifest.json"
    if not manifest.is_file():
        return None
    m = json.loads(manifest.read_text(encoding="utf-8"))
    stdlib = m["stdlib"]["path"]
    core = sum(
        f.stat().st_size
        for f in (live / m["core"]).iterdir()
        if f.is_file() and (live / stdlib) != f
    )
    sizes = {
        "Pyodide": core,  # its version is the manifest's, not the reader's concern
        "its standard library": (live / stdlib).stat().st_size,
    }
    for w in m["wheels"]:
        sizes[w["name"] if w["name"] != "attention_math" else "this site's package"] = (
            (live / w["path"]).stat().st_size
        )
    return sizes


def download_sentence(live: Path = LIVE) -> str:
    """How much the first press downloads, as a sentence for the page: the total and the
    two largest pieces.

    Examples:
        >>> from pathlib import Path
        >>> from attention_site.pages.own_example import download_sentence
        >>> download_sentence(Path("/nonexistent"))[:40]
        'This build of the site has no in-browser'
    """
    sizes = runtime_download(live)
    if sizes is None:
        return (
            "This build of the site has no in-browser runtime: the button cannot run here. "
            "The Python below runs the same computation on your machine."
        )
    largest = sorted(sizes.items(), key=lambda item: item[1], reverse=True)[:2]
    parts = " and ".join(f"{name} ({b / 1e6:.1f} MB)" for name, b in largest)
    return (
        f"The first press downloads {sum(sizes.values()) / 1e6:.1f} MB, the largest pieces "
        f"being {parts}; your browser keeps it, so later presses, and the exercise pages' "
        "answer boxes, start at once."
    )


@dataclass(frozen=True)
class Experiment:
    """One thing to try in the form: the matrices to type, the mask, and what to look for.

    ``matrices`` holds ``Q``, ``K`` and ``V`` as typed; a link in ``ask`` names its page
    as ``<page.md>``. ``compare`` names the base example's weights (``"P"``) or output
    (``"O"``) that this one's must equal, exactly; the build fails if they differ.
    """

    title: str
    matrices: tuple[str, str, str]
    mask: str
    ask: str
    compare: str = ""


EXPERIMENTS = (
    Experiment(
        "Two equal keys",
        ("1 0; 0 1", "1 1; 1 1", "1 2; 3 4"),
        "none",
        "Both keys are the same vector, so every query scores them alike. What are the weights, "
        "and what is each output row?",
    ),
    Experiment(
        "Larger scores",
        ("4 0; 0 4", "1 0; 0 1", "1 2; 3 4"),
        "none",
        "The queries are four times the identity example's. Which way do the weights move, and "
        "why does the softmax of larger scores come closer to picking one key? (The page on "
        "[why we scale](<why/scaling.md>) follows this up.)",
    ),
    Experiment(
        "The same vector added to every key",
        ("1 0; 0 1", "2 1; 1 2", "1 2; 3 4"),
        "none",
        "Each key is the identity example's plus (1, 1). Every score of row $i$ grows by "
        "the same $q_i \\cdot (1, 1)$, so the weights are those of the identity example: a "
        "softmax does not see a constant added to its whole row.",
        compare="P",
    ),
    Experiment(
        "Keys and values swapped together",
        ("1 0; 0 1", "0 1; 1 0", "3 4; 1 2"),
        "none",
        "The two key–value pairs are listed in the other order. The weights swap columns, and "
        "the output does not change: attention reads a set of key–value pairs, not a sequence.",
        compare="O",
    ),
    Experiment(
        "The causal mask",
        ("1 0 1; 0 1 1; 1 1 0", "1 0 0; 0 1 0; 0 0 1", "1 2; 3 4; 5 6"),
        "causal",
        "With the mask, the first token sees only itself: all its weight is on its own key, and "
        "its output is $V$'s first row, whatever the scores. Which weights of the other rows "
        "does the mask set to zero?",
    ),
)
"""Things to try in the form, each computed by the build below the page's list."""


def _weights_output(
    q: sp.Matrix, k: sp.Matrix, v: sp.Matrix, is_causal: bool
) -> tuple[sp.Matrix, sp.Matrix]:
    weights = symbolic.attention_weights(q, k, v, is_causal=is_causal)
    return sp.simplify(weights), sp.simplify(symbolic.attention(q, k, v, is_causal=is_causal))


def experiments_markdown(experiments: tuple[Experiment, ...] = EXPERIMENTS) -> str:
    """The list of experiments as Markdown: what to type, what to ask, and, folded, the
    weights and output the form shows.

    Raises:
        ValueError: an experiment's input is not one the form accepts, or its weights (or
            output) differ from the identity example's where it says they are the same.

    Examples:
        >>> from attention_site.pages.own_example import EXPERIMENTS, experiments_markdown
        >>> md = experiments_markdown(EXPERIMENTS[:2])
        >>> md.startswith("1. **Two equal keys**"), "??? note" in md, "](/" in md
        (True, True, True)
    """
    return re.sub(
        r"\]\(<([^>]+\.md)>\)", lambda m: f"]({page_url(m[1])})", _experiments(experiments)
    )


@functools.cache  # a pure function of frozen inputs: blocks rerun on every serve rebuild
def _experiments(experiments: tuple[Experiment, ...]) -> str:
    base = _identity_example()
    base_p, base_o = _weights_output(base["Q"], base["K"], base["V"], is_causal=False)
    lines = []
    for i, e in enumerate(experiments, 1):
        typed = dict(zip("QKV", e.matrices, strict=True))
        shown = own_example(typed, e.mask)  # what the form shows for this input
        if "error" in shown:
            raise ValueError(f"experiment {e.title!r}: the form rejects it: {shown['error']}")
        q, k, v = (read_matrix(text, name) for name, text in typed.items())
        p, o = _weights_output(q, k, v, is_causal=e.mask == "causal")
        mine, theirs = (p, base_p) if e.compare == "P" else (o, base_o)
        if e.compare and not (mine - theirs).applyfunc(sp.simplify).is_zero_matrix:
            raise ValueError(f"experiment {e.title!r}: {e.compare} differs from the base example's")
        if e.mask == "causal" and (
            any(p[0, j] != (j == 0) for j in range(p.cols)) or o.row(0) != v.row(0)
        ):
            raise ValueError(f"experiment {e.title!r}: the first row does not see only itself")
        inputs = "; ".join(f"${n}$ = `{text}`" for n, text in typed.items())
        mask = "causal mask" if e.mask == "causal" else "no mask"
        weights, output = shown["steps"][-2:]
        lines += [
            f"{i}. **{e.title}**: {inputs}, {mask}. {e.ask}",
            "",
            '    ??? note "What the form shows"',
            "",
            f"        $$ {weights['latex']} \\approx {latex(symbolic.evaluate(p, 4))} $$",
            "",
            f"        $$ {output['latex']} \\approx {latex(symbolic.evaluate(o, 4))} $$",
            "",
        ]
    return "\n".join(lines)
