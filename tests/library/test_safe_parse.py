"""The answer parser reads plain math and never runs code."""

from __future__ import annotations

import builtins

import pytest
import sympy as sp
import sympy.parsing.sympy_parser as sympy_parser
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_math.exercises import ParseError, catalogue, check, parse_answer
from attention_math.exercises.parse import FUNCTIONS

x, y = sp.symbols("x y")
SYMS = {"x": x, "y": y}


WATCHED = ("__import__", "pwned", "__class__", "lambda", "__builtins__", "open(")


@pytest.fixture
def no_eval(monkeypatch):
    """eval/exec of anything built from an answer, or sympy's parse_expr, fails the test.

    (SymPy itself execs generated code strings internally, so only strings carrying a piece
    of an answer under test are refused.)
    """

    def guard(real):
        def run(source, *args, **kwargs):
            if isinstance(source, str | bytes) and any(w in str(source) for w in WATCHED):
                raise AssertionError(f"eval/exec was called on an answer: {source!r}")
            return real(source, *args, **kwargs)

        return run

    real_eval_expr = sympy_parser.eval_expr

    def refuse(code, *args, **kwargs):
        if any(w in str(code) for w in WATCHED):
            raise AssertionError(f"sympy's parse_expr evaluated an answer: {code!r}")
        return real_eval_expr(code, *args, **kwargs)

    catalogue()  # build the exercises (and SymPy's lazy imports) before watching

    monkeypatch.setattr(builtins, "eval", guard(builtins.eval))
    monkeypatch.setattr(builtins, "exec", guard(builtins.exec))
    monkeypatch.setattr(sympy_parser, "eval_expr", refuse)


def test_the_guard_itself_catches_sympify(no_eval):
    """Proof that the fixture works: sympify on the attack string trips it."""
    with pytest.raises(AssertionError):
        sp.sympify("__import__('os').getcwd()")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1/2 + 1/3", sp.Rational(5, 6)),
        ("2^3", sp.Integer(8)),
        ("2**-1", sp.Rational(1, 2)),
        ("−x × y · 2", -2 * x * y),
        ("exp(x)/(1 + exp(x))", sp.exp(x) / (1 + sp.exp(x))),
        ("sigmoid(x)", sp.exp(x) / (1 + sp.exp(x))),
        ("sqrt(2)/2 + log(3) - ln(E)", sp.sqrt(2) / 2 + sp.log(3) - 1),
        ("[[1, 2], [3, 4]]", sp.Matrix([[1, 2], [3, 4]])),
        ("Matrix([[x, 0]])", sp.Matrix([[x, 0]])),
        ("[1, x]", sp.Matrix([[1, x]])),
        ("((1, 2),)", sp.Matrix([[1, 2]])),
        ("-oo", -sp.oo),
    ],
)
def test_reads_plain_math(no_eval, text, expected):
    got = parse_answer(text, SYMS)
    assert isinstance(got, sp.MatrixBase) == isinstance(expected, sp.MatrixBase)
    if isinstance(got, sp.MatrixBase):
        assert got.shape == expected.shape
        assert (got - expected).applyfunc(sp.simplify).is_zero_matrix
    else:
        assert got == expected or sp.simplify(got - expected) == 0


def test_decimals_stay_inexact(no_eval):
    got = parse_answer("0.25 + 1")
    assert got.has(sp.Float) and got == sp.Float("1.25")


MALICIOUS = [
    "__import__('os').system('touch {path}')",
    "(lambda: __import__('os').system('touch {path}'))()",
    "().__class__.__bases__[0].__subclasses__()",
    "open('{path}', 'w').write('x')",
    "eval(\"__import__('os').system('touch {path}')\")",
    "exec('1')",
    "__builtins__",
    "x.__class__",
    "exp.__globals__",
    "[c for c in ().__class__.__mro__]",
    "getattr(x, 'y')",
    "Matrix.__init__",
    "'touch {path}'",
    "exp(x=1)",
    "exp(*[1])",
    "x[0]",
    "1 if x else 2",
    "x < 1",
    "x and y",
    "(y := 3)",
    "{{1: 2}}",
    "f'{{x}}'",
    "import os",
    "1; 2",
    "True",
    "1j",
    "b'x'",
    "9**9**9",
    "((9**99)**99)**99",
    "1e999",
    "1/0",
    "y(1)",
    "exp(1, 2)",
    "exp",
    "z",
    "[[1, 2], [3]]",
    "[[[1]]]",
    "Matrix(1)",
    "",
    "(" * 1000 + "1" + ")" * 1000,
    "1+" * 3000 + "1",
]


@pytest.mark.parametrize("template", MALICIOUS)
def test_rejects_anything_else_and_runs_nothing(no_eval, tmp_path, template):
    path = tmp_path / "pwned"
    with pytest.raises(ParseError, match="answer"):
        parse_answer(template.format(path=path), SYMS)
    assert not path.exists()


def test_check_never_evaluates_a_string(no_eval, tmp_path):
    path = tmp_path / "pwned"
    attack = f"__import__('os').system('touch {path}')"
    for answer in (attack, [[attack, "1"]], [attack]):
        with pytest.raises(ParseError):
            check("softmax-logs", answer)
    assert not path.exists()
    assert check("softmax-logs", "[1/6, 1/3, 1/2]").correct  # while eval is forbidden


def test_error_names_the_offence():
    with pytest.raises(ParseError, match=r"attribute access"):
        parse_answer("x.real", SYMS)
    with pytest.raises(ParseError, match=r"names starting with '_'"):
        parse_answer("__x", SYMS)
    with pytest.raises(ParseError, match=r"unknown name 'z'.*the symbols x, y"):
        parse_answer("z + 1", SYMS)
    with pytest.raises(TypeError, match="str"):
        parse_answer(b"1")


# Random expressions over the allowed grammar: the parsed string equals the tree built directly.
_leaf = st.one_of(
    st.integers(0, 50).map(lambda n: (str(n), sp.Integer(n))),
    st.sampled_from([("x", x), ("y", y)]),
)


def _node(children):
    binop = st.tuples(children, st.sampled_from(["+", "-", "*"]), children).map(
        lambda t: (f"({t[0][0]} {t[1]} {t[2][0]})", _OPS[t[1]](t[0][1], t[2][1]))
    )
    power = st.tuples(children, st.integers(0, 3)).map(
        lambda t: (f"({t[0][0]})^{t[1]}", t[0][1] ** t[1])
    )
    call = children.map(lambda c: (f"exp({c[0]})", sp.exp(c[1])))
    neg = children.map(lambda c: (f"-({c[0]})", -c[1]))
    return st.one_of(binop, power, call, neg)


_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


@settings(max_examples=60, deadline=None)
@given(st.recursive(_leaf, _node, max_leaves=8))
def test_parse_matches_direct_construction(pair):
    text, expr = pair
    assert sp.expand(parse_answer(text, SYMS) - expr) == 0


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789+-*/^()[], .xe_a", max_size=25))
def test_any_text_parses_or_raises_parse_error(text):
    try:
        out = parse_answer(text, SYMS)
    except ParseError:
        return
    assert isinstance(out, sp.Basic | sp.MatrixBase)


def test_the_parser_still_refuses_calls_outside_the_allow_list() -> None:
    assert {"sin", "cos"} <= set(FUNCTIONS)
    assert parse_answer("sin(x)^2 + cos(x)^2", {"x": sp.Symbol("x")}).equals(1)
    for text in ("tan(1)", "eval(1)", "sin.__class__", "sin(1, 2)"):
        with pytest.raises(ParseError):
            parse_answer(text)
    with pytest.raises(ParseError, match=r"a call to 'tan'.*the functions .*sin, cos"):
        parse_answer("tan(1)")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("e", sp.E),
        ("e/(1 + e + e^2)", sp.E / (1 + sp.E + sp.E**2)),
        ("2e^(1/2)", 2 * sp.exp(sp.Rational(1, 2))),
        ("2 sqrt(2)", 2 * sp.sqrt(2)),
        ("(1 + e)(1 - e)", (1 + sp.E) * (1 - sp.E)),
        ("2x y", 2 * x * y),
        ("pi x", sp.pi * x),
        ("3(x + 1)", 3 * (x + 1)),
        ("(x + 1)2", 2 * (x + 1)),
    ],
)
def test_reads_e_and_products_written_side_by_side(no_eval, text, expected):
    assert sp.simplify(parse_answer(text, SYMS) - expected) == 0


def test_scientific_notation_stays_a_number_as_in_python():
    assert parse_answer("-1e9", exact_decimals=True) == -(10**9)
    assert parse_answer("2e-1", exact_decimals=True) == sp.Rational(1, 5)  # not 2e - 1


def test_an_exercise_symbol_named_e_wins_over_eulers_number():
    e = sp.Symbol("e")
    assert parse_answer("2e", {"e": e}) == 2 * e
    with pytest.raises(ParseError) as caught:
        parse_answer("z", {"e": e})
    assert "the constants pi, E," in str(caught.value)  # e is the symbol here, not a constant


def test_a_name_before_a_bracket_stays_a_call():
    assert parse_answer("sqrt(4)") == 2
    with pytest.raises(ParseError, match=r"calling 'x' \(a product is x\*\(…\)\)"):
        parse_answer("x(1 + x)", SYMS)
    with pytest.raises(ParseError):
        parse_answer("1 2")  # two numbers side by side are a slip, not a product


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(1 + e", r"the '\(' at column 1 is never closed"),
        ("1 + e)", r"the '\)' at column 6 closes no bracket"),
        ("[1, 2)", r"the '\)' at column 6 cannot close a '\['"),
        ("1 +", r"'1 \+' stops before it is complete"),
        ("−1 +* 2", r"cannot read '\* 2' at column 5 of '−1 \+\* 2'"),
        ("e^2 ^^ 2", r"at column 6 of 'e\^2 \^\^ 2'"),  # ^ is ** inside: the column is as typed
    ],
)
def test_syntax_errors_are_plain_and_name_the_column_as_typed(text, message):
    with pytest.raises(ParseError, match=message) as caught:
        parse_answer(text)
    assert "literal" not in str(caught.value) and "invalid syntax" not in str(caught.value)


def test_rejected_nodes_name_their_column_in_the_text_as_typed():
    # "2^x.y": the parser reads "2**x.y"; the attribute starts at column 3 of what was typed
    with pytest.raises(ParseError, match=r"attribute access \(x\.y\) at column 3"):
        parse_answer("2^x.y", SYMS)
    with pytest.raises(ParseError, match=r"unknown name 'z' at column 5"):
        parse_answer("2 x·z", SYMS)
