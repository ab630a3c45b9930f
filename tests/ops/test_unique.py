"""Unique-10 against OpenVINO, all four outputs: seeded random data shapes with and without
a constant axis (in and out of range, scalar or one-element)."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ov1
import openvino.opset10 as ov10
from op_diff import Case, const, ov_param, tensor
from op_diff_outputs import agree_on_every_output
from ov_oracle import random_shape


def unique_case(rng) -> Case:
    data = random_shape(rng)
    if rng.random() < 0.3:
        return Case(lambda: ov10.unique(ov_param(data)), "Unique", 10, [tensor(data)],
                    label=data)
    axis = rng.randint(-4, 3)
    value = [axis] if rng.random() < 0.3 else axis
    return Case(lambda: ov10.unique(ov_param(data), ov1.constant(np.array(value, np.int64))),
                "Unique", 10, [tensor(data), const(value)], label=f"{data} axis={value}")


def test_unique_infers_what_openvino_infers():
    agree_on_every_output("unique", unique_case, 1500)
