"""GridSample-9 and SegmentMax-16 against OpenVINO on seeded random shapes: grids and data
whose batches agree or not; segment ids as sorted and unsorted constants and parameters,
num_segments as constants (-1 and below too) and parameters."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ov1
import openvino.opset9 as ov9
import openvino.opset16 as ov16
from int_inputs import constant, parameter
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.grid_sample import MODES, PADDINGS


def grid_sample_case(rng) -> Case:
    batch = random_dim(rng)
    data = random_shape(rng, 4, [batch]) if rng.random() < 0.9 else random_shape(rng)
    last = rng.choice(("2", "2", "?", "3", "1..2"))
    grid = (random_shape(rng, 3, [batch])[:-1] + "," + last + "]" if rng.random() < 0.9
            else random_shape(rng))
    attrs = {"align_corners": rng.choice(("true", "false")), "mode": rng.choice(MODES),
             "padding_mode": rng.choice(PADDINGS)}
    ov_attrs = dict(attrs, align_corners=attrs["align_corners"] == "true")
    return Case(lambda: ov9.grid_sample(ov_param(data), ov_param(grid), ov_attrs),
                "GridSample", 9, [tensor(data), tensor(grid)], attrs, label=f"{data} {grid}")


def test_grid_sample_infers_what_openvino_infers():
    agree_with_openvino("grid_sample", grid_sample_case, 1200)


def segment_max_case(rng) -> Case:
    rows = rng.randint(1, 5)
    data = random_shape(rng) if rng.random() < 0.2 else random_shape(rng, None, [str(rows)])
    if rng.random() < 0.6:
        ids = sorted(rng.randint(-2, 4) for _ in range(rows))
        if rng.random() < 0.1:
            ids.reverse()
        ids_build, ids_t = constant(ids)
    else:
        ids_build, ids_t = parameter(rng.choice((f"[{rows}]", "[?]", "[...]", "[2,2]")))
    extra = []
    if rng.random() < 0.5:
        if rng.random() < 0.6:
            value = rng.choice((0, 3, 6, -1, -3))
            extra = [(lambda: ov1.constant(np.array(value, np.int64)),
                      constant(value)[1])]
        else:
            extra = [parameter(rng.choice(("[]", "[1]", "[...]")))]

    def build():
        more = [e[0]() for e in extra]
        return ov16.segment_max(ov_param(data), ids_build(), *more, fill_mode="ZERO")

    return Case(build, "SegmentMax", 16, [tensor(data), ids_t] + [e[1] for e in extra],
                {"fill_mode": "ZERO"}, label=f"{data} {ids_t!r} {[e[1] for e in extra]}")


def test_segment_max_infers_what_openvino_infers():
    agree_with_openvino("segment_max", segment_max_case, 1200)
