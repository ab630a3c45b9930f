"""write_ir(read_ir(x)) is the same model for OpenVINO, and a fixpoint for ovgather.

OpenVINO is the judge: the original IR and the rewritten one are both read with
``openvino.Core().read_model`` and compared op by op (type, version, attributes, tensor
names, output partial shapes, element types, Const data, rt_info), then compiled on CPU
and run on the same random inputs, whose outputs must be ``np.array_equal``.
"""

from __future__ import annotations

import math
from pathlib import Path

import gen_models
import numpy as np
import openvino as ov
import pytest
from graph_view import node_view

from ovgather.graph import op_spec
from ovgather.ir import const_value, read_ir, write_ir
from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))
N_MODELS = 200
CORE = ov.Core()

#: Node attributes that say where a layer was read from, not what it is.
LOCATION = {"line"}


def _attr_equal(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _op_summary(op: ov.Node) -> dict:
    info = op.get_type_info()
    summary = {
        "type": op.get_type_name(),
        "version": info.version_id,
        "attributes": op.get_attributes(),
        "outputs": [(sorted(o.get_names()), str(o.get_partial_shape()), str(o.get_element_type()))
                    for o in op.outputs()],
        "rt_info": sorted(str(k) for k in op.get_rt_info().keys()),
        "inputs": [(i.get_source_output().get_node().get_friendly_name(),
                    i.get_source_output().get_index()) for i in op.inputs()],
    }
    if op.get_type_name() == "Constant":
        summary["data"] = op.get_data().copy()
    return summary


def assert_same_model(a: ov.Model, b: ov.Model) -> None:
    """Same ops (by friendly name) with the same types, attributes, names, shapes, data."""
    ops_a = {op.get_friendly_name(): _op_summary(op) for op in a.get_ordered_ops()}
    ops_b = {op.get_friendly_name(): _op_summary(op) for op in b.get_ordered_ops()}
    assert ops_a.keys() == ops_b.keys()
    for name, sa in ops_a.items():
        sb = ops_b[name]
        assert sa.keys() == sb.keys(), name
        for key in sa:
            if key == "attributes":
                assert sa[key].keys() == sb[key].keys(), name
                for k in sa[key]:
                    assert _attr_equal(sa[key][k], sb[key][k]), (name, k)
            else:
                assert _attr_equal(sa[key], sb[key]), (name, key, sa[key], sb[key])
    assert [p.get_friendly_name() for p in a.get_parameters()] == [
        p.get_friendly_name() for p in b.get_parameters()]
    assert [r.get_friendly_name() for r in a.get_results()] == [
        r.get_friendly_name() for r in b.get_results()]
    for p, q in zip(a.get_parameters(), b.get_parameters(), strict=True):
        assert str(p.get_layout()) == str(q.get_layout())


def _rt_info_text(path: Path) -> str:
    """The model-level rt_info as OpenVINO re-serializes it (the framework version line
    aside), read back from a save of the model read from ``path``."""
    return str(CORE.read_model(str(path)).get_rt_info())


def assert_same_outputs(a: ov.Model, b: ov.Model, inputs: list[np.ndarray]) -> None:
    out_a = CORE.compile_model(a, "CPU", cpu_config())(inputs)
    out_b = CORE.compile_model(b, "CPU", cpu_config())(inputs)
    assert len(out_a) == len(out_b)
    for x, y in zip(out_a.to_tuple(), out_b.to_tuple(), strict=True):
        assert x.shape == y.shape and x.dtype == y.dtype
        assert np.array_equal(x, y, equal_nan=True)


def assert_same_graph(G1, G2, *, with_lines: bool) -> None:
    """Equal node and edge attributes (and Const data); line numbers only if asked."""
    skip = set() if with_lines else LOCATION
    assert list(G1.nodes) == list(G2.nodes)
    for n in G1.nodes:
        a1 = {k: v for k, v in G1.nodes[n].items() if k not in skip}
        a2 = {k: v for k, v in G2.nodes[n].items() if k not in skip}
        if a1.get("type") == "Const":
            assert np.array_equal(const_value(G1, n), const_value(G2, n)), n
            for a in (a1, a2):  # repacked densely: offsets may move
                a["data"] = {k: v for k, v in a["data"].items() if k != "offset"}
        assert node_view(a1, offsets=False) == node_view(a2, offsets=False), n
    e1 = sorted((u, v, k, tuple(sorted((x, y) for x, y in d.items() if x not in skip)))
                for u, v, k, d in G1.edges(keys=True, data=True))
    e2 = sorted((u, v, k, tuple(sorted((x, y) for x, y in d.items() if x not in skip)))
                for u, v, k, d in G2.edges(keys=True, data=True))
    assert e1 == e2
    for key in ("name", "ir_version", "rt_info", "net_attrs", "extra_xml"):
        assert G1.graph[key] == G2.graph[key], key


def roundtrip(src: Path, tmp: Path, inputs: list[np.ndarray] | None) -> None:
    G1 = read_ir(src)
    out1 = tmp / "once.xml"
    write_ir(G1, out1)
    original, rewritten = CORE.read_model(str(src)), CORE.read_model(str(out1))
    assert_same_model(original, rewritten)
    assert _rt_info_text(src) == _rt_info_text(out1)
    if inputs is not None:
        assert_same_outputs(original, rewritten, inputs)
    G2 = read_ir(out1)
    assert_same_graph(G1, G2, with_lines=False)
    out2 = tmp / "twice.xml"
    write_ir(G2, out2)
    assert out2.read_bytes() == out1.read_bytes()
    assert out2.with_suffix(".bin").read_bytes() == out1.with_suffix(".bin").read_bytes()
    assert_same_graph(G2, read_ir(out2), with_lines=True)


def test_roundtrip_generated_models(tmp_path: Path) -> None:
    """≥ 200 random models: same model for OpenVINO, same outputs, fixpoint graph."""
    for seed in range(N_MODELS):
        model = gen_models.random_model(seed)
        src = tmp_path / f"m{seed}" / "model.xml"
        src.parent.mkdir()
        ov.save_model(model, str(src), compress_to_fp16=False)
        roundtrip(src, src.parent, gen_models.random_inputs(model, seed))


def _inputs_at(model: ov.Model, size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Inputs whose dynamic dims take ``size`` clamped into their bounds; integer
    (index) inputs are zeros, valid for every gather."""
    out = []
    for p in model.get_parameters():
        shape = []
        for d in p.get_partial_shape():
            lo, hi = d.get_min_length(), d.get_max_length()
            shape.append(max(lo, size) if hi < 0 else min(max(lo, size), hi))
        dtype = p.get_element_type().to_dtype()
        if np.issubdtype(dtype, np.floating):
            out.append(rng.standard_normal(shape).astype(dtype))
        else:
            out.append(np.zeros(shape, dtype))
    return out


def _sample_inputs(model: ov.Model) -> list[np.ndarray] | None:
    """The first of a few input sizes on which the original sample runs on CPU."""
    if any(p.get_partial_shape().rank.is_dynamic for p in model.get_parameters()):
        return None
    compiled = CORE.compile_model(model, "CPU", cpu_config())
    for size in (3, 2, 1, 4):
        inputs = _inputs_at(model, size, np.random.default_rng(size))
        try:
            compiled(inputs)
        except RuntimeError:
            continue
        return inputs
    return None


@pytest.mark.parametrize("sample", SAMPLES, ids=[str(s.relative_to(ROOT)) for s in SAMPLES])
def test_roundtrip_samples(sample: Path, tmp_path: Path) -> None:
    inputs = _sample_inputs(CORE.read_model(str(sample)))
    roundtrip(sample, tmp_path, inputs)


RICH_XML = """<?xml version="1.0"?>
<!-- a comment -->
<net name="rich" version="11" extra="x&amp;y">
	<layers>
		<layer id="0" name="data" type="Parameter" version="opset1">
			<data shape="2..5,?,4" element_type="f32" />
			<output>
				<port id="0" precision="FP32" names="d\\,x,data" custom="1">
					<dim>-1</dim><dim>-1</dim><dim>4</dim>
					<rt_info><attribute name="layout" version="0" layout="[N,...]" /></rt_info>
				</port>
			</output>
		</layer>
		<layer id="1" name="relu" type="Relu" version="opset1" extra_attr="keep">
			<rt_info>
				<attribute name="fused_names" version="0" value="a,b" />
			</rt_info>
			<input><port id="0" precision="FP32">
				<dim>-1</dim><dim>-1</dim><dim>4</dim></port></input>
			<output><port id="1" precision="FP32" names="r">
				<dim>-1</dim><dim>-1</dim><dim>4</dim></port></output>
		</layer>
		<layer id="2" name="out" type="Result" version="opset1" output_names="r">
			<input><port id="0" precision="FP32">
				<dim>-1</dim><dim>-1</dim><dim>4</dim></port></input>
		</layer>
	</layers>
	<edges>
		<edge from-layer="0" from-port="0" to-layer="1" to-port="0" />
		<edge from-layer="1" from-port="1" to-layer="2" to-port="0" />
	</edges>
	<statistics><layer name="relu" min="0" /></statistics>
	<rt_info>
		<framework><note value="hello &lt;world&gt;" /></framework>
		<top value="v" />
	</rt_info>
</net>
"""


def test_roundtrip_keeps_rt_info_and_extra_children(tmp_path: Path) -> None:
    """rt_info at net, layer and port level, extra attributes and an extra <net> child
    survive: OpenVINO reads the rewritten file with the same layout, fused names, model
    rt_info and tensor names (one with a comma), and the graph is a fixpoint."""
    src = tmp_path / "rich.xml"
    src.write_text(RICH_XML)
    roundtrip(src, tmp_path, [np.ones((3, 2, 4), np.float32)])
    G = read_ir(tmp_path / "once.xml")
    assert G.graph["net_attrs"] == {"name": "rich", "version": "11", "extra": "x&y"}
    assert G.graph["extra_xml"] == ['<statistics><layer name="relu" min="0"/></statistics>']
    assert G.nodes["1"]["layer_attrs"] == {"extra_attr": "keep"}
    assert G.nodes["0"]["outputs"][0]["names"] == ["d,x", "data"]
    assert G.nodes["0"]["outputs"][0]["attrs"] == {"custom": "1"}
    model = CORE.read_model(str(tmp_path / "once.xml"))
    relu = next(o for o in model.get_ops() if o.get_friendly_name() == "relu")
    assert "fused_names_0" in relu.get_rt_info().keys()
    assert str(model.get_parameters()[0].get_layout()) == "[N,...]"
    assert model.get_parameters()[0].output(0).get_names() == {"d,x", "data"}
    assert model.get_rt_info(["framework", "note"]).astype(str) == "hello <world>"


def test_roundtrip_keeps_unknown_layer_types(tmp_path: Path) -> None:
    """A layer type ovgather and OpenVINO do not know keeps its attributes, ports and
    extra children through read → write → read."""
    xml = RICH_XML.replace('type="Relu" version="opset1"', 'type="MyOp" version="custom_ops"')
    xml = xml.replace("\t\t\t<rt_info>\n", "\t\t\t<body><layers/></body>\n\t\t\t<rt_info>\n", 1)
    src = tmp_path / "unknown.xml"
    src.write_text(xml)
    G1 = read_ir(src)
    assert G1.nodes["1"]["type"] == "MyOp" and op_spec(G1, "1") is None
    assert G1.nodes["1"]["extra_xml"] == ["<body><layers/></body>"]
    write_ir(G1, tmp_path / "out.xml")
    assert_same_graph(G1, read_ir(tmp_path / "out.xml"), with_lines=False)


def test_write_is_atomic_on_failure(tmp_path: Path) -> None:
    """A failing write leaves the old files intact and no temporary file behind."""
    model = gen_models.random_model(1)
    src = tmp_path / "model.xml"
    ov.save_model(model, str(src), compress_to_fp16=False)
    G = read_ir(src)
    out = tmp_path / "out.xml"
    write_ir(G, out)
    before = (out.read_bytes(), out.with_suffix(".bin").read_bytes())
    node = next(n for n in G.nodes if G.nodes[n]["type"] == "Const")
    G.nodes[node]["value"] = np.array(["not", "numeric"])
    from ovgather.errors import OutputError
    with pytest.raises(OutputError):
        write_ir(G, out)
    assert (out.read_bytes(), out.with_suffix(".bin").read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["model.xml", "model.bin", "out.xml", "out.bin"])


def test_added_const_value_is_appended(tmp_path: Path) -> None:
    """A Const given a ``value`` in memory is written with its bytes, type and shape, and
    OpenVINO computes with the new data."""
    model = gen_models.random_model(3)
    src = tmp_path / "model.xml"
    ov.save_model(model, str(src), compress_to_fp16=False)
    G = read_ir(src)
    consts = [n for n in G.nodes if G.nodes[n]["type"] == "Const"
              and const_value(G, n).dtype == np.float32]
    assert consts, "seed 3 must hold a float Const"
    target = consts[0]
    new = const_value(G, target) + np.float32(1.5)
    G.nodes[target]["value"] = np.array(new)
    out = tmp_path / "out.xml"
    write_ir(G, out)
    written = CORE.read_model(str(out))
    op = next(o for o in written.get_ops() if o.get_friendly_name() == G.nodes[target]["name"])
    assert np.array_equal(op.get_data(), new)


def test_the_comparison_catches_a_changed_name_attribute_or_constant(tmp_path: Path) -> None:
    """The round-trip checks can fail: a renamed tensor, a changed attribute and a changed
    Const each make the rewritten model differ for OpenVINO."""
    model = gen_models.random_model(8)
    src = tmp_path / "model.xml"
    ov.save_model(model, str(src), compress_to_fp16=False)
    original = CORE.read_model(str(src))
    out = tmp_path / "out.xml"

    G = read_ir(src)
    port = next(p for n in G.nodes for p in G.nodes[n]["outputs"] if p["names"])
    port["names"] = port["names"] + ["renamed"]
    write_ir(G, out)
    with pytest.raises(AssertionError):
        assert_same_model(original, CORE.read_model(str(out)))

    G = read_ir(src)
    node = next(n for n in G.nodes if G.nodes[n]["type"] == "Convert")
    target = "f16" if G.nodes[node]["data"]["destination_type"] != "f16" else "i32"
    G.nodes[node]["data"]["destination_type"] = target
    write_ir(G, out)
    with pytest.raises(AssertionError):
        assert_same_model(original, CORE.read_model(str(out)))

    G = read_ir(src)
    node = next(n for n in G.nodes if G.nodes[n]["type"] == "Const"
                and const_value(G, n).dtype == np.float32)
    G.nodes[node]["value"] = const_value(G, node) + np.float32(1)
    write_ir(G, out)
    with pytest.raises(AssertionError):
        assert_same_model(original, CORE.read_model(str(out)))
