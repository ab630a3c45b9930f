"""MaxPool-1/8/14 and AvgPool-1/14/16 against OpenVINO on seeded random shapes.

Static, dynamic and interval dims, dynamic ranks, every auto_pad and rounding_type,
dilations, exclude-pad, and broken inputs (ranks, attribute lengths, zeros, kernels that
do not fit): the inferred text and the valid/invalid verdict must be OpenVINO's.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import openvino.opset8 as ov8
import openvino.opset14 as ov14
import openvino.opset16 as ov16
import pytest
from op_diff import Case, agree_with_openvino, const, ints, ov_param, tensor, window_interval
from ov_oracle import random_dim, random_shape

from ovgather.ops.core.dims import PAD_MODES
from ovgather.ops.core.values import Tensor, value_of_dims
from ovgather.ops.pooling import ROUNDING
from ovgather.shapes import PartialShape

CASES = 1500
OPSET = {("MaxPool", 1): ov1, ("MaxPool", 8): ov8, ("MaxPool", 14): ov14,
         ("AvgPool", 1): ov1, ("AvgPool", 14): ov14, ("AvgPool", 16): ov16}


def pool_case(rng, op: str, version: int) -> Case:
    n = rng.choice((1, 2, 3, 2, 2, 0, 4))
    dims = [rng.choice(("1", "2", "?", "1..3", "0")), random_dim(rng)]
    dims += [random_dim(rng) for _ in range(n)]
    data = "[...]" if rng.random() < 0.1 else "[" + ",".join(dims) + "]"
    k = n if rng.random() > 0.05 else rng.choice((0, n + 1))

    def values(lo, hi, size=k):
        return [rng.randint(lo, hi) for _ in range(size if rng.random() > 0.04 else size + 1)]

    kernel = [rng.randint(1, 4) if rng.random() > 0.02 else 0 for _ in range(k)]
    strides, dilations = values(1, 3), values(1, 2)
    if rng.random() < 0.03:
        strides = [0] * k
    pb, pe = values(0, 3), values(0, 3)
    rounding = rng.choice(ROUNDING)
    mode = rng.choice(PAD_MODES)
    exclude = rng.random() < 0.5
    o = OPSET[op, version]
    p = ov_param(data)
    attrs = {"strides": ints(strides), "pads_begin": ints(pb), "pads_end": ints(pe),
             "kernel": ints(kernel), "rounding_type": rounding, "auto_pad": mode}
    if op == "MaxPool" and version == 1:
        def build():
            return o.max_pool(p, strides, pb, pe, kernel, rounding, mode)
    elif op == "MaxPool":
        attrs["dilations"] = ints(dilations)

        def build():
            return o.max_pool(p, strides, dilations, pb, pe, kernel, rounding, mode)
    else:
        attrs["exclude-pad"] = str(exclude).lower()
        if version == 16:
            attrs["dilations"] = ints(dilations)

        def build():
            more = {"dilations": dilations} if version == 16 else {}
            return o.avg_pool(p, strides, pb, pe, kernel, exclude, rounding, mode, **more)
    label = f"{op}-{version} {data} {attrs}"
    return Case(build, op, version, [tensor(data)], attrs, label=label)


@pytest.mark.parametrize("op,version", list(OPSET), ids=[f"{t}-{v}" for t, v in OPSET])
def test_poolings_infer_what_openvino_infers(op, version):
    agree_with_openvino(f"{op}{version}", pool_case, CASES, op, version)


def adaptive_case(rng, op: str) -> Case:
    data = random_shape(rng)
    n = max((PartialShape.parse(data).rank or 4) - 2, 0)
    n = n if rng.random() > 0.05 else n + 1
    pick = rng.random()
    if pick < 0.5 and n:
        values = [rng.randint(1, 8) for _ in range(n)]
        sizes, sizes_build = const(values), lambda: ov1.constant(np.array(values, np.int64))
    elif pick < 0.75 or not n:
        shape, etype = rng.choice((f"[{n}]", "[?]", "[]", "[1..3]")), rng.choice(("i64", "i32"))
        sizes, sizes_build = tensor(shape, etype), lambda: ov_param(shape, getattr(ov.Type, etype))
    else:
        dims = "[" + ",".join(random_dim(rng) for _ in range(n)) + "]"
        bounds = value_of_dims(PartialShape.parse(dims).dims)
        sizes = Tensor(PartialShape([n]), "i64", bounds)
        sizes_build = lambda: ov3.shape_of(ov_param(dims))  # noqa: E731
    make = ov8.adaptive_avg_pool if op == "AdaptiveAvgPool" else ov8.adaptive_max_pool
    return Case(lambda: make(ov_param(data), sizes_build()), op, 8, [tensor(data), sizes],
                label=f"{data} {sizes!r}")


@pytest.mark.parametrize("op", ["AdaptiveAvgPool", "AdaptiveMaxPool"])
def test_adaptive_poolings_infer_what_openvino_infers(op):
    agree_with_openvino(op, adaptive_case, 800, op)


def interval_pool_case(rng, op: str, version: int) -> Case:
    """Data dims whose lower bounds sit below, at and above the padded dilated kernel."""
    n = rng.choice((1, 2, 3))
    kernel = [rng.randint(1, 4) for _ in range(n)]
    strides = [rng.randint(1, 3) for _ in range(n)]
    dilated = (op == "MaxPool" and version >= 8) or version == 16
    dilations = [rng.randint(1, 3) if dilated else 1 for _ in range(n)]
    pb, pe = [rng.randint(0, 2) for _ in range(n)], [rng.randint(0, 2) for _ in range(n)]
    mode, rounding = rng.choice(PAD_MODES), rng.choice(ROUNDING if version >= 14 else ROUNDING[:2])
    pads = [0 if mode == "valid" else b + e for b, e in zip(pb, pe, strict=True)]
    dims = [window_interval(rng, k, d, p) for k, d, p in zip(kernel, dilations, pads, strict=True)]
    data = "[" + ",".join([rng.choice(("1", "?", "2..3")), "3"] + dims) + "]"
    exclude = rng.random() < 0.5
    o = OPSET[op, version]
    attrs = {"strides": ints(strides), "pads_begin": ints(pb), "pads_end": ints(pe),
             "kernel": ints(kernel), "rounding_type": rounding, "auto_pad": mode}
    if dilated:
        attrs["dilations"] = ints(dilations)
    if op == "AvgPool":
        attrs["exclude-pad"] = str(exclude).lower()

    def build():
        p = ov_param(data)
        if op == "MaxPool" and version == 1:
            return o.max_pool(p, strides, pb, pe, kernel, rounding, mode)
        if op == "MaxPool":
            return o.max_pool(p, strides, dilations, pb, pe, kernel, rounding, mode)
        more = {"dilations": dilations} if version == 16 else {}
        return o.avg_pool(p, strides, pb, pe, kernel, exclude, rounding, mode, **more)

    return Case(build, op, version, [tensor(data)], attrs, label=f"{op}-{version} {data} {attrs}")


@pytest.mark.parametrize("op,version", list(OPSET), ids=[f"{t}-{v}" for t, v in OPSET])
def test_interval_dims_around_the_dilated_kernel_infer_what_openvino_infers(op, version):
    """The clamp at 0, the floor or ceil of the stride, ceil_torch's last window and the
    fit check (only for exact dims) at the edge where the kernel starts to fit."""
    agree_with_openvino(f"interval-{op}{version}", interval_pool_case, 500, op, version)
