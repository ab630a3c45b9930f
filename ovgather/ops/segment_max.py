"""SegmentMax-16: the maximum of each segment of the data's rows.

The data (rank 1 or more) keeps its shape but for the first dim, which becomes the number
of segments: ``num_segments`` (a scalar; its value bounds when other layers compute it,
which must not go below 0; ``?`` when unknown), and
without it one more than the largest constant ``segment_id``, else ``?``. The
``segment_ids`` are 1-D, one per data row, and a constant list of them must be sorted.

>>> from ovgather.shapes import PartialShape as P
>>> str(segment_max_shape(P.parse("[5,?]"), P.parse("[5]"), (0, 0, 1, 3, 3), None))
'[4,?]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.dims import int_dim
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds, dim_of_bounds, exact_ints

__all__ = ["segment_max_shape", "SPECS"]


def segment_max_shape(data: PartialShape, ids_shape: PartialShape, ids: tuple[int, ...] | None,
                      segments: int | Dimension | None, given: bool = False) -> PartialShape:
    """``segments``: num_segments, exact or as bounds (None: unknown; ``given``: there is
    one)."""
    dims = data.dims
    if dims is not None and not dims:
        raise ShapeInferenceError("the data must not be a scalar, but got []")
    if ids_shape.rank not in (None, 1):
        raise ShapeInferenceError(f"segment_ids must be 1-D, but got {ids_shape}")
    if dims is not None and ids_shape.dims is not None and not dims[0].compatible(
            ids_shape.dims[0]):
        raise ShapeInferenceError(
            f"there must be one segment id per data row, but got {ids_shape} for {data}")
    if ids is not None and list(ids) != sorted(ids):
        raise ShapeInferenceError(f"segment_ids must be sorted, but got {list(ids)}")
    if dims is None:
        return data
    if isinstance(segments, Dimension):
        first = segments
    elif segments is not None:
        first = int_dim(segments)
    elif ids and not given:
        first = int_dim(max(ids) + 1)
    else:
        first = DYNAMIC
    return PartialShape.of((first,) + dims[1:])


def _segment_max(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    segments = None
    if len(ins) > 2:
        if ins[2].shape.rank not in (None, 0):
            raise ShapeInferenceError(f"num_segments must be a scalar, but got {ins[2].shape}")
        computed_shape_bounds(ins[2], "num_segments")
        value, bounds = exact_ints(ins[2]), ins[2].value
        segments = value[0] if value else None
        if segments is None and bounds is not None and len(bounds[0]) == 1:
            segments = dim_of_bounds(bounds[0][0], bounds[1][0])
    shape = segment_max_shape(ins[0].shape, ins[1].shape, exact_ints(ins[1]), segments,
                              len(ins) > 2)
    return [Tensor(shape, ins[0].etype)]


SPECS = specs_of({"SegmentMax": _segment_max})
