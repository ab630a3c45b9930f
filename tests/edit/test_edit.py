"""The everyday graph surgery (rename, bypass, replace_uses, set_const, cleanup) on real IRs,
proved on the OpenVINO CPU runtime, and every misuse an OvgatherError."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import ovgather as og
from ovgather.edit import (
    add_const,
    add_layer,
    bypass,
    cleanup,
    connect,
    find_layers,
    insert_after,
    reinfer,
    remove_layer,
    rename_input,
    rename_output,
    replace_layer,
    replace_uses,
    set_const,
)
from ovgather.errors import OvgatherError, RewriteError
from ovgather.graph import producer
from ovgather.runtime.core import cpu_config

ROOT = Path(__file__).resolve().parents[2]
MODELS = ["ir_corpus/bert/pytorch_dynamic.xml", "ir_corpus/vit/pytorch_static.xml",
          "ir_corpus/gpt2/onnx_static.xml"]


def _feed(model):
    """One seeded input per model input: token ids, an all-ones mask, zero type ids, or
    normal floats."""
    rng = np.random.default_rng(0)
    feed = {}
    for port in model.inputs:
        shape = [d or (1 if i == 0 else 12)  # a dynamic dim's least size is 0
                 for i, d in enumerate(port.get_partial_shape().get_min_shape())]
        name = port.get_any_name()
        if port.get_element_type().is_real():
            feed[name] = rng.standard_normal(shape).astype(np.float32)
        elif "mask" in name:
            feed[name] = np.ones(shape, np.int64)
        elif "ids" in name and "type" not in name:
            feed[name] = rng.integers(0, 50, shape).astype(np.int64)
        else:
            feed[name] = np.zeros(shape, np.int64)
    return feed


def _run(path, feed=None):
    """``({output names: array}, model inputs' names, the feed)`` of the IR at ``path`` on
    the CPU; ``feed`` is given by position (input names may have changed)."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(str(path))
    if feed is None:
        feed = list(_feed(model).values())
    compiled = core.compile_model(model, "CPU", cpu_config())
    results = compiled(feed)
    outs = {",".join(sorted(o.get_names())): results[o] for o in compiled.outputs}
    return outs, [p.get_any_name() for p in model.inputs], feed


def _first_output(G):
    """The Result of the model's first output and ``(producer, port)`` feeding it."""
    result = sorted(find_layers(G, type="Result"), key=int)[0]
    return result, producer(G, result, G.nodes[result]["inputs"][0]["id"])


@pytest.fixture(params=MODELS, ids=lambda p: p.split("/", 1)[1])
def model(request, tmp_path):
    path = ROOT / request.param
    want, inputs, feed = _run(path)
    return path, want, inputs, feed


def _same(got, want):
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-5)


def test_rename_input_is_what_openvino_shows_and_outputs_stay(model, tmp_path):
    import openvino as ov

    path, want, inputs, feed = model
    G = og.read_ir(path)
    node = rename_input(G, inputs[0], "renamed_input")
    og.write_ir(G, tmp_path / "out.xml")
    read = ov.Core().read_model(str(tmp_path / "out.xml"))
    assert read.inputs[0].get_any_name() == "renamed_input"
    assert read.inputs[0].get_names() == {"renamed_input"}
    assert read.get_parameters()[0].get_friendly_name() == "renamed_input"
    assert G.nodes[node]["name"] == "renamed_input"
    got, names, _ = _run(tmp_path / "out.xml", feed)
    assert names == ["renamed_input", *inputs[1:]]
    _same(got, want)
    assert og.check(G, shapes={"renamed_input": ",".join(
        str(d) for d in feed[0].shape)}).summary["invalid"] == 0


def _two_named_input(tmp_path):
    """A model whose input answers to the tensor names 'ids' and 'input_ids' (friendly
    name 'ids'), as OpenVINO saves it."""
    import openvino as ov

    x = ov.opset8.parameter([2, 3], np.float32, name="ids")
    x.output(0).set_names({"ids", "input_ids"})
    path = tmp_path / "two.xml"
    ov.save_model(ov.Model([ov.opset8.relu(x)], [x], "two"), str(path))
    assert ov.Core().read_model(str(path)).inputs[0].get_names() == {"ids", "input_ids"}
    return path


@pytest.mark.parametrize("old", ["ids", "input_ids"])
def test_rename_input_drops_every_old_tensor_name(old, tmp_path):
    import openvino as ov

    G = og.read_ir(_two_named_input(tmp_path))
    rename_input(G, old, "tokens")
    og.write_ir(G, tmp_path / "out.xml")
    read = ov.Core().read_model(str(tmp_path / "out.xml"))
    assert read.inputs[0].get_names() == {"tokens"}
    assert read.get_parameters()[0].get_friendly_name() == "tokens"
    with pytest.raises(RuntimeError):  # OpenVINO no longer knows the old name
        read.input(old)


def test_rename_input_keeps_the_old_tensor_names_when_asked(tmp_path):
    import openvino as ov

    G = og.read_ir(_two_named_input(tmp_path))
    rename_input(G, "input_ids", "tokens", keep_old_names=True)
    og.write_ir(G, tmp_path / "out.xml")
    read = ov.Core().read_model(str(tmp_path / "out.xml"))
    assert read.inputs[0].get_names() == {"tokens", "ids", "input_ids"}
    assert read.get_parameters()[0].get_friendly_name() == "tokens"
    assert read.input("input_ids").get_names() == read.input("tokens").get_names()


def test_rename_output_is_what_openvino_shows(model, tmp_path):
    path, want, _, feed = model
    G = og.read_ir(path)
    old = sorted(want)[0]
    result = rename_output(G, old, "renamed_output")
    assert G.nodes[result]["name"] == "renamed_output"
    og.write_ir(G, tmp_path / "out.xml")
    got, _, _ = _run(tmp_path / "out.xml", feed)
    assert set(got) == set(want) - {old} | {"renamed_output"}
    np.testing.assert_array_equal(got["renamed_output"], want[old])


def test_bypass_removes_an_inserted_pass_through_and_outputs_keep_names(model, tmp_path):
    import openvino as ov

    path, want, _, feed = model
    G = og.read_ir(path)
    before = len(G)
    _, (src, port) = _first_output(G)
    convert = add_layer(G, "Convert", "opset1", data={"destination_type": "f32"},
                        inputs=[(src, port)], outputs=[{"precision": "FP32"}])
    insert_after(G, src, port, convert, take_name=False)
    assert reinfer(G).summary["mismatch"] == 0
    og.write_ir(G, tmp_path / "with.xml")
    assert "Convert" in {op.get_type_name() for op in
                         ov.Core().read_model(str(tmp_path / "with.xml")).get_ordered_ops()}
    _same(_run(tmp_path / "with.xml", feed)[0], want)
    assert bypass(G, convert) == [convert]
    assert len(G) == before
    og.write_ir(G, tmp_path / "out.xml")
    _same(_run(tmp_path / "out.xml", feed)[0], want)


def test_bypass_a_reshape_to_the_same_shape_drops_its_shape_const(tmp_path):
    path = ROOT / MODELS[1]
    want, _, feed = _run(path)
    G = og.read_ir(path)
    before = set(G)
    _, (src, port) = _first_output(G)
    dims = G.nodes[src]["outputs"][[p["id"] for p in G.nodes[src]["outputs"]].index(port)]["dims"]
    target = add_const(G, np.array(dims, np.int64))
    reshape = add_layer(G, "Reshape", "opset1", data={"special_zero": "false"},
                        inputs=[(src, port), (target, 0)], outputs=[{"precision": "FP32"}])
    insert_after(G, src, port, reshape)
    assert reinfer(G).ok
    assert sorted(bypass(G, reshape), key=int) == sorted([reshape, target], key=int)
    assert set(G) == before
    og.write_ir(G, tmp_path / "out.xml")
    _same(_run(tmp_path / "out.xml", feed)[0], want)


def test_multiply_by_two_then_set_const_to_three(model, tmp_path):
    path, want, _, feed = model
    G = og.read_ir(path)
    result, (src, port) = _first_output(G)
    name = ",".join(sorted(G.nodes[src]["outputs"][
        [p["id"] for p in G.nodes[src]["outputs"]].index(port)]["names"]))
    two = add_const(G, np.array(2, np.float32), name="two")
    mul = add_layer(G, "Multiply", "opset1", data={"auto_broadcast": "numpy"},
                    inputs=[(src, port), (two, 0)], outputs=[{"precision": "FP32"}])
    moved = replace_uses(G, (src, port), (mul, 2), take_names=True)
    assert (result, 0) in moved and producer(G, result, 0) == (mul, 2)
    assert reinfer(G).summary["mismatch"] == 0
    og.write_ir(G, tmp_path / "double.xml")
    got, _, _ = _run(tmp_path / "double.xml", feed)
    assert got.keys() == want.keys()
    np.testing.assert_allclose(got[name], 2 * want[name], rtol=1e-5, atol=1e-5)
    set_const(G, two, np.array(3, np.float32))
    np.testing.assert_array_equal(og.const_value(G, two), np.float32(3))
    assert G.nodes[two]["data"]["element_type"] == "f32" and G.nodes[two]["data"]["shape"] == ""
    og.write_ir(G, tmp_path / "triple.xml")
    got, _, _ = _run(tmp_path / "triple.xml", feed)
    np.testing.assert_allclose(got[name], 3 * want[name], rtol=1e-5, atol=1e-5)


def test_cleanup_removes_a_dangling_const_and_nothing_else(model, tmp_path):
    path, want, _, feed = model
    G = og.read_ir(path)
    before = set(G)
    dangling = add_const(G, np.zeros((2, 2), np.float32), name="dangling")
    assert cleanup(G) == [dangling]
    assert set(G) == before
    assert cleanup(G) == []
    og.write_ir(G, tmp_path / "out.xml")
    _same(_run(tmp_path / "out.xml", feed)[0], want)


def test_a_plain_add_edge_is_refused_by_reinfer_check_and_write_ir(tmp_path):
    G = og.read_ir(ROOT / MODELS[1])
    params = find_layers(G, type="Parameter")
    consts = find_layers(G, type="Const")
    G.add_edge(params[0], consts[0])
    for call in (lambda: reinfer(G), lambda: og.check(G), lambda: og.infer_shapes(G),
                 lambda: og.write_ir(G, tmp_path / "out.xml")):
        with pytest.raises(OvgatherError, match=f"edge {params[0]} -> {consts[0]}"):
            call()
    assert not (tmp_path / "out.xml").exists()


# ---- every misuse is a RewriteError naming what is wrong --------------------------------
def _small():
    """x -> Relu('act') -> Result('out'), with a Const 'w' read by nothing."""
    G = nx.MultiDiGraph(name="m", ir_version=11)
    x = add_layer(G, "Parameter", "opset1", data={"shape": "2,3", "element_type": "f32"},
                  outputs=[{"precision": "FP32", "dims": (2, 3), "names": ["x"]}], name="x")
    relu = add_layer(G, "Relu", "opset1", inputs=[(x, 0)],
                     outputs=[{"precision": "FP32", "dims": (2, 3), "names": ["act:0"]}],
                     name="act")
    res = add_layer(G, "Result", "opset1", inputs=[(relu, 1)], name="out")
    w = add_const(G, np.ones(3, np.float32), name="w")
    return G, x, relu, res, w


MISUSES = {
    "add_layer dims not a list": (lambda G, x, r, o, w: add_layer(
        G, "Relu", "opset1", inputs=[(x, 0)], outputs=[{"precision": "FP32", "dims": 3}]),
        "dims of output 1"),
    "add_layer output not a dict": (lambda G, x, r, o, w: add_layer(
        G, "Relu", "opset1", inputs=[(x, 0)], outputs=["FP32"]), "must be a dict"),
    "add_layer input not a pair": (lambda G, x, r, o, w: add_layer(
        G, "Relu", "opset1", inputs=[x]), "pair"),
    "add_layer missing port": (lambda G, x, r, o, w: add_layer(
        G, "Relu", "opset1", inputs=[(x, 5)]), "no output port 5"),
    "add_layer data not a dict": (lambda G, x, r, o, w: add_layer(
        G, "Relu", "opset1", data=["a"], inputs=[(x, 0)]), "data of a new Relu"),
    "add_layer inputs not a list": (lambda G, x, r, o, w: add_layer(
        G, "Relu", "opset1", inputs=5), "inputs of a new Relu"),
    "add_layer name not text": (lambda G, x, r, o, w: add_layer(
        G, "Relu", "opset1", inputs=[(x, 0)], name=3), "name of a new Relu"),
    "add_const object": (lambda G, x, r, o, w: add_const(G, [object()]), "dtype object"),
    "connect unknown layer": (lambda G, x, r, o, w: connect(G, ("99", 0), (r, 0)),
                              "'99'"),
    "connect unknown input": (lambda G, x, r, o, w: connect(G, (x, 0), (r, 7)),
                              "no input port 7"),
    "insert_after unknown": (lambda G, x, r, o, w: insert_after(G, "99", 0, r), "'99'"),
    "insert_after no port": (lambda G, x, r, o, w: insert_after(G, x, 3, r),
                             "no output port 3"),
    "replace_layer unknown": (lambda G, x, r, o, w: replace_layer(G, r, "99"), "'99'"),
    "replace_layer itself": (lambda G, x, r, o, w: replace_layer(G, r, r), "itself"),
    "remove_layer unhashable": (lambda G, x, r, o, w: remove_layer(G, ["1"]), r"\['1'\]"),
    "bypass a Parameter": (lambda G, x, r, o, w: bypass(G, x), "input 0"),
    "bypass bad input": (lambda G, x, r, o, w: bypass(G, r, 1), "input 1"),
    "replace_uses not a pair": (lambda G, x, r, o, w: replace_uses(G, r, (w, 0)), "pair"),
    "replace_uses no port": (lambda G, x, r, o, w: replace_uses(G, (r, 0), (w, 0)),
                             "no output port 0"),
    "replace_uses itself": (lambda G, x, r, o, w: replace_uses(G, (r, 1), (r, 1)), "itself"),
    "rename_input unknown": (lambda G, x, r, o, w: rename_input(G, "nope", "y"), "'nope'"),
    "rename_input taken": (lambda G, x, r, o, w: rename_input(G, "x", "act"), "'act'"),
    "rename_input not text": (lambda G, x, r, o, w: rename_input(G, "x", 5), "string"),
    "rename_output unknown": (lambda G, x, r, o, w: rename_output(G, "nope", "y"), "'nope'"),
    "rename_output taken": (lambda G, x, r, o, w: rename_output(G, "act:0", "x"), "'x'"),
    "set_const not a Const": (lambda G, x, r, o, w: set_const(G, r, np.ones(3)), "Relu"),
    "set_const unknown": (lambda G, x, r, o, w: set_const(G, "99", np.ones(3)), "'99'"),
    "set_const object": (lambda G, x, r, o, w: set_const(G, w, {"a": 1}), "dtype object"),
}


@pytest.mark.parametrize("case", MISUSES)
def test_every_misuse_is_a_rewrite_error(case):
    call, words = MISUSES[case]
    G, *layers = _small()
    with pytest.raises(RewriteError, match=words):
        call(G, *layers)


def test_replace_uses_refuses_a_loop_and_leaves_the_graph():
    G, x, relu, res, w = _small()
    neg = add_layer(G, "Negative", "opset1", inputs=[(relu, 1)],
                    outputs=[{"precision": "FP32", "dims": (2, 3)}])
    edges = sorted(G.edges(keys=True))
    with pytest.raises(RewriteError, match="would loop"):
        replace_uses(G, (x, 0), (neg, 1))
    assert sorted(G.edges(keys=True)) == edges
    assert replace_uses(G, (relu, 1), (neg, 1)) == [(res, 0)]  # neg keeps reading relu
    assert producer(G, neg, 0) == (relu, 1) and producer(G, res, 0) == (neg, 1)


def test_add_layer_without_dims_declares_none_and_reinfer_fills_them():
    G, x, relu, res, w = _small()
    neg = add_layer(G, "Negative", "opset1", inputs=[(relu, 1)],
                    outputs=[{"precision": "FP32", "dims": None}])
    assert G.nodes[neg]["outputs"][0]["dims"] == ()
    assert reinfer(G).ok
    assert G.nodes[neg]["outputs"][0]["dims"] == (2, 3)


def test_set_const_updates_the_readers_input_ports():
    G, x, relu, res, w = _small()
    add = add_layer(G, "Add", "opset1", inputs=[(relu, 1), (w, 0)],
                    outputs=[{"precision": "FP32", "dims": (2, 3)}])
    set_const(G, w, np.ones((2, 1), np.int32))
    assert G.nodes[w]["outputs"][0] == {**G.nodes[w]["outputs"][0], "precision": "I32",
                                        "dims": (2, 1)}
    assert G.nodes[add]["inputs"][1]["dims"] == (2, 1)
    assert G.nodes[w]["data"] == {"element_type": "i32", "shape": "2, 1"}


def test_cleanup_keeps_parameters_unless_asked():
    G, x, relu, res, w = _small()
    lone = add_layer(G, "Parameter", "opset1", data={"shape": "1", "element_type": "f32"},
                     outputs=[{"precision": "FP32", "dims": (1,)}], name="lone")
    assert cleanup(G) == [w]
    assert cleanup(G, keep_parameters=False) == [lone]
    assert set(G) == {x, relu, res}
