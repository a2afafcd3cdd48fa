"""The command line: ``python -m attention_math COMMAND …`` (also installed as ``attention-math``).

argparse gives every command its ``--help`` and the usual conventions: results on stdout,
errors on stderr naming what was wrong, exit status 0 (done, right), 1 (a wrong answer or a
changed verdict) and 2 (called wrongly). Each command's work lives in the module it
belongs to and is imported only when that command runs, so ``--help`` is instant.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from attention_math import __version__
from attention_math.terminal import WIDTH, UsageError, did_you_mean

__all__ = ["COMMANDS", "main", "parser"]

COMMANDS = {
    "exercises": "list the exercises, or show one",
    "check": "check your answer to an exercise",
    "audit": "recompute the published worked examples and judge each number",
}
"""command -> its one-line help, in the order ``--help`` lists them"""

EXIT_STATUS = """\
exit status:
  0  done: a right answer, or every audit verdict the one registered
  1  a wrong answer (check), or an audit verdict that changed (audit)
  2  called wrongly: an unknown command, exercise or example, or an answer that cannot be read
"""

EXERCISES_EPILOG = """\
examples:
  python -m attention_math exercises
  python -m attention_math exercises scaling-factor

exit status:
  0  done
  2  an unknown exercise id
"""

CHECK_EPILOG = """\
example:
  python -m attention_math check scaling-factor "1/sqrt(64)"

ANSWER is plain maths: numbers and fractions, + - * / ^, exp sqrt log ln sigmoid tanh sin \
cos abs, pi E, the symbols the exercise names, and matrices as [[a, b], [c, d]]. It is read \
by a parser that builds the expression itself: it is never evaluated as Python.

exit status:
  0  your answer is right (exactly, or within the exercise's stated tolerance)
  1  it is wrong: the message says how, when it is a known slip
  2  an unknown exercise id, or an answer that cannot be read
"""

AUDIT_EPILOG = """\
Each number printed by the five published worked examples is recomputed exactly and gets a \
verdict: agrees, rounding slip (the last digit is off) or wrong. The examples' own errors are \
known and registered with their verdicts in attention_math.examples, so "18 wrong" is the \
expected result: it describes the published examples, not this package.

exit status:
  0  every verdict is the one registered (the examples' known errors included)
  1  some verdict changed: each change is named on stderr, on a line starting CHANGED
  2  called wrongly (an unknown example)
"""


def _width(stream: TextIO) -> int:
    """WIDTH, or less in a narrower terminal (not in a pipe or a file: same text every run)."""
    if not stream.isatty():
        return WIDTH
    return min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns)


class _Formatter(argparse.HelpFormatter):
    """Wraps prose paragraphs to the terminal; keeps indented blocks (lists, commands) as typed."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_width(sys.stdout), max_help_position=16)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.strip("\n").split("\n\n")
        out = []
        for para in paragraphs:
            lines = para.splitlines()
            if any(line.startswith(" ") for line in lines[1:]):  # "heading:\n  indented block"
                out.append("\n".join(indent + line for line in lines))
            else:
                out.append(
                    textwrap.fill(
                        " ".join(lines), width, initial_indent=indent, subsequent_indent=indent
                    )
                )
        return "\n\n".join(out) + "\n"

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):  # its commands are indented twice:
            self._action_max_length += 2  # make room, or argparse wraps a long command name


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose error message is wrapped to the terminal like its help."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        text = textwrap.fill(
            f"{self.prog}: error: {message}",
            _width(sys.stderr),
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
        self.exit(2, text + "\n")


def _prog() -> str:
    # the installed script is named in messages; anything else ran the module
    name = Path(sys.argv[0]).stem if sys.argv and sys.argv[0] else ""
    return "attention-math" if name == "attention-math" else "python -m attention_math"


def _exercises(args: argparse.Namespace) -> int:
    from attention_math.exercises.cli import list_exercises, show_exercise

    print(list_exercises() if args.id is None else show_exercise(args.id))
    return 0


def _check(args: argparse.Namespace) -> int:
    from attention_math.exercises.cli import check_answer

    return check_answer(args.id, args.answer)


def _audit(args: argparse.Namespace) -> int:
    from attention_math.audit import run_audit

    return run_audit(args.examples, where=args.where)


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: one subcommand per command, each with its ``--help``.

    Examples:
        >>> from attention_math.__main__ import parser
        >>> args = parser("attention-math").parse_args(["check", "scaling-factor", "1/8"])
        >>> args.command, args.id, args.answer
        ('check', 'scaling-factor', '1/8')
    """
    top = _Parser(
        prog=prog or _prog(),
        description="Transformer self-attention, derived exactly and checked numerically: "
        "exercises with an exact checker, and the audit of published worked examples. "
        "Run a command with --help to see what it takes.",
        epilog=EXIT_STATUS,
        formatter_class=_Formatter,
    )
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    p = sub.add_parser(
        "exercises",
        help=COMMANDS["exercises"],
        description="List the exercises by chapter; with an ID, show that exercise: its "
        "statement, its inputs (in the syntax an answer is typed in) and the kind of answer "
        "expected.",
        epilog=EXERCISES_EPILOG,
        formatter_class=_Formatter,
    )
    p.add_argument("id", nargs="?", metavar="ID", help="an exercise id, from the list")
    p.set_defaults(run=_exercises, parser=p)

    p = sub.add_parser(
        "check",
        help=COMMANDS["check"],
        description="Check ANSWER to exercise ID exactly, and say what is wrong when it is a "
        "known slip (a missing scale, the softmax along the wrong axis, …).",
        epilog=CHECK_EPILOG,
        formatter_class=_Formatter,
    )
    p.add_argument("id", metavar="ID", help="an exercise id (list them: exercises)")
    p.add_argument("answer", metavar="ANSWER", help="your answer, in quotes for the shell")
    p.set_defaults(run=_check, parser=p)

    p = sub.add_parser(
        "audit",
        help=COMMANDS["audit"],
        description="Recompute the published worked examples and print each number's verdict.",
        epilog=AUDIT_EPILOG,
        formatter_class=_Formatter,
    )
    p.add_argument("examples", nargs="*", metavar="EXAMPLE", help="example ids (default: all)")
    p.add_argument("--where", action="store_true", help="add where each number appears")
    p.set_defaults(run=_audit, parser=p)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status (argparse's own exits are returned too).

    Examples:
        >>> from attention_math.__main__ import main
        >>> main(["check", "scaling-factor", "1/8"])
        scaling-factor: correct (exactly).
        0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    top = parser()
    try:
        if not argv:
            top.error(
                f"no COMMAND given; choose one of: {', '.join(COMMANDS)} "
                f"(for what each does: {top.prog} --help)"
            )
        if not argv[0].startswith("-") and argv[0] not in COMMANDS:
            top.error(
                f"unknown command {argv[0]!r}{did_you_mean(argv[0], list(COMMANDS))} "
                f"(the commands: {', '.join(COMMANDS)})"
            )
        args = top.parse_args(argv)
        run: Callable[[argparse.Namespace], int] = args.run
        try:
            return run(args)
        except UsageError as exc:
            # the command's parser prints its usage and the message on stderr, and exits 2
            sub: argparse.ArgumentParser = args.parser
            sub.error(str(exc))
    except SystemExit as exc:  # --help, --version and usage errors
        return 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 2
    except BrokenPipeError:  # e.g. `audit | head`: stop quietly, as other tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
