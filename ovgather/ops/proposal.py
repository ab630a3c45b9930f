"""Proposal-1 and Proposal-4: region proposals from class probabilities and box deltas.

``class_probs`` ``[N, 2A, H, W]`` and ``bbox_deltas`` ``[N, 4A, H, W]`` (both 4-D, the
deltas' channels compatible with twice the probabilities') and a 1-D image info of 3 or 4
elements give ``[N * post_nms_topn, 5]`` boxes; Proposal-4 also gives their
``[N * post_nms_topn]`` scores.

>>> from ovgather.shapes import PartialShape
>>> shapes = [PartialShape.parse(s) for s in ("[2,6,4,4]", "[?,12,4,4]", "[3]")]
>>> print(proposal_shape(*shapes, top_n=10))
[20,5]
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .spec import Attrs, Trace, specs_of
from .values import Tensor

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


SPECS = specs_of({"Proposal": _proposal})
