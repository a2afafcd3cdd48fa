"""Command line: ``python -m attention_math <command> …``.

Each command lives in the module it belongs to and exposes ``cli(argv) -> int``; this file
only dispatches, so adding a command is one line in ``COMMANDS``.
"""

from __future__ import annotations

import importlib
import sys

# command -> (module, help line)
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("attention_math.audit", "audit every published worked example"),
    "exercises": ("attention_math.exercises", "list the exercises"),
    "check": ("attention_math.exercises", "check an answer: check ID 'answer'"),
}


def main(argv: list[str] | None = None) -> int:
    """Run a command; return its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        lines = [f"  {name:<10} {text}" for name, (_, text) in COMMANDS.items()]
        print("usage: python -m attention_math COMMAND [ARGS]\n\ncommands:\n" + "\n".join(lines))
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return int(module.cli(argv[0], argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
