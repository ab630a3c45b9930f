"""Unique-10: the unique elements (or slices along ``axis``) of a tensor, with their first
indices, the input's indices into them and their counts.

Without ``axis`` the data is flattened: a static shape of ``n > 0`` elements gives
``[1..n]`` unique elements, first indices and counts, and ``[n]`` reverse indices; any
other shape gives ``[?]`` each. With a constant ``axis`` (of a data of rank 1 or more) the
unique slices are the data's shape with the axis dim ``d`` become ``1..`` its upper bound
(``0`` stays ``0``, ``?`` stays ``?``), the reverse indices are ``[d]``, and the first indices and
counts are ``[0]`` when ``d`` is ``0``, else as without an axis.

>>> from ovgather.shapes import PartialShape as P
>>> [str(s) for s in unique_shapes(P.parse("[2,3]"), 1)]
['[2,1..3]', '[1..6]', '[3]', '[1..6]']
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, exact_ints, static_size

__all__ = ["unique_shapes", "SPECS"]

ZERO = Dimension.static(0)


def unique_shapes(data: PartialShape, axis: int | None) -> list[PartialShape]:
    """The four outputs: unique elements, first indices, reverse indices, counts."""
    n = static_size(data)
    some = PartialShape.of((Dimension.from_bounds(1, n) if n else DYNAMIC,))
    if axis is None:
        return [some, some, PartialShape.of((Dimension.static(n) if n else DYNAMIC,)), some]
    dims = data.dims
    if dims is None:
        return [data, some, some, some]
    if not -len(dims) <= axis < len(dims) or not dims:
        raise ShapeInferenceError(
            f"the axis must lie in [{-len(dims)}, {len(dims) - 1}], but got {axis}")
    d = dims[axis]
    out = list(dims)
    if not d.is_fully_dynamic:
        out[axis] = Dimension.from_bounds(min(d.hi, 1), d.hi)
    found = PartialShape.of((ZERO,)) if d == ZERO else some
    return [PartialShape.of(tuple(out)), found, PartialShape.of((d,)), found]


def _unique(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    axis = None
    if len(ins) > 1:
        value = exact_ints(ins[1])
        if value is None or len(value) != 1:
            raise ShapeInferenceError(
                f"the axis must be a constant of one element, but got {ins[1].shape}")
        axis = value[0]
    shapes = unique_shapes(ins[0].shape, axis)
    index, count = attrs.text("index_element_type", "i64"), attrs.text("count_element_type", "i64")
    return [Tensor(shapes[0], ins[0].etype), Tensor(shapes[1], index), Tensor(shapes[2], index),
            Tensor(shapes[3], count)]


SPECS = specs_of({"Unique": _unique})
