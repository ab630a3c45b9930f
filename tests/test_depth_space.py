"""DepthToSpace-1 and SpaceToDepth-1 against OpenVINO on seeded random shapes and blocks."""

from __future__ import annotations

import openvino.opset1 as ov1
import openvino.opset3 as ov3
import pytest
from op_diff import Case, agree_with_openvino, ov_param, tensor
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
