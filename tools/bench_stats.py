"""Time ``ovgather stats`` against ``ovgather check`` on the same model, as a user runs
them: the installed console scripts, paired and alternating (check, stats, check, …) so
that a slow moment of the machine hits both, the median of 7 runs each, and the ratio.

    python tools/bench_stats.py [MODEL] [--runs 7] [--shape NAME=SHAPE …]

The default MODEL is ir_corpus/llama_deep/pytorch_dynamic.xml (4,945 layers). With no
``--shape`` the model's dims stay dynamic; the figure in docs/performance.md is printed
for both (dynamic, and at --shape input_ids[1,128],attention_mask[1,128]).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "ir_corpus/llama_deep/pytorch_dynamic.xml"


def _time(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} failed: {done.stderr.decode().strip()}")
    return elapsed


def bench(model: str, runs: int, shapes: list[str]) -> float:
    exe = shutil.which("ovgather")
    if exe is None:
        sys.exit("the ovgather console script is not installed (pip install -e .)")
    extra = [arg for shape in shapes for arg in ("--shape", shape)]
    commands = {"check": [exe, "check", model, *extra], "stats": [exe, "stats", model, *extra]}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():  # warm the file cache and the .pyc files
        _time(command)
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(_time(command))
    check, stats = (statistics.median(times[name]) for name in ("check", "stats"))
    label = " ".join(shapes) or "dynamic dims"
    print(f"{Path(model).name} ({label}): check {check:.3f} s, stats {stats:.3f} s, "
          f"ratio {stats / check:.2f} (medians of {runs})")
    return stats / check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=str(DEFAULT))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--shape", action="append", default=[])
    args = parser.parse_args()
    bench(args.model, args.runs, args.shape)
    if not args.shape and args.model == str(DEFAULT):
        bench(args.model, args.runs, ["input_ids[1,128],attention_mask[1,128]"])


if __name__ == "__main__":
    main()
