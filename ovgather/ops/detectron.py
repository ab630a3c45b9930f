"""The ExperimentalDetectron ops (opset6): DetectionOutput, GenerateProposalsSingleImage,
PriorGridGenerator, ROIFeatureExtractor and TopKROIs.

- TopKROIs: ROIs ``[N, 4]`` and probabilities ``[N]`` give ``[max_rois, 4]``.
- DetectionOutput: ROIs ``[N, 4]``, deltas ``[N, 4 * num_classes]``, scores
  ``[N, num_classes]`` and image info ``[1, 3]`` give ``[max_detections_per_image, 4]``
  boxes and that many classes and scores.
- GenerateProposalsSingleImage: image info ``[3]``, anchors ``[A, 4]``, deltas and scores
  (3-D, the same height and width) give ``[post_nms_count, 4]`` ROIs and their scores.
- PriorGridGenerator: priors ``[P, 4]``, a 4-D feature map and image give
  ``[H * W * P, 4]`` (``flatten``) or ``[H, W, P, 4]``.
- ROIFeatureExtractor: ROIs ``[N, 4]`` and pyramid levels ``[1, C, h, w]`` give
  ``[N, C, output_size, output_size]`` features and the ``[N, 4]`` ROIs.

>>> from ovgather.shapes import PartialShape as P
>>> print(prior_grid_shape(P.parse("[3,4]"), P.parse("[1,8,5,6]"), P.parse("[1,3,?,?]"), True))
[90,4]
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["prior_grid_shape", "SPECS"]

FOUR = Dimension.static(4)


def _check(ok: bool, rule: str, shapes) -> None:
    if not ok:
        raise ShapeInferenceError(f"{rule}, but got {', '.join(str(s) for s in shapes)}")


def _boxes(shape: PartialShape, name: str, shapes) -> None:
    """``[N, 4]`` when the rank is known."""
    if shape.dims is not None:
        _check(len(shape.dims) == 2 and shape.dims[1].compatible(FOUR),
               f"the {name} must be [N, 4]", shapes)


def _rank(shape: PartialShape, rank: int, name: str, shapes) -> None:
    _check(shape.rank in (None, rank), f"the {name} must be {rank}-D", shapes)


def _top_k_rois(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    rois, probs = ins[0].shape, ins[1].shape
    shapes = [rois, probs]
    _boxes(rois, "ROIs", shapes)
    _rank(probs, 1, "probabilities", shapes)
    if rois.dims is not None and probs.dims is not None:
        _check(rois.dims[0].compatible(probs.dims[0]), "there must be one probability per ROI",
               shapes)
    n = Dimension.static(max(attrs.int("max_rois", 0), 0))
    return [Tensor(PartialShape.of((n, FOUR)), ins[0].etype)]


def _detection_output(ins: list[Tensor], attrs: Attrs,
                      trace: Trace | None = None) -> list[Tensor]:
    shapes = [t.shape for t in ins[:4]]
    rois, deltas, scores, info = shapes
    classes = attrs.int("num_classes")
    _boxes(rois, "ROIs", shapes)
    for shape, per_class, name in ((deltas, 4, "deltas"), (scores, 1, "scores")):
        if shape.dims is not None:
            _check(len(shape.dims) == 2 and shape.dims[1].compatible(
                Dimension.static(max(classes * per_class, 0))),
                f"the {name} must be [N, {per_class} * num_classes]", shapes)
    _check(info.compatible(PartialShape([1, 3])), "the image info must be [1, 3]", shapes)
    if all(s.dims is not None for s in (rois, deltas, scores)):
        batch = rois.dims[0].merge(deltas.dims[0])
        _check(batch is not None and batch.merge(scores.dims[0]) is not None,
               "ROIs, deltas and scores must have one batch", shapes)
    n = Dimension.static(max(attrs.int("max_detections_per_image", 0), 0))
    return [Tensor(PartialShape.of((n, FOUR)), ins[0].etype),
            Tensor(PartialShape.of((n,)), "i32"), Tensor(PartialShape.of((n,)), ins[0].etype)]


def _generate_proposals(ins: list[Tensor], attrs: Attrs,
                        trace: Trace | None = None) -> list[Tensor]:
    shapes = [t.shape for t in ins[:4]]
    info, anchors, deltas, scores = shapes
    _rank(info, 1, "image info", shapes)
    _check(info.dims is None or info.dims[0].compatible(Dimension.static(3)),
           "the image info must hold 3 values", shapes)
    _rank(anchors, 2, "anchors", shapes)
    _check(anchors.dims is None or anchors.dims[1].compatible(FOUR), "anchors must be boxes",
           shapes)
    _rank(deltas, 3, "deltas", shapes)
    _rank(scores, 3, "scores", shapes)
    if deltas.dims is not None and scores.dims is not None:
        _check(deltas.dims[1].compatible(scores.dims[1])
               and deltas.dims[2].compatible(scores.dims[2]),
               "deltas and scores must have one height and width", shapes)
    n = Dimension.static(max(attrs.int("post_nms_count", 0), 0))
    return [Tensor(PartialShape.of((n, FOUR)), ins[0].etype),
            Tensor(PartialShape.of((n,)), ins[0].etype)]


def prior_grid_shape(priors: PartialShape, features: PartialShape, image: PartialShape,
                     flatten: bool) -> PartialShape:
    shapes = [priors, features, image]
    _boxes(priors, "priors", shapes)
    _check(features.rank in (None, 4), "the feature map must be 4-D", shapes)
    _check(image.rank in (None, 4), "the image must be 4-D", shapes)
    if features.dims is not None and image.dims is not None:
        _check(features.dims[0].compatible(image.dims[0]),
               "the feature map and the image must have one batch", shapes)
    p = DYNAMIC if priors.dims is None else priors.dims[0]
    if flatten:
        known = priors.dims is not None and features.dims is not None
        return PartialShape.of(
            (features.dims[2] * features.dims[3] * p if known else DYNAMIC, FOUR))
    h, w = (DYNAMIC, DYNAMIC) if features.dims is None else features.dims[2:4]
    return PartialShape.of((h, w, p, FOUR))


def _prior_grid(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape = prior_grid_shape(ins[0].shape, ins[1].shape, ins[2].shape,
                             attrs.bool("flatten", True))
    return [Tensor(shape, ins[0].etype)]


def _roi_features(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shapes = [t.shape for t in ins]
    rois = shapes[0]
    _rank(rois, 2, "ROIs", shapes)
    n = DYNAMIC if rois.dims is None else rois.dims[0]
    if rois.dims is not None:
        _check(rois.dims[1].compatible(FOUR), "the ROIs must be [N, 4]", shapes)
    channels = None
    for level in shapes[1:]:
        _rank(level, 4, "pyramid level", shapes)
        if level.dims is None:
            continue
        _check(level.dims[0].compatible(Dimension.static(1)),
               "each pyramid level must have a batch of 1", shapes)
        channels = level.dims[1] if channels is None else channels.merge(level.dims[1])
        _check(channels is not None, "the pyramid levels must have one channel count", shapes)
    size = Dimension.static(max(attrs.int("output_size", 0), 0))
    features = (n, DYNAMIC if channels is None else channels, size, size)
    return [Tensor(PartialShape.of(features), ins[0].etype),
            Tensor(PartialShape.of((n, FOUR)), ins[0].etype)]


SPECS = specs_of({"ExperimentalDetectronTopKROIs": _top_k_rois,
                  "ExperimentalDetectronDetectionOutput": _detection_output,
                  "ExperimentalDetectronGenerateProposalsSingleImage": _generate_proposals,
                  "ExperimentalDetectronPriorGridGenerator": _prior_grid,
                  "ExperimentalDetectronROIFeatureExtractor": _roi_features})
