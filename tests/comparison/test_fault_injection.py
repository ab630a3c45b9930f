"""``compare --all-layers`` locates a changed weight: in real CNN and transformer IRs of the
corpus, one float weight at a time has its first element moved far past the tolerance
(early, middle and late in the model), and the first divergent layer must be the layer
that reads that weight through its decompression chain, found from the graph
(``layer_faults``), with every layer before it ``ok``. A model against itself: every layer
``ok``, every non-constant layer output compared."""

from __future__ import annotations

from pathlib import Path

import pytest
from layer_faults import early_middle_late, perturbed

import ovgather as og
from ovgather.comparison.layers import compare_layers

ROOT = Path(__file__).resolve().parents[2]
#: small real IRs: CNNs (resnet, convnext, poolformer, wav2vec2's convolutions) and
#: transformers (vit, roberta, distilbert, gpt2), both frontends, static and dynamic
MODELS = ["resnet/pytorch_static.xml", "convnext/onnx_static.xml",
          "poolformer/pytorch_static.xml", "wav2vec2/pytorch_dynamic.xml",
          "vit/pytorch_static.xml", "roberta/pytorch_static.xml",
          "distilbert/onnx_dynamic.xml", "gpt2/onnx_static.xml"]


def _non_constant_outputs(model: str) -> set[tuple[str, int]]:
    """Every output of every layer OpenVINO reads that is no Parameter, Result or constant
    (what only constants feed), by friendly name and port: OpenVINO's view, not ours."""
    import openvino as ov

    constant, out = set(), set()
    for op in ov.Core().read_model(str(ROOT / "ir_corpus" / model)).get_ordered_ops():
        ins = [v.get_node() for v in op.input_values()]
        if op.get_type_name() == "Constant" or (ins and all(n in constant for n in ins)):
            constant.add(op)
        elif op.get_type_name() not in ("Parameter", "Result"):
            out |= {(op.get_friendly_name(), k) for k in range(op.get_output_size())}
    return out


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.replace("/", "-")[:-4])
def test_a_changed_weight_is_located_at_the_layer_that_reads_it(model, tmp_path):
    xml = ROOT / "ir_corpus" / model
    G = og.read_ir(str(xml))
    order = [G.nodes[n]["name"] for n in G]  # the file's order: topological in an IR
    for k, fault in enumerate(early_middle_late(G, order)):
        report = compare_layers(xml, perturbed(xml, fault, tmp_path / str(k)), seed=k)
        first = report.first_divergent
        assert first is not None and first.a == fault.reader, (fault, first)
        assert first.b == fault.reader and first.line_a == first.line_b
        assert first.line_a == next(a["line"] for _, a in G.nodes(data=True)
                                    if a["name"] == fault.reader)
        before = report.layers[:report.layers.index(first)]
        assert all(lc.status == "ok" for lc in before)
        assert first.max_abs > 1e-2 and not report.ok


@pytest.mark.parametrize("model", ["resnet/pytorch_static.xml", "roberta/pytorch_static.xml",
                                   "wav2vec2/pytorch_dynamic.xml",
                                   "llama_kv/pytorch_stateful.xml"])  # state writes
def test_a_model_against_itself_is_ok_at_every_layer_output(model):
    xml = ROOT / "ir_corpus" / model
    report = compare_layers(xml, xml)
    assert report.ok and report.first_divergent is None
    assert all(lc.status == "ok" and lc.max_abs == 0 and lc.cosine == pytest.approx(1)
               for lc in report.layers)
    wanted = _non_constant_outputs(model)
    compared = {(lc.a, lc.port) for lc in report.layers if lc.status == "ok"}
    assert len(compared & wanted) >= 0.95 * len(wanted)
    assert compared <= wanted  # no constant compared
