"""Interpolate-1/4/11 against OpenVINO on seeded random shapes.

Sizes as Constants, Parameters and ShapeOf bounds; float scales; axes as Constants
(in and out of range), Parameters or absent; attribute pads (negative, short, long);
both shape_calculation_modes and wrong input ranks and types: the inferred text and the
valid/invalid verdict must be OpenVINO's.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import pytest
from op_diff import Case, agree_with_openvino, const, ov_param, tensor
from openvino.utils.node_factory import NodeFactory
from ov_oracle import random_dim, random_shape

from ovgather.ops.core.values import Tensor, value_of_dims
from ovgather.shapes import PartialShape

CASES = 1500
SCALES = (0.5, 1.0, 1.5, 2.0, 3.0, 0.25, 1.3, 0.7)


def _sizes(rng, n):
    pick = rng.random()
    if pick < 0.55 and n:
        values = [rng.choice((0, 1, 2, 3, 5, 8, 16)) for _ in range(n)]
        return (lambda: ov1.constant(np.array(values, np.int64))), const(values)
    if pick < 0.75 or not n:
        shape = rng.choice((f"[{n}]", "[?]", "[]", f"[{n},1]"))
        etype = rng.choice(("i64", "i64", "i32", "f32"))
        return (lambda: ov_param(shape, getattr(ov.Type, etype))), tensor(shape, etype)
    dims = "[" + ",".join(random_dim(rng) for _ in range(n)) + "]"
    bounds = value_of_dims(PartialShape.parse(dims).dims)
    return (lambda: ov3.shape_of(ov_param(dims))), Tensor(PartialShape([n]), "i64", bounds)


def _scales(rng, n):
    if rng.random() < 0.75 and n:
        values = [rng.choice(SCALES) for _ in range(n)]
        t = Tensor(PartialShape([n]), "f32", (tuple(values), tuple(values)))
        return (lambda: ov1.constant(np.array(values, np.float32))), t
    shape = rng.choice((f"[{n}]", "[?]", "[]"))
    etype = rng.choice(("f32", "f32", "f16", "i64"))
    return (lambda: ov_param(shape, getattr(ov.Type, etype))), tensor(shape, etype)


def _axes(rng, rank):
    if rng.random() < 0.3:
        return None, None
    if rng.random() < 0.8:
        r = rank or 0
        axes = sorted(rng.sample(range(r), rng.randint(1, r))) if r else [0]
        if rng.random() < 0.08:
            axes = [rng.choice((-1, r, r + 1))]
        return (lambda: ov1.constant(np.array(axes, np.int64))), const(axes)
    shape = rng.choice(("[2]", "[?]", "[]"))
    return (lambda: ov_param(shape, ov.Type.i64)), tensor(shape, "i64")


def _pads(rng, rank):
    n = rank if rank is not None and rng.random() < 0.7 else rng.randint(0, 5)
    return [rng.choice((0, 0, 0, 1, 2)) for _ in range(n)]


def interpolate_case(rng, version: int) -> Case:
    data = random_shape(rng)
    rank = PartialShape.parse(data).rank
    axes_build, axes = _axes(rng, rank)
    count = len(axes.value[0]) if axes is not None and axes.value else (rank or 2)
    count = count if rng.random() > 0.05 else count + rng.choice((-1, 1))
    (sizes_build, sizes), (scales_build, scales) = _sizes(rng, count), _scales(rng, count)
    mode = rng.choice(("sizes", "scales"))
    pads_begin, pads_end = _pads(rng, rank), _pads(rng, rank)
    common = {"mode": "nearest", "pads_begin": pads_begin, "pads_end": pads_end,
              "antialias": False}
    if version == 1:
        r = rank or 2
        axis_list = sorted(rng.sample(range(r), rng.randint(1, r))) if r else [0]
        if rng.random() < 0.05:
            axis_list = [r]
        attrs = {**common, "axes": axis_list, "align_corners": False}
        # OpenVINO reads a target value per axis unchecked (fewer crash it): never fewer
        sizes_build, sizes = _sizes(rng, len(axis_list) + rng.choice((0, 0, 1)))
        ins = [tensor(data), sizes]
        more = []
    else:
        attrs = {**common, "shape_calculation_mode": mode, "cube_coeff": -0.75,
                 "coordinate_transformation_mode": "half_pixel",
                 "nearest_mode": "round_prefer_floor"}
        ins = [tensor(data)] + ([sizes, scales] if version == 4 else
                                [scales if mode == "scales" else sizes])
        more = [axes_build] if axes is not None else []
        ins += [axes] if axes is not None else []
    builders = [sizes_build] if version == 1 else \
        [sizes_build, scales_build] if version == 4 else \
        [scales_build if mode == "scales" else sizes_build]

    def build():
        nodes = [ov_param(data)] + [b() for b in builders + more]
        return NodeFactory(f"opset{version}").create("Interpolate", nodes, attrs)

    texts = {k: (",".join(map(str, v)) if isinstance(v, list | tuple) else str(v).lower())
             for k, v in attrs.items()}
    return Case(build, "Interpolate", version, ins, texts,
                label=f"{data} {[repr(t) for t in ins[1:]]} {texts}")


@pytest.mark.parametrize("version", [1, 4, 11])
def test_interpolate_infers_what_openvino_infers(version):
    agree_with_openvino(f"interpolate{version}", interpolate_case, CASES, version)
