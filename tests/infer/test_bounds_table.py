"""Each op's bounds against OpenVINO's own, op by op: the i64 ShapeOf of a
``[2..5,3,0..4]`` Parameter (as it is, or times ``[-1,1,-2]`` for bounds below zero), one
op (or a short detour through f32 for the rounding ops), then a Broadcast that reads the
result as a shape (clipped to 0..50). The lower and upper bounds OpenVINO kept on the op's
output tensor (``get_lower_value``/``get_upper_value``) must be ovgather's value, and
where OpenVINO has none (Negative, Relu, Sign, the f32 rounding ops, ReduceSum,
ReduceMean, Roll, ConvertLike, GatherND, GatherElements, SquaredDifference, comparisons,
Range, TopK, CumSum: no ``evaluate_lower``/``evaluate_upper`` that gives them here)
ovgather must have none either; the Broadcast's shape must be ``read_model``'s."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as o1
import openvino.opset3 as o3
import openvino.opset8 as o8
import openvino.opset13 as o
import pytest
from op_graphs import C, P, compare_with_openvino

from ovgather.infer import all_tensors
from ovgather.ir import read_ir


def F(x):
    return o.convert(x, "f32")


OPS = {  # by name: the op applied to v, the bounds of ShapeOf([2..5,3,0..4])
    "Squeeze": lambda v: o.squeeze(o.unsqueeze(v, C([0])), C([0])),
    "Unsqueeze": lambda v: o.unsqueeze(v, C([0])),
    "Reshape": lambda v: o.reshape(v, C([3, 1]), False),
    "Transpose": lambda v: o.transpose(o.reshape(v, C([3, 1]), False), C([1, 0])),
    "Convert": lambda v: o.convert(v, "i32"),
    "Gather": lambda v: o8.gather(v, C([2, 0]), C(0)),
    "GatherND": lambda v: o8.gather_nd(v, C([[2], [0]])),
    "GatherElements": lambda v: o.gather_elements(v, C([2, 0, 1]), 0),
    "Concat": lambda v: o.concat([v, C([4])], 0),
    "Split": lambda v: o.split(o.concat([v, C([4])], 0), C(0), 2).output(1),
    "VariadicSplit": lambda v: o.variadic_split(v, C(0), C([1, 2])).output(1),
    "Slice": lambda v: o8.slice(v, C([1]), C([3]), C([1])),
    "StridedSlice": lambda v: o.strided_slice(v, C([1]), C([3]), C([1]), [0], [0]),
    "Select": lambda v: o.select(C([True, False, True], np.bool_), v, C([1, 1, 1])),
    "Broadcast-1": lambda v: o1.broadcast(o8.gather(v, C([0]), C(0)), C([2])),
    "Broadcast-3": lambda v: o3.broadcast(o8.gather(v, C([0]), C(0)), C([2])),
    "Tile": lambda v: o.tile(v, C([2])),
    "Pad": lambda v: o.pad(v, C([1]), C([0]),
    "constant", C(5)),
    "ScatterUpdate": lambda v: o3.scatter_update(v, C([1]), C([9]), C(0)),
    "ScatterNDUpdate": lambda v: o.scatter_nd_update(v, C([[1]]), C([9])),
    "ScatterElementsUpdate": lambda v: o3.scatter_elements_update(v, C([1]), C([9]), C(0)),
    "Clamp": lambda v: o.clamp(v, 1, 3),
    "Abs": lambda v: o.abs(o.subtract(v, C([2]))),
    "Negative": lambda v: o.negative(v),
    "Relu": lambda v: o.relu(o.subtract(v, C([2]))),
    "Sign": lambda v: o.sign(o.subtract(v, C([2]))),
    "Floor(f32)": lambda v: o.convert(o.floor(o.divide(F(v), C([2.0], np.float32))),
    "i64"),
    "Ceiling(f32)": lambda v: o.convert(o.ceiling(o.divide(F(v), C([2.0], np.float32))),
    "i64"),
    "Round(f32)": lambda v: o.convert(o.round(o.divide(F(v), C([2.0], np.float32)),
    "half_to_even"),
    "i64"),
    "Sqrt(f32)": lambda v: o.convert(o.sqrt(F(v)),
    "i64"),
    "Add": lambda v: o.add(v, C([1])),
    "Subtract": lambda v: o.subtract(C([9]), v),
    "Multiply": lambda v: o.multiply(v, C([-2])),
    "Divide": lambda v: o.divide(v, C([2])),
    "Maximum": lambda v: o.maximum(v, C([3])),
    "Minimum": lambda v: o.minimum(v, C([3])),
    "Mod": lambda v: o.mod(v, C([3])),
    "FloorMod": lambda v: o.floor_mod(v, C([3])),
    "Power": lambda v: o.power(v, C([2])),
    "SquaredDifference": lambda v: o.squared_difference(v, C([1])),
    "Equal->Select": lambda v: o.select(o.equal(v, C([3])), C([1]), v),
    "Less->Select": lambda v: o.select(o.less(v, C([3])), C([1]), v),
    "NotEqual->Select": lambda v: o.select(o.not_equal(v, C([3])), C([1]), v),
    "ReduceMin": lambda v: o.reduce_min(v, C([0]), True),
    "ReduceMax": lambda v: o.reduce_max(v, C([0]), True),
    "ReduceProd": lambda v: o.reduce_prod(v, C([0]), True),
    "ReduceSum": lambda v: o.reduce_sum(v, C([0]), True),
    "ReduceMean": lambda v: o.reduce_mean(v, C([0]), True),
    "Roll": lambda v: o.roll(v, C([1]), C([0])),
    "ConvertLike": lambda v: o.convert_like(v, C([1], np.int32)),
    "Range": lambda v: o.range(C(0), o8.gather(v, C(0), C(0)), C(1),
    "i64"),
    "TopK": lambda v: o.topk(v, C(2), 0, "max", "value", "i64").output(0),
    "CumSum": lambda v: o.cumsum(v, C(0)),
}


def _bounds(port):
    t = port.get_tensor()
    lo, hi = t.get_lower_value(), t.get_upper_value()
    try:
        return tuple(map(int, lo.data.ravel())), tuple(map(int, hi.data.ravel()))
    except RuntimeError:  # no bound tensor: OpenVINO evaluated none
        return None


@pytest.mark.parametrize("signs", [(1, 1, 1), (-1, 1, -2)], ids=["sizes", "negated"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_the_bounds_of_each_op_are_openvinos(tmp_path, name, signs):
    x = P("[2..5,3,0..4]")
    out = OPS[name](o.multiply(o3.shape_of(x, "i64"), C(list(signs))))
    node = out.get_node() if hasattr(out, "get_node") else out
    target = o.minimum(o.maximum(o.reshape(o.convert(out, "i64"), C([-1]), False), C([0])),
                       C([50]))
    shaped = o3.broadcast(C(1.0, np.float32), target)
    expected = _bounds(out if hasattr(out, "get_index") else out.output(0))
    _, diffs = compare_with_openvino(tmp_path, [shaped], [x], "op")
    assert diffs == []
    G = read_ir(tmp_path / "op.xml")
    layer = next(n for n in G.nodes if G.nodes[n]["name"] == node.get_friendly_name())
    port = out.get_index() if hasattr(out, "get_index") else 0
    ours = all_tensors(G)[layer][G.nodes[layer]["outputs"][port]["id"]].value
    assert ours == expected
