"""The non-maximum suppressions against OpenVINO, every output port: NonMaxSuppression-1/3/4/
5/9 and NMSRotated-13 (max_output_boxes_per_class as constants, negative ones too, and as
parameters; scalar and one-element thresholds), MulticlassNms-8/9 (with and without
roisnum) and MatrixNms-8 over the top-k attributes, on seeded random boxes and scores."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset3 as ov3
import openvino.opset4 as ov4
import openvino.opset5 as ov5
import openvino.opset8 as ov8
import openvino.opset9 as ov9
import openvino.opset13 as ov13
import pytest
from op_diff import Case, const, ov_param, tensor
from op_diff_outputs import agree_on_every_output
from ov_oracle import random_dim

CASES = 600
NMS = {1: ov1, 3: ov3, 4: ov4, 5: ov5, 9: ov9, 13: ov13}


def _dim(rng, like: str) -> str:
    return like if rng.random() < 0.75 else random_dim(rng)


def _boxes_scores(rng, last: int, rois: bool = False):
    batch, boxes, classes = (rng.choice(("1", "2", "3", "?", "1..3", random_dim(rng)))
                             for _ in range(3))
    box = [_dim(rng, batch), _dim(rng, boxes), _dim(rng, str(last))]
    if rois:
        score = [_dim(rng, batch), _dim(rng, boxes)]
    else:
        score = [_dim(rng, batch), classes, _dim(rng, boxes)]
    if rng.random() < 0.05:
        score.append("1")
    return ("[...]" if rng.random() < 0.1 else "[" + ",".join(box) + "]",
            "[...]" if rng.random() < 0.1 else "[" + ",".join(score) + "]")


def _scalar(rng) -> str:
    return rng.choice(("[]", "[]", "[1]", "[?]", "[...]", "[2]"))


def nms_case(rng, version: int) -> Case:
    boxes, scores = _boxes_scores(rng, 5 if version == 13 else 4)
    if rng.random() < 0.6:
        value = rng.choice((0, 1, 2, 5, 20, -1, -3))
        shape = "[1]" if version >= 5 and rng.random() < 0.3 else "[]"
        data = np.full([1] if shape == "[1]" else [], value, np.int64)
        max_in, max_build = const(data), lambda: ov1.constant(data)
    else:
        shape = _scalar(rng)
        max_in, max_build = tensor(shape, "i64"), lambda: ov_param(shape, ov.Type.i64)
    thresholds = [_scalar(rng) for _ in range(3 if version in (5, 9) else 2)]
    if version in (5, 9) and rng.random() < 0.4:
        thresholds.pop()
    op = NMS[version]

    def build():
        args = [ov_param(boxes), ov_param(scores), max_build()] + [ov_param(t)
                                                                    for t in thresholds]
        return (op.nms_rotated(*args) if version == 13 else op.non_max_suppression(*args))

    return Case(build, "NMSRotated" if version == 13 else "NonMaxSuppression", version,
                [tensor(boxes), tensor(scores), max_in] + [tensor(t) for t in thresholds],
                label=f"{boxes} {scores} {max_in!r} {thresholds}")


@pytest.mark.parametrize("version", list(NMS))
def test_nms_infers_what_openvino_infers(version):
    agree_on_every_output(f"nms{version}", nms_case, CASES, version)


def _top_k(rng):
    return {name: rng.choice((-1, -1, 0, 1, 3, 7, 50, -2 if rng.random() < 0.1 else -1))
            for name in ("nms_top_k", "keep_top_k", "background_class")}


def multiclass_case(rng, version: int) -> Case:
    rois = version == 9 and rng.random() < 0.5
    boxes, scores = _boxes_scores(rng, 4, rois)
    attrs = _top_k(rng)
    attrs["nms_eta"] = rng.choice((1.0, 0.5, 0.0, 2.0 if rng.random() < 0.2 else 1.0))
    extra = [rng.choice(("[2]", "[?]", "[...]", "[1..4]", "[2,1]"))] if rois else []
    op = ov9 if version == 9 else ov8

    def build():
        return op.multiclass_nms(ov_param(boxes), ov_param(scores),
                                 *[ov_param(e, ov.Type.i32) for e in extra], **attrs)

    return Case(build, "MulticlassNms", version,
                [tensor(boxes), tensor(scores)] + [tensor(e, "i32") for e in extra],
                {k: str(v) for k, v in attrs.items()}, 3, label=f"{boxes} {scores} {extra} {attrs}")


@pytest.mark.parametrize("version", [8, 9])
def test_multiclass_nms_infers_what_openvino_infers(version):
    agree_on_every_output(f"multiclass_nms{version}", multiclass_case, CASES, version)


def matrix_case(rng) -> Case:
    boxes, scores = _boxes_scores(rng, 4)
    attrs = _top_k(rng)
    return Case(lambda: ov8.matrix_nms(ov_param(boxes), ov_param(scores), **attrs), "MatrixNms",
                8, [tensor(boxes), tensor(scores)], {k: str(v) for k, v in attrs.items()}, 3,
                label=f"{boxes} {scores} {attrs}")


def test_matrix_nms_infers_what_openvino_infers():
    agree_on_every_output("matrix_nms", matrix_case, CASES)
