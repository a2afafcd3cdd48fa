"""A safe reader for answers typed as plain math: ``"[[exp(1)/(1 + exp(1)), 1/2]]"``.

``sympy.sympify`` and ``parse_expr`` run ``eval`` on their input, so a learner's string
never reaches them. Instead the string is turned into a Python syntax tree with
`ast.parse` (which only parses, it runs nothing) and the tree is walked with an
allow-list: numbers, the symbol names the exercise declares, a few constants (``e`` is
Euler's number unless the exercise names a symbol ``e``), ``+ - * / **`` (``^`` is read as a
power), unary minus, calls to an allow-list of functions, and matrix literals as nested lists.
A product may be written as in print, side by side (``2e^(1/2)``, ``2 sqrt(2)``,
``(1 + e)(1 - e)``): before parsing, a ``*`` is put between a number or a closing bracket and
what follows it, and between two names (a name followed by a bracket stays a call, and
``1e-9`` stays a number, as in Python). Every other node (attribute access, subscripts, lambdas,
comprehensions, strings, keyword arguments, names starting with ``_`` …) is rejected with a
`ParseError` naming it. The SymPy objects are built by this module, node by node.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import sympy as sp

__all__ = [
    "FUNCTIONS",
    "MAX_BITS",
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "MAX_NESTING",
    "MAX_OPERATORS",
    "ParseError",
    "parse_answer",
    "unreadable",
]

MAX_LENGTH = 5000
"""Longest answer accepted, in characters: a 4×4 matrix of long expressions fits easily."""
MAX_EXPONENT = 100
"""Largest |n| accepted in x**n for a number n: 10**10**10 would hang SymPy."""
MAX_BITS = 100_000
"""Largest size, in bits, of an exact power such as (9**99)**99: nested powers grow fast."""
MAX_NESTING = 40
"""Deepest brackets inside brackets accepted (a matrix needs 2). Python's parser recurses per
bracket and per operator; in the browser (Pyodide) its stack is small enough that ~150 nested
brackets crash the runtime, so deeper text is refused first."""
MAX_OPERATORS = 400
"""Most operators (+ - * / ^) in the whole answer: a 4×4 matrix of long entries needs ~250."""

FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], int]] = {
    "exp": (sp.exp, 1),
    "sqrt": (sp.sqrt, 1),
    "log": (sp.log, 1),
    "ln": (sp.log, 1),
    "sigmoid": (lambda x: sp.exp(x) / (1 + sp.exp(x)), 1),
    "tanh": (sp.tanh, 1),
    "sin": (sp.sin, 1),
    "cos": (sp.cos, 1),
    "abs": (sp.Abs, 1),
}
"""Name -> (SymPy builder, number of arguments)."""
_CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "e": sp.E, "E": sp.E, "oo": sp.oo, "inf": sp.oo}
_HINT = "type plain math, e.g. 2e^(1/2)/(1 + e) or [[1, 0], [1/2, 1/2]]"
# A number (``1e-9`` is one, as in Python; ``2e`` is 2 then e), a name, a space, anything else.
_TOKEN = re.compile(
    r"(?P<number>(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[^\W\d]\w*)|(?P<space>\s+)|(?P<other>.)",
    re.S,
)
_BINOPS: dict[type, Callable[[sp.Expr, sp.Expr], sp.Expr]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
# What a rejected node is, in words, for the error message.
_WHAT = {
    ast.Attribute: "attribute access (x.y)",
    ast.Subscript: "indexing (x[i])",
    ast.Lambda: "lambda",
    ast.ListComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.Compare: "a comparison",
    ast.BoolOp: "and/or",
    ast.IfExp: "if/else",
    ast.NamedExpr: "an assignment (:=)",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.JoinedStr: "an f-string",
    ast.Starred: "*args",
}


def _bits(x: sp.Expr) -> int:
    """Bits in the numerator/denominator of a rational number (0 for anything else)."""
    if not x.is_Rational:
        return 0
    return max(int(x.p).bit_length(), int(x.q).bit_length())


class ParseError(ValueError):
    """The answer string is not plain math this reader accepts."""


def unreadable(exc: Exception) -> str:
    """The message for an answer that cannot be read, as the command line and the answer box
    give it: the reader's messages name the answer already, so it is not said twice.

    Examples:
        >>> from attention_math.exercises.parse import ParseError, unreadable
        >>> unreadable(ParseError("answer: it is empty"))
        'cannot read the answer: it is empty'
    """
    return "cannot read the answer: " + str(exc).removeprefix("answer: ")


def _allowed_text(symbols: Mapping[str, sp.Basic]) -> str:
    names = f"the symbols {', '.join(sorted(symbols))}, " if symbols else ""
    constants = ", ".join(c for c in _CONSTANTS if c not in symbols)
    return (
        f"allowed: numbers, {names}the constants {constants}, "
        f"+ - * / ** ^, the functions {', '.join(FUNCTIONS)}, and matrices as [[a, b], [c, d]]"
    )


def _normalise(text: str) -> tuple[str, list[int]]:
    """Typographic operators to ASCII (``−`` → ``-``, ``×``/``·`` → ``*``, ``^`` → ``**``),
    the text stripped, and for each character of the result its column in ``text``."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        new = {"−": "-", "×": "*", "·": "*", "^": "**"}.get(ch, ch)
        out.append(new)
        where.extend([i] * len(new))
    src = "".join(out)
    start = len(src) - len(src.lstrip())
    src = src.strip()
    return src, where[start : start + len(src)]


def _implicit_products(src: str, where: list[int]) -> tuple[str, list[int]]:
    """``src`` with a ``*`` wherever two factors stand side by side, and its columns.

    A ``*`` goes after a number, a name that is not a function, or ``)``, when a number, a
    name or (after a number or ``)``) an opening ``(`` follows: ``2e`` → ``2*e``,
    ``2 sqrt(2)`` → ``2*sqrt(2)``, ``(a)(b)`` → ``(a)*(b)``, ``pi x`` → ``pi*x``. Never
    after a name before ``(`` (``sqrt(2)`` is a call), nor between two numbers (``1 2`` is
    a slip, not a product), nor next to a Python keyword; text with a quote is left as it is
    (a string is refused anyway).
    """
    if "'" in src or '"' in src:
        return src, where
    tokens = [(m.lastgroup, m.group(), m.start()) for m in _TOKEN.finditer(src)]
    out: list[str] = []
    columns: list[int] = []
    previous: tuple[str | None, str] = (None, "")
    for kind, text, start in tokens:
        if kind != "space":
            if _side_by_side(previous, (kind, text)):
                out.append("*")
                columns.append(where[start])
            previous = (kind, text)
        out.append(text)
        columns.extend(where[start : start + len(text)])
    return "".join(out), columns


def _side_by_side(a: tuple[str | None, str], b: tuple[str | None, str]) -> bool:
    """Whether the tokens ``a`` then ``b`` are two factors of a product written without ``*``."""
    (kind_a, a_text), (kind_b, b_text) = a, b
    factor_a = kind_a == "number" or a_text == ")" or (kind_a == "name" and _operand(a_text))
    if not factor_a:
        return False
    if kind_b == "name":
        return not keyword.iskeyword(b_text)
    if kind_b == "number":
        return kind_a != "number"
    return b_text == "(" and kind_a != "name"


def _operand(name: str) -> bool:
    """A name that can be a factor: not a function, ``Matrix`` or a Python keyword."""
    return name not in FUNCTIONS and name != "Matrix" and not keyword.iskeyword(name)


def _unmatched(src: str) -> tuple[int, str] | None:
    """The first bracket of ``src`` that does not pair up: its index, and what is wrong with
    it, with ``{col}`` where its column goes."""
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[tuple[int, str]] = []
    for i, ch in enumerate(src):
        if ch in "([{":
            stack.append((i, ch))
        elif ch in pairs:
            if not stack:
                return i, f"the '{ch}' at column {{col}} closes no bracket"
            _, opener = stack.pop()
            if opener != pairs[ch]:
                return i, f"the '{ch}' at column {{col}} cannot close a '{opener}'"
    if stack:
        return stack[-1][0], f"the '{stack[-1][1]}' at column {{col}} is never closed"
    return None


def _syntax_message(exc: SyntaxError, src: str, where: list[int], text: str) -> str:
    """What is wrong with text Python cannot parse, in plain words, with its column (from 1)
    in ``text``, the answer as typed."""
    bracket = _unmatched(src)
    if bracket is not None:
        at, what = bracket
        return f"answer: {what.format(col=where[at] + 1)}; {_HINT}"
    offset = (exc.offset or 0) - 1  # Python's offset counts from 1; 0: at the end
    if offset < 0 or offset >= len(src):
        return f"answer: {text.strip()!r} stops before it is complete; {_HINT}"
    rest = src[offset:][:12]
    return f"answer: cannot read {rest!r} at column {where[offset] + 1} of {text!r}; {_HINT}"


class _Builder:
    def __init__(
        self,
        symbols: Mapping[str, sp.Basic],
        source: str,
        where: list[int],
        *,
        exact: bool = False,
    ) -> None:
        self.symbols = symbols
        self.source = source  # the text parsed; `where` maps its columns to the text typed
        self.where = where
        self.exact = exact  # a decimal is the exact rational its digits write

    def _exact_decimal(self, node: ast.Constant) -> sp.Rational:
        # from the digits as typed: a float would keep only about 16 of them
        digits = (ast.get_source_segment(self.source, node) or repr(node.value)).replace("_", "")
        value = sp.Rational(digits)
        if _bits(value) > MAX_BITS:
            self._raise(node, f"the number {digits} (more than {MAX_BITS} bits exactly)")
        return value

    def fail(self, node: ast.AST, what: str) -> ParseError:
        col = getattr(node, "col_offset", None)
        where = f" at column {self.column(col) + 1}" if col is not None else ""
        return ParseError(f"answer: {what}{where} is not allowed; {_allowed_text(self.symbols)}")

    def build(self, node: ast.AST) -> sp.Basic | list[Any]:
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, int | float):
                return self._raise(node, f"the constant {v!r}")
            if isinstance(v, float) and not math.isfinite(v):
                return self._raise(node, f"the number {v!r} (too large for a float)")
            if isinstance(v, int):
                return sp.Integer(v)
            if self.exact:
                return self._exact_decimal(node)
            # Decimals stay Floats: the checker tells a rounded answer from an exact one.
            return sp.Float(repr(v))
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            x = self.scalar(node.operand)
            return -x if isinstance(node.op, ast.USub) else x
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            a, b = self.scalar(node.left), self.scalar(node.right)
            if isinstance(node.op, ast.Pow) and b.is_Number and abs(b) > MAX_EXPONENT:
                return self._raise(node, f"an exponent of size {b} (more than {MAX_EXPONENT})")
            if isinstance(node.op, ast.Pow) and b.is_Number and _bits(a) * abs(b) > MAX_BITS:
                return self._raise(node, f"a power with more than {MAX_BITS} bits")
            if isinstance(node.op, ast.Div) and b == 0:
                return self._raise(node, "division by zero")
            return _BINOPS[type(node.op)](a, b)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.List | ast.Tuple):
            return [self.build(e) for e in node.elts]
        what = _WHAT.get(type(node), f"the syntax {type(node).__name__}")
        return self._raise(node, what)

    def _raise(self, node: ast.AST, what: str) -> NoReturn:
        raise self.fail(node, what)

    def column(self, offset: int) -> int:
        """The column, in the text as typed, of the parsed text's UTF-8 byte ``offset``."""
        chars = len(self.source.encode()[:offset].decode(errors="ignore"))
        return self.where[min(chars, len(self.where) - 1)]

    def name(self, node: ast.Name) -> sp.Basic:
        n = node.id
        if n.startswith("_"):
            return self._raise(node, f"the name {n!r} (names starting with '_')")
        if n in self.symbols:
            return self.symbols[n]
        if n in _CONSTANTS:
            return _CONSTANTS[n]
        if n in FUNCTIONS:
            return self._raise(node, f"the function {n!r} without an argument")
        return self._raise(node, f"the unknown name {n!r}")

    def scalar(self, node: ast.AST) -> sp.Expr:
        x = self.build(node)
        if isinstance(x, list):
            raise self.fail(node, "arithmetic on a matrix literal")
        return x

    def call(self, node: ast.Call) -> sp.Basic:
        f = node.func
        if not isinstance(f, ast.Name):
            self.build(f)  # names the real offence: attribute access, a lambda, …
            return self._raise(node, "calling something other than a function name")
        if node.keywords:
            return self._raise(node, "keyword arguments")
        if f.id == "Matrix":  # Matrix([[...]]) as SymPy prints it
            if len(node.args) != 1 or not isinstance(node.args[0], ast.List):
                return self._raise(node, "Matrix(...) without one nested list")
            return self.build(node.args[0])
        if f.id not in FUNCTIONS:
            if f.id in self.symbols or f.id in _CONSTANTS:
                return self._raise(node, f"calling {f.id!r} (a product is {f.id}*(…))")
            return self._raise(node, f"a call to {f.id!r}")
        fn, arity = FUNCTIONS[f.id]
        if len(node.args) != arity:
            return self._raise(node, f"{f.id} with {len(node.args)} arguments (takes {arity})")
        return fn(*(self.scalar(a) for a in node.args))


def _to_matrix(rows: list[Any], text: str) -> sp.Matrix:
    if all(not isinstance(r, list) for r in rows):
        rows = [rows]  # a flat list is one row
    if not rows or any(not isinstance(r, list) for r in rows):
        raise ParseError(f"answer: a matrix must be a list of rows [[a, b], [c, d]], got {text!r}")
    widths = {len(r) for r in rows}
    if len(widths) != 1 or 0 in widths:
        raise ParseError(f"answer: the rows of the matrix have lengths {[len(r) for r in rows]}")
    if any(isinstance(e, list) for r in rows for e in r):
        raise ParseError("answer: matrices may be nested two levels deep at most")
    return sp.Matrix(rows)


def _nesting_and_operators(src: str) -> tuple[int, int]:
    """The deepest bracket nesting in ``src`` and its count of arithmetic operator characters."""
    depth = deepest = operators = 0
    for ch in src:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
        elif ch in "+-*/^":
            operators += 1
    return deepest, operators


def parse_answer(
    text: str, symbols: Mapping[str, sp.Basic] | None = None, *, exact_decimals: bool = False
) -> sp.Expr | sp.Matrix:
    """Read ``text`` as a SymPy expression or Matrix without ever evaluating it as code.

    Args:
        text: plain math, e.g. ``"exp(1)/(1 + exp(1))"`` or ``"[[1, 0], [1/2, 1/2]]"``.
        symbols: the names the answer may use, mapped to their SymPy symbols.
        exact_decimals: read a decimal such as ``0.1`` as the exact rational its digits
            write (``1/10``), every typed digit kept, before any function sees it
            (``exp(0.5)`` stays e^(1/2)); by default it is a ``Float``, and SymPy evaluates
            ``exp`` of a ``Float`` at once. The exercise checker reads answers with it on.

    Returns:
        sympy.Expr | sympy.Matrix: an expression, or a matrix for a (nested) list (a flat
            list is one row).

    Raises:
        ParseError: (a ``ValueError``) for anything outside the allow-list.
        TypeError: ``text`` is not a string.

    Examples:
        >>> import sympy as sp
        >>> from attention_math.exercises.parse import parse_answer
        >>> parse_answer("exp(x)/(1 + exp(x))", {"x": sp.Symbol("x")})
        exp(x)/(exp(x) + 1)
        >>> parse_answer("[[1, 2^3], [sqrt(2)/2, -0.5]]")
        Matrix([
        [        1,    8],
        [sqrt(2)/2, -0.5]])
        >>> parse_answer("0.33333333333333333333", exact_decimals=True)
        33333333333333333333/100000000000000000000
        >>> parse_answer("2e^(1/2)/(1 + e)")  # e is Euler's number; side by side is a product
        2*exp(1/2)/(1 + E)
        >>> parse_answer("(1 + e")
        Traceback (most recent call last):
        ...
        attention_math.exercises.parse.ParseError: answer: the '(' at column 1 is never closed; ...
        >>> parse_answer("__import__('os').system('true')")
        Traceback (most recent call last):
        ...
        attention_math.exercises.parse.ParseError: answer: attribute access (x.y) at column 1 ...
    """
    if not isinstance(text, str):
        raise TypeError(f"answer text must be a str, got {type(text).__name__}")
    symbols = dict(symbols or {})
    if len(text) > MAX_LENGTH:
        raise ParseError(f"answer: {len(text)} characters is longer than {MAX_LENGTH}")
    src, where = _implicit_products(*_normalise(text))
    if not src:
        raise ParseError("answer: it is empty")
    deepest, operators = _nesting_and_operators(src)
    if deepest > MAX_NESTING:
        raise ParseError(f"answer: brackets nested {deepest} deep (more than {MAX_NESTING})")
    if operators > MAX_OPERATORS:
        raise ParseError(f"answer: {operators} operators (more than {MAX_OPERATORS})")
    try:
        tree = ast.parse(src, mode="eval")  # parses only; nothing is executed
    except SyntaxError as exc:
        raise ParseError(_syntax_message(exc, src, where, text)) from None
    except (ValueError, RecursionError, MemoryError):
        raise ParseError("answer: too deeply nested or malformed") from None
    try:
        out = _Builder(symbols, src, where, exact=exact_decimals).build(tree.body)
    except RecursionError:
        raise ParseError("answer: too deeply nested") from None
    return _to_matrix(out, text) if isinstance(out, list) else out
