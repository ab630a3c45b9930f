"""DetectionOutput-1/8 against OpenVINO on seeded random SSD heads: images, priors and
classes that fit or not, normalized or not, shared locations or not, variances in the
target or not, with and without the auxiliary inputs, and several top_k/keep_top_k."""

from __future__ import annotations

import openvino.opset1 as ov1
import openvino.opset8 as ov8
import pytest
from op_diff import Case, agree_with_openvino, ints, ov_param, tensor
from shape_texts import near


def detection_case(rng, version: int) -> Case:
    images, priors, classes = rng.choice((1, 2, "?")), rng.choice((1, 3, 8)), rng.choice((2, 5))
    share, normalized = rng.random() < 0.6, rng.random() < 0.6
    variance = rng.random() < 0.3
    loc = 1 if share else classes
    shapes = [near(rng, [images, priors * loc * 4]), near(rng, [images, priors * classes]),
              near(rng, [rng.choice((1, images)), 1 if variance else 2,
                          priors * (4 if normalized else 5)])]
    if rng.random() < 0.3:
        shapes += [near(rng, [images, priors * 2]), shapes[0] if rng.random() < 0.8
                   else near(rng, [images, priors * loc * 4])]
    keep = [rng.choice((-1, -1, 0, 10, 200))]
    top_k = rng.choice((-1, 0, 5, 100))
    ov_attrs = {"keep_top_k": keep, "top_k": top_k, "share_location": share,
                "normalized": normalized, "variance_encoded_in_target": variance,
                "nms_threshold": 0.5}
    if version == 1:
        ov_attrs["num_classes"] = classes if rng.random() < 0.9 else rng.choice((1, 3))
    attrs = {k: (ints(v) if isinstance(v, list) else str(v).lower()) for k, v in ov_attrs.items()}
    make = ov8.detection_output if version == 8 else ov1.detection_output
    return Case(lambda: make(*[ov_param(s) for s in shapes[:3]], ov_attrs,
                             *[ov_param(s) for s in shapes[3:]]),
                "DetectionOutput", version, [tensor(s) for s in shapes], attrs,
                label=f"{shapes} {attrs}")


@pytest.mark.parametrize("version", [1, 8])
def test_detection_output_infers_what_openvino_infers(version):
    agree_with_openvino(f"detection_output{version}", detection_case, 1500, version)
