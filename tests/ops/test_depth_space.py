"""DepthToSpace-1 and SpaceToDepth-1 against OpenVINO on seeded random shapes and blocks."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset2 as ov2
import openvino.opset3 as ov3
import pytest
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.depth_space import MODES


def depth_space_case(rng, op: str) -> Case:
    rank = rng.choice((2, 3, 4, 4, 5, 6, None))
    dims = [rng.choice(("1", "2", "4", "8", "12", "6", "?", "3..9", "4..", "..7", random_dim(rng)))
            for _ in range(rank or 0)]
    data = "[...]" if rank is None else "[" + ",".join(dims) + "]"
    block, mode = rng.choice((1, 2, 2, 3, 0)), rng.choice(MODES)
    make = ov1.depth_to_space if op == "DepthToSpace" else ov1.space_to_depth
    return Case(lambda: make(ov_param(data), mode, block), op, 1, [tensor(data)],
                {"mode": mode, "block_size": str(block)}, label=f"{data} {block} {mode}")


@pytest.mark.parametrize("op", ["DepthToSpace", "SpaceToDepth"])
def test_depth_space_infers_what_openvino_infers(op):
    agree_with_openvino(op, depth_space_case, 1000, op)


def shuffle_channels_case(rng) -> Case:
    data = random_shape(rng)
    axis, group = rng.randint(-4, 3), rng.choice((1, 2, 3, 0))
    return Case(lambda: ov3.shuffle_channels(ov_param(data), axis, group), "ShuffleChannels", 1,
                [tensor(data)], {"axis": str(axis), "group": str(group)},
                label=f"{data} axis={axis} group={group}")


def test_shuffle_channels_infers_what_openvino_infers():
    agree_with_openvino("shuffle_channels", shuffle_channels_case, 1000)


def _ints(rng, n, lo, hi):
    pick = rng.random()
    if pick < 0.7:
        values = [rng.randint(lo, hi) for _ in range(n if rng.random() > 0.05 else n + 1)]
        if not values:
            values = [1]
        return (lambda: ov1.constant(np.array(values, np.int64))), const(values)
    shape = rng.choice((f"[{n}]", "[?]", "[]"))
    return (lambda: ov_param(shape, ov.Type.i64)), tensor(shape, "i64")


def batch_space_case(rng, op: str) -> Case:
    dims = [rng.choice(("1", "2", "4", "8", "16", "?", "3..9", "8..", "..7", random_dim(rng)))
            for _ in range(rng.choice((1, 2, 3, 4, 5)))]
    data = "[...]" if rng.random() < 0.08 else "[" + ",".join(dims) + "]"
    n = len(dims)
    block = _ints(rng, n, 1, 3) if rng.random() > 0.05 else _ints(rng, n, 0, 2)
    begin, end = _ints(rng, n, 0, 2), _ints(rng, n, 0, 2)
    if rng.random() < 0.05:
        begin = _ints(rng, n, -1, 1)
    make = ov2.batch_to_space if op == "BatchToSpace" else ov2.space_to_batch
    return Case(lambda: make(ov_param(data), block[0](), begin[0](), end[0]()), op, 2,
                [tensor(data), block[1], begin[1], end[1]],
                label=f"{data} {block[1]!r} {begin[1]!r} {end[1]!r}")


@pytest.mark.parametrize("op", ["BatchToSpace", "SpaceToBatch"])
def test_batch_space_infers_what_openvino_infers(op):
    agree_with_openvino(op, batch_space_case, 1500, op)
