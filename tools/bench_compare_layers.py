"""Benchmark ``ovgather compare A A --all-layers`` against two plain ``ovgather compare A A``.

What a user waits for, as whole processes of the installed ``ovgather`` console script:
``compare --all-layers --json`` of a model against itself (every layer output of both
models run in chunks and compared) against two plain ``compare --json`` runs (outputs
only: the least a per-layer comparison must cost is running both models, which a plain
compare does once), paired and alternating, ``--repeat`` rounds; each process's own wall
time and peak resident memory (``os.wait4``), the medians, and the ratio of the
all-layers run to the two plain ones. Every run must exit 0 (a model against itself).

The default model is ``ir_corpus/llama_deep/pytorch_dynamic.xml``, a 44-block Llama of
~5k layers (~2.4k non-constant layer outputs).

    python tools/bench_compare_layers.py [--model X.xml] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "ir_corpus/llama_deep/pytorch_dynamic.xml"

#: Runs one command, prints its wall time, peak RSS (MiB) and exit code, and the first line
#: of its JSON's layer summary. A small process of its own: Linux carries a process's peak
#: RSS over fork and exec, so this process's peak must not be the one measured.
_LAUNCHER = """
import json, os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
out = proc.stdout.read()
_, status, usage = os.wait4(proc.pid, 0)
took = time.perf_counter() - start
try:
    doc = json.loads(out)
except ValueError:
    doc = {}
print(json.dumps([took, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status),
                  doc.get("layer_summary"), doc.get("chunks")]))
"""


def console_script() -> str:
    found = Path(sys.executable).with_name("ovgather")
    if not found.exists():
        raise SystemExit("install ovgather first (pip install .): no ovgather console script")
    return str(found)


def measured(cmd: list[str]) -> tuple[float, float, int, dict | None, int | None]:
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, *cmd], capture_output=True,
                         text=True, check=True).stdout
    took, peak, code, summary, chunks = json.loads(out.strip().splitlines()[-1])
    return took, peak, code, summary, chunks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    args = ap.parse_args()
    exe, model = console_script(), str(args.model)
    plain = [exe, "compare", model, model, "--json"]
    layers = [*plain, "--all-layers"]
    rows = []
    for k in range(args.repeat):
        order = ("plain", "layers") if k % 2 == 0 else ("layers", "plain")
        got = {}
        for what in order:  # alternating: the load of a shared machine hits both alike
            runs = [measured(plain), measured(plain)] if what == "plain" else [measured(layers)]
            if any(r[2] != 0 for r in runs):
                raise SystemExit(f"{what} exited {[r[2] for r in runs]}")
            got[what] = runs
        two_plain = sum(r[0] for r in got["plain"])
        rows.append((got["layers"][0][0], two_plain, got["layers"][0][1],
                     max(r[1] for r in got["plain"])))
        summary, chunks = got["layers"][0][3], got["layers"][0][4]
        print(f"round {k + 1}: --all-layers {rows[-1][0]:.1f} s, {rows[-1][2]:.0f} MiB "
              f"({summary['layers']} layer outputs, {summary['ok']} ok, {chunks} chunk(s)); "
              f"two plain compares {two_plain:.1f} s, {rows[-1][3]:.0f} MiB", flush=True)
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    ratio = statistics.median(r[0] / r[1] for r in rows)
    print(f"\n{Path(model).name}, {args.repeat} rounds, medians:")
    print(f"  compare --all-layers:  {med[0]:.1f} s, peak {med[2]:.0f} MiB")
    print(f"  two plain compares:    {med[1]:.1f} s, peak {med[3]:.0f} MiB (each)")
    print(f"  ratio (time):          {ratio:.2f}x")


if __name__ == "__main__":
    main()
