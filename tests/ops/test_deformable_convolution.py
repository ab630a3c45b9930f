"""DeformableConvolution-1/8 against OpenVINO on seeded random data, offsets, filters and
masks (sizes that fit or not), groups, deformable groups, strides, pads and auto_pad."""

from __future__ import annotations

import openvino.opset1 as ov1
import openvino.opset8 as ov8
import pytest
from op_diff import Case, agree_with_openvino, ints, ov_param, tensor, window_interval
from shape_texts import near

from ovgather.ops.core.dims import PAD_MODES


def deformable_case(rng, version: int) -> Case:
    group, dg = rng.choice((1, 1, 2, 2, 2, 1, 1, 1, 1, 0)), rng.choice((1, 1, 2))
    g = max(group, 1)
    batch, cin, cout, k = rng.choice((1, 2, "?")), 2 * g, 2 * g, rng.choice((1, 3))
    h = rng.choice((5, 8))
    mode = rng.choice(PAD_MODES)
    out = h if mode.startswith("same") else h - k + 1
    data = near(rng, [batch, cin, h, h])
    offsets = near(rng, [batch, 2 * dg * k * k, out, out])
    filters = near(rng, [cout, cin // g, k, k])
    shapes = [data, offsets, filters]
    if version == 8 and rng.random() < 0.5:
        shapes.append(near(rng, [batch, dg * k * k, out, out]))
    zeros = [0, 0] if rng.random() > 0.05 else [0]
    attrs = {"strides": "1,1", "dilations": "1,1", "pads_begin": ints(zeros),
             "pads_end": "0,0", "auto_pad": mode, "group": str(group),
             "deformable_group": str(dg)}

    def build():
        args = [ov_param(s) for s in shapes[:3]] + [[1, 1], zeros, [0, 0], [1, 1]]
        if version == 8:
            mask = ov_param(shapes[3]) if len(shapes) > 3 else None
            return ov8.deformable_convolution(*args, mask, mode, group, dg)
        return ov1.deformable_convolution(*args, mode, group, dg)

    return Case(build, "DeformableConvolution", version, [tensor(s) for s in shapes], attrs,
                label=f"{shapes} {attrs}")


@pytest.mark.parametrize("version", [1, 8])
def test_deformable_convolution_infers_what_openvino_infers(version):
    agree_with_openvino(f"deformable{version}", deformable_case, 1200, version)


def interval_deformable_case(rng, version: int) -> Case:
    """Data dims whose lower bounds sit below, at and above the padded dilated kernel (the
    offsets and mask leave the output spatial dims open)."""
    k = [rng.randint(1, 3), rng.randint(1, 3)]
    strides, dilations = [rng.randint(1, 3) for _ in k], [rng.randint(1, 3) for _ in k]
    pb, pe = [rng.randint(0, 2) for _ in k], [rng.randint(0, 2) for _ in k]
    mode = rng.choice(PAD_MODES)
    pads = [0 if mode == "valid" else b + e for b, e in zip(pb, pe, strict=True)]
    dims = [window_interval(rng, a, d, p) for a, d, p in zip(k, dilations, pads, strict=True)]
    shapes = ["[" + ",".join(["?", "4"] + dims) + "]", f"[?,{2 * k[0] * k[1]},?,?]",
              f"[6,4,{k[0]},{k[1]}]"]
    if version == 8 and rng.random() < 0.5:
        shapes.append(f"[?,{k[0] * k[1]},?,?]")
    attrs = {"strides": ints(strides), "dilations": ints(dilations), "pads_begin": ints(pb),
             "pads_end": ints(pe), "auto_pad": mode, "group": "1", "deformable_group": "1"}

    def build():
        args = [ov_param(s) for s in shapes[:3]] + [strides, pb, pe, dilations]
        if version == 8:
            mask = ov_param(shapes[3]) if len(shapes) > 3 else None
            return ov8.deformable_convolution(*args, mask, mode, 1, 1)
        return ov1.deformable_convolution(*args, mode, 1, 1)

    return Case(build, "DeformableConvolution", version, [tensor(s) for s in shapes], attrs,
                label=f"{shapes} {attrs}")


@pytest.mark.parametrize("version", [1, 8])
def test_interval_dims_around_the_dilated_kernel_infer_what_openvino_infers(version):
    agree_with_openvino(f"interval-deformable{version}", interval_deformable_case, 600, version)
