"""Time ``precision`` on the real transformers of ir_corpus (f16 and bf16, with --fix) and
on the 5k-layer Llama (ir_corpus/llama_deep): seconds, peak memory of this process and of
the runtime's worker, layers rounded and kept. One line per run; the table of
docs/performance.md comes from it.

    python tools/bench_precision.py [--only NAME] [--no-fix]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MODELS = ["bert/pytorch_dynamic.xml", "gpt2/pytorch_dynamic.xml", "llama/pytorch_dynamic.xml",
          "t5/pytorch_dynamic.xml", "whisper/pytorch_dynamic.xml", "vit/pytorch_static.xml",
          "llama_deep/pytorch_dynamic.xml"]


def _child_peak_mb() -> float:
    from ovgather.runtime.worker import shared_worker

    return shared_worker().call(resource.getrusage, resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    from ovgather.debug import precision

    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--no-fix", action="store_true")
    args = ap.parse_args()
    print("model | target | layers rounded | first non-finite | outputs ok | kept | "
          "runs | seconds | peak MB (worker)")
    for rel in MODELS:
        if args.only and args.only not in rel:
            continue
        xml = os.path.join(ROOT, "ir_corpus", rel)
        for target in ("f16", "bf16"):
            started = time.perf_counter()
            _, r = precision(xml, target, fix=not args.no_fix)
            seconds = time.perf_counter() - started
            first = r.first_nonfinite["name"][-40:] if r.first_nonfinite else "none"
            kept = "-" if r.fixed is None else (f"{len(r.kept)}" if r.fixed else "not found")
            print(f"{rel.split('/')[0]} | {target} | {len(r.layers)} | {first} | {r.ok} | "
                  f"{kept} | {r.runs} | {seconds:.1f} | "
                  f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} "
                  f"({_child_peak_mb():.0f})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
