"""GatherElements-6 (ONNX GatherElements-11/13): output shapes.

The output has the shape of ``indices``; data and indices have the same rank, and every
dim but the one at ``axis`` must be able to agree (OpenVINO merges them, so the output
takes whatever both inputs know)::

    >>> gather_elements_shape("[2,2]", "[2,2]", axis=1)
    PartialShape('[2,2]')
    >>> gather_elements_shape("[3,3]", "[2,3]", axis=0)
    PartialShape('[2,3]')
    >>> gather_elements_shape("[4,4,?]", "[1,?,5]", axis=0)
    PartialShape('[1,4,5]')
    >>> gather_elements_shape("[2..5,3,?]", "[7,?,1..3]", axis=-3)
    PartialShape('[7,3,1..3]')

OpenVINO's order (checked on 2026.4.1): indices of type i32 or i64
(exactly: no other integer type, not even ``dynamic``), indices rank ≥ 1, data rank ≥ 1,
the axis within ``[-r, r-1]`` of the data rank, then equal ranks and the merge. An unknown
data rank gives the indices shape; unknown indices rank gives the data shape with ``?``
at the axis::

    >>> gather_elements_shape("[2,3,4]", "[...]", axis=-2)
    PartialShape('[2,?,4]')
    >>> gather_elements_shape("[...]", "[2,1]", axis=7)
    PartialShape('[2,1]')
    >>> try:
    ...     gather_elements_shape("[2,3]", "[2,4]", axis=0)
    ... except ShapeInferenceError as err:
    ...     print(err)  # doctest: +NORMALIZE_WHITESPACE
    GatherElements-6: data and indices must have the same dims except at the axis (dim 1: 3
    in data, 4 in indices), but got data [2,3], indices [2,4], axis=0
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import numpy as _np
from ..element_types import element_type_name
from ..errors import (
    IndexRangeError,
    ReferenceInputError,
    ShapeInferenceError,  # noqa: F401 (the doctest above raises it)
)
from ..shapes import DYNAMIC, DYNAMIC_RANK, PartialShape, ShapeLike, as_partial_shape
from ..shapes import normalize_axis as axis_from_front
from .core import inputs
from .core.arrays import index_array, reach_message, table_bound, table_size
from .core.spec import Attrs, Checks, Trace, specs_of
from .core.values import Tensor

if TYPE_CHECKING:  # the symbolic rules import it when infer --symbols runs them
    from .core.symbolic import Facts, Sym

__all__ = ["infer_gather_elements", "gather_elements_shape"]

#: The op type this file serves (what a layer's ``type`` says).
OP_TYPE = "GatherElements"


def infer_gather_elements(data: PartialShape, indices: PartialShape, axis: int,
                          indices_type: str | None = None, trace: Trace | None = None
                          ) -> PartialShape:
    """The output shape of GatherElements-6, or ShapeInferenceError.

    ``indices_type`` is the indices element type; None skips that check. ``trace``
    records every check for ``explain``.

    >>> str(infer_gather_elements(PartialShape.parse("[3,3]"), PartialShape.parse("[2,3]"), 0))
    '[2,3]'
    """
    check = Checks(trace, "GatherElements-6",
                   lambda: f"but got data {data}, indices {indices}, axis={axis}")
    check.fact("axis", axis)
    if indices_type is not None:
        check.require(element_type_name(indices_type) in ("i32", "i64"),
                      "the indices must be i32 or i64", lambda: f"indices are {indices_type}")
    d, i = data.dims, indices.dims
    if i is not None:
        check.require(len(i) > 0, "indices must have rank at least 1", lambda: f"rank {len(i)}")
    if d is None:
        check.note("the output has the indices shape", "the rank of data is unknown")
        return indices if i is not None else DYNAMIC_RANK
    check.require(len(d) > 0, "data must have rank at least 1", lambda: f"rank {len(d)}")
    at = axis_from_front(axis, len(d))
    check.require(at is not None, f"the axis must lie in [-{len(d)}, {len(d) - 1}] for data "
                  f"of rank {len(d)}", lambda: f"axis = {axis}")
    if i is None:
        check.note("the output has the indices shape", "the rank of indices is unknown: the "
                   "data shape with ? at the axis")
        return PartialShape.of((*d[:at], DYNAMIC, *d[at + 1 :]))
    check.require(len(d) == len(i), "data and indices must have the same rank",
                  lambda: f"{len(d)} and {len(i)}")
    out = list(i)
    for n, (x, y) in enumerate(zip(d, i, strict=True)):
        if n == at or x is y:
            continue
        merged = x.merge(y)
        check.require(merged is not None, "data and indices must have the same dims except "
                      "at the axis", lambda n=n, x=x, y=y: f"dim {n}: {x} in data, {y} in indices")
        out[n] = merged
    result = PartialShape.of(tuple(out))
    check.note("the output has the indices shape, merged with data off the axis",
               lambda: f"axis = {at} -> {result}")
    return result


def gather_elements_shape(
    data: ShapeLike,
    indices: ShapeLike,
    axis: int = 0,
    indices_type: str | None = "i64",
) -> PartialShape:
    """The output shape of GatherElements; shapes as text or PartialShape.

    >>> gather_elements_shape("[3,3]", "[2,3]", axis=-2, indices_type="i32")
    PartialShape('[2,3]')
    """
    return infer_gather_elements(
        as_partial_shape(data), as_partial_shape(indices), axis, indices_type
    )


# ---- NumPy reference ----
#
# What OpenVINO 2026.4.1's CPU plugin does with index values, found by running it
# (tests/ops/test_reference.py keeps checking it against the runtime):
#
# | op                | index in [-s, -1]        | index outside [-s, s-1]                 |
# | ----------------- | ------------------------ | --------------------------------------- |
# | GatherElements-6  | counts from the end: s+i | inference fails ("indices values of     |
# |                   |                          | GatherElement exceed data size")        |
# | ONNX GatherElements-11/13 | counts from the end | "an error" (ONNX spec)                |
#
# The reference matches: negatives wrap, and anything outside [-s, s-1] raises
# IndexError, as the runtime raises.


def gather_elements_reference(
    data: _np.ndarray, indices: _np.ndarray, axis: int = 0
) -> _np.ndarray:
    """GatherElements-6 (and ONNX GatherElements-11/13): ``out[i][j][k] = data[i][idx][k]``
    for ``axis == 1``, with ``idx = indices[i][j][k]``; the output has the indices' shape.

    >>> gather_elements_reference(_np.array([[1, 2], [3, 4]]), [[0, 0], [-1, 0]], axis=1)
    array([[1, 1],
           [4, 3]])
    """
    data, idx = _np.asarray(data), index_array(indices)
    rank = data.ndim
    if rank < 1 or idx.ndim != rank:
        raise ReferenceInputError(
            "GatherElements needs data and indices of the same rank >= 1, but got "
            f"{data.shape} and {idx.shape}"
        )
    if not -rank <= axis < rank:
        raise ReferenceInputError(
            f"GatherElements axis must lie in [{-rank}, {rank - 1}], but got {axis}")
    axis %= rank
    others = [d for d in range(rank) if d != axis]
    if any(idx.shape[d] > data.shape[d] for d in others):
        raise ReferenceInputError(
            f"GatherElements indices {idx.shape} exceed data {data.shape} outside axis {axis}"
        )
    size = data.shape[axis]
    if idx.size:
        low, high = int(idx.min()), int(idx.max())
        if low < -size or high >= size:
            raise IndexRangeError(
                f"GatherElements indices must lie in [{-size}, {size - 1}] on axis {axis}, "
                f"but they span [{low}, {high}]"
            )
        if low < 0:
            idx = _np.where(idx < 0, idx + size, idx)
    view = data[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(idx.shape))]
    return _np.take_along_axis(view, idx.astype(_np.intp, copy=False), axis=axis)


# ---- valid inputs for validate ----
#
# Data and indices share every dim but the one at the axis; indices lie in [-s, s-1]
# (negative ones count from the end; outside, the runtime refuses to run).


class GatherElementsInputs(inputs.InputMaker):
    """Valid inputs for GatherElements-6."""

    def params(self, attrs, ins):
        return inputs.Params(axis=attrs.int("axis"))

    def sizes(self, rng, data, indices, p):
        rank = data.rank
        if rank is None:
            rank = inputs.rank_or(rng, indices, max(p.axis + 1, -p.axis, 1))
        ddims, idims = inputs.dims_or(data, rank), inputs.dims_or(indices, rank)
        d, i = [], []
        for n, (x, y) in enumerate(zip(ddims, idims, strict=True)):
            if n == p.axis % rank:
                d.append(inputs.pick(rng, x))
                i.append(inputs.pick(rng, y))
            else:
                d.append(inputs.pick_merged(rng, x, y))
                i.append(d[-1])
        return d, i

    def indices(self, rng, data_shape, indices_shape, dtype, p, out_of_range=True):
        size = data_shape[p.axis % len(data_shape)]
        return inputs.uniform(rng, tuple(indices_shape), -size, size - 1, dtype)

    def fit_const(self, data, dsize, indices, p):
        short = inputs.grow_to_fit(data, dsize, [p.axis % len(dsize)], [inputs.reach(indices)])
        if short is not None:
            raise inputs.const_out_of_range(OP_TYPE, dsize, short, "refuses to run")
        return dsize


# ---- the specs -----------------------------------------------------------------------


def _rule(ins: list[Tensor], attrs: Attrs, trace: Trace | None) -> list[Tensor]:
    shape = infer_gather_elements(ins[0].shape, ins[1].shape, attrs.int("axis"), ins[1].etype,
                                  trace)
    return [Tensor(shape, ins[0].etype)]


def _symbolic(ins: list[Sym], attrs: Attrs, facts: Facts) -> list[Sym] | None:
    """The indices' dims; those off the axis equal the data's."""
    from .core.symbolic import Sym
    d, i = ins[0].dims, ins[1].dims
    if d is None or i is None or len(d) != len(i):
        return [Sym(i)]
    axis = attrs.int("axis") % len(d)
    return [Sym([y if k == axis else facts.equal(y, x)
                 for k, (x, y) in enumerate(zip(d, i, strict=True))])]


def _reference(data, indices, *, batch_dims: int = 0, axis: int = 0):
    return gather_elements_reference(data, indices, axis)


def _build(opsets, data, indices, case):
    return opsets[6].gather_elements(data, indices, case.axis)


def _rows(attrs: Attrs, shapes: list) -> tuple[tuple[int, int], set[int]] | None:
    """Data and indices agree on every dim but the axis."""
    rank = shapes[0].rank
    axis = attrs.int("axis", 0)
    if not rank or shapes[1].rank != rank or not -rank <= axis < rank:
        return None
    return (0, 1), set(range(rank)) - {axis % rank}


def _index_reach(ins: list[Tensor], attrs: Attrs, indices=None) -> str | None:
    """Constant indices past the data axis (negative ones count from the end)."""
    data, axis = ins[0].shape, attrs.int("axis", 0)
    if indices is None or not indices.size or data.rank is None \
            or not -data.rank <= axis < data.rank or not data.dims[axis].is_static:
        return None
    return reach_message(int(indices.min()), int(indices.max()), data.dims[axis].lo, True,
                         f"axis {axis % data.rank}", data)


def _table_rows(shapes: list, attrs: Attrs, consts: dict[int, int], widest: bool = False
                ) -> dict[int, int | None]:
    """The indices (input 1) pick along the data's dim ``axis``."""
    return {1: (table_bound if widest else table_size)(shapes[0], attrs.int("axis", 0))}


SPECS = specs_of({OP_TYPE: _rule}, family="gather", build=_build, row_dims=_rows,
                 index_reach=_index_reach, symbolic=_symbolic, table_rows=_table_rows,
                 versions={
    6: {"words": "GatherElements-6 gives the indices shape", "reference": _reference,
        "inputs": GatherElementsInputs()},
})
