"""TopK-1, -3 and -11 against OpenVINO: k as a constant, a parameter, and a value known
only within bounds (a dim of a ShapeOf), on random static, dynamic and interval data."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import openvino.opset11 as ov11
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.core.values import Tensor
from ovgather.shapes import PartialShape

OPSETS = {1: ov1, 3: ov3, 11: ov11}


def _k(rng):
    """A k builder for OpenVINO and the same k as ovgather's walk carries it."""
    pick = rng.random()
    if pick < 0.45:
        value = rng.choice((0, 1, 1, 2, 3, 7, -1))
        return (lambda: ov1.constant(np.array(value, np.int64))), const(value)
    if pick < 0.6:
        return (lambda: ov_param("[]", ov.Type.i64)), tensor("[]", "i64")
    dim = random_dim(rng)
    d = PartialShape.parse(f"[{dim}]").dims[0]
    return ((lambda: ov1.squeeze(ov1.shape_of(ov_param(f"[{dim}]")),
                                 ov1.constant(np.array([0], np.int64)))),
            Tensor(PartialShape([]), "i64", ((d.lo,), (d.hi,))))


def topk_case(rng) -> Case:
    data = random_shape(rng, rng.choice((1, 2, 3)) if rng.random() < 0.9 else None)
    rank = len(PartialShape.parse(data).dims or (0,))
    axis = rng.randint(-rank, rank - 1)
    k_build, k = _k(rng)
    version = rng.choice((1, 3, 11))

    def build():
        return OPSETS[version].topk(ov_param(data), k_build(), axis, "max", "value")

    attrs = {"axis": str(axis), "mode": "max", "sort": "value"}
    return Case(build, "TopK", version, [tensor(data), k], attrs, n_outputs=2,
                label=f"TopK-{version} {data} axis={axis} k={k!r}")


def test_topk_infers_what_openvino_infers():
    agree_with_openvino("topk", topk_case, 1500)
