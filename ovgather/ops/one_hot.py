"""OneHot-1: the indices' shape with the depth inserted at ``axis``.

``axis`` may count from the end over the output's rank (``-1`` appends the depth). The
depth is a scalar whose value (or value bounds) gives the new dim, ``?`` when unknown; a
negative depth is an error. ``on_value`` and ``off_value`` are scalars too: an input whose
shape is known and is not ``[]`` breaks the rule.

>>> from ovgather.shapes import PartialShape as P
>>> str(one_hot_shape(P.parse("[2,?]"), Dimension(5), -1))
'[2,?,5]'
>>> str(one_hot_shape(P.parse("[2,?]"), Dimension(5), 0))
'[5,2,?]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds, dim_of_bounds

__all__ = ["one_hot_shape", "SPECS"]


def one_hot_shape(indices: PartialShape, depth: Dimension, axis: int) -> PartialShape:
    dims = indices.dims
    if dims is None:
        return indices
    rank = len(dims) + 1
    if not -rank <= axis < rank:
        raise ShapeInferenceError(f"the axis must lie in [{-rank}, {rank - 1}], but got {axis}")
    axis = axis + rank if axis < 0 else axis
    return PartialShape.of(dims[:axis] + (depth,) + dims[axis:])


def _one_hot(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    for t, name in zip(ins[1:4], ("depth", "on_value", "off_value"), strict=False):
        if t.shape.is_static and t.shape.dims:
            raise ShapeInferenceError(f"{name} must be a scalar, but got {t.shape}")
    if ins[0].shape.dims is None:
        return [Tensor(ins[0].shape, ins[2].etype)]
    computed_shape_bounds(ins[1], "the depth")
    depth, value = DYNAMIC, ins[1].value
    if value is not None and len(value[0]) == 1:
        lo, hi = value[0][0], value[1][0]
        if hi < 0:
            raise ShapeInferenceError(f"the depth must not be negative, but got {hi}")
        depth = dim_of_bounds(lo, hi)
    shape = one_hot_shape(ins[0].shape, depth, attrs.int("axis"))
    return [Tensor(shape, ins[2].etype)]


SPECS = specs_of({"OneHot": _one_hot})
