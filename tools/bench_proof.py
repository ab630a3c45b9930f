"""Benchmark ``validate --all-layers`` and ``compare --all-layers`` against their floor.

The floor of a proof of every layer is what OpenVINO alone needs to see every layer's
output once: one process that reads the model, exposes every layer output
(``add_outputs``), compiles it and runs it once (``python -c`` with openvino, inputs at
the smallest sizes). ``ovgather validate --all-layers --json MODEL`` is timed against it,
and ``ovgather compare M M --all-layers --json`` against one plain ``ovgather compare M M
--json`` (which compiles and runs both models once), paired and alternating (the load of
a shared machine hits both alike), ``--repeat`` rounds; whole processes, wall time; the
medians and their ratios.

Models: the 5k-layer Llama (ir_corpus/llama_deep), BERT (ir_corpus/bert) and an INT8
detector built here (tests/validate/int8_detector.py: FakeQuantize on activations and
weights, saved as an IR v10 whose legacy output names collide with tensor names).

    python tools/bench_proof.py [--repeat 5] [--only validate|compare] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "ir_corpus/llama_deep/pytorch_dynamic.xml"
BERT = ROOT / "ir_corpus/bert/pytorch_dynamic.xml"

#: One command's wall time and exit code, measured in a small process of its own.
_LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(time.perf_counter() - start, proc.returncode)
"""

#: The floor: read, expose every layer output, compile, run once.
_FLOOR = """
import sys
import numpy as np
import openvino as ov
from ovgather.runtime.models import clear_legacy_names
core = ov.Core()
model = core.read_model(sys.argv[1])
model.add_outputs([o for op in model.get_ordered_ops()
                   if op.get_type_name() not in ("Result", "Constant", "Parameter")
                   for o in op.outputs()])
clear_legacy_names(model)  # an IR v10's legacy names would refuse the compile
compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
rng = np.random.default_rng(0)
feed = []
for p in compiled.inputs:
    shape = [d.get_length() if d.is_static else 1 for d in p.get_partial_shape()]
    dtype = p.get_element_type().to_dtype()
    feed.append(rng.standard_normal(shape).astype(dtype) if np.dtype(dtype).kind == "f"
                else np.zeros(shape, dtype))
compiled.create_infer_request().infer(feed)
"""


def measured(cmd: list[str]) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, *cmd], capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def console_script() -> str:
    found = Path(sys.executable).with_name("ovgather")
    return str(found) if found.exists() else ""


def paired(name: str, a: list[str], b: list[str], repeat: int, codes: tuple[int, ...] = (0,)
           ) -> dict:
    """``a`` and ``b`` alternately, ``repeat`` rounds: each one's times and medians."""
    times: dict[str, list[float]] = {"a": [], "b": []}
    for k in range(repeat):
        for which in ("a", "b") if k % 2 == 0 else ("b", "a"):
            took, code = measured(a if which == "a" else b)
            if code not in codes:
                raise SystemExit(f"{name}: {' '.join(a if which == 'a' else b)} exited {code}")
            times[which].append(took)
    ma, mb = statistics.median(times["a"]), statistics.median(times["b"])
    row = {"name": name, "median": ma, "floor": mb, "ratio": ma / mb, "times": times}
    print(f"{name:34s} {ma:7.1f} s  floor {mb:7.1f} s  ratio {ma / mb:4.2f}  "
          f"({', '.join(f'{t:.1f}' for t in times['a'])} | "
          f"{', '.join(f'{t:.1f}' for t in times['b'])})", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--only", choices=("validate", "compare"))
    ap.add_argument("--json", action="store_true", help="the rows as JSON at the end")
    args = ap.parse_args()
    exe = console_script()
    og = [exe] if exe else [sys.executable, "-m", "ovgather"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-proof-") as tmp:
        sys.path.insert(0, str(ROOT / "tests" / "validate"))
        from int8_detector import save

        _, detector = save(Path(tmp))
        if args.only != "compare":
            for name, model in (("validate --all-layers llama_deep", LLAMA),
                                ("validate --all-layers bert", BERT),
                                ("validate --all-layers int8 v10", detector)):
                rows.append(paired(name, [*og, "validate", "--all-layers", "--json",
                                          str(model)],
                                   [sys.executable, "-c", _FLOOR, str(model)], args.repeat))
        if args.only != "validate":
            plain = [*og, "compare", str(LLAMA), str(LLAMA), "--json"]
            rows.append(paired("compare --all-layers llama_deep", [*plain, "--all-layers"],
                               plain, args.repeat))
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
