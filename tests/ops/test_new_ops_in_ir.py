"""The new op families read from an IR that OpenVINO wrote: attribute texts as the IR
writer spells them, and every layer's inferred shape equal to what read_model gives."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset6 as ov6
import openvino.opset8 as ov8
import openvino.opset11 as ov11
import openvino.opset13 as ov13
import openvino.opset14 as ov14
import openvino.opset16 as ov16
from op_graphs import C, P, _params_of
from openvino.op.util import Variable, VariableInfo


def _conv_and_pool_outputs():
    x = P("[1,3,16..32,?]")
    w = ov1.constant(np.ones((8, 3, 3, 3), np.float32))
    conv = ov1.convolution(x, w, [2, 2], [1, 1], [1, 1], [1, 1])
    same = ov1.convolution(x, w, [2, 2], [0, 0], [0, 0], [1, 1], "same_upper")
    group = ov1.group_convolution(conv, ov1.constant(np.ones((8, 1, 1, 3, 3), np.float32)),
                                  [1, 1], [0, 0], [0, 0], [1, 1])
    back = ov1.convolution_backprop_data(conv, ov1.constant(np.ones((8, 4, 2, 2), np.float32)),
                                         [2, 2], None, [0, 0], [0, 0], [1, 1], "explicit",
                                         [1, 0])
    pools = [ov8.max_pool(conv, [2, 2], [1, 1], [0, 0], [1, 1], [3, 3], "ceil"),
             ov14.max_pool(conv, [2, 2], [1, 1], [1, 1], [0, 0], [3, 3], "ceil_torch"),
             ov1.avg_pool(conv, [2, 2], [1, 1], [1, 1], [3, 3], True, "floor", "explicit"),
             ov16.avg_pool(conv, [2, 2], [0, 0], [0, 0], [2, 2], False, "floor", "same_lower",
                           [1, 1]),
             ov1.max_pool(conv, [1, 1], [0, 0], [0, 0], [2, 2], "floor", "valid")]
    return [conv, same, group, back, *pools]


def _resize_pad_outputs():
    x = P("[1,3,8..16,?]")
    s = ov1.shape_of(x)
    sizes = ov1.multiply(ov8.gather(s, C([2, 3]), C(0)), C([2, 2]))
    return [
        ov11.interpolate(x, sizes, "nearest", "sizes", axes=C([2, 3])),
        ov11.interpolate(x, ov1.constant(np.array([2.0, 2.0], np.float32)), "linear", "scales",
                         [0, 0, 1, 1], [0, 0, 1, 1], axes=C([2, 3])),
        ov13.pad(x, C([0, 0, 1, 1]), C([0, 0, 2, -1]), "constant"),
        ov13.pad(x, ov1.concat([C([0, 0]), ov8.gather(s, C([0, 0]), C(0))], 0),
                 C([0, 0, 1, 1]), "reflect"),
    ]


def _attention_and_state_outputs():
    q, k = P("[?,8,?,64]"), P("[?,8,?,64]")
    info = VariableInfo()
    info.variable_id, info.data_type = "cache", ov.Type.f32
    info.data_shape = ov.PartialShape("[?,8,?,64]")
    variable = Variable(info)
    past = ov6.read_value(ov1.broadcast(C(0.0, np.float32), C([1, 8, 0, 64])), variable)
    keys = ov1.concat([past, k], 2)
    sdpa = ov13.scaled_dot_product_attention(q, keys, keys, causal=True)
    assign = ov6.assign(keys, variable)
    return [sdpa, ov13.bitwise_not(P("[2,?]", ov.Type.i32)), ov8.softmax(sdpa, -1)], assign


def test_new_ops_read_from_an_ir_infer_what_read_model_gives(tmp_path):
    outs = _conv_and_pool_outputs() + _resize_pad_outputs()
    scales = outs[-3]
    more, assign = _attention_and_state_outputs()
    outs += more
    params = list({n.get_friendly_name(): n for out in outs + [assign]
                   for n in _params_of(out)}.values())
    model = ov.Model([ov1.result(o.output(0)) for o in outs], [assign], params, "new_ops")
    path = tmp_path / "new_ops.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    from ovgather.infer import check
    from ovgather.ir import read_ir

    report = check(read_ir(path))
    assert not [lr.to_dict() for lr in report.layers if lr.status == "unchecked"]
    expected = {op.get_friendly_name(): [str(op.get_output_partial_shape(i))
                                         for i in range(op.get_output_size())]
                for op in ov.Core().read_model(str(path)).get_ops()}
    diffs = [(lr.name, lr.type, lr.inferred, expected[lr.name]) for lr in report.layers
             if lr.name in expected and lr.type != "Result" and lr.inferred != expected[lr.name]]
    # the scales-mode Interpolate too: small real Consts carry their values in the walk
    assert diffs == [], diffs
    assert {lr.name: lr.inferred for lr in report.layers}[scales.get_friendly_name()] == \
        ["[1,3,20..36,4..]"]
    assert report.ok, [lr.to_dict() for lr in report.problems()]
