"""``og.stats``' MatMul, Convolution and attention FLOPs against an independent count:
PyTorch's ``FlopCounterMode`` on tiny ``transformers`` models (BERT, GPT-2, Llama with
grouped-query attention, ViT), a CNN of every convolution form and a probe of the rarer
matmul forms (einsums, broadcast batches, baddbmm, cross attention, a 3-D grouped conv).

tools/flops_vs_torch.py built the IRs under tests/data/flops/ and wrote torch's counts
in counts.json; nothing here imports torch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ovgather as og
from ovgather.cost.flops import Layer, layer_cost

DATA = Path(__file__).resolve().parents[1] / "data" / "flops"
COUNTS = json.loads((DATA / "counts.json").read_text(encoding="utf-8"))

#: ovgather's op types by the kind torch counts them as
KINDS = {"MatMul": "mm", "Einsum": "mm", "Convolution": "conv", "GroupConvolution": "conv",
         "ConvolutionBackpropData": "conv", "GroupConvolutionBackpropData": "conv",
         "ScaledDotProductAttention": "sdpa"}


def _ovgather(name: str) -> dict[str, int]:
    """og.stats' multiply-add FLOPs (2·MACs) by kind, at the sizes torch counted."""
    shapes = {k: "[" + ",".join(map(str, v)) + "]" for k, v in COUNTS[name]["shapes"].items()}
    report = og.stats(str(DATA / f"{name}.xml"), shapes=shapes)
    assert not report.uncounted, [lc.name for lc in report.uncounted]
    counts = {"mm": 0, "conv": 0, "sdpa": 0}
    for op, group in report.by_type.items():
        if op in KINDS:
            assert isinstance(group.macs, int), (op, group.macs)
            counts[KINDS[op]] += 2 * group.macs
    return counts


def _close(got: int, want: int) -> bool:
    return abs(got - want) <= 0.01 * want if want else got == 0


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_flops_agree_with_torch(name):
    """Convolutions alone, matmuls and attention together (OpenVINO fuses an eager
    attention's matmuls into one SDPA, PyTorch runs some SDPAs as matmuls), and SDPA
    alone where PyTorch ran an SDPA kernel: within 1%."""
    torch_side, ours = COUNTS[name]["torch"], _ovgather(name)
    assert _close(ours["conv"], torch_side["conv"]), (ours, torch_side)
    assert _close(ours["mm"] + ours["sdpa"], torch_side["mm"] + torch_side["sdpa"]), \
        (ours, torch_side)
    if torch_side["sdpa"]:
        assert _close(ours["sdpa"], torch_side["sdpa"]), (ours, torch_side)


def test_every_kind_is_exercised():
    """The IRs hold the ops compared: MatMul, Einsum, every convolution, SDPA."""
    seen = set()
    for name in COUNTS:
        seen |= set(og.stats(str(DATA / f"{name}.xml"), shapes={
            k: "[" + ",".join(map(str, v)) + "]"
            for k, v in COUNTS[name]["shapes"].items()}).by_type)
    assert set(KINDS) <= seen


def test_einsum_reduces_an_index_one_operand_holds_alone():
    """``bhqk,de->bhqe``: k and d are summed but each held by one operand: OpenVINO and
    PyTorch reduce each operand, then multiply (a broadcast product): no MACs, one FLOP
    per output element and per element reduced; never out·k·d MACs."""
    layer = Layer("Einsum", {"equation": "bhqk,de->bhqe"}, [(2, 3, 7, 7), (7, 20)],
                  [(2, 3, 7, 20)])
    assert layer_cost(layer) == (0, 2 * 3 * 7 * 20 + 2 * 3 * 7 * 7 + 7 * 20)


def test_einsum_contraction_is_a_matmul():
    """``bhqd,bhkd->bhqk`` is a batched matmul: MACs = out·d; a private index of one
    operand (``bij,jkl->bik``: l) is reduced first."""
    mm = Layer("Einsum", {"equation": "bhqd,bhkd->bhqk"}, [(2, 3, 7, 12), (2, 3, 9, 12)],
               [(2, 3, 7, 9)])
    assert layer_cost(mm) == (2 * 3 * 7 * 9 * 12, 2 * 2 * 3 * 7 * 9 * 12)
    private = Layer("Einsum", {"equation": "bij,jkl->bik"}, [(2, 4, 5), (5, 6, 3)],
                    [(2, 4, 6)])
    assert layer_cost(private) == (2 * 4 * 6 * 5, 2 * 2 * 4 * 6 * 5 + 5 * 6 * 3)
