"""Time ``ovgather reshape`` with and without its runtime proof on a few corpus models.

Each model is reshaped by the installed console script (a whole process, as a user runs
it, after one warm-up of each kind) alternately with the proof (the default) and with
``--no-runtime-proof``; the medians of ``--repeat`` runs and their ratio are printed, with
the proof's own seconds as its report gives them. docs/performance.md quotes the figures.

    python tools/bench_reshape_proof.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_check import console_script

ROOT = Path(__file__).resolve().parents[1]
#: (model, --shape texts, --fix): a static batch, a dynamic batch, a dynamic batch and
#: sequence
CASES = [
    ("ir_corpus/bart/onnx_static.xml",
     ["input_ids=[3,12]", "attention_mask=[3,12]", "decoder_input_ids=[3,5]"], True),
    ("ir_corpus/gpt2/onnx_static.xml", ["input_ids=[?,12]", "attention_mask=[?,12]"], True),
    ("ir_corpus/vit/pytorch_static.xml", ["pixel_values=[?,3,32,32]"], True),
    ("ir_corpus/mixtral/pytorch_dynamic.xml",
     ["input_ids=[1..4,?]", "attention_mask=[1..4,?]"], False),
]


def once(model: str, shapes: list[str], fix: bool, proof: bool, out: Path
         ) -> tuple[float, dict]:
    args = [console_script(), "reshape", str(ROOT / model), "-o", str(out), "--json",
            *[f"--shape={s}" for s in shapes], *(["--fix"] if fix else []),
            *([] if proof else ["--no-runtime-proof"])]
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{model}: exit {done.returncode}: {done.stdout[-400:]}"
                         f"{done.stderr[-400:]}")
    return seconds, json.loads(done.stdout)


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.xml"
        for model, shapes, fix in CASES:
            once(model, shapes, fix, True, out)
            once(model, shapes, fix, False, out)
            timed: dict[bool, list[float]] = {True: [], False: []}
            inside = []
            for _ in range(repeat):
                for proof in (True, False):
                    seconds, doc = once(model, shapes, fix, proof, out)
                    timed[proof].append(seconds)
                    if proof:
                        inside.append(doc["runtime_proof"]["seconds"])
                        runs = len(doc["runtime_proof"]["runs"])
            on, off = statistics.median(timed[True]), statistics.median(timed[False])
            print(f"{model}: {off:.2f} s without the proof, {on:.2f} s with it "
                  f"({on / off:.1f}x; the proof {statistics.median(inside):.2f} s, "
                  f"{runs} batch run(s))", flush=True)


if __name__ == "__main__":
    main_()
