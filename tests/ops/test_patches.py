"""ExtractImagePatches-3 and Col2Im-15 against OpenVINO on seeded random shapes: patch
sizes, strides, rates and paddings (zeros and wrong lengths too); Col2Im's output and
kernel sizes as constants, parameters and value bounds, with column counts and block
counts that fit and that do not."""

from __future__ import annotations

import openvino.opset3 as ov3
import openvino.opset15 as ov15
from int_inputs import constant, one_of, parameter
from op_diff import Case, agree_with_openvino, ints, ov_param, tensor
from ov_oracle import random_dim, random_shape

from ovgather.ops.patches import PADS


def patches_case(rng) -> Case:
    data = random_shape(rng) if rng.random() < 0.1 else random_shape(rng, 4)

    def pair(lo, hi):
        return [rng.randint(lo, hi) for _ in range(2 if rng.random() > 0.03 else 3)]

    sizes, strides, rates = pair(1, 4), pair(1, 3), pair(1, 2)
    if rng.random() < 0.03:
        strides[0] = 0
    pad = rng.choice(PADS + ("explicit",) * (rng.random() < 0.1))
    attrs = {"sizes": ints(sizes), "strides": ints(strides), "rates": ints(rates),
             "auto_pad": pad}
    return Case(lambda: ov3.extract_image_patches(ov_param(data), sizes, strides, rates, pad),
                "ExtractImagePatches", 3, [tensor(data)], attrs, label=f"{data} {attrs}")


def test_extract_image_patches_infers_what_openvino_infers():
    agree_with_openvino("extract_image_patches", patches_case, 1500)


def col2im_case(rng) -> Case:
    kernel = [rng.randint(1, 3), rng.randint(1, 3)]
    size = [rng.randint(2, 8), rng.randint(2, 8)]
    strides, dilations = [rng.randint(1, 2) for _ in "hw"], [rng.randint(1, 2) for _ in "hw"]
    pads_begin, pads_end = [rng.randint(0, 1) for _ in "hw"], [rng.randint(0, 1) for _ in "hw"]
    blocks = 1
    for d in range(2):
        blocks *= (size[d] + pads_begin[d] + pads_end[d] - dilations[d] * (kernel[d] - 1) - 1
                   ) // strides[d] + 1
    blocks = max(blocks, 1)
    channels = rng.randint(1, 3) * kernel[0] * kernel[1]
    dims = [str(channels) if rng.random() < 0.7 else random_dim(rng),
            str(blocks) if rng.random() < 0.7 else random_dim(rng)]
    if rng.random() < 0.6:
        dims.insert(0, random_dim(rng))
    data = random_shape(rng) if rng.random() < 0.08 else "[" + ",".join(dims) + "]"
    size_build, size_t = one_of(rng, size, ("[2]", "[?]", "[...]", "[3]"), 2, 0.6)
    kernel_build, kernel_t = (constant(kernel) if rng.random() < 0.8
                              else parameter(rng.choice(("[2]", "[?]", "[...]", "[1,2]"))))
    attrs = {"strides": ints(strides), "dilations": ints(dilations),
             "pads_begin": ints(pads_begin), "pads_end": ints(pads_end)}
    return Case(lambda: ov15.col2im(ov_param(data), size_build(), kernel_build(), strides,
                                    dilations, pads_begin, pads_end),
                "Col2Im", 15, [tensor(data), size_t, kernel_t], attrs,
                label=f"{data} {size_t!r} {kernel_t!r} {attrs}")


def test_col2im_infers_what_openvino_infers():
    agree_with_openvino("col2im", col2im_case, 1500)
