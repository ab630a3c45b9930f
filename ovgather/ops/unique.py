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
from .core.dims import normalize_axis
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
    if not dims:
        raise ShapeInferenceError(f"the axis must lie in [0, -1], but got {axis}")
    axis = normalize_axis(axis, len(dims), "the axis")
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
    value = exact_ints(ins[0]) if ins[0].const else None
    if value is not None and static_size(ins[0].shape) == len(value) \
            and (axis is None or len(ins[0].shape.dims) == 1):
        return _folded(value, ins[0].etype, index, count)
    return [Tensor(shapes[0], ins[0].etype), Tensor(shapes[1], index), Tensor(shapes[2], index),
            Tensor(shapes[3], count)]


def _folded(value: tuple, etype: str, index: str, count: str) -> list[Tensor]:
    """A Const input gives static shapes: OpenVINO counts the unique elements of constant
    data when it reads a model. Their values it leaves unknown, and data computed by other
    layers, even exact, it does not count (measured on 2026.4.1).

    >>> [str(t.shape) for t in _folded((3, 1, 3, 2), "i64", "i64", "i64")]
    ['[3]', '[3]', '[4]', '[3]']
    """
    k = PartialShape.of((Dimension.static(len(set(value))),))
    n = PartialShape.of((Dimension.static(len(value)),))
    return [Tensor(k, etype), Tensor(k, index), Tensor(n, index), Tensor(k, count)]


SPECS = specs_of({"Unique": _unique})
