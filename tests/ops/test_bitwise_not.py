"""BitwiseNot-13 against OpenVINO: any shape, integer and boolean inputs only."""

from __future__ import annotations

import openvino as ov
import openvino.opset13 as ov13
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_shape

TYPES = ("i32", "i64", "u8", "u1", "i4", "boolean", "f32", "f16", "dynamic")


def bitwise_not_case(rng) -> Case:
    shape, etype = random_shape(rng), rng.choice(TYPES)
    return Case(lambda: ov13.bitwise_not(ov_param(shape, getattr(ov.Type, etype))),
                "BitwiseNot", 13, [tensor(shape, etype)], label=f"{shape} {etype}")


def test_bitwise_not_infers_what_openvino_infers():
    agree_with_openvino("bitwise_not", bitwise_not_case, 500)
