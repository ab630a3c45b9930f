"""ReadValue-3/6 and Assign-3/6 against OpenVINO on seeded random shapes and types."""

from __future__ import annotations

import openvino as ov
import openvino.opset3 as ov3
import openvino.opset6 as ov6
import pytest
from op_diff import Case, agree_with_openvino, ov_param, tensor
from openvino.op.util import Variable, VariableInfo
from ov_oracle import random_dim, random_shape

CASES = 1500
TYPES = ("f32", "f16", "i64", "dynamic")


def _wider(rng, shape: str) -> str:
    """Often a shape that relaxes ``shape``, sometimes one that does not."""
    if shape == "[...]" or rng.random() < 0.1:
        return rng.choice(("[...]", random_shape(rng)))
    dims = shape[1:-1].split(",") if shape != "[]" else []
    return "[" + ",".join(rng.choice((d, "?", random_dim(rng))) for d in dims) + "]"


def read_value_case(rng, version: int) -> Case:
    init = random_shape(rng)
    etype = rng.choice(TYPES[:3])
    if version == 3:
        return Case(lambda: ov3.read_value(ov_param(init, getattr(ov.Type, etype)), "v"),
                    "ReadValue", 3, [tensor(init, etype)], {"variable_id": "v"}, label=init)
    shape, vtype = _wider(rng, init), rng.choice((etype, etype, *TYPES))
    with_init = rng.random() < 0.8
    attrs = {"variable_id": "v", "variable_shape": shape, "variable_type": vtype}

    def build():
        args = ("v", getattr(ov.Type, vtype), ov.PartialShape(shape))
        if with_init:
            return ov6.read_value(ov_param(init, getattr(ov.Type, etype)), *args)
        return ov6.read_value(*args)

    ins = [tensor(init, etype)] if with_init else []
    return Case(build, "ReadValue", 6, ins, attrs, label=f"{init if with_init else ''} {attrs}")


def assign_case(rng, version: int) -> Case:
    value = random_shape(rng)
    if version == 3:
        def build():  # Assign-3 finds its ReadValue-3 among its inputs
            return ov3.assign(ov3.read_value(ov_param(value), "v"), "v")
    else:
        def build():  # a variable that says nothing: Assign-6 can only pass its input on
            info = VariableInfo()
            info.variable_id, info.data_type = "v", ov.Type.dynamic
            info.data_shape = ov.PartialShape.dynamic()
            return ov6.assign(ov_param(value), Variable(info))
    return Case(build, "Assign", version, [tensor(value)], {"variable_id": "v"}, label=value)


@pytest.mark.parametrize("version", [3, 6])
def test_read_value_infers_what_openvino_infers(version):
    agree_with_openvino(f"readvalue{version}", read_value_case, CASES, version)


@pytest.mark.parametrize("version", [3, 6])
def test_assign_passes_its_input_through_as_openvino_does(version):
    agree_with_openvino(f"assign{version}", assign_case, 300, version)
