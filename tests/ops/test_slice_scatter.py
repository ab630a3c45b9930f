"""SliceScatter-15 against OpenVINO on seeded random data: slices as constants (negative,
out of range, reversed, repeated or out-of-range axes, zero steps) and parameters, with
updates that fit the slice and that do not."""

from __future__ import annotations

import openvino.opset15 as ov15
from int_inputs import constant, parameter
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.slice_scatter import sliced_dim
from ovgather.shapes import PartialShape


def slice_scatter_case(rng) -> Case:
    data = random_shape(rng)
    dims = PartialShape.parse(data).dims
    rank = len(dims) if dims is not None else 3
    n = rng.randint(1, max(rank, 1))
    start = [rng.randint(-4, 4) for _ in range(n)]
    stop = [rng.choice((-1, 2, 5, 100, -100)) for _ in range(n)]
    step = [rng.choice((1, 1, 2, -1, 0 if rng.random() < 0.1 else 1)) for _ in range(n)]
    axes = rng.sample(range(-rank, rank), min(n, 2 * rank)) if rank else [0]
    if rng.random() < 0.05:
        axes = [0] * n
    inputs = [constant(v) if rng.random() < 0.85 else parameter(rng.choice(("[?]", f"[{n}]")))
              for v in (start, stop, step)]
    if rng.random() < 0.6:
        inputs.append(constant(axes[:n]) if rng.random() < 0.9 else parameter("[?]"))
    updates = random_shape(rng)
    if dims is not None and rng.random() < 0.7:
        out = list(dims)
        for k, a in enumerate(axes[:n] if len(inputs) > 3 else range(n)):
            if -rank <= a < rank and 0 not in step:
                out[a] = sliced_dim(dims[a], start[k], stop[k], step[k])
        updates = "[" + ",".join(str(d) if rng.random() < 0.9 else random_dim(rng)
                                 for d in out) + "]"
    return Case(lambda: ov15.slice_scatter(ov_param(data), ov_param(updates),
                                           *[b() for b, _ in inputs]),
                "SliceScatter", 15, [tensor(data), tensor(updates)] + [t for _, t in inputs],
                label=f"{data} {updates} {[t for _, t in inputs]}")


def test_slice_scatter_infers_what_openvino_infers():
    agree_with_openvino("slice_scatter", slice_scatter_case, 1500)
