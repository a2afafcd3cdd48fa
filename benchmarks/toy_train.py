"""Benchmark: a cold training of the toy model (attention_math.toy), in CPU seconds.

Not a test. From the repository root:

    uv run python benchmarks/toy_train.py

Trains the page's model from scratch, bypassing the cache (``load(use_cache=False)``), in
a fresh process, and writes ``data/toy_train.json``: the CPU seconds of the
process (user + system, every thread counted), the wall time, the load average before and
after, the head scores and losses of the result, and the size of the weights file the page
ships. The target is ≤ 60 s of CPU on the project's 2-core machine.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import time

import numpy as np
from _common import result_path  # benchmarks/, the script's directory

RESULTS = result_path(__file__)


def main() -> None:
    from attention_math.toy import load
    from attention_math.toy.export import weights_json
    from attention_math.toy.heads import report

    load_before = os.getloadavg()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    model = load(use_cache=False)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    load_after = os.getloadavg()
    r = report(model)
    result = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
        },
        "numpy": np.__version__,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "hyper": model.hyper,
        "cpu_seconds": round(cpu, 2),
        "wall_seconds": round(wall, 2),
        "previous_token_score": round(float(r.previous_token[r.previous_head]), 4),
        "prefix_matching_score": round(float(r.prefix_matching[r.induction_head]), 4),
        "previous_head": list(r.previous_head),
        "induction_head": list(r.induction_head),
        "loss_first_half": round(r.loss_first, 4),
        "loss_repeated_half": round(r.loss_repeat, 4),
        "weights_json_bytes": len(json.dumps(weights_json(model), separators=(",", ":"))),
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
