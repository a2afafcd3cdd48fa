"""Zensical with the meaning MkDocs gives ``--strict``: ``python -m attention_site.strict build
--strict ...`` takes Zensical's arguments and fails when anything was logged at WARNING or
above.

``mkdocs build --strict`` fails on a logged warning: a markdown-exec block that raised (a
cross-check that found the exact and the numeric results apart), a formula MathJax cannot
typeset, a page whose notebook prepare has not written. Zensical 0.0.73 prints the same
warnings and exits with status 0, ``--strict`` or not (zensical/zensical#491, "zensical build
returns exit code 0 on error"). So the build command (`attention_site.build`) runs Zensical's
own command line, the ``zensical`` console script (``zensical.main:cli``), in this process,
with a handler on the root logger that counts those records, and exits with status 1 if it
counted one.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

__all__ = ["Counter", "main"]


class Counter(logging.StreamHandler):  # type: ignore[type-arg]
    """Prints the records at WARNING or above, as Python does when no handler is set (what
    Zensical relies on), and counts them.

    Examples:
        >>> import io
        >>> counter = Counter(io.StringIO())
        >>> log = logging.getLogger("attention_site.strict.example")
        >>> log.addHandler(counter)
        >>> log.warning("a warning"); log.info("not counted")
        >>> counter.count, counter.stream.getvalue()
        (1, 'WARNING -  a warning\\n')
        >>> log.removeHandler(counter)
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self.setLevel(logging.WARNING)
        self.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        super().emit(record)


def main(argv: list[str] | None = None) -> int:
    """Run ``zensical`` with ``argv``; 1 if it failed or logged a warning, else 0."""
    from zensical.main import cli  # the console script's entry point

    counter = Counter()
    logging.getLogger().addHandler(counter)
    try:
        cli.main(args=argv, prog_name="zensical", standalone_mode=False)
    finally:
        logging.getLogger().removeHandler(counter)
    if counter.count:
        print(
            f"Aborted with {counter.count} warnings: Zensical logged them and went on "
            "(python -m attention_site.strict fails on them, as mkdocs build --strict does)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
