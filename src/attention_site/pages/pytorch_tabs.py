"""The forward pages' code in two tabs, NumPy and PyTorch, and what the PyTorch tab prints.

A page shows a step as a pair of content tabs (``=== "NumPy"``, then ``=== "PyTorch"``): the
NumPy tab holds an executed block (````python exec="on"````, run when the site is built), the
PyTorch tab the same lines in PyTorch, shown and not run (the build has no PyTorch). Each
PyTorch block prints only names (``print(O)``), and its NumPy twin defines the same names:
those are the pair's results, which ``tests/site/test_pytorch_tabs.py`` compares after
running both blocks.

What the PyTorch tab prints is printed at build time from the NumPy run, in PyTorch's own
format (`tensor_str`: ``tensor([[0.2119, ...]])`` for a float32 tensor, PyTorch's default), by
a hidden block under the PyTorch code: ``print(pytorch_output("forward/softmax.md", 0))``, the
page and the pair's place on it. The test runs the PyTorch code and holds its printed text
equal to that output, so the page shows what PyTorch prints, typed by nobody.

Entry points: ``tab_pairs`` (a page's pairs), ``printed_names`` (a block's results),
``tensor_str`` (PyTorch's format), ``pytorch_output`` (the PyTorch tab's output).
"""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["TabPair", "printed_names", "pytorch_output", "run_numpy", "tab_pairs", "tensor_str"]

DOCS = Path(__file__).resolve().parents[3] / "docs"  # the checkout's (installed editable)

_TAB = re.compile(r'^(?P<indent>[ \t]*)===\+?\s+"(?P<title>[^"]*)"\s*$')
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})\s*(?P<info>.*)$")
_EXEC = re.compile(r"""\bexec=["']?(?:on|1|true)\b""")


@dataclass(frozen=True)
class TabPair:
    """One NumPy | PyTorch pair of tabs: the code of each (dedented) and where it starts."""

    numpy: str
    pytorch: str
    line: int  # of the NumPy tab's line in the page, from 1
    output_call: str  # the hidden block under the PyTorch code, as written ("" if none)


def _tabs(lines: list[str]) -> list[tuple[int, str, str, list[tuple[str, str]]]]:
    """Every content tab: its line index, indent, title, and its fences (info, code)."""
    found = []
    for i, line in enumerate(lines):
        tab = _TAB.match(line)
        if not tab:
            continue
        indent = tab["indent"]
        body = []
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith(indent + "    ")):
            body.append(lines[j][len(indent) + 4 :])
            j += 1
        fences: list[tuple[str, str]] = []
        k = 0
        while k < len(body):
            fence = _FENCE.match(body[k])
            k += 1
            if not fence or fence["indent"]:
                continue
            code = []
            while k < len(body) and not body[k].startswith(fence["ticks"]):
                code.append(body[k])
                k += 1
            k += 1
            fences.append((fence["info"], "\n".join(code).strip("\n")))
        found.append((i, indent, tab["title"], fences))
    return found


def tab_pairs(markdown: str) -> list[TabPair]:
    """The NumPy | PyTorch pairs of a page's Markdown, in order.

    A pair is a tab titled "NumPy" whose first fence is an executed Python block, followed
    by a tab titled "PyTorch" whose first fence is a plain Python block.

    Examples:
        >>> page = '''
        ... === "NumPy"
        ...
        ...     ```python exec="on" source="above" result="text"
        ...     print(x)
        ...     ```
        ...
        ... === "PyTorch"
        ...
        ...     ```python
        ...     print(x)
        ...     ```
        ... '''
        >>> [(p.line, p.numpy, p.pytorch) for p in tab_pairs(page)]
        [(2, 'print(x)', 'print(x)')]
    """
    tabs = _tabs(markdown.splitlines())
    pairs = []
    for (i, indent, title, fences), nxt in itertools.pairwise(tabs):
        if title != "NumPy" or nxt[2] != "PyTorch" or nxt[1] != indent:
            continue
        (info, numpy_code), *_ = fences or [("", "")]
        if not (info.startswith("python") and _EXEC.search(info)):
            raise ValueError(f"line {i + 1}: the NumPy tab's first block is not executed")
        torch_fences = nxt[3]
        if not torch_fences or _EXEC.search(torch_fences[0][0]):
            raise ValueError(f"line {nxt[0] + 1}: the PyTorch tab's first block is run")
        calls = [code for info, code in torch_fences[1:] if _EXEC.search(info)]
        pairs.append(TabPair(numpy_code, torch_fences[0][1], i + 1, calls[0] if calls else ""))
    return pairs


def printed_names(code: str) -> list[str]:
    """The names a block prints at its top level, in order: its results.

    Examples:
        >>> printed_names("P = 1\\nprint(P)\\nfor i in (1,):\\n    print(i)\\nprint(O)")
        ['P', 'O']
        >>> printed_names("print(P.sum())")
        Traceback (most recent call last):
        ...
        ValueError: a PyTorch tab prints names only, not P.sum() (line 1)
    """
    names = []
    for node in ast.parse(code).body:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "print"
        ):
            args = node.value.args
            if len(args) != 1 or not isinstance(args[0], ast.Name) or node.value.keywords:
                shown = ", ".join(ast.unparse(a) for a in args)
                raise ValueError(
                    f"a PyTorch tab prints names only, not {shown} (line {node.lineno})"
                )
            names.append(args[0].id)
    return names


def _format_floats(values: np.ndarray) -> tuple[int, Any]:
    """PyTorch's float formatter (``torch._tensor_str._Formatter``, 4 digits): its width and
    the function that formats one value."""
    finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
    whole = bool(np.all(finite == np.ceil(finite)))
    big = float(np.abs(finite).max()) if finite.size else 1.0
    small = float(np.abs(finite).min()) if finite.size else 1.0
    sci = big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4
    if sci:
        width = max(len(f"{v:.4e}") for v in finite)
        return width, lambda v: f"{v:{width}.4e}"
    if whole:
        width = max([1, *(len(f"{v:.0f}") + 1 for v in finite)])
        return width, lambda v: f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
    width = max(len(f"{v:.4f}") for v in finite)
    return width, lambda v: f"{v:.4f}"


def tensor_str(value: object) -> str:
    """What ``print(t)`` shows for the tensor PyTorch makes of ``value``: float arrays as
    float32 (PyTorch's default dtype, so no ``dtype=`` suffix), boolean arrays as bool; a
    Python or NumPy scalar as Python prints it. Up to 2 axes and a line of 80 characters,
    what the forward pages print.

    Examples:
        >>> print(tensor_str(np.array([[0.0, -np.inf], [1.0, -1.0]])))
        tensor([[ 0., -inf],
                [ 1., -1.]])
        >>> print(tensor_str(np.array([[0.21194156, 0.5761169]])))
        tensor([[0.2119, 0.5761]])
        >>> print(tensor_str(np.array([True, False])), tensor_str(np.True_))
        tensor([ True, False]) True
    """
    if not isinstance(value, np.ndarray):
        return str(value.item() if isinstance(value, np.generic) else value)
    if value.ndim not in (1, 2):
        raise ValueError(f"tensor_str formats 1 or 2 axes, not {value.ndim}: shape {value.shape}")
    if value.dtype == bool:
        width = max(len(str(bool(v))) for v in value.ravel())
        fmt: Any = lambda v: f"{bool(v)!s:>{width}}"  # noqa: E731
    elif np.issubdtype(value.dtype, np.floating):
        value = value.astype(np.float32).astype(np.float64)  # the float32 PyTorch holds
        width, one = _format_floats(value)
        fmt = lambda v: f"{one(float(v)):>{width}}"  # noqa: E731
    else:
        raise TypeError(f"tensor_str formats float and bool arrays, not {value.dtype}")
    indent = len("tensor(")

    def vector(row: np.ndarray, at: int) -> str:
        items = [fmt(v) for v in row]
        per_line = max(1, (80 - at) // (width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (at + 1)).join(lines) + "]"

    if value.ndim == 1:
        body = vector(value, indent)
    else:
        body = "[" + (",\n" + " " * (indent + 1)).join(vector(r, indent + 1) for r in value) + "]"
    return f"tensor({body})"


def _page_pair(page: str, n: int) -> TabPair:
    pairs = tab_pairs((DOCS / page).read_text(encoding="utf-8"))
    if not 0 <= n < len(pairs):
        raise ValueError(f"{page} has {len(pairs)} NumPy | PyTorch pair(s), not a pair {n}")
    return pairs[n]


def run_numpy(code: str) -> dict[str, Any]:
    """Run a NumPy tab's code in a namespace of its own, its printing swallowed; the names it
    defines."""
    namespace: dict[str, Any] = {"__name__": "__numpy_tab__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<numpy tab>", "exec"), namespace)  # the page's own code
    return namespace


def pytorch_output(page: str, n: int) -> str:
    """What pair ``n`` (from 0) of ``page`` (under docs/) prints in its PyTorch tab: each name
    its PyTorch code prints, taken from a run of its NumPy code, in PyTorch's format."""
    pair = _page_pair(page, n)
    found = run_numpy(pair.numpy)
    names = printed_names(pair.pytorch)
    missing = [name for name in names if name not in found]
    if missing:
        raise ValueError(f"{page}, pair {n}: the NumPy tab does not define {missing}")
    return "\n".join(tensor_str(found[name]) for name in names)
