"""``compare --all-layers`` exposes the layers that compute and derives data movement
(Reshape, Transpose, Slice, Concat, Broadcast …) from its inputs' runtime values with
OpenVINO's reference ``evaluate`` (``runtime/derived.py``). The derived values must be the
runtime's own, bit for bit (every layer exposed, run on the CPU plugin, is the judge), on
real models of both frontends; and the verdicts of a comparison that finds a changed
weight are those of the plan that exposes every layer and compiles the layers apart."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from layer_faults import early_middle_late, perturbed
from layer_plans import every_layer_apart, verdicts

import ovgather as og
from ovgather.comparison.layers import compare_layers
from ovgather.comparison.outputs import compare
from ovgather.ops.core import registry
from ovgather.runtime.derived import REARRANGING, Derivation, derivable
from ovgather.runtime.layer_runs import OpenVinoLayers

ROOT = Path(__file__).resolve().parents[2]
#: rich in data movement: RoPE and KV reshapes (llama), relative positions (t5), window
#: partitions (swin), overlapping patches (segformer), both frontends, static and dynamic
MODELS = ["llama/pytorch_dynamic.xml", "llama/onnx_dynamic.xml", "t5/pytorch_dynamic.xml",
          "swin/pytorch_static.xml", "swin/onnx_static.xml", "segformer/onnx_dynamic.xml",
          "whisper/pytorch_dynamic.xml", "gpt2/onnx_static.xml", "detr/pytorch_static.xml"]


def _key(port):
    return port.get_node(), port.get_index()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.replace("/", "-")[:-4])
def test_derived_values_are_the_runtime_s_bit_for_bit(model):
    _derived_equal_exposed(ROOT / "ir_corpus" / model)


def _scalars(path: Path) -> Path:
    """Data movement of scalars (a reduced sum unsqueezed, a product reshaped, a scalar
    broadcast and concatenated): where NumPy and the plugin disagree on what a scalar is."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter([2, 3, 4], np.float32, name="x")
    total = ops.reduce_sum(x, ops.constant(np.array([0, 1, 2], np.int64)), False)
    peak = ops.reduce_max(x, ops.constant(np.array([0, 1, 2], np.int64)), False)
    up = ops.unsqueeze(total, ops.constant(np.array([0], np.int64)))
    flat = ops.reshape(ops.multiply(total, peak), ops.constant(np.array([1, 1], np.int64)),
                       False)
    wide = ops.broadcast(peak, ops.constant(np.array([3], np.int64)))
    joined = ops.concat([up, wide, ops.squeeze(flat, ops.constant(np.array([0], np.int64)))],
                        0)
    y = ops.parameter([2, 5], np.float32, name="y")
    out = ops.add(ops.unsqueeze(joined, ops.constant(np.array([0], np.int64))), y)
    xml = path / "scalars.xml"
    ov.save_model(ov.Model([out.output(0)], [x, y], "scalars"), xml, compress_to_fp16=False)
    return xml


def test_scalars_are_derived_as_the_runtime_computes_them(tmp_path):
    _derived_equal_exposed(_scalars(tmp_path), at_least=4)


def _derived_equal_exposed(xml: Path, at_least: int | None = None) -> None:
    fed = compare(xml, xml, seed=3).arrays  # the inputs compare makes for it
    layers = OpenVinoLayers(xml)
    live = [o for o in layers.outputs() if not o.constant]
    own = [r.input_value(0) for r in layers.model.get_results()]
    moved = derivable([layers.port(o) for o in live], own)
    values = layers.run(fed, live)  # every layer exposed: the plugin computes them all
    by_key = {_key(layers.port(o)): v for o, v in values.items()}
    exposed = {k: v for k, v in by_key.items() if k not in {_key(p) for p in moved}}
    made = Derivation(moved).values(exposed)
    kinds = Counter(p.get_node().get_type_name() for p in moved)
    assert len(moved) >= (0.1 * len(live) if at_least is None else at_least), kinds
    assert set(kinds) <= REARRANGING, kinds
    assert set(made) == {_key(p) for p in moved}  # OpenVINO evaluates every one
    for port in moved:
        got, want = made[_key(port)], np.asarray(by_key[_key(port)])
        assert got.dtype == want.dtype and got.shape == want.shape, port
        assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), port


def test_a_model_output_and_what_reads_a_folded_shape_stay_exposed():
    xml = ROOT / "ir_corpus/llama/pytorch_dynamic.xml"
    layers = OpenVinoLayers(xml)
    live = [o for o in layers.outputs() if not o.constant]
    own = [r.input_value(0) for r in layers.model.get_results()]
    moved = {_key(p) for p in derivable([layers.port(o) for o in live], own)}
    assert not moved & {_key(p) for p in own}
    known = {_key(layers.port(o)) for o in live}
    for o in live:
        port = layers.port(o)
        if _key(port) in moved:
            assert o.type in REARRANGING
            assert all(v.get_node().get_type_name() == "Constant" or _key(v) in known
                       for v in port.get_node().input_values())
    gathers = [o for o in live if o.type in registry.family("gather")]
    assert gathers and not {_key(layers.port(o)) for o in gathers} & moved


@pytest.mark.parametrize("model", ["llama/pytorch_dynamic.xml", "swin/pytorch_static.xml",
                                   "t5/pytorch_dynamic.xml"],
                         ids=["llama", "swin", "t5"])
def test_a_changed_weight_gets_the_verdicts_of_every_layer_exposed(model, tmp_path,
                                                                   monkeypatch):
    xml = ROOT / "ir_corpus" / model
    G = og.read_ir(str(xml))
    fault = early_middle_late(G, [G.nodes[n]["name"] for n in G])[1]
    changed = perturbed(xml, fault, tmp_path)
    derived = compare_layers(xml, changed, seed=1)
    every_layer_apart(monkeypatch)
    apart = compare_layers(xml, changed, seed=1)
    assert derived.first_divergent.a == apart.first_divergent.a == fault.reader
    assert Counter(lc.status for lc in derived.layers)["differs"] > 10
    assert [v[:4] for v in verdicts(derived)] == [v[:4] for v in verdicts(apart)]
    # a layer left exposed may be fused otherwise in the two compiles: its error may move
    # in the last bits of the sum, never more
    for x, y in zip(verdicts(derived), verdicts(apart), strict=True):
        assert x[4] == pytest.approx(y[4], rel=1e-5, abs=1e-6), (x, y)


@pytest.mark.parametrize("sample", sorted((ROOT / "ir_samples").glob("*.xml")),
                         ids=lambda p: p.stem)
def test_every_sample_gets_the_statuses_of_every_layer_exposed(sample, monkeypatch):
    try:
        derived = compare_layers(sample, sample, seed=2)
    except og.OvgatherError as err:  # a sample compare refuses: refused in both plans
        every_layer_apart(monkeypatch)
        with pytest.raises(type(err)):
            compare_layers(sample, sample, seed=2)
        return
    every_layer_apart(monkeypatch)
    apart = compare_layers(sample, sample, seed=2)
    assert [v[:4] for v in verdicts(derived)] == [v[:4] for v in verdicts(apart)]
