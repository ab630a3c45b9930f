"""Time ``precision`` on the real transformers of ir_corpus, every PyTorch- and
ONNX-frontend variant of bert, gpt2, llama, t5, whisper and vit (f16 and bf16, with --fix),
and on the 5k-layer Llama (ir_corpus/llama_deep): seconds, peak memory of this process and
of the runtime's worker (the most so far: ``--only`` one model for its own), layers
rounded, kept by the device and kept by the fix. One line per run; the table of
docs/performance.md comes from it. tests/debug/test_precision.py runs a seeded pair per
family of the same sweep.

    python tools/bench_precision.py [--only NAME] [--no-fix]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

FAMILIES = ("bert", "gpt2", "llama", "t5", "whisper", "vit")


def models() -> list[str]:
    """The variants of corpus.json of :data:`FAMILIES` (not the stateful ones), then the
    5k-layer Llama."""
    with open(os.path.join(ROOT, "ir_corpus", "corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)
    out = [v["path"] for family in FAMILIES for v in corpus.get(family, [])
           if os.path.basename(v["path"]).startswith(("pytorch_", "onnx_"))
           and "stateful" not in v["path"]]
    return out + ["llama_deep/pytorch_dynamic.xml"]


def _child_peak_mb() -> float:
    from ovgather.runtime.worker import shared_worker

    return shared_worker().call(resource.getrusage, resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    from ovgather.debug import precision

    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--no-fix", action="store_true")
    args = ap.parse_args()
    print("model | target | layers rounded | kept by the device | first non-finite | "
          "outputs ok | kept by the fix | runs | seconds | peak MB (worker)")
    for rel in models():
        if args.only and args.only not in rel:
            continue
        xml = os.path.join(ROOT, "ir_corpus", rel)
        for target in ("f16", "bf16"):
            started = time.perf_counter()
            _, r = precision(xml, target, fix=not args.no_fix)
            seconds = time.perf_counter() - started
            first = r.first_nonfinite["type"] if r.first_nonfinite else "none"
            kept = "-" if r.fixed is None else (f"{len(r.kept)}" if r.fixed else "not found")
            print(f"{rel[:-4]} | {target} | {len(r.layers)} | {len(r.device_kept)} | {first} | "
                  f"{r.ok} | {kept} | {r.runs} | {seconds:.1f} | "
                  f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} "
                  f"({_child_peak_mb():.0f})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
