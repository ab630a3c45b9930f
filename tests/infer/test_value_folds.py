"""Values OpenVINO folds that ovgather left unknown, each judged by OpenVINO: Range of any
type (Range-4 casts start and step to its output type, and truncates all three for an
integer output before counting), TopK with a sort, CumSum, and an exact Mod as a shape
reads it. Each value feeds a Broadcast target, so a value ovgather does not know, or
knows otherwise, shows as a shape unlike ``read_model``'s; the values themselves are
compared with the op's ``evaluate``."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset3 as o3
import openvino.opset13 as o
import pytest
from op_graphs import C, compare_with_openvino
from value_graphs import evaluated, ovgather_array

from ovgather.infer import all_tensors
from ovgather.ir import read_ir


def _as_target(node):
    """``node``'s value (clipped to 0..3, as i64) as a Broadcast target."""
    v = o.convert(node, ov.Type.i64) if node.get_output_element_type(0) != ov.Type.i64 \
        else node
    v = o.minimum(o.maximum(v, C([0])), C([3]))
    return o3.broadcast(C(1.0, np.float32), o.reshape(v, C([-1]), False))


def _same_as_openvino(tmp_path, node, name):
    """The shape read from ``node``'s value and the value itself agree with OpenVINO."""
    out = _as_target(node)
    _, diffs = compare_with_openvino(tmp_path, [out, node], [], name)
    assert diffs == []
    model = ov.Model([o.result(node)], [], name)
    ref = evaluated(model)[(node.get_friendly_name(), node.output(0).get_index())]
    G = read_ir(tmp_path / f"{name}.xml")
    tensors = all_tensors(G)
    layer = next(n for n in G.nodes if G.nodes[n]["name"] == node.get_friendly_name())
    port = G.nodes[layer]["outputs"][0]["id"]
    et = node.get_output_element_type(0).get_type_name()
    ours = ovgather_array(tensors[layer][port].value, et)
    assert ours is not None
    assert np.array_equal(np.asarray(ref.data).ravel().view(np.uint8),
                          np.asarray(ours).ravel().view(np.uint8))


@pytest.mark.parametrize("t, out", [("i8", "i8"), ("i16", "u8"), ("f32", "f32"),
                                    ("f32", "bf16"), ("f16", "f16"), ("f64", "i32"),
                                    ("u16", "f64")])
def test_a_range_of_any_type_folds(tmp_path, t, out):
    dt = {"i8": np.int8, "i16": np.int16, "u16": np.uint16, "f16": np.float16,
          "f32": np.float32, "f64": np.float64}[t]
    fractional = t.startswith("f")
    start, step = (0.5, 0.75) if fractional else (1, 1)
    r = o.range(C(start, dt), C(3.9 if fractional else 4, dt), C(step, dt), out)
    _same_as_openvino(tmp_path, r, f"range_{t}_{out}")


def test_a_range_0_of_i16_folds(tmp_path):
    _same_as_openvino(tmp_path, o1.range(C(3, np.int16), C(-1, np.int16), C(-1, np.int16)),
                      "range0")


def test_an_integer_range_truncates_a_fractional_step_to_nothing(tmp_path):
    """Range-4 to i32 of ``0.5 .. 5.7 by 0.5``: OpenVINO truncates the step to 0 and
    counts no element; ovgather counted 11."""
    r = o.range(C(0.5, np.float32), C(5.7, np.float32), C(0.5, np.float32), "i32")
    _, diffs = compare_with_openvino(tmp_path, [r], [], "range_trunc")
    assert diffs == []


@pytest.mark.parametrize("sort", ["value", "index"])
@pytest.mark.parametrize("mode", ["max", "min"])
def test_a_sorted_topk_folds(tmp_path, sort, mode):
    data = C([[3, 1, 3, 0], [2, 2, 5, 1]], np.int32)
    top = o.topk(data, C(3), 1, mode, sort, ov.Type.i32, False)
    for port in (0, 1):
        node = o.convert(top.output(port), ov.Type.i64)  # one output per check
        _same_as_openvino(tmp_path, node, f"topk_{sort}_{mode}_{port}")


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_cumsum_folds_in_f32(tmp_path, exclusive, reverse):
    data = C([[0.1, 0.2, 3.0], [16777216.0, 1.0, 1.0]], np.float32)
    _same_as_openvino(tmp_path, o.cumsum(data, C(1), exclusive, reverse),
                      f"cumsum_{exclusive}_{reverse}")


def test_an_exact_mod_at_the_types_maximum_reads_as_zero(tmp_path):
    """``[5,127,7,-128] % [3,3,0,3]`` in i8 as a Broadcast target: OpenVINO evaluates
    only the lower bound of exact inputs, and the maximum or a 0 divisor give 0 there
    (``[2,0,0,0]``), while ovgather took ``127 % 3 = 1`` (``[2,1,..]``)."""
    m = o.mod(C([5, 127, 7, -128], np.int8), C([3, 3, 0, 3], np.int8))
    _, diffs = compare_with_openvino(tmp_path, [_as_target(m)], [], "mod_max")
    assert diffs == []
