"""Pad-1 and Pad-12 against OpenVINO on seeded random shapes and pads.

Pads as Constants (negative ones too, wrong lengths), as Parameters (unknown), and as
ShapeOf of interval shapes (value bounds); every pad_mode; pad values of several shapes:
the inferred text and the valid/invalid verdict must be OpenVINO's.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import openvino.opset12 as ov12
import pytest
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.core.values import Tensor, value_of_dims
from ovgather.ops.pad import MODES
from ovgather.shapes import PartialShape

CASES = 1500


def _pads(rng, rank):
    """(OpenVINO builder, ovgather tensor) for one pads input."""
    n = rank if rank is not None and rng.random() > 0.05 else rng.randint(0, 4)
    pick = rng.random()
    if pick < 0.6 and n:
        values = [rng.randint(-3, 3) if rng.random() < 0.4 else 0 for _ in range(n)]
        return (lambda: ov1.constant(np.array(values, dtype=np.int64))), const(values)
    if pick < 0.8:
        shape = rng.choice((f"[{n}]", "[?]", f"[{n},1]", "[]", "[1..3]"))
        return (lambda: ov_param(shape, ov.Type.i64)), tensor(shape, "i64")
    dims = "[" + ",".join(random_dim(rng) for _ in range(n)) + "]"
    parsed = PartialShape.parse(dims)
    return ((lambda: ov3.shape_of(ov_param(dims))),
            Tensor(PartialShape([n]), "i64", value_of_dims(parsed.dims)))


def pad_case(rng, version: int) -> Case:
    data = random_shape(rng)
    rank = PartialShape.parse(data).rank
    (begin_build, begin), (end_build, end) = _pads(rng, rank), _pads(rng, rank)
    mode = rng.choice(MODES)
    value = rng.choice((None, None, "[]", "[1]"))
    o = ov1 if version == 1 else ov12

    def build():
        extra = [ov_param(value)] if value is not None else []
        return o.pad(ov_param(data), begin_build(), end_build(), mode, *extra)

    ins = [tensor(data), begin, end] + ([tensor(value)] if value is not None else [])
    return Case(build, "Pad", version, ins, {"pad_mode": mode},
                label=f"{data} {begin!r} {end!r} {mode} {value}")


@pytest.mark.parametrize("version", [1, 12])
def test_pad_infers_what_openvino_infers(version):
    agree_with_openvino(f"pad{version}", pad_case, CASES, version)
