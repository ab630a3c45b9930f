"""The embedding bags against OpenVINO: EmbeddingBagOffsetsSum-3, EmbeddingBagOffsets-15,
EmbeddingBagPackedSum-3, EmbeddingBagPacked-15 and EmbeddingSegmentsSum-3 on seeded
random tables, indices, offsets, segment ids, weights and default indices (optional
inputs left out sometimes), num_segments as constants, parameters and value bounds."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import openvino.opset15 as ov15
import pytest
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.core.values import Tensor
from ovgather.shapes import PartialShape

OFFSETS = {"EmbeddingBagOffsetsSum": (3, ov3.embedding_bag_offsets_sum),
           "EmbeddingBagOffsets": (15, ov15.embedding_bag_offsets)}
PACKED = {"EmbeddingBagPackedSum": (3, ov3.embedding_bag_packed_sum),
          "EmbeddingBagPacked": (15, ov15.embedding_bag_packed)}


def _like(rng, shape: str) -> str:
    return shape if rng.random() < 0.7 else random_shape(rng)


def _build(make, table, ints, floats, **kw):
    def build():
        args = [ov_param(table)] + [ov_param(s, ov.Type.i32) for s in ints]
        return make(*args, *[ov_param(s) for s in floats], **kw)

    return build


def offsets_case(rng, op: str) -> Case:
    version, make = OFFSETS[op]
    table = random_shape(rng)
    indices = random_shape(rng, 1) if rng.random() < 0.9 else random_shape(rng)
    ints = [indices, random_shape(rng, 1) if rng.random() < 0.9 else random_shape(rng)]
    floats = []
    if rng.random() < 0.7:
        ints.append(rng.choice(("[]", "[]", "[1]", "[...]")))
        if rng.random() < 0.6:
            floats.append(_like(rng, indices))
    kw = {"reduction": rng.choice(("sum", "mean"))} if version == 15 else {}
    ins = [tensor(table)] + [tensor(s, "i32") for s in ints] + [tensor(s) for s in floats]
    return Case(_build(make, table, ints, floats, **kw), op, version, ins, kw,
                label=f"{table} {ints} {floats}")


@pytest.mark.parametrize("op", list(OFFSETS))
def test_embedding_bag_offsets_infer_what_openvino_infers(op):
    agree_with_openvino(op, offsets_case, 800, op)


def packed_case(rng, op: str) -> Case:
    version, make = PACKED[op]
    table = random_shape(rng)
    indices = random_shape(rng, 2) if rng.random() < 0.9 else random_shape(rng)
    floats = [_like(rng, indices)] if rng.random() < 0.6 else []
    kw = {"reduction": rng.choice(("sum", "mean"))} if version == 15 else {}
    ins = [tensor(table), tensor(indices, "i32")] + [tensor(s) for s in floats]
    return Case(_build(make, table, [indices], floats, **kw), op, version, ins, kw,
                label=f"{table} {indices} {floats}")


@pytest.mark.parametrize("op", list(PACKED))
def test_embedding_bag_packed_infer_what_openvino_infers(op):
    agree_with_openvino(op, packed_case, 800, op)


def _num_segments(rng):
    pick = rng.random()
    if pick < 0.4:
        value = rng.choice((0, 1, 3, 7, -1))
        return (lambda: ov1.constant(np.array(value, np.int32))), const(value, "i32")
    if pick < 0.7:
        shape = rng.choice(("[]", "[1]", "[...]"))
        return (lambda: ov_param(shape, ov.Type.i32)), tensor(shape, "i32")
    dim = random_dim(rng)
    d = PartialShape.parse(f"[{dim}]").dims[0]
    return ((lambda: ov1.squeeze(ov3.shape_of(ov_param(f"[{dim}]"), "i32"),
                                 ov1.constant(np.array([0], np.int64)))),
            Tensor(PartialShape([]), "i32", ((d.lo,), (d.hi,))))


def segments_case(rng) -> Case:
    table = random_shape(rng)
    indices = random_shape(rng, 1) if rng.random() < 0.9 else random_shape(rng)
    segment_ids = _like(rng, indices)
    num_build, num = _num_segments(rng)
    extra_ints = [rng.choice(("[]", "[]", "[1]"))] if rng.random() < 0.7 else []
    floats = [_like(rng, indices)] if extra_ints and rng.random() < 0.6 else []

    def build():
        args = [ov_param(table), ov_param(indices, ov.Type.i32),
                ov_param(segment_ids, ov.Type.i32), num_build()]
        args += [ov_param(s, ov.Type.i32) for s in extra_ints] + [ov_param(s) for s in floats]
        return ov3.embedding_segments_sum(*args)

    ins = ([tensor(table), tensor(indices, "i32"), tensor(segment_ids, "i32"), num]
           + [tensor(s, "i32") for s in extra_ints] + [tensor(s) for s in floats])
    return Case(build, "EmbeddingSegmentsSum", 3, ins,
                label=f"{table} {indices} {segment_ids} {num!r} {extra_ints} {floats}")


def test_embedding_segments_sum_infers_what_openvino_infers():
    agree_with_openvino("embedding_segments_sum", segments_case, 1000)
