"""RandomUniform-8 and Multinomial-13 against OpenVINO: shapes and sample counts as
constants (with -1 and negatives), parameters and value bounds; min/max as constants
(in order or not) and parameters of several shapes."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import openvino.opset8 as ov8
import openvino.opset13 as ov13
from int_inputs import one_of, parameter
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.core.values import Tensor
from ovgather.shapes import PartialShape


def _bound(rng, value: int):
    pick = rng.random()
    if pick < 0.6:
        data = np.array(value if rng.random() < 0.7 else [value], np.int32)
        return (lambda: ov1.constant(data)), const(data, "i32")
    shape = rng.choice(("[]", "[1]", "[?]", "[2]", "[...]"))
    return (lambda: ov_param(shape, ov.Type.i32)), tensor(shape, "i32")


def random_uniform_case(rng) -> Case:
    n = rng.randint(1, 4)
    values = [rng.choice((1, 2, 3, 5, -1, 0)) for _ in range(n)]
    shape_build, shape_t = one_of(rng, values, (f"[{n}]", "[?]", "[2..3]", "[...]", "[]"), n)
    (low_build, low), (high_build, high) = _bound(rng, rng.randint(-2, 2)), _bound(rng, 3)
    return Case(lambda: ov8.random_uniform(shape_build(), low_build(), high_build(), "i32"),
                "RandomUniform", 8, [shape_t, low, high], {"output_type": "i32"},
                label=f"{shape_t!r} {low!r} {high!r}")


def test_random_uniform_infers_what_openvino_infers():
    agree_with_openvino("random_uniform", random_uniform_case, 1200)


def _samples(rng):
    pick = rng.random()
    if pick < 0.4:
        value = rng.choice((0, 1, 3, 7, -1, -3))
        data = np.array(value if rng.random() < 0.7 else [value], np.int64)
        return (lambda: ov1.constant(data)), const(data)
    if pick < 0.7:
        return parameter(rng.choice(("[]", "[1]", "[?]", "[2]", "[...]")))
    dim = random_dim(rng)
    d = PartialShape.parse(f"[{dim}]").dims[0]
    return ((lambda: ov3.shape_of(ov_param(f"[{dim}]"))),
            Tensor(PartialShape([1]), "i64", ((d.lo,), (d.hi,))))


def multinomial_case(rng) -> Case:
    probs = random_shape(rng, 2) if rng.random() < 0.85 else random_shape(rng)
    samples_build, samples = _samples(rng)
    return Case(lambda: ov13.multinomial(ov_param(probs), samples_build(), "i64", True, False),
                "Multinomial", 13, [tensor(probs), samples], {"convert_type": "i64"},
                label=f"{probs} {samples!r}")


def test_multinomial_infers_what_openvino_infers():
    agree_with_openvino("multinomial", multinomial_case, 1200)
