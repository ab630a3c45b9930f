"""How many dynamic dims ``infer --symbols`` writes in the given names alone.

Run ``python tools/symbols_report.py [--json]``.

For every IR of ``ir_corpus/`` with dynamic inputs, the inputs' dims are named as a user
would name them (:data:`CORPUS_SYMBOLS`: the batch ``B``, the sequence ``S``, a decoder's
``T``, the image ``H``/``W``, the cache length ``P``), ``ovgather.infer_symbols`` runs, and
every output dim the numeric walk leaves dynamic is counted: *named* when its expression
uses the given names only, *fresh* when it needs a fresh name (``d1`` …). Prints the
share of named dims per IR and overall.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "ir_corpus"

_TEXT = {"input_ids": "[B,S]", "attention_mask": "[B,S]", "token_type_ids": "[B,S]"}
_IMAGE = {"pixel_values": "[B,3,H,W]"}
_T5 = {"input_ids": "[B,S]", "attention_mask": "[B,S]", "decoder_input_ids": "[B,T]"}
_CACHE = {f"past_key_values.{i}.{kind}present.{i}.{kind}": "[B,2,P,8]"
          for i in range(3) for kind in ("key", "value")}

#: The IRs with dynamic inputs and the names a user would give their dims.
CORPUS_SYMBOLS: dict[str, dict[str, str]] = {
    "bert/pytorch_dynamic.xml": _TEXT,
    "bert/onnx_dynamic.xml": _TEXT,
    "bert/onnx_legacy_dynamic.xml": _TEXT,
    "clip/pytorch_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]",
                                 "pixel_values": "[B,3,32,32]"},
    "convnext/pytorch_dynamic.xml": _IMAGE,
    "distilbert/onnx_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "distilbert/onnx_legacy_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "deberta/pytorch_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "gpt2/pytorch_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "gpt2/onnx_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "gpt2/onnx_legacy_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "llama/pytorch_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "llama/onnx_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "llama_kv/pytorch_stateful.xml": {"input_ids": "[B,S]", "attention_mask": "[B,T]",
                                      "position_ids": "[B,S]", "beam_idx": "[B]", **_CACHE},
    "mixtral/pytorch_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "poolformer/onnx_dynamic.xml": _IMAGE,
    "qwen2/onnx_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "qwen2/onnx_legacy_dynamic.xml": {"input_ids": "[B,S]", "attention_mask": "[B,S]"},
    "resnet/pytorch_dynamic.xml": _IMAGE,
    "resnet/onnx_dynamic.xml": _IMAGE,
    "segformer/pytorch_dynamic.xml": _IMAGE,
    "segformer/onnx_dynamic.xml": _IMAGE,
    "swin/pytorch_dynamic.xml": {"pixel_values": "[B,3,40,40]"},
    "t5/pytorch_dynamic.xml": _T5,
    "t5/onnx_dynamic.xml": _T5,
    "t5/onnx_legacy_dynamic.xml": _T5,
    "vit/onnx_dynamic.xml": {"pixel_values": "[B,3,32,32]"},
    "wav2vec2/pytorch_dynamic.xml": {"input_values": "[B,L]"},
    "wav2vec2/onnx_dynamic.xml": {"input_values": "[B,L]"},
    "whisper/pytorch_dynamic.xml": {"input_features": "[B,16,60]", "decoder_input_ids": "[B,T]",
                                    "decoder_attention_mask": "[B,T]"},
}


def coverage(G, symbols: dict[str, str]) -> tuple[int, int]:
    """``(named, dynamic)``: the dynamic output dims of ``G`` and those written in the
    names of ``symbols`` alone."""
    import ovgather as og
    from ovgather.infer.symbols import parse_symbols

    given = {n for text in symbols.values() for n in parse_symbols(text) if isinstance(n, str)}
    found = og.infer_symbols(G, symbols)
    shapes = og.infer_shapes(G)
    named = dynamic = 0
    for node, syms in found.items():
        for shape, sym in zip(shapes[node], syms, strict=True):
            if shape.dims is None or sym.dims is None:
                continue
            for d, e in zip(shape.dims, sym.dims, strict=True):
                if d.lo != d.hi:
                    dynamic += 1
                    named += e.names() <= given
    return named, dynamic


def report() -> dict[str, tuple[int, int]]:
    import ovgather as og

    return {rel: coverage(og.read_ir(CORPUS / rel), symbols)
            for rel, symbols in CORPUS_SYMBOLS.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    rows = report()
    named = sum(n for n, _ in rows.values())
    total = sum(t for _, t in rows.values())
    if args.json:
        print(json.dumps({"irs": {k: {"named": n, "dynamic": t} for k, (n, t) in rows.items()},
                          "named": named, "dynamic": total}))
        return 0
    width = max(map(len, rows))
    for rel, (n, t) in rows.items():
        print(f"{rel:<{width}}  {n:>5} / {t:<5} {100 * n / max(t, 1):6.1f}%")
    print(f"{'overall':<{width}}  {named:>5} / {total:<5} {100 * named / max(total, 1):6.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
