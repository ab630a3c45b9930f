"""Measure ``reduce`` on the 5k-layer Llama of the corpus (ir_corpus/llama_deep): a layer
that crashes the runtime (a worker stub, as the tests use) and a perturbed weight
(``differs --against`` the original). Prints runs, wall time and peak memory (this
process and the worker's) per case, as docs/performance.md shows them.

    python tools/bench_reduce.py [--only crash|weight]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "debug"))

import reduce_faults as faults  # noqa: E402

from ovgather.debug import runs  # noqa: E402

reduce_module = importlib.import_module("ovgather.debug.search")
MODEL = str(ROOT / "ir_corpus" / "llama_deep" / "pytorch_dynamic.xml")


def _peak_mb() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return me, children


def case(kind: str) -> dict:
    folder = tempfile.mkdtemp(prefix="bench-reduce-")
    started = time.perf_counter()
    if kind == "crash":
        culprit = faults.crash_layer(MODEL)
        runs.RUN = functools.partial(faults.run_or_crash, marker=culprit)
        try:
            small, report = reduce_module.reduce(MODEL, "crashes")
        finally:
            runs.RUN = None
    else:
        path, culprit = faults.inject_weight(MODEL, folder)
        small, report = reduce_module.reduce(path, "differs", against=MODEL)
    wall = time.perf_counter() - started
    me, child = _peak_mb()
    return {"case": kind, "layers_before": report.layers_before,
            "layers_after": report.layers_after, "order": report.order_length,
            "culprit_kept": culprit in [d["name"] for d in report.layers],
            "runs": report.runs, "bisect_runs": report.bisect_runs,
            "bisect_bound": reduce_module.bisect_bound(report.order_length),
            "value_runs": report.value_runs, "seconds": round(wall, 1),
            "peak_mb_parent": round(me), "peak_mb_worker": round(child)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("crash", "weight"))
    args = ap.parse_args()
    for kind in (args.only,) if args.only else ("crash", "weight"):
        print(case(kind), flush=True)


if __name__ == "__main__":
    main()
