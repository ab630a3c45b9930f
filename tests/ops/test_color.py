"""NV12toRGB/BGR-8 and I420toRGB/BGR-8 against OpenVINO, from one plane and from separate
planes, on seeded random image shapes (heights and widths odd and even, intervals,
dynamic, dynamic rank, planes that agree and that do not)."""

from __future__ import annotations

import openvino.opset8 as ov8
import pytest
from op_diff import Case, agree_with_openvino, ov_param, tensor
from ov_oracle import random_dim, random_shape

BUILD = {"NV12toRGB": ov8.nv12_to_rgb, "NV12toBGR": ov8.nv12_to_bgr,
         "I420toRGB": ov8.i420_to_rgb, "I420toBGR": ov8.i420_to_bgr}


def _image(rng, n, h, w, c) -> str:
    if rng.random() < 0.07:
        return random_shape(rng)
    dims = [d if rng.random() < 0.85 else random_dim(rng) for d in (n, h, w, c)]
    return "[" + ",".join(dims) + "]"


def color_case(rng, op: str) -> Case:
    n, h, w = rng.choice(("1", "2", "?")), rng.randint(1, 6) * 2, rng.randint(1, 6) * 2
    if rng.random() < 0.4:
        planes = [_image(rng, n, str(h * 3 // 2), str(w), "1")]
    else:
        chroma = "2" if op.startswith("NV12") else "1"
        planes = [_image(rng, n, str(h), str(w), "1")]
        planes += [_image(rng, n, str(h // 2), str(w // 2), chroma)
                   for _ in range(1 if op.startswith("NV12") else 2)]
    return Case(lambda: BUILD[op](*[ov_param(p) for p in planes]), op, 8,
                [tensor(p) for p in planes], label=str(planes))


@pytest.mark.parametrize("op", list(BUILD))
def test_yuv_conversions_infer_what_openvino_infers(op):
    agree_with_openvino(op, color_case, 1000, op)
