"""The ExperimentalDetectron ops against OpenVINO (built through the IR reader: the Python
API has none), every output, on seeded random shapes whose dims mostly agree and on
random counts: TopKROIs, DetectionOutput, GenerateProposalsSingleImage,
PriorGridGenerator (flattened or not) and ROIFeatureExtractor (1 to 3 pyramid levels)."""

from __future__ import annotations

import pytest
from ir_build import build_op
from op_diff import Case, tensor
from op_diff_outputs import agree_on_every_output
from shape_texts import near


def _case(rng, op: str, shapes: list[str], attrs: dict[str, str], n_outputs: int) -> Case:
    return Case(lambda: build_op(op, 6, shapes, attrs, n_outputs), op, 6,
                [tensor(s) for s in shapes], attrs, n_outputs, label=f"{shapes} {attrs}")


def top_k_case(rng) -> Case:
    n = rng.choice((5, 10, "?"))
    return _case(rng, "ExperimentalDetectronTopKROIs", [near(rng, [n, 4]), near(rng, [n])],
                 {"max_rois": str(rng.choice((1, 5, 100)))}, 1)


def detection_case(rng) -> Case:
    n, classes = rng.choice((5, 10, "?")), rng.choice((2, 5))
    shapes = [near(rng, [n, 4]), near(rng, [n, 4 * classes]), near(rng, [n, classes]),
              near(rng, [1, 3])]
    attrs = {"num_classes": str(classes), "max_detections_per_image": str(rng.choice((1, 100))),
             "score_threshold": "0.05", "nms_threshold": "0.5", "max_delta_log_wh": "4.1",
             "post_nms_count": "2000", "class_agnostic_box_regression": "false",
             "deltas_weights": "10,10,5,5"}
    return _case(rng, "ExperimentalDetectronDetectionOutput", shapes, attrs, 3)


def proposals_case(rng) -> Case:
    a, h, w = rng.choice((3, 6)), rng.choice((4, "?")), 5
    shapes = [near(rng, [3]), near(rng, [a * 20, 4]), near(rng, [4 * a, h, w]),
              near(rng, [a, h, w])]
    attrs = {"min_size": "0", "nms_threshold": "0.7", "pre_nms_count": "1000",
             "post_nms_count": str(rng.choice((1, 100)))}
    return _case(rng, "ExperimentalDetectronGenerateProposalsSingleImage", shapes, attrs, 2)


def prior_grid_case(rng) -> Case:
    n = rng.choice((1, 2, "?"))
    shapes = [near(rng, [rng.choice((3, 9)), 4]), near(rng, [n, 8, 5, 6]),
              near(rng, [n, 3, 40, 48])]
    attrs = {"flatten": rng.choice(("true", "false")), "h": "0", "w": "0",
             "stride_x": "8", "stride_y": "8"}
    return _case(rng, "ExperimentalDetectronPriorGridGenerator", shapes, attrs, 1)


def roi_features_case(rng) -> Case:
    channels = rng.choice((8, "?"))
    shapes = [near(rng, [rng.choice((5, "?")), 4])]
    shapes += [near(rng, [1, channels, 2 ** (4 - k), 2 ** (4 - k)])
               for k in range(rng.randint(1, 3))]
    attrs = {"output_size": str(rng.choice((7, 14))), "sampling_ratio": "2",
             "pyramid_scales": ",".join(str(4 * 2 ** k) for k in range(len(shapes) - 1)),
             "aligned": "false"}
    return _case(rng, "ExperimentalDetectronROIFeatureExtractor", shapes, attrs, 2)


CASES = {"TopKROIs": top_k_case, "DetectionOutput": detection_case,
         "GenerateProposalsSingleImage": proposals_case, "PriorGridGenerator": prior_grid_case,
         "ROIFeatureExtractor": roi_features_case}


@pytest.mark.parametrize("op", list(CASES))
def test_detectron_ops_infer_what_openvino_infers(op):
    agree_on_every_output(f"detectron_{op}", CASES[op], 500)
