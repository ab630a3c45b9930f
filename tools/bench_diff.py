"""Benchmark ``ovgather diff A B`` against one ``ovgather check A``.

What a user waits for, as whole processes of the installed ``ovgather`` console script:
``diff`` of the model against an edited copy of it (written once into a temporary folder
by ``write_ir``: one weight changed, one input renamed, a Multiply inserted after a
MatMul, and every friendly and tensor name of the copy replaced by a fresh one, so that
the pairing has to work by structure; the worst case) and against itself, and ``check``
of the model, paired and alternating, ``--repeat`` rounds; the medians and the ratio of
each diff to the check. Every diff must exit 1 (edited) or 0 (itself), the check 0.

The default model is ``ir_corpus/llama_deep/pytorch_dynamic.xml``, a 44-block Llama of
~5k layers. Also ``--plain``: the edited copy keeps its names (a diff after a hand edit).

    python tools/bench_diff.py [--model X.xml] [--repeat 7] [--plain]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "ir_corpus/llama_deep/pytorch_dynamic.xml"


def console_script() -> str:
    found = Path(sys.executable).with_name("ovgather")
    if not found.exists():
        raise SystemExit("install ovgather first (pip install .): no ovgather console script")
    return str(found)


def edited_copy(model: Path, out: Path, rename: bool) -> Path:
    """``model`` with a few edits (and, with ``rename``, fresh names everywhere)."""
    import numpy as np

    import ovgather as og

    G = og.read_ir(model)
    const = next(n for n in G if G.nodes[n]["type"] == "Const"
                 and og.const_value(G, n).size > 16)
    value = np.array(og.const_value(G, const))
    og.set_const(G, const, value * 2 if value.dtype.kind == "f" else value + 1)
    param = next(n for n in G if G.nodes[n]["type"] == "Parameter")
    og.rename_input(G, G.nodes[param]["name"], "renamed_input")
    matmul = next(n for n in G if G.nodes[n]["type"] == "MatMul")
    port = G.nodes[matmul]["outputs"][0]
    two = og.add_const(G, np.array(2, dtype=np.float32), name="two")
    mul = og.add_layer(G, "Multiply", "opset1", inputs=[(matmul, port["id"]), (two, 0)],
                       outputs=[{"precision": port["precision"], "dims": port["dims"]}])
    og.insert_after(G, matmul, port["id"], mul)
    if rename:
        for k, n in enumerate(G):
            G.nodes[n]["name"] = f"layer_{k}"
            for j, p in enumerate(G.nodes[n]["outputs"]):
                if p["names"]:
                    p["names"] = [f"tensor_{k}_{j}"]
    og.write_ir(G, out)
    return out


def timed(cmd: list[str], expect: int) -> float:
    start = time.perf_counter()
    code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    took = time.perf_counter() - start
    if code != expect:
        raise SystemExit(f"{' '.join(cmd)} exited {code}, not {expect}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--repeat", type=int, default=7, help="rounds (default 7)")
    ap.add_argument("--plain", action="store_true",
                    help="keep the names of the edited copy (default: fresh names)")
    args = ap.parse_args()
    exe, model = console_script(), str(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        other = str(edited_copy(args.model, Path(tmp) / "edited.xml", not args.plain))
        runs = {"check": ([exe, "check", model], 0),
                "diff edited": ([exe, "diff", model, other], 1),
                "diff itself": ([exe, "diff", model, model], 0)}
        for cmd, expect in runs.values():  # warm the file cache once
            timed(cmd, expect)
        times: dict[str, list[float]] = {k: [] for k in runs}
        for k in range(args.repeat):
            order = list(runs) if k % 2 == 0 else list(reversed(runs))
            for what in order:  # alternating: the load of a shared machine hits all alike
                times[what].append(timed(*runs[what]))
            print(f"round {k + 1}: " + ", ".join(f"{w} {times[w][-1]:.2f} s" for w in runs),
                  flush=True)
    med = {w: statistics.median(t) for w, t in times.items()}
    print(f"\n{Path(model).name}, {args.repeat} rounds, medians:")
    for w in runs:
        print(f"  {w:12s} {med[w]:.2f} s")
    for w in ("diff edited", "diff itself"):
        ratio = statistics.median(d / c for d, c in zip(times[w], times["check"], strict=True))
        print(f"  ratio {w} / check: {ratio:.2f}x")


if __name__ == "__main__":
    main()
