"""Embedding bags: EmbeddingBagOffsetsSum-3, EmbeddingBagOffsets-15, EmbeddingBagPackedSum-3,
EmbeddingBagPacked-15 and EmbeddingSegmentsSum-3.

Each reduces rows of the embedding table ``[rows, d1, ...]`` (rank 1 or more) into bags:
the output is the table's shape with its first dim replaced by the number of bags. That
is the length of ``offsets`` (1-D) for the offsets forms, the first dim of the 2-D
``indices`` ``[bags, per_bag]`` for the packed forms, and the value of ``num_segments``
(a scalar; its value bounds, ``?`` when unknown) for EmbeddingSegmentsSum.

The other inputs are checked as OpenVINO checks them: 1-D ``indices`` (offsets and
segments forms) with ``segment_ids`` and ``per_sample_weights`` of the same shape, a
scalar ``default_index``; packed weights of the indices' 2-D shape.

>>> from ovgather.shapes import PartialShape as P
>>> str(bags_shape(P.parse("[10,4..8]"), P.parse("[3]").dims[0]))
'[3,4..8]'
"""

from __future__ import annotations

from ..errors import ShapeInferenceError
from ..shapes import DYNAMIC, Dimension, PartialShape
from .core.arrays import table_bound, table_size
from .core.dims import value_dims
from .core.spec import Attrs, Trace, specs_of
from .core.values import Tensor, computed_shape_bounds

__all__ = ["bags_shape", "SPECS"]

SCALAR = PartialShape([])


def bags_shape(table: PartialShape, bags: Dimension) -> PartialShape:
    """The table's shape with ``bags`` rows."""
    dims = table.dims
    if dims is None:
        return table
    if not dims:
        raise ShapeInferenceError("the embedding table must not be a scalar, but got []")
    return PartialShape.of((bags,) + dims[1:])


def _rank(t: Tensor, rank: int, name: str) -> None:
    if t.shape.rank not in (None, rank):
        raise ShapeInferenceError(f"{name} must be {rank}-D, but got {t.shape}")


def _same(a: Tensor, b: Tensor, names: str) -> None:
    if not a.shape.compatible(b.shape):
        raise ShapeInferenceError(f"{names} must have one shape, but got {a.shape} and {b.shape}")


def _reduction(attrs: Attrs, weighted: bool) -> None:
    """The ``reduction`` of the version-15 forms: sum, or mean without per-sample weights."""
    reduction = attrs.text("reduction", "sum").lower() if attrs.version >= 15 else "sum"
    if reduction not in ("sum", "mean"):
        raise ShapeInferenceError(f"reduction must be sum or mean, but got '{reduction}'")
    if weighted and reduction != "sum":
        raise ShapeInferenceError("per-sample weights need the sum reduction, but got mean")


def _first(t: Tensor) -> Dimension:
    return DYNAMIC if t.shape.dims is None else t.shape.dims[0]


def _offsets(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    _reduction(attrs, len(ins) > 4)
    _rank(ins[1], 1, "indices")
    _rank(ins[2], 1, "offsets")
    if len(ins) > 3:
        _rank(ins[3], 0, "default_index")
    if len(ins) > 4:
        _rank(ins[4], 1, "per_sample_weights")
        _same(ins[1], ins[4], "indices and per_sample_weights")
    return [Tensor(bags_shape(ins[0].shape, _first(ins[2])), ins[0].etype)]


def _packed(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    _reduction(attrs, len(ins) > 2)
    _rank(ins[1], 2, "indices")
    indices = ins[1].shape
    if len(ins) > 2:
        _rank(ins[2], 2, "per_sample_weights")
        indices = indices.merge(ins[2].shape)
        if indices is None:
            raise ShapeInferenceError(f"indices and per_sample_weights must have one shape, but "
                                      f"got {ins[1].shape} and {ins[2].shape}")
    bags = DYNAMIC if indices.dims is None else indices.dims[0]
    return [Tensor(bags_shape(ins[0].shape, bags), ins[0].etype)]


def _segments(ins: list[Tensor], attrs: Attrs, trace: Trace | None = None) -> list[Tensor]:
    _rank(ins[1], 1, "indices")
    _rank(ins[2], 1, "segment_ids")
    _same(ins[1], ins[2], "indices and segment_ids")
    for t, name in zip(ins[3:5], ("num_segments", "default_index"), strict=False):
        if not t.shape.compatible(SCALAR):
            raise ShapeInferenceError(f"{name} must be a scalar, but got {t.shape}")
    if len(ins) > 5:
        _rank(ins[5], 1, "per_sample_weights")
        _same(ins[1], ins[5], "indices and per_sample_weights")
    computed_shape_bounds(ins[3], "num_segments")
    segments = value_dims(ins[3])
    return [Tensor(bags_shape(ins[0].shape, segments[0] if segments else DYNAMIC), ins[0].etype)]


def _table_rows(shapes: list, attrs: Attrs, consts: dict[int, int], widest: bool = False
                ) -> dict[int, int | None]:
    """The indices (input 1) pick rows of the table (input 0)."""
    return {1: (table_bound if widest else table_size)(shapes[0], 0)}


SPECS = specs_of({"EmbeddingBagOffsetsSum": _offsets, "EmbeddingBagOffsets": _offsets,
                  "EmbeddingBagPackedSum": _packed, "EmbeddingBagPacked": _packed,
                  "EmbeddingSegmentsSum": _segments}, table_rows=_table_rows)
