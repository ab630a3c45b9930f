"""Elementwise ops against OpenVINO: BitwiseNot-13 on any shape, integer and boolean inputs
only; Softmax-1/8 and LogSoftmax-5 on any shape, axes in and out of range."""

from __future__ import annotations

import openvino as ov
import openvino.opset1 as ov1
import openvino.opset5 as ov5
import openvino.opset8 as ov8
import openvino.opset13 as ov13
import pytest
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_shape

TYPES = ("i32", "i64", "u8", "u1", "i4", "boolean", "f32", "f16", "dynamic")


def bitwise_not_case(rng) -> Case:
    shape, etype = random_shape(rng), rng.choice(TYPES)
    return Case(lambda: ov13.bitwise_not(ov_param(shape, getattr(ov.Type, etype))),
                "BitwiseNot", 13, [tensor(shape, etype)], label=f"{shape} {etype}")


def test_bitwise_not_infers_what_openvino_infers():
    agree_with_openvino("bitwise_not", bitwise_not_case, 500)


BUILD = {("Softmax", 1): ov1.softmax, ("Softmax", 8): ov8.softmax,
         ("LogSoftmax", 5): ov5.log_softmax}


def softmax_case(rng, op: str, version: int) -> Case:
    shape, axis = random_shape(rng), rng.randint(-6, 5)
    make = BUILD[op, version]
    return Case(lambda: make(ov_param(shape), axis), op, version, [tensor(shape)],
                {"axis": str(axis)}, label=f"{shape} axis={axis}")


@pytest.mark.parametrize("op,version", list(BUILD), ids=[f"{t}-{v}" for t, v in BUILD])
def test_softmax_axes_are_checked_as_openvino_checks_them(op, version):
    agree_with_openvino(f"{op}{version}", softmax_case, 500, op, version)
