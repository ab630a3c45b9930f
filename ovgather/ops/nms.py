"""Non-maximum suppressions: NonMaxSuppression-1/3/4/5/9, NMSRotated-13, MulticlassNms-8/9
and MatrixNms-8.

Boxes are ``[batches, boxes, 4]`` (5 for NMSRotated) and scores
``[batches, classes, boxes]``; the two must agree on the batches and the boxes. The
outputs are ``[selected, 3]`` index triples. How many are selected is bounded from the
box count, the classes and ``max_output_boxes_per_class`` (a constant; unknown otherwise):

- NonMaxSuppression-1/3: ``min(boxes, max * classes)`` when all of it is static.
- NonMaxSuppression-4: ``min(boxes, max) * batches * classes`` (each at its upper bound),
  when the box count and the max are known.
- NonMaxSuppression-5/9 and NMSRotated-13: the same, as ``0..`` that bound (the box
  count at its upper bound too); their second
  output (the scores) has the same shape and the third (the valid count) is ``[1]``.
  ``max_output_boxes_per_class`` and the thresholds may be ``[1]`` as well as scalars.

MulticlassNms and MatrixNms give ``[selected, 6]`` boxes, ``[selected, 1]`` indices and a
count per image: ``selected`` is at most ``min(boxes, nms_top_k) * classes``, cut to
``keep_top_k``, times the images. MulticlassNms-9 may take ``roisnum`` (boxes
``[classes, boxes, 4]``, scores ``[boxes, classes]``, one count per image).

>>> from ovgather.shapes import PartialShape as P
>>> str(nms_selected(P.parse("[2,10,4]"), P.parse("[2,3,10]"), 5, 5))
'..30'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, INF, Dimension, PartialShape
from .core.dims import int_dim
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, exact_ints

__all__ = ["nms_selected", "SPECS"]

SCALAR, ONE = PartialShape([]), PartialShape([1])
NAMES = ("max_output_boxes_per_class", "iou_threshold", "score_threshold", "soft_nms_sigma")


def upper(d: Dimension) -> int:
    """OpenVINO's ``get_max_length``: the upper bound, -1 when there is none."""
    return -1 if d.hi == INF else d.hi


def up_to(v: int) -> Dimension:
    """``Dimension(0, v)``: ``0..v``, unbounded when ``v`` is negative."""
    return Dimension.from_bounds(0, INF if v < 0 else v)


def _require(ok: bool, rule: str, *shapes: PartialShape) -> None:
    if not ok:
        raise ShapeInferenceError(f"{rule}, but got {', '.join(str(s) for s in shapes)}")


def _rank(shape: PartialShape, rank: int, name: str) -> None:
    _require(shape.rank in (None, rank), f"the {name} must be {rank}-D", shape)


def _check_boxes(boxes: PartialShape, scores: PartialShape, last: int,
                 classes_first: bool = True) -> None:
    """Batches and box counts agree, each box has ``last`` numbers."""
    b, s = boxes.dims, scores.dims
    if b is None:
        return
    if s is not None:
        _require(b[0].compatible(s[0]), "boxes and scores must have the same batches", boxes,
                 scores)
        n = s[2] if classes_first else s[1]
        _require(b[1].compatible(n), "boxes and scores must have the same number of boxes",
                 boxes, scores)
    _require(b[2].compatible(Dimension.static(last)), f"each box must have {last} numbers", boxes)


def nms_selected(boxes: PartialShape, scores: PartialShape, max_per_class: int | None,
                 version: int) -> Dimension:
    """The number of selected boxes of a NonMaxSuppression-``version``."""
    b, s = boxes.dims, scores.dims
    if b is None:
        return DYNAMIC
    if version < 4:
        limit = int_dim(-1 if max_per_class is None else max_per_class)
        if s is not None:
            limit = limit * s[1]
        if b[1].is_static and limit.is_static:
            return Dimension.static(min(b[1].lo, limit.lo))
        return DYNAMIC
    if s is None:
        return DYNAMIC
    limit = -1 if max_per_class is None else max_per_class
    least = min(b[1].lo if version == 4 else upper(b[1]), limit)
    if version == 4 and (not b[1].is_static or max_per_class is None):
        return DYNAMIC
    if version > 4 and least < -1:
        return DYNAMIC  # OpenVINO's count is then empty (``?``) and stays so
    selected = int_dim(least) if version == 4 else up_to(least)
    return selected * int_dim(upper(s[0])) * int_dim(upper(s[1]))


def _nms(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    """NonMaxSuppression (any version) and NMSRotated-13 (``attrs.version`` 13)."""
    version, rotated = attrs.version, attrs.version == 13
    boxes, scores = ins[0].shape, ins[1].shape
    _rank(boxes, 3, "boxes")
    _rank(scores, 3, "scores")
    for t, name in zip(ins[2:], NAMES, strict=False):
        ok = t.shape.compatible(SCALAR) or (version >= 5 and t.shape.compatible(ONE))
        _require(ok, f"{name} must be a scalar" + (" or hold one element" if version >= 5
                                                    else ""), t.shape)
    _check_boxes(boxes, scores, 5 if rotated else 4)
    value = exact_ints(ins[2]) if len(ins) > 2 else None
    selected = nms_selected(boxes, scores, value[0] if value else None,
                            9 if rotated else version)
    out_type = attrs.text("output_type", "i64")
    indices = Tensor(PartialShape.of((selected, Dimension.static(3))), out_type)
    if version < 5:
        return [indices]
    return [indices, Tensor(indices.shape, ins[0].etype), Tensor(ONE, out_type)]


def _top_k_attrs(attrs: Attrs) -> tuple[int, int]:
    nms_top_k, keep_top_k = attrs.int("nms_top_k", -1), attrs.int("keep_top_k", -1)
    for name, v in (("nms_top_k", nms_top_k), ("keep_top_k", keep_top_k),
                    ("background_class", attrs.int("background_class", -1))):
        if v < -1:
            raise ShapeInferenceError(f"{name} must be -1 or more, but got {v}")
    return nms_top_k, keep_top_k


def _outputs(selected: Dimension, count: Dimension, etype: str, attrs: Attrs) -> list[Tensor]:
    out_type = attrs.text("output_type", "i64")
    return [Tensor(PartialShape.of((selected, Dimension.static(6))), etype),
            Tensor(PartialShape.of((selected, Dimension.static(1))), out_type),
            Tensor(PartialShape.of((count,)), out_type)]


def _first_boxes(boxes: Dimension, nms_top_k: int) -> Dimension:
    return boxes if nms_top_k == -1 else int_dim(min(upper(boxes), nms_top_k))


def _multiclass_nms(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    nms_top_k, keep_top_k = _top_k_attrs(attrs)
    eta = float(attrs.text("nms_eta", "1") or "1")
    if not 0 <= eta <= 1:
        raise ShapeInferenceError(f"nms_eta must lie in [0, 1], but got {eta}")
    rois = len(ins) == 3
    boxes, scores = ins[0].shape, ins[1].shape
    _rank(boxes, 3, "boxes")
    _rank(scores, 2 if rois else 3, "scores")
    if rois:
        _rank(ins[2].shape, 1, "roisnum")
    selected = count = DYNAMIC
    b, s = boxes.dims, scores.dims
    if b is not None:
        _require(s is not None, "the scores must have a known rank when the boxes have one",
                 scores)
        _check_boxes(boxes, scores, 4, classes_first=not rois)
        images = ins[2].shape.dims[0] if rois and ins[2].shape.dims is not None else None
        if images is not None or not rois:
            classes, images = (b[0], images) if rois else (s[1], s[0])
            n = _first_boxes(b[1], nms_top_k) * classes
            if -1 < keep_top_k < upper(n):
                n = Dimension.static(keep_top_k)
            selected, count = up_to(upper(n * images)), (images if rois else b[0])
    return _outputs(selected, count, ins[0].etype, attrs)


def _matrix_nms(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    boxes, scores = ins[0].shape, ins[1].shape
    _rank(boxes, 3, "boxes")
    _rank(scores, 3, "scores")
    selected = count = DYNAMIC
    b, s = boxes.dims, scores.dims
    if b is not None:
        nms_top_k, keep_top_k = _top_k_attrs(attrs)
        _check_boxes(boxes, scores, 4)
        if s is not None:
            n = _first_boxes(b[1], nms_top_k) * s[1]
            if keep_top_k > -1:
                n = int_dim(min(upper(n), keep_top_k))
            selected = up_to(upper(n * s[0]))
        count = b[0]
    return _outputs(selected, count, ins[0].etype, attrs)


SPECS = specs_of({"NonMaxSuppression": _nms, "NMSRotated": _nms,
                  "MulticlassNms": _multiclass_nms, "MatrixNms": _matrix_nms})
