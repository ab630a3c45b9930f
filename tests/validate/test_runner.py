"""The whole-model runner's inputs (``validate.runner``): a Parameter that feeds an op a
size gets a value valid for the op (its spec's input maker), never the zeros that make the
CPU plugin divide by zero."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import openvino as ov
import openvino.opset15 as o15
import pytest

from ovgather.ir import read_ir
from ovgather.runtime.core import cpu_config
from ovgather.shapes import PartialShape
from ovgather.validate.runner import size_inputs


def _col2im(tmp_path, data, size=None, kernel=None, **attrs):
    """Col2Im on ``data`` columns; output_size and kernel_size Parameters unless given."""
    x = o15.parameter(data, np.float32, name="data")
    params = [x]
    ins = []
    for name, value in (("size", size), ("kernel", kernel)):
        if value is None:
            params.append(o15.parameter([2], np.int64, name=name))
            ins.append(params[-1])
        else:
            ins.append(o15.constant(np.array(value, np.int64)))
    col = o15.col2im(x, *ins, **attrs)
    col.set_friendly_name("col2im")
    path = tmp_path / "col2im.xml"
    ov.save_model(ov.Model([col], params), str(path))
    return path


@pytest.mark.parametrize(("data", "size", "kernel", "attrs"), [
    ([1, 12, 9], None, None, {}),
    ([12, 9], None, None, {}),
    ([2, 12, 10], None, None, {"strides": [2, 1], "pads_begin": [1, 0], "pads_end": [1, 0]}),
    ([1, 12, 9], [4, 4], None, {}),
], ids=["batched", "unbatched", "strided", "constant size"])
@pytest.mark.parametrize("mode", ["--all-layers", "--whole-model"])
def test_col2im_sizes_fed_by_parameters_run_instead_of_dividing_by_zero(tmp_path, data, size,
                                                                        kernel, attrs, mode):
    path = _col2im(tmp_path, data, size, kernel, **attrs)
    done = subprocess.run([sys.executable, "-m", "ovgather", "validate", mode, "--json",
                           str(path)], capture_output=True, text=True, timeout=300)
    model = json.loads(done.stdout)["models"][0]
    if mode == "--all-layers":
        assert done.returncode == 0, (done.returncode, done.stderr)
        assert {lp["status"] for lp in model["layers"]} <= {"ok", "looser"}, model["layers"]
    else:  # no gather layer to prove: nothing proved (exit 1), and nothing divided by zero
        assert done.returncode == 1 and not done.stderr, (done.returncode, done.stderr)
        assert model["nothing_proved"] and model["layers"] == []


@pytest.mark.parametrize(("data", "attrs"), [
    ([1, 12, 9], {}), ([3, 20, 6], {"strides": [2, 3]}), ([8, 7], {"dilations": [2, 2]}),
])
def test_the_col2im_size_given_places_every_block_once(tmp_path, data, attrs):
    """On the CPU plugin, with the values given and no pads, each column lands on an
    output pixel of its own (a kernel of ones, as many blocks as the data holds): the sum
    is kept."""
    path = _col2im(tmp_path, data, **attrs)
    given = size_inputs(read_ir(path), {"data": PartialShape.parse(str(data)),
                                        "size": PartialShape.parse("[2]"),
                                        "kernel": PartialShape.parse("[2]")})
    assert sorted(given) == ["kernel", "size"] and given["kernel"].tolist() == [1, 1]
    x = o15.parameter(data, np.float32)
    col = o15.col2im(x, o15.constant(given["size"]), o15.constant(given["kernel"]), **attrs)
    values = np.arange(1, np.prod(data) + 1, dtype=np.float32).reshape(data)
    out = ov.Core().compile_model(ov.Model([col], [x]), "CPU", cpu_config())(values)[0]
    assert out.shape[-2:] == tuple(given["size"]) and out.sum() == values.sum()


def _range(tmp_path, fed, etype, opset):
    """Range with the inputs named in ``fed`` as Parameters (scalars of ``etype``), the
    others constants counting up from 2 to 9 by 3."""
    ops = ov.opset1 if opset == 1 else ov.opset4
    params, ins = [], []
    for name, value in (("start", 2), ("stop", 9), ("step", 3)):
        if name in fed:
            params.append(ops.parameter([], etype, name=name))
            ins.append(params[-1])
        else:
            ins.append(ops.constant(np.array(value, etype)))
    out = ops.range(*ins) if opset == 1 else ops.range(*ins, ov.Type(etype).to_string())
    path = tmp_path / "range.xml"
    ov.save_model(ov.Model([out], params), str(path))
    return path


@pytest.mark.parametrize(("fed", "etype", "opset"), [
    (("start", "stop", "step"), np.int64, 4), (("step",), np.int32, 4),
    (("stop", "step"), np.int64, 1), (("start", "step"), np.int32, 1),
], ids=["all fed", "step fed", "opset1 stop and step", "opset1 start and step"])
def test_a_range_step_fed_by_a_parameter_runs_instead_of_dividing_by_zero(tmp_path, fed,
                                                                          etype, opset):
    path = _range(tmp_path, fed, etype, opset)
    done = subprocess.run([sys.executable, "-m", "ovgather", "validate", "--all-layers",
                           "--json", str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr)
    layers = json.loads(done.stdout)["models"][0]["layers"]
    assert {lp["status"] for lp in layers} <= {"ok", "looser"}, layers


def test_the_range_values_given_make_a_small_non_empty_range(tmp_path):
    """On the CPU plugin, the start, stop and step given for three Parameters count a few
    elements, none of them a zero step."""
    path = _range(tmp_path, ("start", "stop", "step"), np.int64, 4)
    given = size_inputs(read_ir(path), dict.fromkeys(("start", "stop", "step"),
                                                     PartialShape.parse("[]")))
    assert sorted(given) == ["start", "step", "stop"] and given["step"] != 0
    ins = [ov.opset4.constant(given[n]) for n in ("start", "stop", "step")]
    out = ov.Core().compile_model(ov.Model([ov.opset4.range(*ins, "i64")], []),
                                  "CPU", cpu_config())({})[0]
    assert 0 < out.size <= 16
