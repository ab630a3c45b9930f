"""`to_openvino(from_openvino(m))` is `m`: same layers, names, attributes, outputs.

Checked on every sample in ``ir_samples/`` and on generated random models
(``tools/gen_models.py``): the same ops (friendly name, type, opset, attributes), the same
tensor names and output partial shapes, and, compiled on CPU, equal outputs on the same
random inputs. Also ``load_model`` on .xml and .onnx files.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper

from ovgather.errors import IRError, OvgatherError
from ovgather.ir import read_ir
from ovgather.runtime.interop import from_openvino, load_model, to_openvino

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


def _op_key(op: ov.Node) -> tuple:
    attrs = {k: str(v) for k, v in op.get_attributes().items()}
    return (op.get_type_name(), op.get_type_info().version_id, attrs,
            [str(op.get_output_partial_shape(i)) for i in range(op.get_output_size())],
            [sorted(op.output(i).get_names()) for i in range(op.get_output_size())])


def _ops(model: ov.Model) -> dict[str, tuple]:
    return {op.get_friendly_name(): _op_key(op) for op in model.get_ops()}


def _inputs(model: ov.Model, want: int, seed: int) -> list[np.ndarray]:
    """Random floats and booleans, integer inputs 0 (valid indices); each dynamic dim set
    to a static size another input has at the same position, else ``want`` (clipped)."""
    rng = np.random.default_rng(seed)
    statics: dict[int, list[int]] = {}
    for p in model.get_parameters():
        for i, d in enumerate(p.get_partial_shape()):
            if d.is_static:
                statics.setdefault(i, []).append(d.get_length())
    out = []
    for p in model.get_parameters():
        shape = [_size(d, statics.get(i, []), want) for i, d in enumerate(p.get_partial_shape())]
        et = p.get_element_type()
        if et.is_real():
            out.append(rng.standard_normal(shape).astype(et.to_dtype()))
        elif et == ov.Type.boolean:
            out.append(rng.random(shape) < 0.5)
        else:
            out.append(np.zeros(shape, dtype=et.to_dtype()))
    return out


def _size(d: ov.Dimension, others: list[int], want: int) -> int:
    if d.is_static:
        return d.get_length()
    lo, hi = d.get_min_length(), d.get_max_length()
    hi = hi if hi >= 0 else 1 << 30
    fits = [v for v in others if lo <= v <= hi]
    return fits[0] if fits else min(max(want, lo), hi)


def _run_both(a: ov.Model, b: ov.Model, seed: int, feeds: list | None) -> tuple[list, list]:
    core = ov.Core()
    ca, cb = core.compile_model(a, "CPU", CONFIG), core.compile_model(b, "CPU", CONFIG)
    errors = []
    candidates = [feeds] if feeds is not None else [_inputs(a, w, seed) for w in (4, 2, 1)]
    for feeds in candidates:
        try:
            ra = ca(feeds).to_tuple()
        except RuntimeError as err:  # these sizes do not fit the model; try others
            errors.append([ln for ln in str(err).splitlines() if ln.strip()][-1:])
            continue
        return ra, cb(feeds).to_tuple()
    raise AssertionError(f"no concrete inputs run the model: {errors}")


def assert_same_model(a: ov.Model, b: ov.Model, seed: int = 0, feeds: list | None = None) -> None:
    assert _ops(a) == _ops(b)
    assert [sorted(o.get_names()) for o in a.outputs] == [sorted(o.get_names()) for o in b.outputs]
    assert [p.get_friendly_name() for p in a.get_parameters()] == \
        [p.get_friendly_name() for p in b.get_parameters()]
    if any(p.get_partial_shape().rank.is_dynamic for p in a.get_parameters()):
        return  # the CPU plugin compiles no dynamic-rank Parameter; the ops compared above
    ra, rb = _run_both(a, b, seed, feeds)
    for x, y in zip(ra, rb, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(ROOT)) for p in SAMPLES])
def test_round_trip_of_every_sample(path: Path) -> None:
    model = ov.Core().read_model(str(path))
    back = to_openvino(from_openvino(model))
    assert_same_model(model, back)


def test_round_trip_of_generated_models() -> None:
    import gen_models
    for seed in range(40):
        model = gen_models.random_model(seed)
        back = to_openvino(from_openvino(model))
        assert_same_model(model, back, seed, gen_models.random_inputs(model, seed))


def test_from_openvino_gives_the_graph_read_ir_gives(tmp_path: Path) -> None:
    path = ROOT / "ir_samples" / "mixed_ops.xml"
    G = from_openvino(ov.Core().read_model(str(path)))
    H = read_ir(path)
    assert isinstance(G, nx.MultiDiGraph)
    assert sorted(G.nodes[n]["name"] for n in G) == sorted(H.nodes[n]["name"] for n in H)
    assert G.number_of_edges() == H.number_of_edges()
    assert G.graph["xml_path"] is None  # nothing on disk outlives the call


def test_to_openvino_reports_a_graph_openvino_refuses() -> None:
    G = read_ir(ROOT / "ir_samples" / "gather_nd8_bd3.xml")
    gnd = next(n for n in G if G.nodes[n]["type"] == "GatherND")
    G.nodes[gnd]["data"]["batch_dims"] = "4"  # b must stay below the rank of data
    with pytest.raises(OvgatherError, match="openvino could not read"):
        to_openvino(G)


def _onnx_gather_nd(path: Path) -> Path:
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 3, 4])
    idx = helper.make_tensor_value_info("indices", TensorProto.INT64, ["N", 2, 1])
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT, None)
    node = helper.make_node("GatherND", ["data", "indices"], ["output"], batch_dims=1)
    graph = helper.make_graph([node], "g", [data, idx], [out])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_load_model_reads_xml_and_converts_onnx(tmp_path: Path) -> None:
    G = load_model(ROOT / "ir_samples" / "gather_nd8_bd3.xml")
    assert G.graph["xml_path"].endswith("gather_nd8_bd3.xml")
    H = load_model(_onnx_gather_nd(tmp_path / "m.onnx"))
    assert H.graph["source_format"] == "onnx"
    gnd = [H.nodes[n] for n in H if H.nodes[n]["type"] == "GatherND"]
    assert [(a["version"], a["data"]["batch_dims"]) for a in gnd] == [("opset8", "1")]


def test_load_model_bad_onnx_is_an_ir_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not an onnx model")
    with pytest.raises(IRError, match="bad.onnx"):
        load_model(bad)
    with pytest.raises(IRError, match="does not exist"):
        load_model(tmp_path / "missing.onnx")
