"""Eye-9 against OpenVINO: counts and batch shapes as constants, parameters and bounds."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset9 as ov9
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim

from ovgather.ops.core.values import Tensor, value_of_dims
from ovgather.shapes import PartialShape


def _node(values):
    return ov1.constant(np.array(values, np.int64))


def _count(rng):
    pick = rng.random()
    if pick < 0.5:
        value = rng.choice((0, 1, 3, 5, -1, [2], [2, 3]))
        return (lambda: _node(value)), const(value)
    if pick < 0.75:
        shape = rng.choice(("[]", "[1]", "[?]", "[2]", "[1,1]"))
        return (lambda: ov_param(shape, ov.Type.i64)), tensor(shape, "i64")
    dim = random_dim(rng)
    d = PartialShape.parse(f"[{dim}]").dims[0]
    return ((lambda: ov1.squeeze(ov1.shape_of(ov_param(f"[{dim}]")), _node([0]))),
            Tensor(PartialShape([]), "i64", ((d.lo,), (d.hi,))))


def _batch(rng):
    pick = rng.random()
    if pick < 0.4:
        value = [rng.choice((1, 2, 3, -1)) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.1:
            value = 2
        return (lambda: _node(value)), const(value)
    if pick < 0.7:
        shape = rng.choice(("[2]", "[?]", "[]", "[...]", "[1..2]"))
        return (lambda: ov_param(shape, ov.Type.i64)), tensor(shape, "i64")
    dims = "[" + ",".join(random_dim(rng) for _ in range(rng.randint(1, 3))) + "]"
    parsed = PartialShape.parse(dims)
    return ((lambda: ov1.shape_of(ov_param(dims))),
            Tensor(PartialShape([parsed.rank]), "i64", value_of_dims(parsed.dims)))


def eye_case(rng) -> Case:
    (rows_build, rows), (cols_build, cols) = _count(rng), _count(rng)
    diag = rng.choice((0, 1, [1], [0, 1]))
    with_batch = rng.random() < 0.5
    batch_build, batch = _batch(rng) if with_batch else (None, None)

    def build():
        args = [rows_build(), cols_build(), _node(diag), "f32"]
        return ov9.eye(*args, batch_build()) if with_batch else ov9.eye(*args)

    ins = [rows, cols, const(diag)] + ([batch] if with_batch else [])
    return Case(build, "Eye", 9, ins, {"output_type": "f32"}, label=repr(ins))


def test_eye_infers_what_openvino_infers():
    agree_with_openvino("eye", eye_case, 1500)
