"""``compare`` of detectors: a DetectionOutput's rows are compared as sets of detections
per image (class, IoU >= 0.5, greedy by score), not element by element, whose order
follows the scores. An SSD-like detector built with OpenVINO's opset API (a conv
backbone, box and class heads, PriorBox, DetectionOutput-8), saved in f32 and with
``compress_to_fp16``: its detections match; with the box head perturbed they do not."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset8 as ops
import pytest

import ovgather as og
from ovgather.cli import main
from ovgather.comparison.detections import MIN_SCORE, detection_verdict, match_sets
from ovgather.comparison.outputs import OutputComparison

PRIORS, CLASSES = 2, 3


def _i64(*values):
    return ops.constant(np.array(values, np.int64))


def _flat(t):
    return ops.reshape(ops.transpose(t, _i64(0, 2, 3, 1)), _i64(1, -1), False)


def _conv(x, w):
    return ops.convolution(x, ops.constant(w), [1, 1], [1, 1], [1, 1], [1, 1])


def detector(box_scale: float = 1.0) -> ov.Model:
    """image [1,3,32,32] -> a backbone conv (stride 4) -> box and class heads over an
    8x8 map with two priors a cell -> DetectionOutput [1,1,100,7]."""
    rng = np.random.default_rng(0)
    x = ops.parameter([1, 3, 32, 32], np.float32, name="image")
    w = rng.normal(0, 0.5, (8, 3, 3, 3)).astype(np.float32)
    f = ops.relu(ops.convolution(x, ops.constant(w), [4, 4], [1, 1], [1, 1], [1, 1]))
    loc = _conv(f, box_scale * rng.normal(0, 0.3, (PRIORS * 4, 8, 3, 3)).astype(np.float32))
    conf = _conv(f, rng.normal(0, 0.4, (PRIORS * CLASSES, 8, 3, 3)).astype(np.float32))
    scores = ops.softmax(ops.reshape(_flat(conf), _i64(1, -1, CLASSES), False), 2)
    priors = ops.prior_box(_i64(8, 8), _i64(32, 32), {
        "min_size": [8.0], "max_size": [16.0], "aspect_ratio": [1.0], "clip": True,
        "flip": False, "step": 4.0, "offset": 0.5, "variance": [0.1, 0.1, 0.2, 0.2]})
    det = ops.detection_output(
        _flat(loc), ops.reshape(scores, _i64(1, -1), False), ops.unsqueeze(priors, _i64(0)),
        {"background_label_id": 0, "top_k": 200, "keep_top_k": [100],
         "code_type": "caffe.PriorBoxParameter.CENTER_SIZE", "nms_threshold": 0.45,
         "confidence_threshold": 0.3, "share_location": True,
         "variance_encoded_in_target": False, "normalized": True})
    det.set_friendly_name("detection_out")
    result = ops.result(det)
    result.output(0).get_tensor().set_names({"detection_out"})
    return ov.Model([result], [x], "ssd")


@pytest.fixture(scope="module")
def detectors(tmp_path_factory):
    d = tmp_path_factory.mktemp("detectors")
    paths = {k: str(d / f"{k}.xml") for k in ("f32", "f16", "perturbed")}
    ov.save_model(detector(), paths["f32"], compress_to_fp16=False)
    ov.save_model(detector(), paths["f16"], compress_to_fp16=True)
    ov.save_model(detector(box_scale=-4.0), paths["perturbed"], compress_to_fp16=False)
    return paths


def test_fp16_detector_matches_as_sets(detectors):
    report = og.compare(detectors["f32"], detectors["f16"])
    (out,) = report.outputs
    assert out.status == "ok", out.message
    assert report.ok
    assert "only in A" in out.message and "matched" in out.message
    matched = int(out.message.split(": ")[1].split(" matched")[0])
    assert matched > 20, out.message  # the detector finds things: the test proves some
    assert 0 < out.max_abs < 0.01


def test_perturbed_head_leaves_detections_unmatched(detectors, capsys):
    report = og.compare(detectors["f32"], detectors["perturbed"])
    (out,) = report.outputs
    assert out.status == "differs"
    assert "has no match" in out.message and f"at score >= {MIN_SCORE:g}" in out.message
    assert main(["compare", detectors["f32"], detectors["perturbed"]]) == 1
    assert "only in B" in capsys.readouterr().out


def _rows(*dets, size=8):
    out = np.zeros((1, 1, size, 7), np.float32)
    out[0, 0, :, 0] = -1
    for k, d in enumerate(dets):
        out[0, 0, k] = d
    return out


def test_order_and_low_scores_do_not_matter():
    """The same detections in another order match; one below MIN_SCORE only in B is
    counted, not failed; rows after the image id -1 are not read."""
    a = _rows([0, 1, 0.9, 0.1, 0.1, 0.5, 0.5], [0, 2, 0.8, 0.5, 0.5, 0.9, 0.9])
    b = _rows([0, 2, 0.81, 0.5, 0.5, 0.9, 0.91], [0, 1, 0.9, 0.1, 0.1, 0.5, 0.5],
              [0, 1, 0.2, 0.6, 0.0, 0.7, 0.1])
    b[0, 0, 4] = [0, 1, 0.99, 0, 0, 1, 1]  # after the list's end (row 3 is -1)
    res = detection_verdict(OutputComparison("d", "d"), a, b, 1e-5, 1e-5)
    assert res.status == "ok", res.message
    assert "2 matched, 0 only in A, 1 only in B" in res.message


def test_class_and_overlap_decide_a_match():
    """Another class, or IoU below 0.5, is no match; greedy by score: the highest score
    takes the best overlap first."""
    a = np.array([[0, 1, 0.9, 0, 0, 1, 1], [0, 1, 0.6, 0, 0, 1, 0.9]], np.float64)
    b = np.array([[0, 1, 0.6, 0, 0, 1, 0.9], [0, 1, 0.9, 0, 0, 1, 1],
                  [0, 2, 0.9, 0, 0, 1, 1]], np.float64)
    assert sorted(match_sets(a, b)) == [(0, 1), (1, 0)]
    far = np.array([[0, 1, 0.9, 0.6, 0.6, 1.6, 1.6]])
    assert match_sets(a[:1], far) == []
    res = detection_verdict(OutputComparison("d", "d"), _rows(a[0]), _rows(far[0]), 0, 0)
    assert res.status == "differs" and "1 only in A, 1 only in B" in res.message


def test_no_detection_proves_nothing():
    res = detection_verdict(OutputComparison("d", "d"), _rows(), _rows(), 1e-5, 1e-5)
    assert res.status == "nothing proven"
