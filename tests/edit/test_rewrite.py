"""The rewriting API: each operation on small hand-built graphs, then through OpenVINO."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from ovgather.edit import (
    add_const,
    add_layer,
    find_layers,
    insert_after,
    remove_layer,
    replace_layer,
    unique_name,
)
from ovgather.errors import RewriteError
from ovgather.graph import consumers, op_spec, output_port, producer
from ovgather.runtime.core import cpu_config


def _param(G, name, dims, precision="FP32", element_type="f32"):
    return add_layer(
        G, "Parameter", "opset1",
        data={"shape": ",".join(map(str, dims)), "element_type": element_type},
        outputs=[{"precision": precision, "dims": dims, "names": [name]}], name=name)


def _relu_model():
    """x -> Relu(named 'act', tensor 'act:0') -> Result."""
    G = nx.MultiDiGraph(name="m", ir_version=11)
    x = _param(G, "x", (2, 3))
    relu = add_layer(G, "Relu", "opset1", inputs=[(x, 0)],
                     outputs=[{"precision": "FP32", "dims": (2, 3), "names": ["act:0"]}],
                     name="act")
    res = add_layer(G, "Result", "opset1", inputs=[(relu, 1)], name="out")
    return G, x, relu, res


def test_add_layer_numbers_ports_like_the_ir_and_copies_input_ports():
    G, x, relu, res = _relu_model()
    assert [p["id"] for p in G.nodes[relu]["inputs"]] == [0]
    assert [p["id"] for p in G.nodes[relu]["outputs"]] == [1]
    assert G.nodes[relu]["inputs"][0]["dims"] == (2, 3)
    assert G.nodes[relu]["inputs"][0]["precision"] == "FP32"
    assert producer(G, res, 0) == (relu, 1)


def test_add_layer_gives_fresh_ids_and_unique_names():
    G, x, relu, res = _relu_model()
    a = add_layer(G, "Relu", "opset1", inputs=[(x, 0)], outputs=[{"precision": "FP32"}],
                  name="act")
    assert a not in (x, relu, res)
    assert G.nodes[a]["name"] == "act_1"
    assert unique_name(G, "act") == "act_2"
    assert len({G.nodes[n]["name"] for n in G}) == len(G)


def test_add_layer_rejects_an_unknown_producer():
    G, *_ = _relu_model()
    with pytest.raises(RewriteError, match="must be a layer id of the graph, but got .99."):
        add_layer(G, "Relu", "opset1", inputs=[("99", 0)])


def test_add_const_takes_type_shape_and_precision_from_the_array():
    G = nx.MultiDiGraph()
    c = add_const(G, np.arange(6, dtype=np.int32).reshape(2, 3), name="w")
    attrs = G.nodes[c]
    assert attrs["type"] == "Const" and attrs["version"] == "opset1"
    assert attrs["data"]["element_type"] == "i32"
    assert attrs["data"]["shape"] == "2, 3"
    assert attrs["outputs"][0]["precision"] == "I32"
    assert attrs["outputs"][0]["dims"] == (2, 3) and attrs["outputs"][0]["id"] == 0
    np.testing.assert_array_equal(attrs["value"], np.arange(6).reshape(2, 3))


def test_add_const_scalar_has_an_empty_shape():
    G = nx.MultiDiGraph()
    c = add_const(G, np.float32(1.5))
    assert G.nodes[c]["data"]["shape"] == "" and G.nodes[c]["outputs"][0]["dims"] == ()


def test_add_const_rejects_object_arrays():
    with pytest.raises(RewriteError, match="dtype object"):
        add_const(nx.MultiDiGraph(), np.array(["a"], dtype=object))


def test_find_layers_by_type_version_and_data_attrs():
    G, x, relu, res = _relu_model()
    g5 = add_layer(G, "GatherND", "opset5", data={"batch_dims": 2}, inputs=[(x, 0), (x, 0)])
    g8 = add_layer(G, "GatherND", "opset8", data={"batch_dims": 0}, inputs=[(x, 0), (x, 0)])
    assert find_layers(G, type="GatherND") == [g5, g8]
    assert find_layers(G, type="GatherND", version="opset8") == [g8]
    assert find_layers(G, type="GatherND", batch_dims=2) == [g5]
    assert find_layers(G, type="Relu", batch_dims=0) == []
    assert op_spec(G, g5).version == 5 and op_spec(G, g8).version == 8


def test_insert_after_rewires_consumers_and_moves_the_names():
    G, x, relu, res = _relu_model()
    neg = add_layer(G, "Negative", "opset1", inputs=[(relu, 1)],
                    outputs=[{"precision": "FP32", "dims": (2, 3)}])
    insert_after(G, relu, 1, neg)
    assert producer(G, res, 0) == (neg, 1)
    assert consumers(G, relu, 1) == [(neg, 0)]
    assert output_port(G, neg, 1)["names"] == ["act:0"]
    assert output_port(G, relu, 1)["names"] == []
    assert G.nodes[neg]["name"] == "act"
    assert G.nodes[relu]["name"] == "act/orig"


def test_insert_after_keeps_listed_readers_on_the_old_port():
    G, x, relu, res = _relu_model()
    shape = add_layer(G, "ShapeOf", "opset3", inputs=[(relu, 1)],
                      outputs=[{"precision": "I64", "dims": (2,)}])
    neg = add_layer(G, "Negative", "opset1", inputs=[(relu, 1)],
                    outputs=[{"precision": "FP32", "dims": (2, 3)}])
    insert_after(G, relu, 1, neg, keep=(shape,), take_name=False)
    assert sorted(consumers(G, relu, 1)) == sorted([(shape, 0), (neg, 0)])
    assert G.nodes[relu]["name"] == "act"


def test_insert_after_needs_the_new_layer_to_read_the_port():
    G, x, relu, res = _relu_model()
    neg = add_layer(G, "Negative", "opset1", inputs=[(x, 0)],
                    outputs=[{"precision": "FP32", "dims": (2, 3)}])
    with pytest.raises(RewriteError, match="must read that port"):
        insert_after(G, relu, 1, neg)


def test_replace_layer_keeps_consumers_and_names_and_drops_dead_producers():
    G, x, relu, res = _relu_model()
    c = add_const(G, np.zeros((2, 3), np.float32))
    add = add_layer(G, "Add", "opset1", inputs=[(relu, 1), (c, 0)],
                    outputs=[{"precision": "FP32", "dims": (2, 3), "names": ["sum"]}], name="add")
    insert_after(G, relu, 1, add, take_name=False)  # relu -> add -> res
    sig = add_layer(G, "Sigmoid", "opset1", inputs=[(relu, 1)],
                    outputs=[{"precision": "FP32", "dims": (2, 3)}])
    replace_layer(G, add, sig)
    assert add not in G and c not in G  # the Const only fed the removed Add
    assert producer(G, res, 0) == (sig, 1)
    assert G.nodes[sig]["name"] == "add"
    assert output_port(G, sig, 1)["names"] == ["act:0", "sum"]


def test_remove_layer_removes_what_only_it_used_but_keeps_parameters():
    G, x, relu, res = _relu_model()
    c = add_const(G, np.ones(3, np.float32))
    mul = add_layer(G, "Multiply", "opset1", inputs=[(x, 0), (c, 0)],
                    outputs=[{"precision": "FP32", "dims": (2, 3)}])
    tail = add_layer(G, "Relu", "opset1", inputs=[(mul, 2)], outputs=[{"precision": "FP32"}])
    removed = remove_layer(G, tail)
    assert set(removed) == {tail, mul, c}
    assert x in G and relu in G


def test_remove_layer_refuses_a_layer_that_is_still_read():
    G, x, relu, res = _relu_model()
    with pytest.raises(RewriteError, match="nothing reads it") as info:
        remove_layer(G, relu)
    assert info.value.layer_name == "act" and info.value.layer_id == relu


def test_editing_session_keeps_names_and_ids_unique():
    from ovgather.edit import editing

    G, x, relu, res = _relu_model()
    with editing(G):
        made = [add_layer(G, "Relu", "opset1", inputs=[(x, 0)], outputs=[{"precision": "FP32"}],
                          name="act") for _ in range(5)]
        assert unique_name(G, "fresh") != unique_name(G, "fresh")  # reserved inside
    names = [G.nodes[n]["name"] for n in G]
    assert len(set(names)) == len(names) and len(set(made)) == 5
    assert [G.nodes[n]["name"] for n in made] == ["act_1", "act_2", "act_3", "act_4", "act_5"]


# ---- the same operations, judged by OpenVINO --------------------------------------------------
def _saved_model(tmp_path):
    """x[2,?] -> Relu 'act' (tensor 'act:0') -> Result, plus Sigmoid 'side' -> Result."""
    import openvino as ov
    import openvino.opset8 as ov8

    x = ov8.parameter(ov.PartialShape([2, -1]), np.float32, name="x")
    act = ov8.relu(x)
    act.set_friendly_name("act")
    act.get_output_tensor(0).set_names({"act:0"})
    side = ov8.sigmoid(x)
    side.set_friendly_name("side")
    side.get_output_tensor(0).set_names({"side:0"})
    ov.save_model(ov.Model([ov8.result(act), ov8.result(side)], [x], "m"), tmp_path / "m.xml")
    return ov


def _layer_named(G, name):
    [node] = [n for n, v in G.nodes(data="name") if v == name]
    return node


def _outputs(ov, path, x):
    compiled = ov.Core().compile_model(ov.Core().read_model(path), "CPU", cpu_config())
    results = compiled([x])
    return {",".join(sorted(o.get_names())): results[o] for o in compiled.outputs}, compiled


def test_inserted_layer_with_const_is_written_and_keeps_output_names(tmp_path):
    from ovgather.edit import reinfer
    from ovgather.ir import read_ir, write_ir

    ov = _saved_model(tmp_path)
    G = read_ir(tmp_path / "m.xml")
    act = _layer_named(G, "act")
    port = G.nodes[act]["outputs"][0]["id"]
    bias = np.array([[1.5, -2.0, 0.25]], dtype=np.float32)
    c = add_const(G, bias, name="bias")
    add = add_layer(G, "Add", "opset1", data={"auto_broadcast": "numpy"},
                    inputs=[(act, port), (c, 0)], outputs=[{"precision": "FP32", "dims": (9, 9)}])
    insert_after(G, act, port, add)
    assert reinfer(G).ok  # the wrong (9, 9) placeholder became the inferred shape
    write_ir(G, tmp_path / "out.xml")
    [ov_add] = [n for n in ov.Core().read_model(tmp_path / "out.xml").get_ordered_ops()
                if n.get_type_name() == "Add"]
    assert str(ov_add.get_output_partial_shape(0)) == "[2,3]"
    assert G.nodes[add]["outputs"][0]["dims"] == (2, 3)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    got, compiled = _outputs(ov, tmp_path / "out.xml", x)
    assert got.keys() == {"act:0", "side:0"}
    assert np.array_equal(got["act:0"], np.maximum(x, 0) + bias)
    producers = {r.input_value(0).get_node().get_friendly_name()
                 for r in ov.Core().read_model(tmp_path / "out.xml").get_results()}
    assert producers == {"act", "side"}


def test_replaced_layer_keeps_names_and_consumers_in_openvino(tmp_path):
    from ovgather.ir import read_ir, write_ir

    ov = _saved_model(tmp_path)
    G = read_ir(tmp_path / "m.xml")
    act = _layer_named(G, "act")
    x_node = _layer_named(G, "x")
    tanh = add_layer(G, "Tanh", "opset1", inputs=[(x_node, 0)],
                     outputs=[{"precision": "FP32", "dims": (2, -1)}])
    replace_layer(G, act, tanh)
    write_ir(G, tmp_path / "out.xml")
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    got, _ = _outputs(ov, tmp_path / "out.xml", x)
    want, _ = _outputs(ov, tmp_path / "m.xml", x)
    assert got.keys() == want.keys() == {"act:0", "side:0"}
    assert np.allclose(got["act:0"], np.tanh(x), atol=1e-6)
    assert np.array_equal(got["side:0"], want["side:0"])


def test_removed_output_branch_is_gone_in_openvino(tmp_path):
    from ovgather.ir import read_ir, write_ir

    ov = _saved_model(tmp_path)
    G = read_ir(tmp_path / "m.xml")
    side = _layer_named(G, "side")
    [result] = [v for _, v in G.out_edges(side)]
    assert set(remove_layer(G, result)) == {result, side}
    write_ir(G, tmp_path / "out.xml")
    model = ov.Core().read_model(tmp_path / "out.xml")
    assert [o.get_names() for o in model.outputs] == [{"act:0"}]
    assert [p.get_friendly_name() for p in model.get_parameters()] == ["x"]


def test_replace_layer_refuses_a_replacement_that_reads_the_old_layer():
    G, x, relu, res = _relu_model()
    neg = add_layer(G, "Negative", "opset1", inputs=[(relu, 1)],
                    outputs=[{"precision": "FP32", "dims": (2, 3)}])
    with pytest.raises(RewriteError, match="cannot read the layer it replaces"):
        replace_layer(G, relu, neg)
    assert relu in G and producer(G, res, 0) == (relu, 1)
