"""Oracle run: PyTorch's side of the page "Coming from PyTorch, d2l or Hugging Face", recorded.

Not a test. Where PyTorch is installed (CI, or ``uv pip install torch``), from the repository
root:

    uv run --group test python benchmarks/conventions_oracle.py

runs every row of ``attention_site.pages.conventions`` with PyTorch and writes what each found to
``data/conventions_oracle.json``, with PyTorch's and NumPy's versions and the
date. A site built without PyTorch shows these findings beside the package's side (run at
build time), labelled as recorded. ``tests/site/test_conventions.py`` fails under CI
when the recording no longer matches a fresh run.
"""

from __future__ import annotations

import datetime
import json

import torch
from _common import result_path  # benchmarks/, the script's directory

from attention_site.pages.conventions import record

RESULTS = result_path(__file__)


def main() -> None:
    doc = {
        "recorded_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **record(torch),
    }
    RESULTS.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}: {len(doc['rows'])} rows, PyTorch {doc['torch']}")


if __name__ == "__main__":
    main()
