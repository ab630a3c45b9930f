"""The ordinary ops that carry shapes to the gathers, judged by OpenVINO.

Each test builds a small model with the openvino API, saves it as IR, reads it back with
ovgather, runs the walk, and compares every layer's inferred output shapes with what
``openvino.Core().read_model`` gives for the same file, layer by layer by friendly name.
The shapes include intervals and dynamic dims, and shape tensors computed at run time
(ShapeOf → Gather → Concat → Reshape), where OpenVINO propagates value bounds.
"""

from __future__ import annotations

import random

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset8 as o8
import openvino.opset13 as o
import pytest
from op_graphs import (
    C,
    P,
    _params_of,
    assert_like_openvino,
    compare_with_openvino,
)

from ovgather.errors import ShapeInferenceError
from ovgather.infer import check
from ovgather.ir import read_ir
from ovgather.ops.reshape import reshape_shape
from ovgather.shapes import PartialShape


def test_elementwise_broadcasts_intervals_like_openvino(tmp_path):
    pairs = [("[?,1,4]", "[3,2..5,1]"), ("[2..5]", "[1..4]"), ("[0..5]", "[1..8]"),
             ("[1..]", "[2..4]"), ("[?,?]", "[3]"), ("[...]", "[2]"), ("[]", "[2,3]")]
    params, outs = [], []
    for a, b in pairs:
        x, y = P(a), P(b)
        params += [x, y]
        outs += [o.add(x, y), o.multiply(x, y), o.greater(x, y), o.maximum(x, y)]
    outs.append(o.select(P("[2,1]", ov.Type.boolean), params[0], params[1]))
    params.append(outs[-1].input_value(0).get_node())
    statuses = assert_like_openvino(tmp_path, outs, params)
    assert set(statuses.values()) == {"ok"}


def test_unary_ops_keep_the_shape(tmp_path):
    x = P("[2..4,?,3]")
    outs = [
        o.scatter_update(x, C([0]), P("[1,?,3]"), C(0)),
        o.scatter_nd_update(x, C([[0, 1, 2]]), P("[1]")),
        o.scatter_elements_update(x, C([[[0]]]), P("[1,1,1]"), C(0)),
        o.roll(x, C([1]), C([0])),
        o.batch_norm_inference(x, P("[?]"), P("[?]"), P("[?]"), P("[?]"), 1e-5),
        o.relu(x), o.sigmoid(x), o.softmax(x, -1), o.log_softmax(x, 1), o.exp(x),
        o.convert(x, "i32"), o.tanh(x), o.negative(x), o.gelu(x, "erf"), o.swish(x)]
    params = list({n.get_friendly_name(): n for out in outs for n in _params_of(out)}.values())
    assert_like_openvino(tmp_path, outs, params)


@pytest.mark.parametrize("seed", range(6))
def test_reshape_from_shape_subgraphs_matches_openvino(tmp_path, seed):
    rng = random.Random(seed)
    dims = [rng.choice(["2", "?", "2..8", "3", "1..4", "6"]) for _ in range(3)]
    x = P("[" + ",".join(dims) + "]")
    s = o.shape_of(x, rng.choice(["i64", "i32"]))
    et = s.get_output_element_type(0)
    ct = np.int64 if et == ov.Type.i64 else np.int32
    g = [o.gather(s, C([i], ct), C(0)) for i in range(3)]
    outs = [
        o.reshape(x, o.concat([g[0], C([-1], ct)], 0), False),
        o.reshape(x, o.concat([g[2], g[1], g[0]], 0), False),
        o.reshape(x, C([0, -1], ct), True),
        o.reshape(x, o.concat([o.subtract(g[1], C([1], ct)), C([-1], ct)], 0), False)
        if "?" not in dims[1] and dims[1] != "1..4" else o.relu(x),
        o.reshape(x, o.concat([o.multiply(g[0], g[1]), g[2]], 0), False),
        o.reshape(x, o.concat([o.maximum(g[0], C([1], ct)), C([-1], ct)], 0), False),
        o.reshape(x, o.concat([g[0], o.reduce_prod(o.gather(s, C([1, 2], ct), C(0)),
                                                   C([0]), True)], 0), False),
        o.reshape(x, C([-1]), False),
        o.unsqueeze(o.squeeze(o.unsqueeze(x, C([0])), C([0])), C([-1])),
    ]
    report, diffs = compare_with_openvino(tmp_path, outs, [x], f"reshape{seed}")
    assert not diffs, (dims, diffs)


def test_reshape_special_zero_cancels_the_copied_dims(tmp_path):
    x = P("[1..8,3,8]")
    y = P("[?,3,8]")
    outs = [o.reshape(x, C([0, -1]), True), o.reshape(y, C([0, -1, 4]), True),
            o.reshape(P("[2..4,6]"), C([-1, 4]), False)]
    params = [x, y, outs[-1].input_value(0).get_node()]
    assert_like_openvino(tmp_path, outs, params)


def test_reshape_that_loses_elements_is_invalid_and_the_walk_goes_on(tmp_path):
    x = P("[6,4]")
    with pytest.raises(RuntimeError):  # OpenVINO refuses [5, -1]: 5 does not divide 24
        o.reshape(x, C([5, -1]), False)
    good = o.reshape(x, C([8, -1]), False)
    model = ov.Model([o.result(o.relu(good))], [x], "bad_reshape")
    path = tmp_path / "bad_reshape.xml"
    ov.save_model(model, str(path))
    G = read_ir(path)  # then make the target [5, -1] in memory
    const = next(n for n, a in G.nodes(data=True) if a["type"] == "Const")
    G.nodes[const]["value"] = np.array([5, -1], np.int64)
    report = check(G)
    by_type = {lr.type: lr for lr in report.layers}
    assert by_type["Reshape"].status == "invalid"
    assert "number of elements" in by_type["Reshape"].message
    assert by_type["ReLU"].status == "ok"  # the walk went on past the invalid layer
    assert not report.ok


def test_shape_ops_match_openvino(tmp_path):
    x = P("[?,3,2..8,9]")
    outs = [
        o.strided_slice(x, C([0, 1]), C([1, -1]), C([1, 1]), [0, 0], [0, 0]),
        o.strided_slice(x, C([0, 1]), C([1, -1]), C([1, 1]), [1, 0], [0, 1]),
        o.strided_slice(x, C([0, 0, 1]), C([0, 1, -1]), C([1, 1, 1]), [0, 1, 0], [0, 1, 0],
                        [1, 0, 0], [0, 1, 0]),
        o8.slice(x, C([1, -3]), C([100, -1]), C([1, 1]), C([2, 3])),
        o8.slice(x, C([-3]), C([2]), C([1]), C([0])),
        o8.slice(x, C([0]), C([1]), C([1]), C([2])),
        o8.slice(x, C([9]), C([0]), C([-2]), C([3])),
        o.transpose(x, C([3, 0, 2, 1])),
        o.concat([x, x, o.relu(x)], 2),
        o.tile(x, C([3, 2])),
        o.broadcast(P("[?,1]"), o.shape_of(P("[2,?,4]"))),
        o.broadcast(P("[3]"), C([2, 3, 4]), C([1]), "EXPLICIT"),
        o.broadcast(P("[3,1]"), C([2, 1, 4]), None, "BIDIRECTIONAL"),
        o.split(o.relu(x), C(3), 3).output(0).get_node(),
        o.variadic_split(x, C(1), C([1, -1])).output(1).get_node(),
    ]
    params = [x] + [n.input_value(0).get_node() for n in outs[10:13]]
    params += [outs[10].input_value(1).get_node().input_value(0).get_node()]
    assert_like_openvino(tmp_path, outs, params)


def test_value_ops_match_openvino(tmp_path):
    x = P("[3,6]")
    y = P("[2..3,3,2..8]")
    s = o.shape_of(y)
    outs = [
        o.non_zero(x), o.non_zero(P("[?,6]")), o.non_zero(P("[2..3,0..4]")),
        o.range(C(0), C(10), C(3), "i64"),
        o.range(C(0), o.gather(s, C(0), C(0)), C(1), "i64"),
        o.topk(P("[2,10]"), C(3), 1, "max", "value").output(1).get_node(),
        o.matmul(P("[2,?,3,4]"), P("[4,5]"), False, False),
        o.matmul(P("[4]"), P("[3,4,5]"), False, False),
        o.matmul(P("[1,3,4]"), P("[2,5,4]"), False, True),
        o.reduce_sum(y, C([1, -1]), True), o.reduce_mean(y, C([0]), False),
        o.reshape(y, o.concat([o.divide(o.gather(s, C([2]), C(0)), C([2])), C([-1])], 0),
                  False),
        o.reshape(y, o.concat([o.reduce_sum(o.gather(s, C([0, 1]), C(0)), C([0]), True),
                               C([-1])], 0), False),
    ]
    params = [p for p in {n.get_friendly_name(): n for out in outs
                          for n in _params_of(out)}.values()]
    assert_like_openvino(tmp_path, outs, params)




def test_nonzero_gives_openvinos_upper_bound(tmp_path):
    x = P("[3,6]")
    report, diffs = compare_with_openvino(tmp_path, [o.non_zero(x)], [x])
    assert not diffs
    assert next(lr for lr in report.layers if lr.type == "NonZero").inferred == ["[2,..18]"]


def test_wrong_attribute_kind_makes_the_layer_invalid(tmp_path):
    x = P("[2,3]")
    model = ov.Model([o.result(o.concat([x, x], 1))], [x], "attr")
    path = tmp_path / "attr.xml"
    ov.save_model(model, str(path))
    G = read_ir(path)
    node = next(n for n, a in G.nodes(data=True) if a["type"] == "Concat")
    G.nodes[node]["data"]["axis"] = "x"
    lr = next(lr for lr in check(G).layers if lr.type == "Concat")
    assert lr.status == "invalid"
    assert "axis" in lr.message and "'x'" in lr.message


def _random_shape_chain(rng: random.Random):
    """A random ShapeOf → value ops → Reshape/Broadcast/Tile/Range model (OpenVINO-valid)."""
    dims = [rng.choice(["1", "2", "3", "?", "2..6", "1..4", "0..3", "5", "2..", "..7"])
            for _ in range(3)]
    x = P("[" + ",".join(dims) + "]")
    s = o.shape_of(x, rng.choice(["i64", "i32"]))
    ct = np.int64 if s.get_output_element_type(0) == ov.Type.i64 else np.int32
    pool = [o.gather(s, C([i], ct), C(0)) for i in range(3)]
    makers = [
        lambda a, b: o.add(a, b), lambda a, b: o.subtract(a, C([1], ct)),
        lambda a, b: o.multiply(a, b), lambda a, b: o.maximum(a, b),
        lambda a, b: o.minimum(a, C([3], ct)), lambda a, b: o.divide(a, C([2], ct)),
        lambda a, b: o.reduce_prod(o.concat([a, b], 0), C([0]), True),
        lambda a, b: o.reduce_max(o.concat([a, b], 0), C([0]), True),
        lambda a, b: o.convert(a, "i64"),
        lambda a, b: o.unsqueeze(o.squeeze(a, C([0])), C([0])),
        lambda a, b: o8.slice(o.concat([a, b], 0), C([1]), C([2]), C([1]), C([0])),
        lambda a, b: o.strided_slice(o.concat([a, b], 0), C([0]), C([1]), C([1]), [0], [0]),
    ]
    for _ in range(rng.randint(1, 5)):
        a, b = rng.choice(pool), rng.choice(pool)
        if a.get_output_element_type(0) != b.get_output_element_type(0):
            continue
        try:
            pool.append(rng.choice(makers)(a, b))
        except RuntimeError:
            continue
    et = s.get_output_element_type(0)
    pick = [rng.choice(pool) for _ in range(rng.randint(1, 3))]
    pick = [p if p.get_output_element_type(0) == et else o.convert(p, et) for p in pick]
    target = o.concat(pick, 0)
    outs = []
    for make in (
        lambda: o.reshape(x, o.concat([target, C([-1], ct)], 0), False),
        lambda: o.reshape(x, target, False),
        lambda: o.broadcast(P("[1]"), target),
        lambda: o.tile(P("[2]"), target),
        lambda: o.range(C(0, ct), o.squeeze(rng.choice(pool), C([0])), C(1, ct), "i64"),
    ):
        try:
            outs.append(make())
        except RuntimeError:
            pass
    return dims, outs


@pytest.mark.parametrize("seed", range(60))
def test_random_shape_value_chains_match_openvino(tmp_path, seed):
    dims, outs = _random_shape_chain(random.Random(seed))
    if not outs:
        pytest.skip("OpenVINO accepted no consumer for this chain")
    params = list({n.get_friendly_name(): n for out in outs for n in _params_of(out)}.values())
    report, diffs = compare_with_openvino(tmp_path, outs, params, f"chain{seed}")
    assert not diffs, (dims, diffs)


def test_a_layer_with_too_few_inputs_is_invalid_not_a_crash(tmp_path):
    x = P("[2,3]")
    model = ov.Model([o.result(o.reshape(x, C([3, 2]), False))], [x], "few")
    path = tmp_path / "few.xml"
    ov.save_model(model, str(path))
    G = read_ir(path)
    node = next(n for n, a in G.nodes(data=True) if a["type"] == "Reshape")
    const = next(u for u, _ in G.in_edges(node) if G.nodes[u]["type"] == "Const")
    G.remove_node(const)
    G.nodes[node]["inputs"] = G.nodes[node]["inputs"][:1]
    lr = next(lr for lr in check(G).layers if lr.type == "Reshape")
    assert lr.status == "invalid" and "needs more inputs" in lr.message


@pytest.mark.parametrize("seed", range(30))
def test_broadcast_reads_its_target_through_a_concat_of_scalars(tmp_path, seed):
    """Swin's ``expand``: the target is a Concat of one-element inputs, one of them with no
    known value. OpenVINO then takes each Const input's element and leaves the others
    ``?`` (a ShapeOf element, even an exact one, stays ``?``); so must ovgather."""
    rng = random.Random(f"broadcast_parts-{seed}")
    dims = [rng.choice(("1", "9", "?", "1..4", "16")) for _ in range(rng.choice((2, 3, 4)))]
    x = P("[" + ",".join(dims) + "]")
    params, outs = [x], []
    for _ in range(3):
        parts = []
        for d in [rng.choice(("1", "9", "3"))] * rng.randint(0, 1) + dims:
            pick = rng.random()
            if pick < 0.45:
                parts.append(C([rng.choice((1, 1, int(d) if d.isdigit() else 4))]))
            elif pick < 0.7:
                unknown = P("[1]", ov.Type.i64)
                params.append(unknown)
                parts.append(unknown)
            else:
                parts.append(o.gather(o.shape_of(x), C([rng.randrange(len(dims))]), C(0)))
        unknown = P("[1]", ov.Type.i64)  # one element with no value: no bounds at all
        params.append(unknown)
        parts[rng.randrange(len(parts))] = unknown
        mode = rng.choice(("bidirectional", "numpy"))
        try:
            target = o.concat(parts, 0)
            outs.append(ov1.broadcast(x, target, mode=mode) if mode == "numpy" and
                        rng.random() < 0.5 else o.broadcast(x, target, broadcast_spec=mode))
        except RuntimeError:  # OpenVINO rejects this target: not the case under test
            continue
    _, diffs = compare_with_openvino(tmp_path, outs or [x], params, f"bparts{seed}")
    assert diffs == [], dims


@pytest.mark.parametrize(("lo", "hi"), [(-4, 6), (-2, 6), (-1, 6), (-1, 0), (0, 6), (-3, -1),
                                        (-5, -2), (2, 9)])
def test_reshape_target_bounds_below_zero_are_read_as_openvino_reads_them(tmp_path, lo, hi):
    """A target element known within ``lo..hi``: from -1 up it bounds the dim from 0;
    spanning -2 and 0 it says nothing (``?``); wholly negative, the Reshape is invalid."""
    shift = -lo if lo < 0 else 0
    p, x = P(f"[{lo + shift}..{hi + shift}]"), P("[?,12]")
    target = o.concat([o.subtract(o.shape_of(p), C([shift])), C([12])], 0)
    try:
        r = o.reshape(x, target, False)
    except RuntimeError:  # OpenVINO rejects the target: so must ovgather
        with pytest.raises(ShapeInferenceError):
            reshape_shape(PartialShape.parse("[?,12]"), [(lo, hi), (12, 12)], False)
        return
    _, diffs = compare_with_openvino(tmp_path, [r], [x, p], "neg")
    assert diffs == []
