"""Symbolic rules the corpus exercises little, judged by OpenVINO: each small model is
saved with dynamic inputs, ``infer_symbols`` names them, and at seeded random sizes (the
model reshaped in OpenVINO) every output dim written in the names equals OpenVINO's."""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops
from state_models import state_named_like_its_input

import ovgather as og
from ovgather.infer.symbols import parse_symbols


def _i64(values):
    return ops.constant(np.array(values, dtype=np.int64))


def _einsum():
    a = ops.parameter(ov.PartialShape([-1, -1, 8]), ov.Type.f32, name="a")
    b = ops.parameter(ov.PartialShape([-1, 8, -1]), ov.Type.f32, name="b")
    return [ops.einsum([a, b], "bik,bkj->bij")], [a, b], {"a": "[B,I,8]", "b": "[B,8,J]"}


def _windows():
    x = ops.parameter(ov.PartialShape([-1, 3, -1, -1]), ov.Type.f32, name="x")
    w = ops.constant(np.ones([4, 3, 3, 3], np.float32))
    same = ops.convolution(x, w, [2, 2], [0, 0], [0, 0], [1, 1], auto_pad="same_upper")
    dilated = ops.convolution(x, w, [3, 1], [1, 2], [2, 0], [2, 1])
    pool = ops.max_pool(x, [2, 3], [1, 1], [0, 1], [1, 0], [3, 2], rounding_type="ceil")
    avg = ops.avg_pool(x, [3, 3], [0, 0], [0, 0], [2, 2], True, rounding_type="floor")
    return [same, dilated, pool.output(0), avg], [x], {"x": "[B,3,H,W]"}


def _shape_values():
    """ShapeOf arithmetic into Reshape, Range, Tile, Broadcast, Pad, Slice, StridedSlice."""
    x = ops.parameter(ov.PartialShape([-1, -1, 6]), ov.Type.f32, name="x")
    shape = ops.shape_of(x)
    b, s = (ops.gather(shape, _i64([k]), _i64(0)) for k in (0, 1))
    flat = ops.reshape(x, ops.concat([ops.multiply(b, s), _i64([6])], 0), False)
    count = ops.range(_i64(0), ops.squeeze(ops.add(s, _i64([2])), _i64([0])), _i64(3),
                      "i64")
    tiled = ops.tile(x, ops.concat([_i64([2]), b, _i64([1])], 0))
    spread = ops.broadcast(ops.constant(np.float32(0)), ops.concat([s, b, _i64([5])], 0))
    padded = ops.pad(x, _i64([0, 1, 2]), _i64([1, 3, 0]), "constant")
    cut = ops.slice(x, _i64([1, -2]), _i64([2**62, 2**62]), _i64([1, 1]), _i64([0, 1]))
    strided = ops.strided_slice(x, _i64([0, 1, 0]), _i64([0, -1, 4]), _i64([1, 2, 1]),
                                begin_mask=[1, 0, 0], end_mask=[1, 0, 0],
                                new_axis_mask=[], shrink_axis_mask=[0, 0, 0])
    return ([flat, count, tiled, spread, padded, cut, strided], [x], {"x": "[B,S,6]"})


def _splits_and_picks():
    x = ops.parameter(ov.PartialShape([-1, -1, 12]), ov.Type.f32, name="x")
    k = ops.parameter(ov.PartialShape([-1]), ov.Type.f32, name="k")
    halves = ops.split(ops.concat([x, x], 1), _i64(1), 2)
    parts = ops.variadic_split(x, _i64(2), _i64([5, -1, 3]))
    top = ops.topk(x, ops.squeeze(ops.gather(ops.shape_of(k), _i64([0]), _i64(0)),
                                  _i64([0])), 1, "max", "value")
    scaled = ops.interpolate(ops.reshape(x, _i64([0, 1, 0, 12]), True),
                             ops.constant(np.array([2.0, 0.5], np.float32)), "nearest",
                             "scales", axes=_i64([2, 3]))
    outs = [halves.output(0), parts.output(1), top.output(0), scaled]
    return outs, [x, k], {"x": "[B,S,12]", "k": "[K]"}


def _onnx_expand():
    """The target shape ONNX exporters give an Expand: ``-1`` entries replaced by 1
    through ``Where(Equal(shape, -1), 1, shape)`` (the legacy exporter's ``expand_as``),
    and a ``Less``/``GreaterEqual`` on dims that only their signs decide."""
    x = ops.parameter(ov.PartialShape([-1, -1, 4]), ov.Type.f32, name="x")
    shape = ops.shape_of(x)
    b, s = (ops.gather(shape, _i64([k]), _i64(0)) for k in (0, 1))
    target = ops.concat([b, _i64([-1]), ops.add(s, _i64([1])), _i64([-1])], 0)
    ones = ops.constant(np.ones([4], np.int64))
    fixed = ops.select(ops.equal(target, _i64([-1])), ones, target)
    expanded = ops.broadcast(ops.constant(np.zeros([1, 3, 1, 1], np.float32)), fixed,
                             broadcast_spec="bidirectional")
    # S - 1 >= 0 is not decided (S may be 0), S + 2 > 0 is: pick a length by it
    positive = ops.greater(ops.add(s, _i64([2])), _i64([0]))
    length = ops.select(positive, ops.multiply(b, s), _i64([7]))
    flat = ops.reshape(x, ops.concat([length, _i64([4])], 0), False)
    # BART's positions: spread to max(B,1) x max(S,1), then added to the [B,S,4] tokens
    at_least_one = ops.maximum(ops.concat([b, s], 0), _i64([1]))
    spread = ops.broadcast(ops.constant(np.zeros([1, 1, 4], np.float32)),
                           ops.concat([at_least_one, _i64([4])], 0))
    return [expanded, flat, ops.add(x, spread)], [x], {"x": "[B,S,4]"}


def _onnx_pads():
    """torch's pad list turned into ONNX's by the legacy exporter: Reshape to pairs, a
    Slice that reverses them, Transpose, Reshape back, Split into begins and ends; the
    sequence padded up to a multiple of 4 (``(4 - S % 4) % 4``)."""
    x = ops.parameter(ov.PartialShape([-1, -1, 4]), ov.Type.f32, name="x")
    s = ops.gather(ops.shape_of(x), _i64([1]), _i64(0))
    p = ops.floor_mod(ops.subtract(_i64([4]), ops.floor_mod(s, _i64([4]))), _i64([4]))
    torch_pads = ops.concat([_i64([1, 2, 0]), p, _i64([0, 0])], 0)
    pairs = ops.reshape(torch_pads, _i64([-1, 2]), False)
    flipped = ops.slice(pairs, _i64([-1]), _i64([-(2**63) + 1]), _i64([-1]), _i64([0]))
    onnx_pads = ops.reshape(ops.transpose(flipped, _i64([1, 0])), _i64([-1]), False)
    begins, ends = ops.split(onnx_pads, _i64(0), 2).outputs()
    padded = ops.pad(x, begins, ends, "constant", ops.constant(np.float32(0)))
    return [padded, flipped, onnx_pads], [x], {"x": "[B,S,4]"}


def _one_hot_repeats():
    """Tile repeats made by OneHot of constant indices (the legacy exporter's
    ``repeat_interleave``), v1 and v16 with a negative index normalized."""
    from openvino import opset16
    x = ops.parameter(ov.PartialShape([-1, -1, 4]), ov.Type.f32, name="x")
    twice = ops.one_hot(_i64([1]), _i64(3), _i64(2), _i64(1), -1)
    thrice = opset16.one_hot(_i64([-1]), _i64(3), _i64(3), _i64(1), 0,
                             negative_indices_mode="normalize")
    return ([ops.tile(x, ops.reshape(twice, _i64([-1]), False)),
             ops.tile(x, ops.reshape(thrice, _i64([-1]), False))], [x], {"x": "[B,S,4]"})


MODELS = {"einsum": _einsum, "windows": _windows, "shape_values": _shape_values,
          "splits_and_picks": _splits_and_picks, "onnx_expand": _onnx_expand,
          "onnx_pads": _onnx_pads, "one_hot_repeats": _one_hot_repeats}
SIZES = {"B": range(1, 5), "S": range(1, 20), "I": range(1, 9), "J": range(1, 9),
         "H": range(9, 40), "W": range(9, 40), "K": range(1, 13)}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_named_dims_equal_openvinos_at_random_sizes(name, tmp_path):
    outputs, params, symbols = MODELS[name]()
    path = tmp_path / f"{name}.xml"
    outputs = [o if isinstance(o, ov.Output) else o.output(0) for o in outputs]
    ov.save_model(ov.Model(outputs, params, name), str(path), compress_to_fp16=False)
    G = og.read_ir(path)
    found = og.infer_symbols(G, symbols)
    given = {n for text in symbols.values() for n in parse_symbols(text) if isinstance(n, str)}
    ports = [(G.nodes[n]["name"], i, s.dims) for n, syms in found.items()
             for i, s in enumerate(syms) if s.dims is not None]
    rng = random.Random(name)
    checked = 0
    for _ in range(4):
        sizes = {n: rng.choice(SIZES[n]) for n in sorted(given)}
        model = ov.Core().read_model(path)
        model.reshape({p.get_friendly_name(): ov.PartialShape(
            [sizes[d] if isinstance(d, str) else d
             for d in parse_symbols(symbols[p.get_friendly_name()])])
            for p in model.get_parameters()})
        layers = {op.get_friendly_name(): op for op in model.get_ops()}
        for layer, i, dims in ports:
            if not any(d.names() for d in dims):
                continue  # a constant OpenVINO may fold away on reshape
            shape = layers[layer].output(i).get_partial_shape()
            for k, d in enumerate(dims):
                if d.names() and d.names() <= given:
                    checked += 1
                    assert shape[k].is_static and d.evaluate(sizes) == shape[k].get_length(), \
                        (layer, i, k, str(d), sizes, str(shape))
    named = {str(d) for _, _, dims in ports for d in dims if d.names() and d.names() <= given}
    assert checked and len(named) >= 3, named
    shapes = {layer: [str(d) for d in dims] for layer, _, dims in ports}
    if name == "one_hot_repeats":
        got = [shapes[o.get_node().get_friendly_name()] for o in outputs]
        assert got == [["B", "2*S", "4"], ["B", "S", "12"]], shapes
    if name == "onnx_pads":  # the pads' elements followed through the reversal
        padded = shapes[str(outputs[0].get_node().get_friendly_name())]
        assert padded[0] == "B" and padded[2] == "7" and padded[1] != "S", padded
    if name == "onnx_expand":  # every dim the comparisons decide is written in B and S
        wanted = [["B", "3", "S+1", "1"], ["B*S", "4"], ["B", "S", "4"]]
        got = [shapes[o.get_node().get_friendly_name()] for o in outputs]
        assert got == wanted, shapes


def _state_named_like_the_input(tmp_path):
    """A Parameter ``x`` (layer id "0") and a ReadValue whose variable_id is "0": the
    state's 5 initial rows concatenated after x's S rows."""
    x = ops.parameter(ov.PartialShape([-1, 8]), ov.Type.f32, name="x")
    state = ops.read_value(ops.constant(np.zeros([5, 8], np.float32)), "0", ov.Type.f32,
                           ov.PartialShape([-1, 8]))
    both = ops.concat([x, state], 0)
    path = tmp_path / "state.xml"
    ov.save_model(ov.Model([both.output(0)], [ops.assign(state, "0")], [x], "state"),
                  str(path), compress_to_fp16=False)
    G = og.read_ir(path)
    assert G.nodes["0"]["name"] == "x"  # the clash the case is about
    return path, G, both.get_friendly_name()


def _rows_at(path, s):
    """The Concat's rows when OpenVINO runs the model with x of S rows."""
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    out = compiled.create_infer_request().infer({"x": np.ones([s, 8], np.float32)})
    return next(iter(out.values())).shape[0]


@pytest.mark.parametrize("symbols", [{"x": "[S,8]"}, {"x": "[S,8]", "0": "[P,8]"}])
def test_a_variable_id_never_names_the_parameter_of_that_layer_id(symbols, tmp_path):
    path, G, concat = _state_named_like_the_input(tmp_path)
    found = og.infer_symbols(G, symbols)
    rows = next(s[0].dims[0] for n, s in found.items() if G.nodes[n]["name"] == concat)
    given = {n for text in symbols.values() for n in parse_symbols(text) if isinstance(n, str)}
    sizes = {"S": 3, "P": 5}  # P: the state's rows on the first run, its initial value's
    if rows.names() <= given:  # written in the given names: OpenVINO's rows at S=3
        assert rows.evaluate(sizes) == _rows_at(path, 3), str(rows)
    # the state's rows are P when named, a fresh name otherwise, never S
    assert rows.names() - {"S"} == ({"P"} if "0" in symbols else rows.names() - given - {"S"})
    assert len(rows.names()) == 2, str(rows)


def test_a_key_that_is_a_parameter_name_and_a_variable_id_names_the_parameter(tmp_path):
    """Whichever layer the file lists first: here the ReadValue, variable_id "x"."""
    import networkx as nx
    path = state_named_like_its_input(tmp_path)
    G = og.read_ir(path)
    H = nx.MultiDiGraph(**G.graph)
    H.add_nodes_from(sorted(G.nodes(data=True), key=lambda n: n[1]["type"] != "ReadValue"))
    H.add_edges_from(G.edges(keys=True, data=True))
    found = og.infer_symbols(H, {"x": "[S,8]"})
    rows = {G.nodes[n]["type"]: str(s[0].dims[0]) for n, s in found.items() if s}
    assert rows["Parameter"] == "S" and rows["ReadValue"] != "S"
    assert rows["Concat"] == f"S+{rows['ReadValue']}"
    assert rows["Concat"] != "2*S"


def test_a_dim_added_to_a_multiple_of_it_is_the_multiple(tmp_path):
    """An ONNX export that fixed the batch at 1 adds ``[B,S,4]`` to its own reshape to
    ``[1,B*S,4]`` (segformer): OpenVINO runs it only where ``S`` and ``B*S`` broadcast,
    and gives ``B*S`` there, as for ``[B*S]`` plus ``[S]`` (``S`` of 1 too)."""
    x = ops.parameter(ov.PartialShape([-1, -1, 4]), ov.Type.f32, name="x")
    merged = ops.add(x, ops.reshape(x, _i64([1, -1, 4]), False))
    rows = ops.reduce_sum(x, _i64([2]), False)
    flat = ops.add(ops.reshape(rows, _i64([-1]), False), ops.gather(rows, _i64(0), _i64(0)))
    path = tmp_path / "multiple.xml"
    ov.save_model(ov.Model([merged, flat], [x], "multiple"), str(path), compress_to_fp16=False)
    G = og.read_ir(path)
    found = og.infer_symbols(G, {"x": "[B,S,4]"})
    names = {G.nodes[n]["name"]: [str(d) for d in s[0].dims] for n, s in found.items() if s}
    assert names[merged.get_friendly_name()] == ["B", "B*S", "4"]
    assert names[flat.get_friendly_name()] == ["B*S"]
    ran = 0
    for b, s in [(1, 5), (4, 1), (1, 1), (2, 3), (3, 2)]:
        model = ov.Core().read_model(str(path))
        try:
            model.reshape({"x": [b, s, 4]})
        except RuntimeError:  # S and B*S do not broadcast
            assert b > 1 and s > 1
            continue
        ran += 1
        assert [list(o.get_partial_shape().to_shape()) for o in model.outputs] == \
            [[b, b * s, 4], [b * s]]
    assert ran == 3
