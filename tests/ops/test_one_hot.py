"""OneHot-1 against OpenVINO: depths as constants, parameters and value bounds, axes in and
out of range, scalar checks on depth, on_value and off_value."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.core.values import Tensor
from ovgather.shapes import PartialShape


def _depth(rng):
    pick = rng.random()
    if pick < 0.5:
        value = rng.choice((0, 1, 3, 5, 8, -1))
        return (lambda: ov1.constant(np.array(value, np.int64))), const(value)
    if pick < 0.7:
        shape = rng.choice(("[]", "[1]", "[?]"))
        return (lambda: ov_param(shape, ov.Type.i64)), tensor(shape, "i64")
    dim = random_dim(rng)
    d = PartialShape.parse(f"[{dim}]").dims[0]
    t = Tensor(PartialShape([]), "i64", ((d.lo,), (d.hi,)))
    return (lambda: ov1.squeeze(ov1.shape_of(ov_param(f"[{dim}]")), const_node([0]))), t


def const_node(values):
    return ov1.constant(np.array(values, np.int64))


def one_hot_case(rng) -> Case:
    indices, axis = random_shape(rng), rng.randint(-6, 5)
    depth_build, depth = _depth(rng)
    on, off = (rng.choice(("[]", "[]", "[1]", "[?]")) for _ in range(2))

    def build():
        return ov1.one_hot(ov_param(indices, ov.Type.i64), depth_build(), ov_param(on),
                           ov_param(off), axis)

    return Case(build, "OneHot", 1, [tensor(indices, "i64"), depth, tensor(on), tensor(off)],
                {"axis": str(axis)}, label=f"{indices} {depth!r} {on} {off} axis={axis}")


def test_one_hot_infers_what_openvino_infers():
    agree_with_openvino("one_hot", one_hot_case, 1500)
