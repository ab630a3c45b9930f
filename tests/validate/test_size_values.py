"""``runner.size_inputs`` on integer Parameters that carry a shape, axes, ``k`` or slice
bounds: the values come from the reading op's spec (its ``size_values`` maker), reach it
through a Squeeze, and ``validate --all-layers`` proves the model instead of feeding
zeros the runtime refuses."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as o15

from ovgather.ir import read_ir
from ovgather.shapes import PartialShape
from ovgather.validate import prove_all_layers
from ovgather.validate.runner import size_inputs
from ovgather.validate.sizes import parameter_shapes


def _save(tmp_path, outputs, params):
    path = tmp_path / "model.xml"
    ov.save_model(ov.Model(outputs, params), str(path))
    return read_ir(path)


def _sizes(G) -> dict[str, PartialShape]:
    return parameter_shapes(G)


def test_slice_bounds_topk_k_and_reshape_target_are_values_the_ops_accept(tmp_path):
    x = o15.parameter([4, 6, 5], np.float32, name="x")
    start, stop = (o15.parameter([2], np.int64, name=n) for n in ("start", "stop"))
    step, axes = (o15.parameter([2], np.int64, name=n) for n in ("step", "axes"))
    k = o15.parameter([1], np.int64, name="k")
    shape = o15.parameter([2], np.int64, name="shape")
    sliced = o15.slice(x, start, stop, step, axes)
    top = o15.topk(x, o15.squeeze(k, o15.constant(np.array([0]))), axis=1,
                   mode="max", sort="value")
    flat = o15.reshape(x, shape, special_zero=False)
    G = _save(tmp_path, [sliced.output(0), top.output(0), flat.output(0)],
              [x, start, stop, step, axes, k, shape])
    given = size_inputs(G, _sizes(G))
    assert given["start"].tolist() == [0, 0] and given["step"].tolist() == [1, 1]
    assert given["axes"].tolist() == [0, 1] and min(given["stop"]) >= 6
    assert given["k"].tolist() == [3] and given["k"].dtype == np.int64
    assert given["shape"].tolist() == [24, 5]
    report = prove_all_layers(G)
    assert not report.nothing_proved
    assert {lp.status for lp in report.layers} <= {"ok", "looser"}, \
        [(lp.name, lp.status, lp.message) for lp in report.layers]


def test_unsqueeze_axes_are_distinct(tmp_path):
    x = o15.parameter([3, 1], np.float32, name="x")
    axes = o15.parameter([2], np.int64, name="axes")
    G = _save(tmp_path, [o15.unsqueeze(x, axes).output(0)], [x, axes])
    assert size_inputs(G, _sizes(G))["axes"].tolist() == [0, 1]


def test_broadcast_and_split_values_run(tmp_path):
    x = o15.parameter([3, 1], np.float32, name="x")
    target = o15.parameter([3], np.int64, name="target")
    lengths = o15.parameter([2], np.int64, name="lengths")
    wide = o15.broadcast(x, target, "bidirectional")
    y = o15.parameter([5, 6], np.float32, name="y")
    parts = o15.variadic_split(y, o15.constant(np.int64(1)), lengths)
    G = _save(tmp_path, [wide.output(0), parts.output(0), parts.output(1)],
              [x, target, lengths, y])
    given = size_inputs(G, _sizes(G))
    assert given["target"].tolist() == [1, 3, 1]
    assert given["lengths"].tolist() == [-1, 0]
    report = prove_all_layers(G)
    assert {lp.status for lp in report.layers} <= {"ok", "looser"}, \
        [(lp.name, lp.status, lp.message) for lp in report.layers]
