"""Region proposals: Proposal-1, Proposal-4 and GenerateProposals-9.

``class_probs`` ``[N, 2A, H, W]`` and ``bbox_deltas`` ``[N, 4A, H, W]`` (both 4-D, the
deltas' channels compatible with twice the probabilities') and a 1-D image info of 3 or 4
elements give ``[N * post_nms_topn, 5]`` boxes; Proposal-4 also gives their
``[N * post_nms_topn]`` scores.

GenerateProposals takes a 2-D image info ``[N, 3 or 4]``, anchors ``[H, W, A, 4]``,
deltas ``[N, 4A, H, W]`` and scores ``[N, A, H, W]`` (all agreeing) and gives
``[0..N * post_nms_count, 4]`` ROIs, their scores and ``[N]`` counts (``N`` merged from the
inputs that agree on it).

>>> from ovgather.shapes import PartialShape
>>> shapes = [PartialShape.parse(s) for s in ("[2,6,4,4]", "[?,12,4,4]", "[3]")]
>>> print(proposal_shape(*shapes, top_n=10))
[20,5]
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["proposal_shape", "SPECS"]


def proposal_shape(probs: PartialShape, deltas: PartialShape, info: PartialShape,
                   top_n: int) -> PartialShape:
    for shape, name in ((probs, "class_probs"), (deltas, "bbox_deltas")):
        if shape.rank not in (None, 4):
            raise ShapeInferenceError(f"{name} must be 4-D, but got {shape}")
    if info.dims is not None and (len(info.dims) != 1 or not (
            info.dims[0].compatible(Dimension.static(3))
            or info.dims[0].compatible(Dimension.static(4)))):
        raise ShapeInferenceError(f"the image info must be 1-D of 3 or 4 elements, but got {info}")
    batch = DYNAMIC
    if probs.dims is not None:
        batch = probs.dims[0]
        if deltas.dims is not None and not deltas.dims[1].compatible(probs.dims[1] * 2):
            raise ShapeInferenceError(
                f"bbox_deltas must have twice the channels of class_probs, but got {deltas} "
                f"and {probs}")
    if deltas.dims is not None:
        batch = batch.merge(deltas.dims[0])
        if batch is None:
            raise ShapeInferenceError(
                f"class_probs and bbox_deltas must have one batch, but got {probs} and {deltas}")
    return PartialShape.of((batch * max(top_n, 0), Dimension.static(5)))


def _proposal(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    boxes = proposal_shape(ins[0].shape, ins[1].shape, ins[2].shape, attrs.int("post_nms_topn"))
    outs = [Tensor(boxes, ins[0].etype)]
    if attrs.version >= 4:
        outs.append(Tensor(PartialShape.of(boxes.dims[:1]), ins[0].etype))
    return outs


def _merged(d: Dimension, shape: PartialShape) -> Dimension:
    """``d`` merged with the shape's first dim; ``d`` when the rank is unknown or they
    clash (OpenVINO ignores that merge's result)."""
    if shape.dims is None:
        return d
    m = d.merge(shape.dims[0])
    return d if m is None else m


def _check(ok: bool, rule: str, shapes: list[PartialShape]) -> None:
    if not ok:
        raise ShapeInferenceError(f"{rule}, but got {', '.join(str(s) for s in shapes)}")


def generate_proposals_shapes(shapes: list[PartialShape], post_nms_count: int):
    info, anchors, deltas, scores = shapes
    for shape, rank, name in ((info, 2, "image info"), (anchors, 4, "anchors"),
                              (deltas, 4, "deltas"), (scores, 4, "scores")):
        _check(shape.rank in (None, rank), f"the {name} must be {rank}-D", shapes)
    if info.dims is not None:
        _check(info.dims[1].compatible(Dimension.static(3))
               or info.dims[1].compatible(Dimension.static(4)),
               "the image info must hold 3 or 4 values", shapes)
    if anchors.dims is not None:
        _check(anchors.dims[3].compatible(Dimension.static(4)), "anchors must be boxes",
               shapes)
    batches = DYNAMIC
    for shape in (info, deltas, scores):
        batches = _merged(batches, shape)
    d, s, a = deltas.dims, scores.dims, anchors.dims
    if d is not None and s is not None:
        _check(d[0].compatible(s[0]) and d[1].compatible(s[1] * 4) and d[2].compatible(s[2])
               and d[3].compatible(s[3]), "deltas must be [N, 4A, H, W] for scores "
               "[N, A, H, W]", shapes)
        _check(info.dims is None or d[0].compatible(info.dims[0]),
               "the image info must have the deltas' batch", shapes)
    if s is not None and a is not None:
        _check(a[0].compatible(s[2]) and a[1].compatible(s[3]) and a[2].compatible(s[1]),
               "anchors must be [H, W, A, 4] for scores [N, A, H, W]", shapes)
    top = (batches * max(post_nms_count, 0)).hi
    rois = Dimension.from_bounds(0, top)
    return [PartialShape.of((rois, Dimension.static(4))), PartialShape.of((rois,)),
            PartialShape.of((batches,))]


def _generate_proposals(ins: list[Tensor], attrs: Attrs,
                        trace: Trace | None = None) -> list[Tensor]:
    shapes = generate_proposals_shapes([t.shape for t in ins], attrs.int("post_nms_count"))
    count = attrs.text("roi_num_type", "i64")
    return [Tensor(shapes[0], ins[0].etype), Tensor(shapes[1], ins[0].etype),
            Tensor(shapes[2], count)]


SPECS = specs_of({"Proposal": _proposal, "GenerateProposals": _generate_proposals})
