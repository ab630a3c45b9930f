"""Benchmark ``ovgather check`` as a user runs it against OpenVINO's own ``read_model``.

Whole processes, as a user waits for them: the installed ``ovgather`` console script
(``ovgather check --json MODEL``) against a process that only runs
``openvino.Core().read_model(MODEL)``, paired and alternating on the same file, medians
of ``--repeat`` (7 or more) runs each; the ratio is the median of the per-pair ratios.
Peak memory is each process's own maximum resident set, and CPU time its user + system
time (``os.wait4``, threads included): on a machine other work shares, wall times
swing with the load while the CPU ratio holds steadier, so both are shown. Then, inside one
process, the read ``check`` makes (``read_layer_graph``: layers into records) and ``check``
are timed per 1k layers from 10k to 100k layers, so that a cost that grows faster than the
model shows; with valgrind installed, the
instructions each size's added layers cost are counted too (the work, apart from memory
latency).

The IRs: generated chains (``gen_models.big_ir``) of 1k, 20k and 100k layers, plus the
``--model`` IRs given (by default BERT and GPT-2 of ``ir_corpus/``, a few hundred layers
each, and ``llama_deep``, a 44-block Llama of ~5k layers).

First, the fixed cost: ``check --json`` of the smallest sample (4 layers) against a
process that only runs ``import lxml.etree`` (the least a check must import), and against
``python -c pass``, with the Python beside the console script; what is left over is the
start-up of ovgather itself. ``--taskset 0`` runs every timed process on CPU 0 alone (a
machine whose Python starts slowly: one core, nothing overlaps the imports).

    python tools/bench_check.py [--sizes 1000,20000,100000] [--model X.xml ...]
                                [--repeat 7] [--scaling 10000,20000,50000,100000]
                                [--only-scaling] [--only-startup] [--taskset CPUS]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
#: timed when no --model is given: two small transformers and a ~5k-layer LLM
DEFAULT_MODELS = ("ir_corpus/bert/pytorch_dynamic.xml", "ir_corpus/gpt2/pytorch_dynamic.xml",
                  "ir_corpus/llama_deep/pytorch_dynamic.xml")
#: the fixed cost of a check: the smallest sample (Parameter, Const, GatherND, Result)
STARTUP_MODEL = "ir_samples/gather_nd8_bd3.xml"
#: what every timed command is started under (``--taskset``: ``taskset -c CPUS``)
PREFIX: list[str] = []


def console_script() -> str:
    """The installed ``ovgather`` beside this interpreter (what ``pip install`` made)."""
    found = Path(sys.executable).with_name("ovgather")
    if found.exists():
        return str(found)
    which = shutil.which("ovgather")
    if which is None:
        raise SystemExit("install ovgather first (pip install .): no ovgather console script")
    return which


#: Runs one command and prints its wall time, peak RSS, exit code and CPU time. Started as a small
#: process of its own: Linux carries a process's peak RSS over fork and exec, so a command
#: started straight from this (big: it made the IRs with openvino) process would report
#: this process's peak, not its own.
_LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status),
      usage.ru_utime + usage.ru_stime)
"""


def measured_run(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MiB, exit code) of one process, from outside the repo
    so that the installed package is what runs."""
    return measured_cpu_run(cmd)[:3]


def measured_cpu_run(cmd: list[str]) -> tuple[float, float, int, float]:
    """:func:`measured_run` and the process's CPU seconds (user + system)."""
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, *PREFIX, *cmd], capture_output=True,
                          text=True, check=True, cwd=tempfile.gettempdir())
    wall, rss, code, cpu = done.stdout.split()
    return float(wall), float(rss), int(code), float(cpu)


def bench_processes(xml: Path, repeat: int,
                    theirs: list[str] | None = None) -> dict[str, float]:
    """``check --json`` of ``xml`` against ``theirs`` (by default a ``read_model`` process
    of the same file), paired and alternating; the keys name ``read_model`` either way."""
    ours = [console_script(), "check", "--json", str(xml)]
    if theirs is None:
        theirs = [sys.executable, "-c",
                  f"import openvino as ov; ov.Core().read_model({str(xml)!r})"]
    measured_cpu_run(ours), measured_cpu_run(theirs)  # warm the file cache and the bytecode
    rows = []
    for _ in range(repeat):
        t_ours, m_ours, rc, c_ours = measured_cpu_run(ours)
        if rc not in (0, 1):
            raise SystemExit(f"ovgather check exited {rc} on {xml}")
        t_theirs, m_theirs, _, c_theirs = measured_cpu_run(theirs)
        rows.append((t_ours, t_theirs, m_ours, m_theirs, c_ours, c_theirs))
    ours_t, theirs_t, ours_m, theirs_m, ours_c, theirs_c = (
        statistics.median(c) for c in zip(*rows, strict=True))
    ratio = statistics.median(row[0] / row[1] for row in rows)
    cpu_ratio = statistics.median(row[4] / row[5] for row in rows)
    return {"check_s": ours_t, "read_model_s": theirs_t, "ratio": ratio,
            "check_mib": ours_m, "read_model_mib": theirs_m, "cpu_ratio": cpu_ratio,
            "check_cpu_s": ours_c, "read_model_cpu_s": theirs_c}


def bench_startup(repeat: int) -> dict[str, float]:
    """Wall medians of ``check --json`` of :data:`STARTUP_MODEL`, ``import lxml.etree``
    and ``pass`` processes (the console script's Python), in turns; ``ratio``: the median
    of each round's check / lxml."""
    python = str(Path(console_script()).with_name("python"))
    cmds = {"check": [console_script(), "check", "--json", str(ROOT / STARTUP_MODEL)],
            "lxml": [python, "-c", "import lxml.etree"], "python": [python, "-c", "pass"]}
    for cmd in cmds.values():  # warm the file cache and the bytecode
        measured_cpu_run(cmd)
    runs: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            wall, _, code, _ = measured_cpu_run(cmd)
            if code not in (0, 1):
                raise SystemExit(f"{' '.join(cmd)} exited {code}")
            runs[name].append(wall)
    result = {name: statistics.median(walls) for name, walls in runs.items()}
    result["ratio"] = statistics.median(a / b for a, b in zip(runs["check"], runs["lxml"],
                                                               strict=True))
    return result


#: what ``ovgather check`` runs: ``read_layer_graph`` (layers read into records, or into
#: the graph's dicts with OVGATHER_READ_PATH=graph), then ``check``
_PHASES = """
import gc, time
import numpy
from ovgather.ir import read_layer_graph
from ovgather.infer import check
gc.collect()
t0 = time.perf_counter()
G = read_layer_graph({xml!r})
t1 = time.perf_counter()
check(G)
t2 = time.perf_counter()
print(G.number_of_nodes(), t1 - t0, t2 - t1)
"""


def bench_scaling(xmls: list[Path], repeat: int) -> list[tuple[int, float, float]]:
    """Per IR: (layers, read ms per 1k layers, check ms per 1k layers), medians, each
    run in a fresh process (no cache from an earlier run helps). The sizes take turns,
    round after round, so that a machine getting slower or faster meanwhile moves every
    size alike instead of showing as a spread between them."""
    runs: list[list[list[float]]] = [[] for _ in xmls]
    for _ in range(repeat):
        for xml, out in zip(xmls, runs, strict=True):
            done = subprocess.run([sys.executable, "-c", _PHASES.format(xml=str(xml))],
                                  capture_output=True, text=True, check=True,
                                  cwd=tempfile.gettempdir())
            out.append([float(x) for x in done.stdout.split()])
    result = []
    for out in runs:
        n, read_s, check_s = (statistics.median(c) for c in zip(*out, strict=True))
        result.append((int(n), read_s * 1e6 / n, check_s * 1e6 / n))
    return result


_INSTRUCTIONS = """
import sys
import numpy
from ovgather.ir import read_layer_graph
from ovgather.infer import check
G = read_layer_graph(sys.argv[1])
if sys.argv[2] == "check":
    check(G)
"""


def instructions(xml: Path) -> tuple[int, int] | None:
    """(read, check) instructions, counted by valgrind's cachegrind: a process that
    reads the IR, and one that reads and checks it, the second minus the first for check.
    Unlike time, the count does not move with the load or with how much of the graph the
    CPU's caches hold, so it shows whether the work per layer grows. None without
    valgrind."""
    if shutil.which("valgrind") is None:
        return None
    counts = []
    with tempfile.TemporaryDirectory() as tmp:
        for what in ("read", "check"):
            out = Path(tmp) / f"{what}.out"
            subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                            f"--cachegrind-out-file={out}", sys.executable, "-c",
                            _INSTRUCTIONS, str(xml), what],
                           capture_output=True, check=True, cwd=tempfile.gettempdir())
            summary = next(line for line in out.read_text().splitlines()
                           if line.startswith("summary:"))
            counts.append(int(summary.split()[1]))
    return counts[0], counts[1] - counts[0]


def _layers(xml: Path) -> int:
    return sum(1 for line in xml.open() if "<layer " in line)


def _installed_package() -> str:
    """Where the console script's Python finds ovgather; a warning when that is a source
    tree (an editable install recompiles every module in each process when bytecode is
    not written, which a user's ``pip install .`` never does)."""
    where = subprocess.run([str(Path(console_script()).with_name("python")), "-c",
                            "import ovgather, os; print(os.path.dirname(ovgather.__file__))"],
                           capture_output=True, text=True, cwd=tempfile.gettempdir()
                           ).stdout.strip()
    if "site-packages" not in where:
        print(f"warning: ovgather runs from {where}, not an installed copy: figures include "
              "what a user's install does not pay (pip install . in a fresh venv)",
              file=sys.stderr)
    return where


def _spread(values: list[float]) -> str:
    return f"{(max(values) / min(values) - 1) * 100:.0f}%" if values else "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,20000,100000")
    ap.add_argument("--model", action="append", default=[],
                    help="an IR .xml to time too (default: " + ", ".join(DEFAULT_MODELS) + ")")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--scaling", default="10000,20000,50000,100000",
                    help="layer counts for the per-1k-layer figures ('' to skip)")
    ap.add_argument("--only-scaling", action="store_true",
                    help="time only the per-1k-layer figures, not the processes")
    ap.add_argument("--only-startup", action="store_true",
                    help="time only the fixed cost (the smallest sample against import "
                    "lxml.etree)")
    ap.add_argument("--taskset", metavar="CPUS",
                    help="run every timed process under taskset -c CPUS (0: one core)")
    args = ap.parse_args()
    if args.taskset is not None:
        PREFIX[:] = ["taskset", "-c", args.taskset]
    import os

    import openvino as ov
    from gen_models import big_ir

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    cores = f"taskset -c {args.taskset}" if args.taskset is not None else \
        f"{len(os.sched_getaffinity(0))} cores"
    print(f"openvino {ov.__version__}; ovgather: {console_script()} "
          f"({_installed_package()}); paired alternating processes, medians of {args.repeat}; "
          f"{cores}; load average {load} at the start")
    if not args.only_scaling:
        r = bench_startup(args.repeat)
        print("\n| check --json, 4 layers | import lxml.etree | python -c pass | ratio to lxml "
              "| ovgather's own (check - lxml) |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        print(f"| {r['check'] * 1e3:.0f} ms | {r['lxml'] * 1e3:.0f} ms | "
              f"{r['python'] * 1e3:.0f} ms | {r['ratio']:.2f}x | "
              f"{(r['check'] - r['lxml']) * 1e3:.0f} ms |", flush=True)
    if args.only_startup:
        print(f"\nload average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
        return
    with tempfile.TemporaryDirectory() as tmp:
        files = ([Path(m).resolve() for m in args.model]
                 or [ROOT / m for m in DEFAULT_MODELS])
        for n in [] if args.only_scaling else [int(s) for s in args.sizes.split(",") if s]:
            files.append(big_ir(n, Path(tmp) / f"big_{n}.xml"))
        if not args.only_scaling:
            print("\n| IR | layers | ovgather check --json | read_model | ratio | check peak "
                  "RSS | read_model peak RSS | memory ratio | CPU check / read_model | CPU "
                  "ratio |")
            print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for xml in [] if args.only_scaling else files:
            r = bench_processes(xml, args.repeat)
            name = xml.name if xml.parent == Path(tmp) else f"{xml.parent.name}/{xml.name}"
            print(f"| {name} | {_layers(xml)} | {r['check_s']:.2f} s | "
                  f"{r['read_model_s']:.2f} s | {r['ratio']:.2f}x | {r['check_mib']:.0f} MiB | "
                  f"{r['read_model_mib']:.0f} MiB | {r['check_mib'] / r['read_model_mib']:.2f}x | "
                  f"{r['check_cpu_s']:.2f} / {r['read_model_cpu_s']:.2f} s | "
                  f"{r['cpu_ratio']:.2f}x |", flush=True)
        sizes = [int(s) for s in args.scaling.split(",") if s]
        if sizes:
            print("\n| layers | read ms / 1k layers | check ms / 1k layers "
                  "| since the size before: read, check ms / 1k "
                  "| instructions / layer since the size before: read, check |")
            print("| ---: | ---: | ---: | ---: | ---: |")
            reads, checks, step_reads, step_checks = [], [], [], []
            xmls = [big_ir(n, Path(tmp) / f"scale_{n}.xml") for n in sizes]
            before = None
            for xml, (layers, read_ms, check_ms) in zip(
                    xmls, bench_scaling(xmls, max(5, args.repeat)), strict=True):
                reads.append(read_ms)
                checks.append(check_ms)
                counted = instructions(xml)
                step = steps = ""
                if before is not None:  # the cost of the layers this size adds
                    n0, r0, c0, i0 = before
                    added = (layers - n0) / 1000
                    step_reads.append((read_ms * layers - r0 * n0) / 1000 / added)
                    step_checks.append((check_ms * layers - c0 * n0) / 1000 / added)
                    step = f"{step_reads[-1]:.1f}, {step_checks[-1]:.1f}"
                    if counted and i0:
                        steps = (f"{(counted[0] - i0[0]) / (layers - n0):,.0f}, "
                                 f"{(counted[1] - i0[1]) / (layers - n0):,.0f}")
                before = (layers, read_ms, check_ms, counted)
                print(f"| {layers} | {read_ms:.1f} | {check_ms:.1f} | {step} | {steps} |",
                      flush=True)
            print(f"\nspread (largest / smallest - 1): read {_spread(reads)}, "
                  f"check {_spread(checks)}; of the added layers' cost: read "
                  f"{_spread(step_reads)}, check {_spread(step_checks)}")
    print(f"\nload average {', '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
