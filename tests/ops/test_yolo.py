"""RegionYolo-1 and ReorgYolo-2 against OpenVINO on seeded random shapes: softmax axes in and
out of range, masks, strides that fit the channels and the spatial dims and that do not."""

from __future__ import annotations

import openvino.opset1 as ov1
import openvino.opset2 as ov2
from op_diff import Case, agree_with_openvino, ints, ov_param, tensor
from ov_oracle import random_shape


def region_yolo_case(rng) -> Case:
    data = random_shape(rng, 4) if rng.random() < 0.85 else random_shape(rng)
    softmax = rng.random() < 0.6
    axis, end = rng.randint(-5, 4), rng.randint(-5, 4)
    coords, classes = rng.choice((4, 0)), rng.choice((80, 20, 1))
    mask = [rng.randint(0, 5) for _ in range(rng.randint(0, 3))]
    attrs = {"coords": str(coords), "classes": str(classes), "num": "3",
             "do_softmax": str(softmax).lower(), "mask": ints(mask), "axis": str(axis),
             "end_axis": str(end)}
    return Case(lambda: ov1.region_yolo(ov_param(data), coords, classes, 3, softmax, mask, axis,
                                        end),
                "RegionYolo", 1, [tensor(data)], attrs, label=f"{data} {attrs}")


def test_region_yolo_infers_what_openvino_infers():
    agree_with_openvino("region_yolo", region_yolo_case, 1500)


def reorg_yolo_case(rng) -> Case:
    data = random_shape(rng, 4) if rng.random() < 0.85 else random_shape(rng)
    stride = rng.choice((1, 2, 2, 3, -1))
    return Case(lambda: ov2.reorg_yolo(ov_param(data), [stride]), "ReorgYolo", 2,
                [tensor(data)], {"stride": str(stride)}, label=f"{data} stride={stride}")


def test_reorg_yolo_infers_what_openvino_infers():
    agree_with_openvino("reorg_yolo", reorg_yolo_case, 1500)
