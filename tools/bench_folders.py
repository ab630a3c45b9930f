"""Benchmark ``ovgather check FOLDER --jobs 2`` against ``--jobs 1`` on the same folders.

Whole processes, as a user waits for them: the installed ``ovgather`` console script
(``ovgather check --json ir_samples ir_corpus``, 76 IRs) with ``--jobs 1`` and with
``--jobs 2``, paired and alternating (which one runs first changes from pair to pair),
medians of ``--repeat`` (7) runs each; the ratio is the median of the per-pair ratios.
Every run's JSON must be the same document as the first ``--jobs 1`` run's, or the
benchmark stops: the speed counts only for the same results.

The machine's load average is printed before and after, and each run's CPU seconds (its
workers included): on a shared machine the wall times say how the two compare under that
load, not what an idle machine gives. (Linux shares the CPU between sessions first, with
``sched_autogroup``: under load from other sessions a run gets about the same share of the
CPU whatever its number of processes, so there only the CPU seconds count.)

    python tools/bench_folders.py [--repeat 7] [--jobs 2] [FOLDER ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from bench_check import console_script  # noqa: E402

DEFAULT_FOLDERS = ("ir_samples", "ir_corpus")
#: the runs import from cached bytecode, as an installed package does (``pip install``
#: compiles it): with PYTHONDONTWRITEBYTECODE every run, and every worker, would compile
#: the modules it imports from source again
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(script: str, folders: list[str], jobs: int) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system, the workers included) of one ``check --json``
    process, and what it printed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([script, "check", *folders, "--json", "--jobs", str(jobs)],
                                stdout=out, stderr=err, cwd=ROOT, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"ovgather check failed (exit {proc.returncode}): "
                             f"{err.read().decode()}")
        return seconds, usage.ru_utime + usage.ru_stime, out.read().decode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*", default=list(DEFAULT_FOLDERS))
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=2, help="the jobs set against --jobs 1")
    args = ap.parse_args()
    script = console_script()
    print(f"cores this process may use: {len(os.sched_getaffinity(0))}; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    _, _, first = run(script, args.folders, 1)  # warm the file cache; the reference
    one, many, ratios, cpu = [], [], [], {1: [], args.jobs: []}
    for i in range(args.repeat):
        order = (1, args.jobs) if i % 2 == 0 else (args.jobs, 1)
        times = {}
        for jobs in order:
            seconds, used, out = run(script, args.folders, jobs)
            if out != first:
                raise SystemExit(f"--jobs {jobs} printed another document than --jobs 1")
            times[jobs] = seconds
            cpu[jobs].append(used)
        one.append(times[1])
        many.append(times[args.jobs])
        ratios.append(times[args.jobs] / times[1])
        print(f"pair {i + 1}: --jobs 1 {times[1]:.2f} s, --jobs {args.jobs} "
              f"{times[args.jobs]:.2f} s")
    print(f"check {' '.join(args.folders)}: --jobs 1 median {statistics.median(one):.2f} s "
          f"({statistics.median(cpu[1]):.2f} s of CPU), --jobs {args.jobs} median "
          f"{statistics.median(many):.2f} s ({statistics.median(cpu[args.jobs]):.2f} s of CPU), "
          f"ratio (median of pairs) {statistics.median(ratios):.2f}x; same JSON in every run")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
