"""The exercise pages, rendered from the registry: a chapter's page is `chapter_page`.

Each exercise's entry is its statement, the ways to check an answer, and its folded solution
(the explanation, the solution's result beside its source), which must pass its checker.
`attention_math.exercises` holds all of it as data; ``docs/exercises/<chapter>.md`` holds the
chapter's title (`heading`, from the registry's `CHAPTERS`), its introduction and one block
that prints `chapter_page`: how to check an answer, then the exercises.
"""

from __future__ import annotations

import ast
import functools
import inspect
import posixpath
import re
import textwrap
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING

import sympy as sp

from attention_math.exercises import get
from attention_math.exercises.catalogue import by_chapter
from attention_math.exercises.checker import diagnose
from attention_math.exercises.convert import to_sympy
from attention_math.exercises.model import CHAPTERS, TASKS, Exercise, input_tex, shape_words
from attention_math.exercises.parse import FUNCTIONS
from attention_math.symbolic import latex
from attention_math.terminal import plain
from attention_site.address import page_url
from attention_site.pages.exercise_box import answer_box, placeholder

if TYPE_CHECKING:  # NumPy is imported at build time only
    from numpy.typing import ArrayLike

__all__ = [
    "SolutionError",
    "chapter_page",
    "decimals",
    "entry",
    "heading",
    "page_links",
    "simplest",
    "solved",
    "statement",
    "tolerance_tex",
]


class SolutionError(AssertionError):
    """A solution on a page does not pass its own checker: the build must fail."""


def tolerance_tex(tol: float) -> str:
    """A tolerance as inline LaTeX, ``5e-05`` → ``$5 \\cdot 10^{-5}$``.

    Examples:
        >>> from attention_site.pages.exercises import tolerance_tex
        >>> tolerance_tex(5e-05), tolerance_tex(0.25)
        ('$5 \\\\cdot 10^{-5}$', '$0.25$')
    """
    mantissa, _, exponent = f"{tol:g}".partition("e")
    if not exponent:
        return f"${mantissa}$"
    return f"${mantissa} \\cdot 10^{{{int(exponent)}}}$"


def _significant(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits with its trailing zeros (``0.9950``, not
    ``0.995``): they are digits too. They are dropped only when the shorter decimal reads back
    as ``x`` itself (``0.125``, ``1``); a decimal with two digits more that equals the float
    exactly is shown whole (1/64 as ``0.015625``, not the tie ``0.01562``). Python syntax
    (``1.5e-07``): the checker reads it."""
    whole = f"{x:.{digits + 2}g}"
    if Decimal(whole) == Decimal(x):  # exact: 0.015625 is, 1.66048 is not a binary fraction
        return whole
    text = f"{x:#.{digits}g}"
    mantissa, e, exponent = text.partition("e")
    short = mantissa.rstrip("0").rstrip(".")
    kept = short if float(short + e + exponent) == x else mantissa.rstrip(".")  # not "1001."
    return kept + e + exponent


def decimals(exercise_id: str, values: ArrayLike, digits: int = 4) -> str:
    """``values`` (a scalar, vector or matrix) as LaTeX decimals, as a solution shows them.

    Trailing zeros are kept. For an exercise with a tolerance the shown decimals must pass it:
    the digits grow from ``digits`` until the checker accepts them.

    Raises:
        SolutionError: no float64 decimals pass the exercise's tolerance.

    Examples:
        >>> import numpy as np
        >>> from attention_site.pages.exercises import decimals
        >>> decimals("positions-rope-score", np.cos(2.0)), decimals("scaling-factor", 0.125)
        ('-0.4161', '0.125')
        >>> print(decimals("positions-sinusoidal", np.array([np.cos(0.1), 1.0])))
        \\begin{bmatrix}0.9950 & 1\\end{bmatrix}
        >>> x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> from attention_math import numeric
        >>> print(decimals("slip-round-output", numeric.attention(x, x, x)))
        \\begin{bmatrix}0.8022 & 0.5989 \\\\ 0.5989 & 0.8022 \\\\ 0.7517 & 0.7517\\end{bmatrix}
    """
    import numpy as np  # build time only

    from attention_math.display import bmatrix, number_tex

    ex = get(exercise_id)
    arr = np.asarray(values, dtype=float)
    if arr.ndim > 2:
        raise ValueError(f"only scalars, vectors and matrices can be shown, got shape {arr.shape}")
    rows = np.atleast_2d(arr)
    for n in range(digits, 18):
        shown = [[_significant(float(x), n) for x in row] for row in rows]
        if ex.tolerance is None or diagnose(ex, to_sympy(shown, ex.symbols)).correct:
            break
    else:
        raise SolutionError(f"no decimals of {exercise_id} pass its tolerance {ex.tolerance:g}")
    if arr.ndim == 0:
        return number_tex(shown[0][0])
    return bmatrix((number_tex(t) for t in row) for row in shown)


def statement(exercise_id: str) -> str:
    """The exercise as Markdown: statement, inputs as LaTeX, the form of the answer, its box.
    A proof or an explanation (``task``) is labelled so, before its statement.

    Examples:
        >>> from attention_site.pages.exercises import statement
        >>> print(statement("scaling-factor"))
        By what number are the scores multiplied when $d_k = 64$?
        <BLANKLINE>
        *Answer:* a single value, exact. Id: `scaling-factor`.
        <BLANKLINE>
        <form class="exercise-check" data-exercise-id="scaling-factor" ...</form>
        >>> statement("softmax-shift-proof").startswith("**Proof.** ")
        True
    """
    from attention_math.display import display  # NumPy: build time only

    ex = get(exercise_id)
    label = TASKS[ex.task]  # a proof or an explanation says so first
    parts = [f"**{label}.** {ex.statement}" if label else ex.statement]
    if ex.inputs:
        inputs = (f"{input_tex(n)} = {latex(m)}" for n, m in ex.inputs.items())
        parts.append(display(r", \qquad ".join(inputs)))
    form = "exact" if ex.tolerance is None else f"every entry within {tolerance_tex(ex.tolerance)}"
    names = f"; symbols: {', '.join(f'`{s}`' for s in ex.symbols)}" if ex.symbols else ""
    reached = ", the value your argument arrives at" if label else ""
    parts.append(f"*Answer:* {shape_words(ex.shape)}, {form}{reached}{names}. Id: `{ex.id}`.")
    parts.append(answer_box(ex.id))  # checked in the reader's browser (attention_site.live_runtime)
    return "\n\n".join(p.strip("\n") for p in parts)


def simplest(x: sp.Basic) -> sp.Basic:
    """``x`` with each number in its shortest exact form: a sum over one denominator cancelled,
    or simplified, whichever prints shorter (``2/(2 + e) + e/(2 + e)`` is ``1``). An entry no
    form shortens, and a formula in symbols (``n(w − 1) + 1``, as its solution wrote it), is
    kept as it is.

    Examples:
        >>> import sympy as sp
        >>> from attention_site.pages.exercises import simplest
        >>> e = sp.E
        >>> simplest(sp.Matrix([[2 / (2 + e) + e / (2 + e), e / (2 + e)]]))
        Matrix([[1, E/(2 + E)]])
    """

    def one(e: sp.Expr) -> sp.Expr:
        if not isinstance(e, sp.Add) or e.free_symbols:  # a formula keeps its written form
            return e
        forms = [e, sp.cancel(sp.together(e)), sp.simplify(e)]
        return min(forms, key=lambda f: len(latex(f)))

    return x.applyfunc(one) if isinstance(x, sp.MatrixBase) else one(sp.sympify(x))


def solved(exercise_id: str, answer: object) -> str:
    """Check a page's solution and show it; raise `SolutionError` if it is wrong.

    The answer is shown in LaTeX; when the exercise has a NumPy reference, the exact answer
    is cross-checked against it and shown beside its decimals.

    Examples:
        >>> import sympy as sp
        >>> from attention_site.pages.exercises import solved
        >>> print(solved("scaling-factor", 1 / sp.sqrt(64)))
        <BLANKLINE>
        $$
        \\frac{1}{8} \\approx 0.125
        $$
        <BLANKLINE>
        The checker says: **scaling-factor: correct (exactly).** ...
        >>> solved("scaling-factor", sp.Rational(1, 64))
        Traceback (most recent call last):
        ...
        attention_site.pages.exercises.SolutionError: the solution of scaling-factor fails ...
    """
    from attention_math.crosscheck import crosscheck  # NumPy: build time only
    from attention_math.display import COLUMN_CHARS, display, tex_width

    ex = get(exercise_id)
    got = to_sympy(answer, ex.symbols)
    result = diagnose(ex, got)
    if not result.correct:
        raise SolutionError(f"the solution of {exercise_id} fails its checker: {result.message}")
    tex = latex(simplest(got))
    note, folded = "", ""
    if ex.numeric is not None:
        num = ex.numeric()
        exact = ex.answer.subs(ex.subs) if ex.subs else ex.answer
        check = crosscheck(exact, num, bound_eps=ex.bound_eps, label=exercise_id)
        decimal = decimals(exercise_id, num)
        note = f" NumPy {check.dtype} agrees with the exact answer to {check.error_eps:.2g} ε."
        if tex_width(tex) + tex_width(decimal) <= COLUMN_CHARS:
            tex += r" \approx " + decimal
        elif tex_width(tex) <= COLUMN_CHARS:  # too wide for one line: two
            tex = rf"\begin{{aligned}} & {tex} \\ &\approx {decimal} \end{{aligned}}"
        else:  # the exact form alone is too wide: decimals shown, exact one click away
            inner = "\n".join("    " + line for line in display(tex).strip("\n").splitlines())
            folded = f'\n??? info "The exact answer"\n\n{inner}\n\n'
            tex = r"\approx " + decimal
    return display(tex) + folded + f"\nThe checker says: **{result.message}**{note}\n"


def _indent(text: str, by: int = 4) -> str:
    return "\n".join((" " * by + line) if line.strip() else "" for line in text.splitlines())


def _tabs(*tabs: tuple[str, str]) -> str:
    """pymdownx.tabbed tabs, as markdown-exec's ``source="tabbed-right"`` writes them."""
    return "\n\n".join(f'=== "{title}"\n\n{_indent(text)}' for title, text in tabs)


def _source(fn: Callable[..., object]) -> str:
    """``fn``'s source as a code block, without its docstring (the page shows that as prose)."""
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines()
    (node,) = ast.parse("\n".join(lines)).body
    assert isinstance(node, ast.FunctionDef)
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(node.body) > 1:
        del lines[first.lineno - 1 : first.end_lineno]  # the docstring
        if not lines[first.lineno - 1].strip():
            del lines[first.lineno - 1]  # and the blank line after it
    return "````python\n" + "\n".join(lines).strip() + "\n````"


def entry(exercise_id: str) -> str:
    """One exercise of a chapter's page, as Markdown: its title, `statement`, how to check an
    answer in Python and from the shell, and the folded solution (the explanation, then the
    result of the exercise's ``solution`` beside its source, checked by `solved`).

    Raises:
        SolutionError: the exercise has no solution, or its solution fails its checker.

    Examples:
        >>> from attention_site.pages.exercises import entry
        >>> text = entry("scaling-factor")
        >>> text.startswith("## ")
        True
        >>> 'check("scaling-factor", "your answer")' in text
        True
        >>> '??? success "Solution"' in text and "def _solve_scaling_factor(ex" in text
        True
        >>> text.splitlines()[0]  # the table of contents shows no TeX
        '## The factor for dₖ = 64'

    """
    ex = get(exercise_id)
    if ex.solution is None:
        raise SolutionError(f"{exercise_id} has no solution to show")
    typed = placeholder(ex.shape)
    check = _tabs(
        (
            "Python",
            "```python\nfrom attention_math.exercises import check\n\n"
            f'print(check("{ex.id}", "{typed}"))\n```',
        ),
        ("Shell", f'```bash\npython -m attention_math check {ex.id} "{typed}"\n```'),
    )
    solution = [
        page_links(ex.explanation),
        _tabs(("Result", solved(ex.id, ex.solution(ex))), ("Source", _source(ex.solution))),
    ]
    if ex.remark is not None:  # its docstring, then its result beside its source
        solution.append(inspect.getdoc(ex.remark) or "")
        solution.append(_tabs(("Result", ex.remark(ex)), ("Source", _source(ex.remark))))
    fold = '??? success "Solution"\n\n' + _indent("\n\n".join(solution))
    # in Unicode, not TeX: the table of contents shows a heading's text as it is (markdown-exec
    # hands this output's headings to it after its data-toc-label is gone)
    heading = f"## {plain(ex.title)}"
    return "\n\n".join([heading, statement(ex.id), "Check your answer:", check, fold])


_MD_LINK = re.compile(r"\]\((?![a-z]+:|/|#)([^)#\s]+?)\.md(#[^)\s]*)?\)")


def page_links(markdown: str) -> str:
    """``markdown`` with its links to pages (``../why/masks.md``, relative to the chapter's
    ``.md`` file in ``docs/exercises/``) written as the built pages' absolute addresses
    (`page_url`): an executed block's output is resolved from the page's address by MkDocs
    and from its source file by Zensical, and only an absolute link is right under both.

    Examples:
        >>> from unittest import mock
        >>> from attention_site.pages.exercises import page_links
        >>> with mock.patch.dict("os.environ", {"SITE_URL": "https://x.org/am/"}):
        ...     page_links("see [masks](../why/masks.md#limits) and [IO](../long/index.md)")
        'see [masks](/am/why/masks/#limits) and [IO](/am/long/)'
    """

    def url(m: re.Match[str]) -> str:
        page = posixpath.normpath(posixpath.join("exercises", m[1] + ".md"))
        return f"]({page_url(page + (m[2] or ''))})"

    return _MD_LINK.sub(url, markdown)


def heading(chapter: str) -> str:
    """The title of ``chapter``'s page (its ``# `` line and its name in the navigation), from
    its title in `CHAPTERS`: after the colon the title's first letter is small, unless its
    first word is written with capitals inside (``IO``, ``RoPE``).

    Raises:
        ValueError: an unknown chapter.

    Examples:
        >>> from attention_site.pages.exercises import heading
        >>> heading("forward"), heading("multihead")
        ('Exercises: the forward pass', 'Exercises: multi-head attention')
    """
    if chapter not in CHAPTERS:
        raise ValueError(f"unknown chapter {chapter!r}; known: {', '.join(CHAPTERS)}")
    title = CHAPTERS[chapter]
    first = title.split(" ", 1)[0]
    if first[1:] == first[1:].lower():
        title = title[:1].lower() + title[1:]
    return f"Exercises: {title}"


_TYPED = ("exp", "sqrt", "log")
"""The functions every chapter's instructions name; `FUNCTIONS` has the others."""


def _how_to_check(exercises: list[Exercise]) -> str:
    """What every chapter's page says before its exercises: where the inputs come from and how
    an answer is checked. Besides `_TYPED`, it names the functions of the answer syntax that
    these exercises' answers hold (``sin`` and ``cos`` for the positions)."""
    held = {type(f) for ex in exercises for f in ex.answer.atoms(sp.Function)}
    held -= {FUNCTIONS[name][0] for name in _TYPED}  # named already (``ln`` is ``log``)
    more = []
    for name, (build, _) in FUNCTIONS.items():
        if build in held:
            more.append(name)
            held.discard(build)  # one name for each
    names = ", ".join(f"`{n}`" for n in [*_TYPED, *more, "^"])
    # the syntax is spelled out on the exercises' index page
    return (
        "Each exercise states its inputs. Check an answer in the box under it, or, with the "
        "package installed, in Python or from the shell: type it as "
        f"[plain math]({page_url('exercises/index.md#checking-an-answer')}) ({names}, "
        "matrices as `[[a, b], [c, d]]`) or "
        "pass a SymPy or NumPy object. The checker says whether it is right and, for the "
        "usual slips, what went wrong."
    )


@functools.cache  # a pure function of its arguments: drawn once per process
def chapter_page(chapter: str) -> str:
    """Every exercise of ``chapter`` as Markdown, in the registry's order, after the paragraph
    on checking an answer that every chapter's page shows: the whole page below its
    introduction (``docs/exercises/<chapter>.md`` prints it).

    Raises:
        ValueError: an unknown chapter.

    Examples:
        >>> from attention_site.pages.exercises import chapter_page
        >>> page = chapter_page("masks")
        >>> page.count('??? success "Solution"') == page.count("\\n## ")
        True
        >>> page.startswith("Each exercise states its inputs")
        True
        >>> "`sin`, `cos`" in chapter_page("positions"), "`sin`" in page
        (True, False)
    """
    if chapter not in CHAPTERS:
        raise ValueError(f"unknown chapter {chapter!r}; known: {', '.join(CHAPTERS)}")
    exercises = by_chapter(chapter)
    entries = [entry(i) for i in exercises]
    return "\n\n".join([_how_to_check(list(exercises.values())), *entries]) + "\n"
