"""``compare --all-layers`` judges the layers on the very run that ``compare`` makes: each
model compiled once, with every layer output exposed besides its own, when they fit the
memory budget; the verdicts are those of the layers run apart (the plan before), and an
IR v10 whose legacy output names collide with tensor names compiles so too."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from layer_plans import every_layer_apart, verdicts

from ovgather.comparison import remote
from ovgather.comparison.layers import compare_layers
from ovgather.runtime import worker

ROOT = Path(__file__).resolve().parents[2]
RESNET = ROOT / "ir_corpus/resnet/pytorch_static.xml"
BERT = ROOT / "ir_corpus/bert/pytorch_dynamic.xml"
sys.path.insert(0, str(ROOT / "tests" / "validate"))
from int8_detector import save  # noqa: E402


def _calls(monkeypatch) -> Counter:
    seen: Counter = Counter()
    call = worker.Worker.call

    def counted(self, fn, *args, **kwargs):
        seen[fn.__name__] += 1
        if fn is remote.open_many:  # both models opened at once: count each
            seen.update(inner.__name__ for inner, *_ in args[0])
        return call(self, fn, *args, **kwargs)

    monkeypatch.setattr(worker.Worker, "call", counted)
    return seen


@pytest.mark.parametrize("model", [RESNET, BERT], ids=["resnet", "bert"])
def test_the_run_of_compare_serves_the_layers_with_the_same_verdicts(model, monkeypatch):
    seen = _calls(monkeypatch)
    fused = compare_layers(model, model)
    assert seen["open_exposed"] == 2 and seen["open_model"] == 0
    assert seen["open_layers"] == 0  # no model read or compiled again for the layers
    assert fused.ok and fused.chunks == 1 and fused.compiles == 2
    monkeypatch.undo()
    every_layer_apart(monkeypatch)
    seen = _calls(monkeypatch)
    apart = compare_layers(model, model)
    assert seen["open_layers"] == 2 and seen["open_exposed"] == 0
    assert verdicts(fused) == verdicts(apart) and fused.peak_bytes == apart.peak_bytes
    assert fused.outputs.to_dict()["outputs"] == apart.outputs.to_dict()["outputs"]


def test_over_half_the_budget_the_layers_run_in_chunks_as_before(monkeypatch):
    whole = compare_layers(RESNET, RESNET)
    budget = whole.peak_bytes - 1
    small = compare_layers(RESNET, RESNET, memory_budget=budget)
    every_layer_apart(monkeypatch)
    apart = compare_layers(RESNET, RESNET, memory_budget=budget)
    assert small.chunks == apart.chunks > 1 and small.compiles == apart.compiles
    assert verdicts(small) == verdicts(apart) == verdicts(whole)


def test_an_ir_v10_with_colliding_names_compares_every_layer(tmp_path):
    _, v10 = save(tmp_path, blocks=1)
    report = compare_layers(v10, v10)
    assert report.ok and report.compiles == 2
    assert report.summary["ok"] == report.summary["layers"] > 50


def test_an_onnx_model_keeps_its_layers_read_node_by_node(monkeypatch):
    """``compare`` converts an ONNX model whole; its layers are those of OpenVINO's
    frontend read node by node, as before, so it is never run with them exposed."""
    onnx = ROOT / "tests/data/onnx_ref/conv_net.onnx"
    seen = _calls(monkeypatch)
    fused = compare_layers(onnx, onnx)
    assert seen["open_layers"] == 2 and seen["open_model"] == 0
    monkeypatch.undo()
    every_layer_apart(monkeypatch)
    apart = compare_layers(onnx, onnx)  # (a frontend names the ops it adds by a counter)
    assert fused.ok and fused.summary == apart.summary
    assert [(lc.type, lc.status, lc.max_abs) for lc in fused.layers] == \
        [(lc.type, lc.status, lc.max_abs) for lc in apart.layers]
