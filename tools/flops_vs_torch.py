"""ovgather's FLOPs against an independent count: PyTorch's ``FlopCounterMode``.

Builds tiny models from ``transformers`` configs written here (random weights, nothing
downloaded: BERT, GPT-2, Llama with grouped-query attention, ViT) and a small CNN of
plain ``torch.nn`` layers (grouped, depthwise, strided, dilated, transposed and 1-D
convolutions), counts each with ``torch.utils.flop_counter.FlopCounterMode`` at fixed
input sizes, converts it with ``openvino.convert_model`` (example inputs of the same
sizes), and writes the IR (float32) and the counts:

    tests/data/flops/<name>.xml + .bin
    tests/data/flops/counts.json   {name: {"shapes": ..., "torch": {kind: flops},
                                           "ovgather": {kind: flops}}}

The kinds are torch's: ``mm`` (``mm``, ``addmm``, ``bmm``, ``baddbmm``: 2·M·N·K each),
``conv`` (every convolution) and ``sdpa`` (scaled dot-product attention: Q·Kᵀ and the
weights times V). ovgather's side: ``MatMul`` (and ``Einsum``) for mm, ``Convolution``,
``GroupConvolution`` and the backprop forms for conv, ``ScaledDotProductAttention`` for
sdpa (``og.stats(xml, shapes=...)``). tests/cost/test_flops_vs_torch.py checks the
committed counts against ``og.stats`` on the committed IRs (no torch there).

PyTorch on the CPU runs SDPA as ``_scaled_dot_product_flash_attention_for_cpu``, which
``FlopCounterMode`` has no formula for; this tool registers torch's own SDPA formula
(``2·b·h·L·S·(E+Ev)``) for it, with grouped-query keys counted at the query's heads.

Run: ``python tools/flops_vs_torch.py [--out DIR] [--check]`` (needs ``torch``,
``transformers`` and ``openvino``; ``--check`` prints the comparison with ovgather).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "data", "flops")

#: torch's ops by the kind they count as
TORCH_KINDS = {"mm": "mm", "addmm": "mm", "bmm": "mm", "baddbmm": "mm",
               "convolution": "conv", "_convolution": "conv", "sdpa": "sdpa"}
#: ovgather's op types by the same kinds
OV_KINDS = {"MatMul": "mm", "Einsum": "mm", "Convolution": "conv",
            "GroupConvolution": "conv", "ConvolutionBackpropData": "conv",
            "GroupConvolutionBackpropData": "conv", "ScaledDotProductAttention": "sdpa"}
KINDS = ("mm", "conv", "sdpa")


def _register_cpu_sdpa() -> None:
    """torch's SDPA formula for the CPU kernel FlopCounterMode does not know."""
    import torch
    from torch.utils.flop_counter import register_flop_formula

    op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu

    @register_flop_formula(op)
    def _cpu_sdpa(query, key, value, *args: Any, out_shape: Any = None, **kw: Any) -> int:
        b, h, lq, e = query.shape if hasattr(query, "shape") else query
        s = (key.shape if hasattr(key, "shape") else key)[-2]
        ev = (value.shape if hasattr(value, "shape") else value)[-1]
        return 2 * b * h * lq * s * e + 2 * b * h * lq * s * ev  # Q·Kᵀ, then times V


def _bert() -> tuple[Any, dict[str, list[int]]]:
    import transformers as T

    cfg = T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=64, vocab_size=100, attn_implementation="sdpa")
    return T.BertModel(cfg), {"input_ids": [1, 16], "attention_mask": [1, 16]}


def _gpt2() -> tuple[Any, dict[str, list[int]]]:
    import transformers as T

    cfg = T.GPT2Config(n_embd=32, n_layer=2, n_head=2, n_inner=64, vocab_size=100,
                       n_positions=64, attn_implementation="eager", use_cache=False)
    return T.GPT2Model(cfg), {"input_ids": [2, 12], "attention_mask": [2, 12]}


def _llama() -> tuple[Any, dict[str, list[int]]]:
    import transformers as T

    cfg = T.LlamaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, intermediate_size=64, vocab_size=100,
                        max_position_embeddings=64, attn_implementation="sdpa",
                        use_cache=False)
    return T.LlamaModel(cfg), {"input_ids": [1, 10], "attention_mask": [1, 10]}


def _vit() -> tuple[Any, dict[str, list[int]]]:
    import transformers as T

    cfg = T.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, image_size=32, patch_size=8, num_channels=3,
                      attn_implementation="sdpa")
    return T.ViTModel(cfg, add_pooling_layer=False), {"pixel_values": [1, 3, 32, 32]}


def _cnn() -> tuple[Any, dict[str, list[int]]]:
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
            self.grouped = nn.Conv2d(16, 32, 3, padding=2, dilation=2, groups=4)
            self.depthwise = nn.Conv2d(32, 32, 5, padding=2, groups=32, bias=False)
            self.up = nn.ConvTranspose2d(32, 8, 4, stride=2, padding=1)
            self.up_grouped = nn.ConvTranspose2d(8, 8, 3, stride=1, padding=1, groups=2)
            self.line = nn.Conv1d(8, 12, 3, padding=1)
            self.head = nn.Linear(12, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.relu(self.stem(x))
            y = torch.relu(self.grouped(y))
            y = self.depthwise(y)
            y = self.up_grouped(self.up(y))
            y = self.line(y.flatten(2))  # [B, 8, H*W]
            return self.head(y.mean(-1))

    return Net(), {"x": [2, 3, 20, 24]}


def _probe() -> tuple[Any, dict[str, list[int]]]:
    """The matmul forms a transformer seldom shows: einsums, a transposed left operand,
    broadcast batches, baddbmm, cross attention with another value width, a 3-D conv."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class Probe(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.randn(12, 20))
            self.pair = nn.Parameter(torch.randn(1, 3, 20, 6))
            self.kv = nn.Parameter(torch.randn(2, 3, 9, 12))
            self.v = nn.Parameter(torch.randn(2, 3, 9, 16))
            self.vol = nn.Conv3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=1, groups=2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:  # x [2, 3, 7, 12]
            a = torch.einsum("bhqd,bhkd->bhqk", x, x)  # [2,3,7,7]
            b = torch.einsum("bhqk,ke->bhqe", a, self.w[:7])  # [2,3,7,20]
            b = b + torch.einsum("bhqk,de->bhqe", a, self.w[:7])  # summed alone: k, d
            c = torch.matmul(b, self.pair)  # broadcast batch: [2,3,7,6]
            d = torch.matmul(x.transpose(-1, -2), x)  # [2,3,12,12]
            e = torch.baddbmm(d.flatten(0, 1), x.flatten(0, 1).transpose(1, 2),
                              x.flatten(0, 1))  # [6,12,12]
            f = F.scaled_dot_product_attention(x, self.kv, self.v)  # [2,3,7,16]
            g = self.vol(x[:, :2].reshape(1, 2, 2, 7, 12))
            return (c.sum() + e.sum() + f.sum() + g.sum()).reshape(1)

    return Probe(), {"x": [2, 3, 7, 12]}


MODELS: dict[str, Callable[[], tuple[Any, dict[str, list[int]]]]] = {
    "bert": _bert, "gpt2": _gpt2, "llama": _llama, "vit": _vit, "cnn": _cnn,
    "probe": _probe}


def _inputs(shapes: dict[str, list[int]]) -> dict[str, Any]:
    import torch

    gen = torch.Generator().manual_seed(0)
    made = {}
    for name, shape in shapes.items():
        if name == "input_ids":
            made[name] = torch.randint(0, 100, shape, generator=gen)
        elif name == "attention_mask":
            made[name] = torch.ones(*shape, dtype=torch.int64)
        else:
            made[name] = torch.randn(*shape, generator=gen)
    return made


def torch_counts(model: Any, inputs: dict[str, Any]) -> dict[str, int]:
    """FlopCounterMode's FLOPs of one forward pass, by kind."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(**inputs)
    counts = dict.fromkeys(KINDS, 0)
    for op, flops in counter.get_flop_counts()["Global"].items():
        name = str(op).split(".")[1]
        kind = "sdpa" if "attention" in name else TORCH_KINDS.get(name)
        if kind is None:
            raise SystemExit(f"an op FlopCounterMode counts that no kind holds: {op}")
        counts[kind] += int(flops)
    return counts


def ovgather_counts(xml: str, shapes: dict[str, list[int]]) -> dict[str, int]:
    """og.stats' multiply-add FLOPs (2·MACs) of the IR at ``shapes``, by the same kinds
    (an Einsum's reductions of one operand are FLOPs torch counts nowhere)."""
    sys.path.insert(0, ROOT)
    import ovgather as og

    report = og.stats(xml, shapes={k: str(v).replace(" ", "") for k, v in shapes.items()})
    counts = dict.fromkeys(KINDS, 0)
    for op, group in report.by_type.items():
        if op in OV_KINDS:
            counts[OV_KINDS[op]] += 2 * int(group.macs)
    return counts


def checks(row: dict[str, Any]) -> list[tuple[str, int, int]]:
    """What must agree: ``conv``; ``mm+sdpa`` (OpenVINO fuses an eager attention's two
    matmuls into one ScaledDotProductAttention, and PyTorch runs some SDPAs as matmuls:
    the FLOPs move between the kinds, their sum does not); ``sdpa`` alone where PyTorch
    ran an SDPA kernel. ``(what, torch's, ovgather's)``."""
    t, o = row["torch"], row["ovgather"]
    out = [("conv", t["conv"], o["conv"]),
           ("mm+sdpa", t["mm"] + t["sdpa"], o["mm"] + o["sdpa"])]
    if t["sdpa"]:
        out.append(("sdpa", t["sdpa"], o["sdpa"]))
    return [c for c in out if c[1] or c[2]]


def build(name: str, out: str) -> dict[str, Any]:
    import openvino as ov
    import torch

    torch.manual_seed(0)
    model, shapes = MODELS[name]()
    model.eval()
    inputs = _inputs(shapes)
    counts = torch_counts(model, inputs)
    with torch.no_grad():
        converted = ov.convert_model(model, example_input=inputs)
    xml = os.path.join(out, f"{name}.xml")
    ov.save_model(converted, xml, compress_to_fp16=False)
    return {"shapes": shapes, "torch": counts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS))
    parser.add_argument("--check", action="store_true",
                        help="print ovgather's counts against torch's")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    _register_cpu_sdpa()
    path = os.path.join(args.out, "counts.json")
    table: dict[str, Any] = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    for name in args.only or MODELS:
        table[name] = build(name, args.out)
    worst = 0.0
    for name, row in table.items():
        xml = os.path.join(args.out, f"{name}.xml")
        row["ovgather"] = ovgather_counts(xml, row["shapes"])
        for check, want, got in checks(row):
            gap = abs(got - want) / want if want else float(got != 0)
            worst = max(worst, gap)
            if args.check:
                print(f"{name:6} {check:8} torch {want:>12,} ovgather {got:>12,} "
                      f"{100 * gap:6.2f}%")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(table, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{len(table)} models in {args.out}; the largest gap {100 * worst:.2f}%")
    return 0 if worst <= 0.01 else 1


if __name__ == "__main__":
    raise SystemExit(main())
