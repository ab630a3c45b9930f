"""Placing values among boundaries: Bucketize-3 and SearchSorted-15.

Bucketize keeps the data's shape (its ``output_type``); the buckets are 1-D. SearchSorted
gives the values' shape: a 1-D sorted sequence serves every value, a longer one has the
values' leading dims (same rank, dims merged) and its own last dim.

>>> from ovgather.shapes import PartialShape as P
>>> str(search_sorted_shape(P.parse("[3..4,5]"), P.parse("[2..3,7]")))
'[3,7]'
>>> str(search_sorted_shape(P.parse("[2,5]"), P.parse("[...]")))
'[2,?]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, PartialShape
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor

__all__ = ["search_sorted_shape", "SPECS"]


def search_sorted_shape(sorted_seq: PartialShape, values: PartialShape) -> PartialShape:
    seq = sorted_seq.dims
    if seq is not None and not seq:
        raise ShapeInferenceError("the sorted sequence must not be a scalar, but got []")
    if seq is None or len(seq) == 1:
        return values
    if values.dims is None:
        return PartialShape.of(seq[:-1] + (DYNAMIC,))
    if len(values.dims) != len(seq):
        raise ShapeInferenceError(
            f"a sorted sequence of rank 2 or more needs values of its rank, but got "
            f"{sorted_seq} and {values}")
    merged = PartialShape.of(seq[:-1]).merge(PartialShape.of(values.dims[:-1]))
    if merged is None:
        raise ShapeInferenceError(
            f"all dims but the last must match, but got {sorted_seq} and {values}")
    return PartialShape.of(merged.dims + values.dims[-1:])


def _bucketize(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    buckets = ins[1].shape.dims
    if buckets is not None and len(buckets) != 1:
        raise ShapeInferenceError(f"the buckets must be 1-D, but got {ins[1].shape}")
    return [Tensor(ins[0].shape, attrs.text("output_type", "i64"))]


def _search_sorted(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    shape = search_sorted_shape(ins[0].shape, ins[1].shape)
    return [Tensor(shape, attrs.text("output_type", "i64"))]


SPECS = specs_of({"Bucketize": _bucketize, "SearchSorted": _search_sorted})
